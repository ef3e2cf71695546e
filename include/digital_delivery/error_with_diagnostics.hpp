//
// Copyright (c) 2026 The digital_delivery authors
// Distributed under the Boost Software License, Version 1.0.
// (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
//
#ifndef DIGITAL_DELIVERY_ERROR_WITH_DIAGNOSTICS_HPP
#define DIGITAL_DELIVERY_ERROR_WITH_DIAGNOSTICS_HPP

/// \file
/// `error_with_diagnostics`: the exception an operation called with the default
/// token throws (and a client's constructor, for a configuration it refuses),
/// carrying the error code and its `diagnostics`.

#include <digital_delivery/diagnostics.hpp>
#include <digital_delivery/error.hpp>

#include <boost/assert/source_location.hpp>
#include <boost/system/system_error.hpp>
#include <boost/throw_exception.hpp>

#include <utility>

namespace digital_delivery {

/// The exception for exception-style use: a system_error whose what()
/// includes the diagnostics' one-line summary, and which carries them.
class error_with_diagnostics : public boost::system::system_error
{
public:
    /// \param ec The error.
    /// \param diag Its diagnostics (what() includes their summary).
    error_with_diagnostics(const error_code& ec, diagnostics diag)
        : boost::system::system_error(ec, diag.to_string()), diag_(std::move(diag))
    {
    }
    /// \return The diagnostics of the failed operation.
    const diagnostics& get_diagnostics() const noexcept { return diag_; }

private:
    diagnostics diag_;
};

/// Throws error_with_diagnostics if `ec` is an error.
/// \param ec The error code, maybe empty.
/// \param diag The operation's diagnostics.
/// \param loc Where the throw is reported to come from.
inline void throw_on_error(
    const error_code& ec,
    const diagnostics& diag,
    const boost::source_location& loc = BOOST_CURRENT_LOCATION
)
{
    if (ec)
        boost::throw_exception(error_with_diagnostics(ec, diag), loc);
}

}  // namespace digital_delivery

#endif
