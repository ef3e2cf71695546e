//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
//
// Prints metrics_observer::to_prometheus() of a snapshot in which every
// series of the exposition has values, label values included that need
// escaping (a quote, a backslash, a line feed: an endpoint named by a user's
// descriptor, a server address). tests/core/promtool_check.cmake hands the
// output to Prometheus's own `promtool check metrics`.

#include <digital_delivery/metrics.hpp>

#include <iostream>

namespace dd = digital_delivery;

int main()
{
    const auto bounds = dd::metrics_observer::default_buckets();
    auto histogram = [&](std::uint64_t n, double sum) {
        dd::duration_histogram h;
        h.bounds = bounds;
        h.counts.assign(bounds.size() + 1, 0);
        h.counts[1] = n / 2;
        h.counts.back() = n - n / 2;
        h.count = n;
        h.sum = sum;
        return h;
    };
    dd::metrics_snapshot s;
    s.requests.push_back({"get_order", "GET", "dd.example.test", 200, "", histogram(7, 0.35)});
    s.requests.push_back({"get_order", "GET", "dd.example.test", 404, "order_not_found", histogram(1, 0.02)});
    s.requests.push_back({"list_assets", "GET", "dd.example.test:8443", 0, "connect_timeout", histogram(2, 10.0)});
    s.requests.push_back({"upload_body", "PUT", "storage.example.test", 200, "", histogram(1, 4.5)});
    s.requests.push_back({"/shop/\"quoted\"\\path\nline", "POST", "dd.example.test", 503, "service_unavailable",
                          histogram(3, 1.5)});
    s.operations.push_back({"get_order", "GET", "", histogram(7, 0.4)});
    s.operations.push_back({"get_order", "GET", "order_not_found", histogram(1, 0.02)});
    s.operations.push_back({"/shop/\"quoted\"\\path\nline", "POST", "service_unavailable", histogram(1, 3.0)});
    s.retries.push_back({"list_assets", "connect_timeout", 2});
    s.retries.push_back({"/shop/\"quoted\"\\path\nline", "service_unavailable", 2});
    s.rate_limited_responses = 3;
    s.throttle_pauses = 1;
    s.limiter_wait = histogram(12, 2.25);
    s.upload_bytes = 123456789;
    s.store_fallback = true;
    s.fallback_points = 14;
    std::cout << dd::metrics_observer::to_prometheus(s);
    return std::cout.good() ? 0 : 1;
}
