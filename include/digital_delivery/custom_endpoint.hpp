//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
//
#ifndef DIGITAL_DELIVERY_CUSTOM_ENDPOINT_HPP
#define DIGITAL_DELIVERY_CUSTOM_ENDPOINT_HPP

/// \file
/// Include this header where you define an endpoint descriptor of your own
/// (docs/architecture.md, "From descriptor to request function").
///
/// A request function's encoding, decoding and launch are compiled once per
/// endpoint. For the endpoints of endpoints.hpp, separate compilation does
/// that in src.hpp, and call sites only see declarations; for a descriptor of
/// yours, this header makes the definitions visible, so every translation
/// unit that includes your descriptor's header can call it, in either
/// compilation mode.

#include <digital_delivery/detail/endpoint_call.hpp>
#include <digital_delivery/impl/engine/endpoint_call.hpp>

#endif
