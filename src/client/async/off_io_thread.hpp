// Blocking work (file system, tokenizer loading and downloading) run away from a client's io
// thread, which must never wait on it.
#pragma once

#include <boost/asio/awaitable.hpp>

#include <functional>

namespace tinker::client::async {

/// Runs `work` on a small process-wide pool and resumes on the coroutine's executor (which is
/// kept busy meanwhile); an exception of `work` is rethrown here. Not cancellable: it finishes
/// first.
boost::asio::awaitable<void> off_io_thread(std::function<void()> work);

}  // namespace tinker::client::async
