#include "programs/bench/context.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/use_awaitable.hpp>

namespace tinker::bench {
namespace asio = boost::asio;

void Meter::start(const Bench& bench) {
  counters_start_ = bench.service.counters();
  if (bench.target.server_pid) server_cpu_start_ = child_cpu_seconds(*bench.target.server_pid);
  cpu_start_ = process_cpu_seconds();
  started_ = Clock::now();
  running_ = true;
}

void Meter::stop(const Bench& bench) {
  running_ = false;
  stopped_ = Clock::now();
  cpu_stop_ = process_cpu_seconds();
  if (bench.target.server_pid) server_cpu_stop_ = child_cpu_seconds(*bench.target.server_pid);
  counters_stop_ = bench.service.counters();
}

void Meter::write(Report& report) const {
  report.set("wall_s", wall_seconds());
  report.set("client_cpu_s", cpu_seconds());
  report.set("client_cpu_method",
             "getrusage(RUSAGE_SELF) of the tinker-bench process, all its threads, over the "
             "measured phase; a --local server runs in a forked child and is not included");
  report.set("peak_rss_bytes", PeakRss::bytes());
  if (server_cpu_start_ && server_cpu_stop_) {
    report.set("server_cpu_s", *server_cpu_stop_ - *server_cpu_start_);
  } else {
    report.set_null("server_cpu_s");
  }
  report.set("http_requests", counters_stop_.requests - counters_start_.requests);
  report.set("http_retries", counters_stop_.retries - counters_start_.retries);
  report.set("http_429", counters_stop_.rate_limited - counters_start_.rate_limited);
  report.set("http_5xx", counters_stop_.server_errors - counters_start_.server_errors);
  report.set("http_transport_errors", counters_stop_.transport_errors - counters_start_.transport_errors);
}

WorkerGroup::WorkerGroup(asio::any_io_executor executor)
    : executor_(executor), all_done_(executor, Clock::time_point::max()) {}

void WorkerGroup::spawn(asio::awaitable<void> work) {
  ++running_;
  asio::co_spawn(executor_, std::move(work), [this](std::exception_ptr failure) {
    if (failure && !failure_) failure_ = failure;
    if (--running_ == 0) all_done_.cancel();
  });
}

asio::awaitable<void> WorkerGroup::wait() {
  while (running_ > 0) {
    auto [ec] = co_await all_done_.async_wait(asio::as_tuple(asio::use_awaitable));
    (void)ec;  // cancelled when the last one finished
  }
  if (failure_) std::rethrow_exception(failure_);
}

std::vector<TokenId> token_ids(std::int64_t count, std::int64_t salt) {
  std::vector<TokenId> ids(static_cast<std::size_t>(count));
  for (std::int64_t i = 0; i < count; ++i)
    ids[static_cast<std::size_t>(i)] = static_cast<TokenId>(100 + (i * 37 + salt * 11) % 900);
  return ids;
}

std::string joined_ids(const std::vector<TokenId>& ids) {
  std::string text;
  for (TokenId id : ids) {
    if (!text.empty()) text += ',';
    text += std::to_string(id);
  }
  return text;
}

std::string describe_failure(const boost::system::error_code& ec, const diagnostics& diag) {
  std::string text = ec.message();
  if (diag.http_status != 0) text += " (HTTP " + std::to_string(diag.http_status) + ")";
  if (!diag.message.empty()) text += ": " + diag.message;
  return text;
}

}  // namespace tinker::bench
