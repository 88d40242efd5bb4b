// run(): the invocation's target (forking the local server first, before any thread exists), the cost guard, then
// each scenario on the main thread's io_context with its result written as soon as it is done.
#include "programs/bench/bench.hpp"
#include "programs/bench/cli.hpp"
#include "programs/bench/cost_guard.hpp"
#include "programs/bench/scenarios.hpp"

#include <boost/asio/co_spawn.hpp>

#include <ctime>
#include <exception>
#include <memory>
#include <ostream>

namespace tinker::bench {
namespace {

namespace asio = boost::asio;

std::string utc_now() {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return text;
}

asio::awaitable<void> run_scenario(Bench* bench, const Invocation* invocation, Scenario scenario, Report* report,
                                   Meter* meter) {
  switch (scenario) {
    case Scenario::sample: co_await run_sample(bench, invocation->sample, report, meter); break;
    case Scenario::train: co_await run_train(bench, invocation->train, report, meter); break;
    case Scenario::logprobs: co_await run_logprobs(bench, invocation->logprobs, report, meter); break;
    case Scenario::rl: co_await run_rl(bench, invocation->rl, report, meter); break;
    case Scenario::checkpoint: co_await run_checkpoint(bench, invocation->checkpoint, report, meter); break;
  }
}

void write_result(OutputFormat format, const Report& report, std::ostream& out) {
  switch (format) {
    case OutputFormat::json: write_json_line(out, report.fields()); break;
    case OutputFormat::csv: write_csv(out, report.fields()); break;
    case OutputFormat::table: write_table(out, report.fields()); break;
  }
  out.flush();
}

// Runs `scenario` on `io` until it completes; what it threw, or null.
//
// With io.run(), not a loop of io.run_one(): each run_one() call sets up a fresh per-thread record,
// and with it goes Asio's cache of recycled handler and coroutine-frame memory, so every operation
// of the SDK (and of the raw loop it is compared with) would reach malloc, which no application
// running its io_context pays. The client's heartbeat keeps the io_context busy, so the scenario's
// completion stops it (and the next scenario restarts it).
std::exception_ptr run_until_done(asio::io_context& io, asio::awaitable<void> scenario) {
  std::exception_ptr failure;
  bool finished = false;
  asio::co_spawn(io, std::move(scenario), [&](std::exception_ptr thrown) {
    failure = thrown;
    finished = true;
    io.stop();
  });
  while (!finished) {
    io.run();
    io.restart();  // stopped by the completion, or run out of work: either way ready to run again
  }
  return failure;
}

// One scenario to its result; false when it failed (the result's "error" or "first_error" says why).
bool run_one(Bench& bench, const Invocation& invocation, Scenario scenario, std::ostream& out) {
  Report report(scenario_name(scenario));
  report.set_text("target", bench.target.kind);
  report.set_text("base_url", bench.target.base_url);
  report.set_text("base_model", bench.target.base_model);
  report.set_text("started_at", utc_now());
  PeakRss::reset();
  Meter meter;
  bool ok = true;
  const std::exception_ptr failure =
      run_until_done(bench.io, run_scenario(&bench, &invocation, scenario, &report, &meter));
  try {
    if (failure) std::rethrow_exception(failure);
  } catch (const std::exception& e) {
    if (meter.running()) meter.stop(bench);
    bench.progress.end();
    report.set("error", e.what());
    ok = false;
  }
  meter.write(report);
  if (bench.interrupted()) report.set("interrupted", true);
  const auto* first_error = report.fields().if_contains("first_error");
  if (first_error != nullptr && first_error->is_string() && !first_error->get_string().empty()) ok = false;
  write_result(invocation.format, report, out);
  return ok;
}

int run_scenarios(const Invocation& invocation, const Target& target, ClientOptions options, std::ostream& out,
                  std::ostream& err, const BenchEnvironment& env) {
  asio::io_context io;
  bool ok = true;
  {
    ServiceClient service(io.get_executor(), ServiceClientOptions(std::move(options)));
    Progress progress(io.get_executor(), err, env.error_is_terminal);
    Bench bench(io, service, target, progress, [&env] { return env.interrupted && env.interrupted(); });
    for (Scenario scenario : invocation.scenarios) {
      if (bench.interrupted()) break;
      ok = run_one(bench, invocation, scenario, out) && ok;
    }
  }
  io.restart();
  io.poll();  // what the client's shutdown posted
  if (env.interrupted && env.interrupted()) return exit_interrupted;
  return ok ? exit_ok : exit_failure;
}

}  // namespace

int run(std::vector<std::string> args, std::ostream& out, std::ostream& err, const BenchEnvironment& env) {
  Invocation invocation;
  if (auto code = parse_invocation(std::move(args), invocation, out, err)) return *code;
  try {
    std::unique_ptr<LocalServer> server;
    if (invocation.target.local) {
      server = std::make_unique<LocalServer>(invocation.target.null_model, invocation.target.per_request_polling,
                                             invocation.target.local_long_poll_ms);
    }
    const Target target = resolve_target(invocation.target, server.get());
    ClientOptions options = client_options_for(invocation.target, target);
    Asking asking;
    asking.input = env.input;
    asking.interactive = env.input_is_terminal && env.error_is_terminal;
    if (ask_consent(target, plans_of(invocation), invocation.target.yes, asking, err) == Consent::refused) {
      return exit_refused;
    }
    return run_scenarios(invocation, target, std::move(options), out, err, env);
  } catch (const std::invalid_argument& e) {
    err << "Error: " << e.what() << '\n';
    return exit_usage;
  } catch (const error& e) {
    err << "Error: " << e.what() << '\n';
    return e.code() == errc::invalid_configuration ? exit_usage : exit_failure;
  } catch (const std::exception& e) {
    err << "Error: " << e.what() << '\n';
    return exit_failure;
  }
}

}  // namespace tinker::bench
