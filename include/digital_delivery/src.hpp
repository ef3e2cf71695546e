//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
//
#ifndef DIGITAL_DELIVERY_SRC_HPP
#define DIGITAL_DELIVERY_SRC_HPP

/// \file
/// Separate compilation: include this file in exactly one translation unit of a
/// program that defines `DIGITAL_DELIVERY_SEPARATE_COMPILATION` everywhere (or link
/// `digital_delivery::compiled`, which does both). It compiles every non-template
/// function of the library, the Beast transport included, and the explicit
/// instantiations that call sites only declare.

#ifndef DIGITAL_DELIVERY_SEPARATE_COMPILATION
#error "Define DIGITAL_DELIVERY_SEPARATE_COMPILATION to use <digital_delivery/src.hpp>"
#endif

#include <digital_delivery/impl/error/error.ipp>
#include <digital_delivery/impl/json/json_decode.ipp>
#include <digital_delivery/impl/http/http_message.ipp>
#include <digital_delivery/impl/http/beast_transport.ipp>
#include <digital_delivery/impl/rate_limit/rate_limit.ipp>
#include <digital_delivery/impl/rate_limit/rate_limiter.ipp>
#include <digital_delivery/impl/rate_limit/shm_rate_limit_store.ipp>
#include <digital_delivery/impl/rate_limit/redis_rate_limit_store.ipp>
#include <digital_delivery/impl/retry/retry.ipp>
#include <digital_delivery/impl/upload/upload.ipp>
#include <digital_delivery/impl/upload/upload_record.ipp>
#include <digital_delivery/impl/upload/upload_journal.ipp>
#include <digital_delivery/impl/sync/sync_plan.ipp>
#include <digital_delivery/impl/sync/sync.ipp>
#include <digital_delivery/impl/error/workflow_error.ipp>
#include <digital_delivery/impl/engine/raw_request.ipp>
#include <digital_delivery/impl/workflows/asset_edits.ipp>
#include <digital_delivery/impl/workflows/watermark.ipp>
#include <digital_delivery/impl/feed/feed_event.ipp>
#include <digital_delivery/impl/feed/order_feed.ipp>
#include <digital_delivery/impl/feed/redis_feed_checkpoint.ipp>
#include <digital_delivery/impl/model/timestamp.ipp>
#include <digital_delivery/impl/error/diagnostics.ipp>
#include <digital_delivery/impl/model/asset.ipp>
#include <digital_delivery/impl/model/digital_product.ipp>
#include <digital_delivery/impl/model/order.ipp>
#include <digital_delivery/impl/engine/sansio/request_core.ipp>
#include <digital_delivery/impl/trace/trace_context.ipp>
#include <digital_delivery/impl/trace/op_trace.ipp>
#include <digital_delivery/impl/engine/client_impl.ipp>
#include <digital_delivery/impl/observe/observer.ipp>
#include <digital_delivery/impl/observe/json_logger.ipp>
#include <digital_delivery/impl/observe/metrics.ipp>
#include <digital_delivery/impl/otlp/otlp_exporter.ipp>
#include <digital_delivery/impl/testing/cassette.ipp>

// Everything a request function compiles per endpoint (detail::endpoint_ops),
// once for every endpoint of endpoints.hpp.
#include <digital_delivery/endpoints.hpp>
#include <digital_delivery/impl/engine/endpoint_call.hpp>

namespace digital_delivery {
namespace detail {
#define DIGITAL_DELIVERY_DETAIL_INSTANTIATE(name) template struct endpoint_ops<endpoints::name>;
DIGITAL_DELIVERY_ENDPOINTS(DIGITAL_DELIVERY_DETAIL_INSTANTIATE)
#undef DIGITAL_DELIVERY_DETAIL_INSTANTIATE
}  // namespace detail
}  // namespace digital_delivery

#endif
