// sample --compare-raw (doc/bench.md#compare-raw): the raw Beast loop of raw_tinker_client.hpp and the SDK take
// turns on the forked local server, each point `seconds` long after a warm-up, with the same request shape and the
// same number in flight, on the same io_context and thread. Pairs alternate which side goes first; the ratios are
// the medians of the pairs' ratios, so a drift of the machine's speed hits both sides alike.
#include "programs/bench/raw_tinker_client.hpp"
#include "programs/bench/scenarios.hpp"
#include "programs/bench/tokens.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <sys/resource.h>

#include <memory>

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
  double requests_per_sample = 0;     ///< HTTP requests (the SDK's counters; 0 for the raw side, which has none)
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
  std::int64_t next_seq_id = 1000;  ///< the raw side's (the fixture's optim_step and sampler took the first ones)
};

asio::awaitable<void> raw_worker(Connection* connection, Shape* shape, PointCounter* counter) {
  SdkShapedRequests requests(connection->remote_port(), shape->raw);
  while (counter->running()) {
    const Clock::time_point called = Clock::now();
    const std::string ticket = co_await connection->exchange_serialized(
        requests.sample(shape->fixture.sampling_session_id, shape->next_seq_id++));
    co_await complete(*connection, field(ticket, "request_id"), &requests);
    counter->note(called, Clock::now());
  }
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
asio::awaitable<Point> measure(Bench* bench, WorkerGroup* workers, PointCounter* counter, std::int64_t per_call) {
  asio::steady_timer timer(bench->io.get_executor(), counter->measured_from);
  auto [ec] = co_await timer.async_wait(as_tuple_awaitable);
  (void)ec;
  const double cpu_start = process_cpu_seconds();
  const Usage usage_start = Usage::now();
  const std::uint64_t requests_start = bench->service.counters().requests;
  co_await workers->wait();
  const Clock::time_point end = Clock::now();
  const double cpu = process_cpu_seconds() - cpu_start;
  const Usage usage_end = Usage::now();
  const std::uint64_t requests = bench->service.counters().requests - requests_start;
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
  std::vector<std::unique_ptr<Connection>> connections;
  for (std::int64_t i = 0; i < in_flight; ++i)
    connections.push_back(std::make_unique<Connection>(bench->io, shape->endpoint));
  PointCounter counter(seconds);
  WorkerGroup workers(bench->io.get_executor());
  for (auto& connection : connections) workers.spawn(raw_worker(connection.get(), shape, &counter));
  co_return co_await measure(bench, &workers, &counter, shape->num_samples);
}

asio::awaitable<Point> sdk_point(Bench* bench, SamplingClient sampler, Shape* shape, std::int64_t in_flight,
                                 double seconds) {
  PointCounter counter(seconds);
  WorkerGroup workers(bench->io.get_executor());
  for (std::int64_t i = 0; i < in_flight; ++i) workers.spawn(sdk_worker(sampler, shape, &counter));
  co_return co_await measure(bench, &workers, &counter, shape->num_samples);
}

asio::awaitable<void> prepare_raw(Bench* bench, Shape* shape) {
  Connection connection(bench->io, shape->endpoint);
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
  std::vector<double> sdk_requests;
  for (const Point& point : sdk) sdk_requests.push_back(point.requests_per_sample);
  comparison["sdk_requests_per_sample"] = median(sdk_requests);
  comparison["throughput_ratios"] = array_of(throughput_ratios);
  comparison["cpu_ratios"] = array_of(cpu_ratios);
  comparison["method"] =
      "SDK / raw Beast loop (same two exchanges, same headers and bodies, same io thread), medians of the pairs' "
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
