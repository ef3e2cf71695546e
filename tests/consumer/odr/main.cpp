// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
// The one-definition test's program: two translation units that include
// every public header (tu.cpp.in), linked together; it runs (each TU makes a
// call through the fake transport, and returns 0 when that call failed) and
// exits 0. The second TU is a copy of the first's object (it returns 1 too)
// where objcopy is found, else tu2.cpp compiled (it returns 2):
// tests/consumer/CMakeLists.txt.
#include <boost/asio/io_context.hpp>

extern "C" int dd_odr_tu_1(boost::asio::io_context&);
extern "C" int dd_odr_tu_2(boost::asio::io_context&);

int main()
{
    boost::asio::io_context ioc;
    return dd_odr_tu_1(ioc) == 1 && dd_odr_tu_2(ioc) != 0 ? 0 : 1;
}
