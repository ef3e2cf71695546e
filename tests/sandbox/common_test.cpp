// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
// Helpers of the sandbox core: SigV4 (AWS published vector), time, encoding, ids, token bucket.
#include "common.hpp"
#include "detail.hpp"
#include "service.hpp"

#include <gtest/gtest.h>

#include <regex>

using namespace dd_sandbox;

namespace {

sigv4_credentials aws_example_creds()
{
    sigv4_credentials c;
    c.access_key_id = "AKIAIOSFODNN7EXAMPLE";
    c.secret_access_key = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY";
    return c;
}

} // namespace

// AWS "Authenticating Requests: Using Query Parameters (AWS Signature Version 4)" example.
TEST(SigV4, PublishedQueryStringExample)
{
    const query_params params{
        {"X-Amz-Algorithm", "AWS4-HMAC-SHA256"},
        {"X-Amz-Credential", "AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request"},
        {"X-Amz-Date", "20130524T000000Z"},
        {"X-Amz-Expires", "86400"},
        {"X-Amz-SignedHeaders", "host"}};
    const auto parts = sigv4_sign("GET", "/test.txt", params, {{"host", "examplebucket.s3.amazonaws.com"}},
                                  "20130524T000000Z", aws_example_creds());
    EXPECT_EQ(parts.canonical_request,
              "GET\n/test.txt\n"
              "X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIAIOSFODNN7EXAMPLE%2F20130524%2Fus-"
              "east-1%2Fs3%2Faws4_request&X-Amz-Date=20130524T000000Z&X-Amz-Expires=86400&X-Amz-"
              "SignedHeaders=host\nhost:examplebucket.s3.amazonaws.com\n\nhost\nUNSIGNED-PAYLOAD");
    EXPECT_EQ(parts.string_to_sign,
              "AWS4-HMAC-SHA256\n20130524T000000Z\n20130524/us-east-1/s3/aws4_request\n"
              "3bfa292879f6447bbcda7001decf97f4a54dc650c8942174ae0a9121cf58ad04");
    EXPECT_EQ(parts.signature, "aeeed9bbccd4d02ee5c0109b86d86835f995330da4c265957d157751f604d404");
}

TEST(SigV4, PresignBuildsTheSameUrl)
{
    const auto q = sigv4_presign_query("GET", "/test.txt", {{"host", "examplebucket.s3.amazonaws.com"}},
                                       *parse_iso8601("2013-05-24T00:00:00Z"), 86400,
                                       aws_example_creds());
    EXPECT_EQ(q, "X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIAIOSFODNN7EXAMPLE%2F20130524%"
                 "2Fus-east-1%2Fs3%2Faws4_request&X-Amz-Date=20130524T000000Z&X-Amz-Expires=86400&X-"
                 "Amz-SignedHeaders=host&X-Amz-Signature="
                 "aeeed9bbccd4d02ee5c0109b86d86835f995330da4c265957d157751f604d404");
}

TEST(Crypto, Sha256AndHmacKnownAnswers)
{
    EXPECT_EQ(hex(sha256("abc")), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    // RFC 4231 test case 2
    EXPECT_EQ(hex(hmac_sha256("Jefe", "what do ya want for nothing?")),
              "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
}

TEST(Time, FormatsIso8601WithMilliseconds)
{
    const time_point t{std::chrono::milliseconds{1795341600123}};
    EXPECT_EQ(format_iso8601(t), "2026-11-22T10:00:00.123Z");
    EXPECT_EQ(format_amz_date(t), "20261122T100000Z");
    EXPECT_EQ(format_iso8601(time_point{}), "1970-01-01T00:00:00.000Z");
}

TEST(Time, ParsesIso8601Variants)
{
    EXPECT_EQ(*parse_iso8601("2026-11-22T10:00:00.123Z"), time_point{std::chrono::milliseconds{1795341600123}});
    EXPECT_EQ(*parse_iso8601("2026-11-22T12:00:00+02:00"), *parse_iso8601("2026-11-22T10:00:00Z"));
    EXPECT_EQ(*parse_iso8601("2026-11-22T05:30:00-0430"), *parse_iso8601("2026-11-22T10:00:00Z"));
    EXPECT_EQ(*parse_iso8601("2026-11-22"), *parse_iso8601("2026-11-22T00:00:00Z"));
    EXPECT_FALSE(parse_iso8601("2026-11-22T10:00:00"));  // zone required
    EXPECT_FALSE(parse_iso8601("2026-02-30T10:00:00Z"));
    EXPECT_FALSE(parse_iso8601("tomorrow"));
    EXPECT_FALSE(parse_iso8601("2026-11-22T25:00:00Z"));
}

TEST(Time, ParsesStrictDates)
{
    EXPECT_EQ(*parse_date("1970-01-02"), 1);
    EXPECT_EQ(*parse_date("2024-02-29"), days_from_civil(2024, 2, 29));
    EXPECT_FALSE(parse_date("2023-02-29"));
    EXPECT_FALSE(parse_date("2026-1-01"));
    EXPECT_FALSE(parse_date("2026-13-01"));
    EXPECT_FALSE(parse_date("20261101"));
}

TEST(Encoding, UriEncodeAndDecode)
{
    EXPECT_EQ(uri_encode("a b/c~d_e.f-g+h"), "a%20b%2Fc~d_e.f-g%2Bh");
    EXPECT_EQ(uri_encode("a b/c", true), "a%20b/c");
    EXPECT_EQ(uri_encode("ö"), "%C3%B6");
    EXPECT_EQ(*percent_decode("a%20b+c", true), "a b c");
    EXPECT_EQ(*percent_decode("a%20b+c", false), "a b+c");
    EXPECT_FALSE(percent_decode("%zz", false));
    EXPECT_FALSE(percent_decode("%2", false));
    auto q = parse_query("a=1&b=x%26y&&c", true);
    ASSERT_TRUE(q);
    ASSERT_EQ(q->size(), 3u);
    EXPECT_EQ((*q)[1].second, "x&y");
    EXPECT_EQ((*q)[2].first, "c");
}

TEST(Encoding, ContentDispositionEscapesAndEncodesNonAscii)
{
    EXPECT_EQ(detail::content_disposition("book.pdf"), "inline; filename=\"book.pdf\"");
    EXPECT_EQ(detail::content_disposition("a\"b\\c.pdf"), "inline; filename=\"a\\\"b\\\\c.pdf\"");
    EXPECT_EQ(detail::content_disposition("résumé.pdf"),
              "inline; filename=\"r_sum_.pdf\"; filename*=UTF-8''r%C3%A9sum%C3%A9.pdf");
}

TEST(Ids, UuidV4FormatAndDeterminism)
{
    id_generator a(42), b(42), c(7);
    const std::regex re("^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$");
    const auto first = a.uuid_v4();
    EXPECT_TRUE(std::regex_match(first, re)) << first;
    EXPECT_EQ(first, b.uuid_v4());
    EXPECT_NE(first, c.uuid_v4());
    EXPECT_NE(a.uuid_v4(), first);
    EXPECT_TRUE(std::regex_match(a.licence_key(), std::regex("^([A-Z2-9]{5}-){3}[A-Z2-9]{5}$")));
}

TEST(TokenBucket, DefaultBucketAllowsFortyPointsThenRefillsContinuously)
{
    token_bucket b(40, 60);
    const time_point t0 = *parse_iso8601("2026-11-22T10:00:00Z");
    for (int i = 0; i < 40; ++i)
        ASSERT_TRUE(b.take(1, t0).allowed) << i;
    auto d = b.take(1, t0);
    EXPECT_FALSE(d.allowed);
    EXPECT_EQ(d.retry_after, 2);  // 1 point at 40/60 s = 1.5 s -> 2
    EXPECT_EQ(d.remaining, 0);
    EXPECT_EQ(d.reset_unix, unix_seconds(t0) + 60);
    // a write needs 2 points = 3 s
    EXPECT_EQ(b.take(2, t0).retry_after, 3);
    EXPECT_TRUE(b.take(1, t0 + std::chrono::milliseconds(1500)).allowed);
    EXPECT_FALSE(b.take(1, t0 + std::chrono::milliseconds(1500)).allowed);
    d = b.take(2, t0 + std::chrono::seconds(5));  // 3.5 s more -> 2.33 points
    EXPECT_TRUE(d.allowed);
    EXPECT_EQ(d.remaining, 0);
    EXPECT_EQ(b.take(0, t0 + std::chrono::seconds(8)).remaining, 2);
}

TEST(TokenBucket, TimeCompressedWindow)
{
    token_bucket b(40, 2);  // 20 points per second
    const time_point t0 = *parse_iso8601("2026-11-22T10:00:00Z");
    for (int i = 0; i < 20; ++i)
        ASSERT_TRUE(b.take(2, t0).allowed);
    auto d = b.take(2, t0);
    EXPECT_FALSE(d.allowed);
    EXPECT_EQ(d.retry_after, 1);  // 0.1 s, at least 1
    EXPECT_TRUE(b.take(2, t0 + std::chrono::milliseconds(100)).allowed);
    EXPECT_EQ(b.take(0, t0 + std::chrono::seconds(10)).remaining, 40);  // capped at capacity
}
