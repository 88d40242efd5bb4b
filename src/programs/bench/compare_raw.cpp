// sample --compare-raw (doc/bench.md#compare-raw): the raw Beast loop of raw_tinker_client.hpp and the SDK take
// turns on the forked local server, each point `seconds` long after a warm-up, with the same request shape and the
// same number in flight, on the same io_context and thread, and the same exchanges: when the server turns the
// batched result poll on, the raw side long-polls retrieve_futures too and fetches each result once it is reported.
// Pairs alternate which side goes first; the ratios are the medians of the pairs' ratios, so a drift of the machine's
// speed hits both sides alike.
#include "programs/bench/raw_tinker_client.hpp"
#include "programs/bench/scenarios.hpp"
#include "programs/bench/tokens.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <sys/resource.h>

#include <functional>
#include <memory>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

namespace tinker::bench {
namespace {

namespace asio = boost::asio;
constexpr auto warm_up = std::chrono::milliseconds(300);

// One point's workers run until `deadline`; what completes after `measured_from` counts.
class PointCounter {
 public:
  explicit PointCounter(double seconds) : measured_from(Clock::now() + warm_up) {
    deadline = measured_from + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
  }

  bool running() const { return Clock::now() < deadline; }
  void note(Clock::time_point called, Clock::time_point done) {
    if (done < measured_from) return;
    ++samples;
    if (called >= measured_from) latency_ms.push_back(ms_between(called, done));
  }

  Clock::time_point measured_from;
  Clock::time_point deadline;
  std::int64_t samples = 0;
  std::vector<double> latency_ms;
};

// This process's resource use at one moment (getrusage): the CPU split into user and system time, and how often its
// threads gave up the CPU: a voluntary switch is the io thread going to sleep in epoll_wait with nothing ready (each
// costs a wake-up later), an involuntary one a preemption by another process (the server, or any other load).
class Usage {
 public:
  static Usage now() {
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    Usage taken;
    taken.user_s = static_cast<double>(usage.ru_utime.tv_sec) + static_cast<double>(usage.ru_utime.tv_usec) * 1e-6;
    taken.system_s = static_cast<double>(usage.ru_stime.tv_sec) + static_cast<double>(usage.ru_stime.tv_usec) * 1e-6;
    taken.sleeps = static_cast<double>(usage.ru_nvcsw);
    taken.preemptions = static_cast<double>(usage.ru_nivcsw);
    return taken;
  }

  double user_s = 0;
  double system_s = 0;
  double sleeps = 0;
  double preemptions = 0;
};

class Point {
 public:
  double samples_per_s = 0;
  double cpu_us_per_sample = 0;
  double user_us_per_sample = 0;
  double system_us_per_sample = 0;
  double sleeps_per_sample = 0;       ///< voluntary context switches: the io thread waited for the network
  double preemptions_per_sample = 0;  ///< involuntary context switches
  double requests_per_sample = 0;     ///< HTTP requests (the SDK's counters; the raw side's connections)
  double latency_p50_ms = 0;
};

// What both sides ask for, and the raw side's session.
class Shape {
 public:
  ModelInput prompt;
  SamplingParams params;
  std::int64_t num_samples = 1;
  SampleShape raw;
  Fixture fixture;
  tcp::endpoint endpoint;
  std::int64_t next_seq_id = 1000;      ///< the raw side's (the fixture's optim_step and sampler took the first ones)
  bool batched_results = false;         ///< the server's sample_use_retrieve_futures, as the raw side read it
  std::int64_t completions_cursor = 0;  ///< the raw side's retrieve_futures cursor, kept from point to point
};

// The raw side's batched result poll: its poller reports request ids, and a worker whose sample is reported goes
// on to fetch the result. A waiting worker is keyed by a view of its request id (its frame holds the string until
// it is woken), as the SDK's watcher keys its waits.
class RawCompletionBoard {
 public:
  /// True when `request_id` was reported already; otherwise `reported` is armed, to be cancelled by the report,
  /// and `request_id` must live until then.
  bool claim_or_register(const std::string& request_id, asio::steady_timer& reported) {
    check();  // a failed poller reports nothing more
    if (const auto early = reported_early_.find(std::string_view(request_id)); early != reported_early_.end()) {
      reported_early_.erase(early);
      return true;
    }
    reported.expires_at(asio::steady_timer::time_point::max());
    waiting_.emplace(request_id, &reported);
    wake_poller();
    return false;
  }

  /// The poller polls only while a worker waits for a report, as the SDK's does: a poll sent when nothing is
  /// pending is held by the server until a completion comes and then a little longer, to gather more.
  bool nobody_waits() const { return waiting_.empty(); }
  asio::awaitable<void> wait_for_a_waiter(asio::steady_timer& idle) {
    idle.expires_at(asio::steady_timer::time_point::max());
    idle_poller_ = &idle;
    auto [woken] = co_await idle.async_wait(as_tuple_awaitable);
    (void)woken;
    idle_poller_ = nullptr;
  }

  /// The point is over: the poller stops (its exchange in progress ends when its connection is closed).
  void stop() {
    stopping = true;
    wake_poller();
  }

  void report(std::string_view request_id) {
    if (const auto waiting = waiting_.find(request_id); waiting != waiting_.end()) {
      waiting->second->cancel();
      waiting_.erase(waiting);
      return;
    }
    reported_early_.emplace(request_id);
  }

  /// The poller failed: every waiting worker wakes and throws `failure_`.
  void fail(std::string failure) {
    failure_ = std::move(failure);
    for (auto& [id, timer] : waiting_) timer->cancel();
    waiting_.clear();
  }

  void check() const {
    if (!failure_.empty()) throw std::runtime_error("raw retrieve_futures poller: " + failure_);
  }

  bool stopping = false;  ///< the point is over: the poller's exchange fails because it was closed

 private:
  void wake_poller() {
    if (idle_poller_ != nullptr) idle_poller_->cancel();
  }

  class Hash {
   public:
    using is_transparent = void;
    std::size_t operator()(std::string_view text) const noexcept { return std::hash<std::string_view>()(text); }
  };
  std::unordered_map<std::string_view, asio::steady_timer*> waiting_;
  std::unordered_set<std::string, Hash, std::equal_to<>> reported_early_;
  std::string failure_;
  asio::steady_timer* idle_poller_ = nullptr;
};

// `board`: the batched result poll's, when the server turns it on (a sample's result is fetched once reported);
// null when each result is polled for.
asio::awaitable<void> raw_worker(Connection* connection, Shape* shape, RawCompletionBoard* board,
                                 PointCounter* counter) {
  SdkShapedRequests requests(connection->remote_port(), shape->raw);
  asio::steady_timer reported(co_await asio::this_coro::executor);
  while (counter->running()) {
    const Clock::time_point called = Clock::now();
    const std::string ticket = co_await connection->exchange_serialized(
        requests.sample(shape->fixture.sampling_session_id, shape->next_seq_id++));
    std::string request_id = field(ticket, "request_id");
    if (board != nullptr && !board->claim_or_register(request_id, reported)) {
      auto [cancelled] = co_await reported.async_wait(as_tuple_awaitable);  // cancelled by the report
      (void)cancelled;
      board->check();
    }
    co_await complete(*connection, std::move(request_id), &requests);
    counter->note(called, Clock::now());
  }
}

// Long-polls the raw sampler's completions until the point is over, reporting every request id it reads.
asio::awaitable<void> raw_poller(Connection* connection, Shape* shape, RawCompletionBoard* board) {
  SdkShapedRequests requests(connection->remote_port(), shape->raw);
  std::vector<std::string_view> request_ids;  // views into the answer
  asio::steady_timer idle(co_await asio::this_coro::executor);
  std::string failure;
  try {
    while (!board->stopping) {
      if (board->nobody_waits()) {
        co_await board->wait_for_a_waiter(idle);
        continue;
      }
      const std::string answer = co_await connection->exchange_serialized(
          requests.completions_poll(shape->fixture.sampling_session_id, shape->completions_cursor));
      shape->completions_cursor = reported_request_ids(answer, request_ids);
      for (const std::string_view request_id : request_ids) board->report(request_id);
    }
  } catch (const std::exception& e) {
    failure = e.what();
  }
  if (!board->stopping) board->fail(failure.empty() ? "stopped" : failure);
}

asio::awaitable<void> sdk_worker(SamplingClient sampler, Shape* shape, PointCounter* counter) {
  const SampleOptions options;
  while (counter->running()) {
    diagnostics diag;
    const Clock::time_point called = Clock::now();
    auto [ec, future] = co_await sampler.async_sample(shape->prompt, shape->num_samples, shape->params, options, diag,
                                                      as_tuple_awaitable);
    if (ec) throw error(ec, diag);
    auto [wait_ec, response] = co_await future.async_get(diag, as_tuple_awaitable);
    if (wait_ec) throw error(wait_ec, diag);
    counter->note(called, Clock::now());
  }
}

// Waits out the warm-up, then measures the workers until the last one ends.
// `requests_made`: the side's HTTP requests so far.
asio::awaitable<Point> measure(Bench* bench, WorkerGroup* workers, PointCounter* counter, std::int64_t per_call,
                               std::function<std::uint64_t()> requests_made) {
  asio::steady_timer timer(bench->io.get_executor(), counter->measured_from);
  auto [ec] = co_await timer.async_wait(as_tuple_awaitable);
  (void)ec;
  const double cpu_start = process_cpu_seconds();
  const Usage usage_start = Usage::now();
  const std::uint64_t requests_start = requests_made();
  co_await workers->wait();
  const Clock::time_point end = Clock::now();
  const double cpu = process_cpu_seconds() - cpu_start;
  const Usage usage_end = Usage::now();
  const std::uint64_t requests = requests_made() - requests_start;
  Point point;
  const auto samples = static_cast<double>(counter->samples * per_call);
  point.samples_per_s = samples / seconds_between(counter->measured_from, end);
  point.cpu_us_per_sample = per(cpu * 1e6, samples);
  point.user_us_per_sample = per((usage_end.user_s - usage_start.user_s) * 1e6, samples);
  point.system_us_per_sample = per((usage_end.system_s - usage_start.system_s) * 1e6, samples);
  point.sleeps_per_sample = per(usage_end.sleeps - usage_start.sleeps, samples);
  point.preemptions_per_sample = per(usage_end.preemptions - usage_start.preemptions, samples);
  point.requests_per_sample = per(static_cast<double>(requests), samples);
  point.latency_p50_ms = Percentiles(counter->latency_ms).p50;
  bench->progress.advance();
  co_return point;
}

asio::awaitable<Point> raw_point(Bench* bench, Shape* shape, std::int64_t in_flight, double seconds) {
  // One connection per worker, and the poller's last when the server batches the result poll.
  std::vector<std::unique_ptr<Connection>> connections;
  for (std::int64_t i = 0; i < in_flight + (shape->batched_results ? 1 : 0); ++i)
    connections.push_back(std::make_unique<Connection>(bench->io, shape->endpoint));
  const auto requests_made = [&connections] {
    std::uint64_t requests = 0;
    for (const auto& connection : connections) requests += connection->exchanges();
    return requests;
  };
  PointCounter counter(seconds);
  WorkerGroup workers(bench->io.get_executor());
  if (!shape->batched_results) {
    for (auto& connection : connections) workers.spawn(raw_worker(connection.get(), shape, nullptr, &counter));
    co_return co_await measure(bench, &workers, &counter, shape->num_samples, requests_made);
  }
  Connection& poll_connection = *connections.back();
  RawCompletionBoard board;
  WorkerGroup poller(bench->io.get_executor());
  poller.spawn(raw_poller(&poll_connection, shape, &board));
  for (std::int64_t i = 0; i < in_flight; ++i)
    workers.spawn(raw_worker(connections[static_cast<std::size_t>(i)].get(), shape, &board, &counter));
  std::exception_ptr failure;
  Point point;
  try {
    point = co_await measure(bench, &workers, &counter, shape->num_samples, requests_made);
  } catch (...) {
    failure = std::current_exception();
  }
  // The poller may be in a long poll: closing its connection ends it, and it must end before the board does.
  board.stop();
  poll_connection.close();
  co_await poller.wait();
  if (failure) std::rethrow_exception(failure);
  co_return point;
}

asio::awaitable<Point> sdk_point(Bench* bench, SamplingClient sampler, Shape* shape, std::int64_t in_flight,
                                 double seconds) {
  PointCounter counter(seconds);
  WorkerGroup workers(bench->io.get_executor());
  for (std::int64_t i = 0; i < in_flight; ++i) workers.spawn(sdk_worker(sampler, shape, &counter));
  const auto requests_made = [bench] { return bench->service.counters().requests; };
  co_return co_await measure(bench, &workers, &counter, shape->num_samples, requests_made);
}

asio::awaitable<void> prepare_raw(Bench* bench, Shape* shape) {
  Connection connection(bench->io, shape->endpoint);
  shape->batched_results = co_await uses_batched_results(connection);
  co_await prepare(&connection, &shape->fixture);
}

boost::json::array array_of(const std::vector<double>& values) {
  boost::json::array array;
  for (double value : values) array.emplace_back(value);
  return array;
}

// The medians over the points of one figure of each side, as raw_<name> and sdk_<name>.
void write_sides(boost::json::object& comparison, const char* name, const std::vector<Point>& raw,
                 const std::vector<Point>& sdk, double Point::*figure) {
  std::vector<double> raw_values, sdk_values;
  for (const Point& point : raw) raw_values.push_back(point.*figure);
  for (const Point& point : sdk) sdk_values.push_back(point.*figure);
  comparison[std::string("raw_") + name] = median(raw_values);
  comparison[std::string("sdk_") + name] = median(sdk_values);
}

void write_comparison(const SampleSettings& settings, const std::vector<Point>& raw, const std::vector<Point>& sdk,
                      Report& report) {
  std::vector<double> raw_rate, sdk_rate, raw_cpu, sdk_cpu, raw_latency, sdk_latency;
  std::vector<double> throughput_ratios, cpu_ratios, latency_ratios;
  for (std::size_t i = 0; i < raw.size(); ++i) {
    raw_rate.push_back(raw[i].samples_per_s);
    sdk_rate.push_back(sdk[i].samples_per_s);
    raw_cpu.push_back(raw[i].cpu_us_per_sample);
    sdk_cpu.push_back(sdk[i].cpu_us_per_sample);
    raw_latency.push_back(raw[i].latency_p50_ms);
    sdk_latency.push_back(sdk[i].latency_p50_ms);
    throughput_ratios.push_back(sdk[i].samples_per_s / raw[i].samples_per_s);
    cpu_ratios.push_back(sdk[i].cpu_us_per_sample / raw[i].cpu_us_per_sample);
    latency_ratios.push_back(sdk[i].latency_p50_ms / raw[i].latency_p50_ms);
  }
  boost::json::object comparison;
  comparison["pairs"] = settings.pairs;
  comparison["seconds_per_point"] = settings.seconds;
  comparison["in_flight"] = settings.in_flight;
  comparison["raw_samples_per_s"] = median(raw_rate);
  comparison["sdk_samples_per_s"] = median(sdk_rate);
  comparison["throughput_ratio"] = median(throughput_ratios);
  comparison["raw_cpu_us_per_sample"] = median(raw_cpu);
  comparison["sdk_cpu_us_per_sample"] = median(sdk_cpu);
  comparison["cpu_ratio"] = median(cpu_ratios);
  comparison["raw_latency_p50_ms"] = median(raw_latency);
  comparison["sdk_latency_p50_ms"] = median(sdk_latency);
  comparison["latency_ratio"] = median(latency_ratios);
  // Where the CPU went (doc/bench.md#compare-raw): what moves the CPU ratio between machines and runs.
  write_sides(comparison, "user_us_per_sample", raw, sdk, &Point::user_us_per_sample);
  write_sides(comparison, "system_us_per_sample", raw, sdk, &Point::system_us_per_sample);
  write_sides(comparison, "sleeps_per_sample", raw, sdk, &Point::sleeps_per_sample);
  write_sides(comparison, "preemptions_per_sample", raw, sdk, &Point::preemptions_per_sample);
  write_sides(comparison, "requests_per_sample", raw, sdk, &Point::requests_per_sample);
  comparison["throughput_ratios"] = array_of(throughput_ratios);
  comparison["cpu_ratios"] = array_of(cpu_ratios);
  comparison["method"] =
      "SDK / raw Beast loop (same exchanges: asample, then retrieve_future, after a retrieve_futures report when "
      "the server turns the batched poll on; same headers and bodies, same io thread), medians of the pairs' "
      "ratios; CPU is getrusage(RUSAGE_SELF) over each point, the server being a forked child";
  report.set("compare_raw", std::move(comparison));
}

}  // namespace

asio::awaitable<void> run_compare_raw(Bench* bench, SampleSettings settings, SamplingClient sampler, Report* report) {
  Shape shape;
  const std::vector<TokenId> prompt = token_ids(settings.prompt_tokens, 1);
  shape.prompt = ModelInput::from_ints(prompt);
  shape.params = SamplingParams(settings.max_tokens, 1.0);
  shape.params.seed = 1;
  shape.num_samples = settings.num_samples;
  shape.raw = SampleShape(joined_ids(prompt), settings.num_samples, settings.max_tokens);
  shape.endpoint = tcp::endpoint(asio::ip::make_address("127.0.0.1"), *bench->target.local_port);
  co_await prepare_raw(bench, &shape);

  std::vector<Point> raw, sdk;
  bench->progress.begin("compare-raw points", 2 * settings.pairs);
  for (std::int64_t pair = 0; pair < settings.pairs && !bench->interrupted(); ++pair) {
    Point raw_side;
    Point sdk_side;
    if (pair % 2 == 0) {  // alternating which side goes first cancels a drift within a pair
      raw_side = co_await raw_point(bench, &shape, settings.in_flight, settings.seconds);
      sdk_side = co_await sdk_point(bench, sampler, &shape, settings.in_flight, settings.seconds);
    } else {
      sdk_side = co_await sdk_point(bench, sampler, &shape, settings.in_flight, settings.seconds);
      raw_side = co_await raw_point(bench, &shape, settings.in_flight, settings.seconds);
    }
    raw.push_back(raw_side);
    sdk.push_back(sdk_side);
  }
  bench->progress.end();
  write_comparison(settings, raw, sdk, *report);
}

}  // namespace tinker::bench
