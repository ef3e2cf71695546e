//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
//
#ifndef DIGITAL_DELIVERY_HPP
#define DIGITAL_DELIVERY_HPP

/// \file
/// Everything a call site needs: the client, the request functions, models,
/// errors and the transport concept. Left out because of what they bring:
/// <digital_delivery/beast_transport.hpp> and <digital_delivery/otlp_exporter.hpp>
/// (Beast and OpenSSL; their implementation is compiled by src.hpp, or in
/// header-only mode by the translation unit that includes them),
/// <digital_delivery/raw_request.hpp> (the escape hatch, whose result is a
/// Boost.JSON DOM: the typed API decodes without one), the opt-in rate-limit
/// stores (<digital_delivery/shm_rate_limit_store.hpp>,
/// <digital_delivery/redis_rate_limit_store.hpp> with redis_store_params.hpp),
/// <digital_delivery/uring_file_source.hpp> (io_uring, a program-wide opt-in),
/// <digital_delivery/custom_endpoint.hpp> (for endpoint descriptors of your
/// own) and <digital_delivery/src.hpp> (separate compilation).

/// \namespace digital_delivery
/// The library: the client, the request functions, models, errors, the
/// transports, rate limiting, uploads, workflows and observers. Names in
/// `digital_delivery::detail` are not part of the API.

#include <digital_delivery/asset.hpp>
#include <digital_delivery/asset_edits.hpp>
#include <digital_delivery/client.hpp>
#include <digital_delivery/client_params.hpp>
#include <digital_delivery/diagnostics.hpp>
#include <digital_delivery/digital_product.hpp>
#include <digital_delivery/download.hpp>
#include <digital_delivery/endpoints.hpp>
#include <digital_delivery/error.hpp>
#include <digital_delivery/error_with_diagnostics.hpp>
#include <digital_delivery/http_message.hpp>
#include <digital_delivery/id_list.hpp>
#include <digital_delivery/json_logger.hpp>
#include <digital_delivery/metrics.hpp>
#include <digital_delivery/observer.hpp>
#include <digital_delivery/open_enum.hpp>
#include <digital_delivery/order.hpp>
#include <digital_delivery/paginate.hpp>
#include <digital_delivery/pagination.hpp>
#include <digital_delivery/rate_limit.hpp>
#include <digital_delivery/request_options.hpp>
#include <digital_delivery/retry.hpp>
#include <digital_delivery/timestamp.hpp>
#include <digital_delivery/transport.hpp>
#include <digital_delivery/upload.hpp>
#include <digital_delivery/upload_options.hpp>
#include <digital_delivery/version.hpp>
#include <digital_delivery/watermark.hpp>
#include <digital_delivery/workflow_error.hpp>

#endif
