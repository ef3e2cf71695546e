// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
// The one-definition test's program: two translation units that include
// every public header (tu.cpp.in), linked together; it runs (each TU makes a
// call through the fake transport) and exits 0.
#include <boost/asio/io_context.hpp>

int tu_1(boost::asio::io_context&);
int tu_2(boost::asio::io_context&);

int main()
{
    boost::asio::io_context ioc;
    return tu_1(ioc) + tu_2(ioc) == 3 ? 0 : 1;
}
