// The completion token the harness's coroutines await with: the error code comes back as a value, so a failed
// request is counted, not thrown.
#pragma once

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/use_awaitable.hpp>

namespace tinker::bench {

inline constexpr auto as_tuple_awaitable = boost::asio::as_tuple(boost::asio::use_awaitable);

}  // namespace tinker::bench
