#include "programs/bench/progress.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <cstdio>
#include <ostream>

namespace tinker::bench {
namespace asio = boost::asio;

Progress::Progress(asio::any_io_executor executor, std::ostream& err, bool enabled)
    : err_(err), enabled_(enabled), timer_(std::move(executor)) {}

void Progress::begin(std::string label, std::int64_t total) {
  label_ = std::move(label);
  total_ = total;
  done_ = 0;
  started_ = Clock::now();
  if (!enabled_) return;
  alive_ = std::make_shared<bool>(true);
  asio::co_spawn(timer_.get_executor(), redraw_loop(this, alive_), asio::detached);
}

void Progress::end() {
  if (!enabled_ || !alive_) return;
  *alive_ = false;
  alive_.reset();
  timer_.cancel();
  err_ << "\r\033[K" << std::flush;  // back to the line's start, erase it
}

asio::awaitable<void> Progress::redraw_loop(Progress* self, std::shared_ptr<bool> alive) {
  while (*alive) {
    self->timer_.expires_after(std::chrono::milliseconds(250));
    auto [ec] = co_await self->timer_.async_wait(asio::as_tuple(asio::use_awaitable));
    if (ec || !*alive) co_return;
    self->draw();
  }
}

void Progress::draw() {
  const double elapsed = seconds_between(started_, Clock::now());
  const double rate = per(static_cast<double>(done_), elapsed);
  char line[160];
  std::snprintf(line, sizeof line, "\r\033[K%s  %lld/%lld  %.1f/s  %.1f s", label_.c_str(),
                static_cast<long long>(done_), static_cast<long long>(total_), rate, elapsed);
  err_ << line << std::flush;
}

}  // namespace tinker::bench
