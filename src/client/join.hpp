// Runs several coroutines at once on the current executor and waits for all of them (spec 11.3:
// the chunks of one forward_backward are submitted concurrently). The coroutines report their
// own outcomes through state they share with the caller; they must not throw.
#pragma once

#include <boost/asio/awaitable.hpp>

#include <vector>

namespace tinker::detail {

boost::asio::awaitable<void> run_all(std::vector<boost::asio::awaitable<void>> tasks);

}  // namespace tinker::detail
