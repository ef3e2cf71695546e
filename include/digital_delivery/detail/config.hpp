//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
//
#ifndef DIGITAL_DELIVERY_DETAIL_CONFIG_HPP
#define DIGITAL_DELIVERY_DETAIL_CONFIG_HPP

// Compilation model (the Boost.MySQL scheme):
//  - header-only (default): every non-template function is `inline` and its
//    definition is included by the header that declares it;
//  - separate compilation: define DIGITAL_DELIVERY_SEPARATE_COMPILATION in every
//    translation unit and include <digital_delivery/src.hpp> in exactly one.
#ifdef DIGITAL_DELIVERY_SEPARATE_COMPILATION
#define DIGITAL_DELIVERY_DECL
#else
#define DIGITAL_DELIVERY_HEADER_ONLY
#define DIGITAL_DELIVERY_DECL inline
#endif

#if __cplusplus < 202002L && !defined(_MSVC_LANG)
#error "digital_delivery requires C++20"
#endif

#endif
