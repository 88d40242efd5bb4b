// The live progress line of tinker-bench (doc/bench.md#output): drawn on the error stream, redrawn four times a
// second, only when that stream is a terminal, and erased before any result is printed.
#pragma once

#include "programs/bench/measure.hpp"

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/steady_timer.hpp>

#include <cstdint>
#include <iosfwd>
#include <memory>
#include <string>

namespace tinker::bench {

class Progress {
 public:
  /// `enabled`: the stream is a terminal; otherwise every member is a no-op.
  Progress(boost::asio::any_io_executor executor, std::ostream& err, bool enabled);

  /// Starts a line "<label>  done/total  rate/s  elapsed" for `total` units and its redraw timer.
  void begin(std::string label, std::int64_t total);
  /// `units` more done.
  void advance(std::int64_t units = 1) noexcept { done_ += units; }
  /// Stops the redraws and erases the line.
  void end();

 private:
  static boost::asio::awaitable<void> redraw_loop(Progress* self, std::shared_ptr<bool> alive);
  void draw();

  std::ostream& err_;
  bool enabled_;
  boost::asio::steady_timer timer_;
  std::shared_ptr<bool> alive_;  ///< the current redraw loop runs while this is true
  std::string label_;
  std::int64_t total_ = 0;
  std::int64_t done_ = 0;
  Clock::time_point started_{};
};

}  // namespace tinker::bench
