//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
//
#ifndef DIGITAL_DELIVERY_TRACE_CONTEXT_HPP
#define DIGITAL_DELIVERY_TRACE_CONTEXT_HPP

/// \file
/// W3C trace context: the parent an operation joins (request_options::trace_parent,
/// trace_params::context), its `traceparent`/`tracestate` text forms, and the
/// client's trace settings (docs/observability.md, "Traces").

#include <digital_delivery/detail/config.hpp>
#include <digital_delivery/string_ref.hpp>
#include <digital_delivery/tracer.hpp>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>

namespace digital_delivery {

/// A span's context as W3C trace context carries it: the trace, the span
/// (the parent of what joins it), the trace flags and the vendors' tracestate.
struct trace_context
{
    trace_id trace{};          ///< The trace id (never all zero in a parsed context).
    span_id span{};            ///< The span id (never all zero in a parsed context).
    std::uint8_t flags = 0;    ///< W3C trace flags, as received (bit 0: sampled).
    std::string trace_state{}; ///< The tracestate, checked and truncated (normalize_tracestate).

    /// \return Whether the sampled flag (bit 0) is set.
    bool sampled() const noexcept { return (flags & 1u) != 0; }
};

/// request_options::trace_parent: a view of the caller's trace_context, or of
/// a `std::optional<trace_context>` (empty: no parent), that refuses a
/// temporary at compile time, as string_ref does:
///
///     const auto parent = dd::parse_trace_context(tp, ts);
///     dd::request_options opts{.trace_parent = parent};   // a named optional: fine
///     opts.trace_parent = dd::parse_trace_context(tp);    // does not compile: the
///                                                         // context dies at the ';'
///
/// Trivially copyable and destructible, as request_options must be (braced
/// options inside `co_await` with g++ 12: docs/compilers.md).
class trace_context_ref
{
public:
    /// No parent.
    constexpr trace_context_ref() noexcept = default;
    /// A named context (lvalue), which must outlive the call.
    /// \param c The context.
    constexpr trace_context_ref(const trace_context& c) noexcept : p_(&c) {}
    /// A named optional context (lvalue): none when it is empty.
    /// \param c The context, or nothing.
    constexpr trace_context_ref(const std::optional<trace_context>& c) noexcept : p_(c ? &*c : nullptr) {}
    /// A temporary context, or a temporary optional one: refused (see the message).
    template <class T>
        requires((std::is_same_v<std::remove_cvref_t<T>, trace_context> ||
                  std::is_same_v<std::remove_cvref_t<T>, std::optional<trace_context>>) &&
                 !std::is_lvalue_reference_v<T>)
    trace_context_ref(T&&)
    {
        static_assert(
            detail::refused_temporary_v<T>,
            "dd::trace_context_ref refuses a temporary trace context: it is destroyed at the end of the statement, "
            "before the request is built. Name it first (const auto parent = dd::parse_trace_context(...); then "
            ".trace_parent = parent)."
        );
    }
    /// \return The context, or null for none.
    constexpr const trace_context* get() const noexcept { return p_; }
    /// \return Whether there is a context.
    constexpr explicit operator bool() const noexcept { return p_ != nullptr; }
    /// \return The context (there must be one).
    constexpr const trace_context& operator*() const noexcept { return *p_; }
    /// \return The context (there must be one).
    constexpr const trace_context* operator->() const noexcept { return p_; }

private:
    const trace_context* p_ = nullptr;
};

/// Parses a `traceparent` header value, and a `tracestate` to go with it.
///
/// Version 00 is read exactly (55 characters); versions 01 to fe by the same
/// rules, allowing more after the flags when a '-' follows them. The value is
/// refused whole (no context) with version ff, a length or separator out of
/// place, a character that is not lowercase hex, or an all-zero trace or span
/// id. Spaces and tabs around the value are ignored. The tracestate goes
/// through normalize_tracestate.
/// \param traceparent The `traceparent` value.
/// \param tracestate The `tracestate` value ("" when none).
/// \return The context, or nothing when `traceparent` is invalid.
DIGITAL_DELIVERY_DECL std::optional<trace_context> parse_trace_context(
    std::string_view traceparent,
    std::string_view tracestate = {}
);

/// A `tracestate` value fit to propagate: list members checked by the W3C
/// grammar (a key, '=', a value; empty members skipped), at most 32 members
/// and 512 characters. A tracestate with an invalid member or a key twice
/// becomes "" (it cannot be forwarded in part). Members after the 32nd are
/// dropped; then, over 512 characters, members longer than 128 characters
/// are dropped first, then members from the end, always whole.
/// \param tracestate The received value.
/// \return The members kept, joined with ','.
DIGITAL_DELIVERY_DECL std::string normalize_tracestate(std::string_view tracestate);

/// The version-00 `traceparent` value of a span: "00-{trace}-{span}-{flags}",
/// lowercase hex.
/// \param trace The trace id.
/// \param span The span id.
/// \param flags The trace flags.
/// \return 55 characters.
DIGITAL_DELIVERY_DECL std::string format_traceparent(const trace_id& trace, const span_id& span, std::uint8_t flags);

/// The client's trace settings (client_params::trace). The spans go to
/// client_params::tracer; these settings also apply without one.
struct trace_params
{
    /// Called at the start of each operation that was given no parent
    /// (request_options::trace_parent, or a `traceparent` in
    /// request_options::extra_headers): the parent it joins, or nothing (a
    /// new trace). A request function and an upload call it inside the
    /// call, on the caller's thread (the upload's own requests then join the
    /// upload's span); each page of a paginated listing and each request of
    /// a workflow (watermark waiter, asset edits) is an operation of its own
    /// and calls it when it starts. Must not throw. Default: none.
    std::function<std::optional<trace_context>()> context{};

    /// With a tracer: whether a parent whose sampled flag is 0 is followed
    /// (no spans; its `traceparent` forwarded as is). False: the operation
    /// records its spans anyway, in the parent's trace, and its requests say
    /// sampled. Default: followed.
    bool follow_unsampled_parent = true;

    /// Whether the trace headers also go to the object storage (an upload's
    /// PUT to its presigned URL). Default: only to the API's host; a
    /// presigned URL's signature may cover every header sent.
    bool propagate_to_storage = false;
};

}  // namespace digital_delivery

#ifdef DIGITAL_DELIVERY_HEADER_ONLY
#include <digital_delivery/impl/trace/trace_context.ipp>
#endif

#endif
