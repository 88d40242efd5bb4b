// doc/observability.md against tinker-local with injected faults: the debug line of every exchange, the info
// line of every retry and back-off with its reason, no credential in any line or event (also when one sits in a
// URL or comes back in an error body), the event hook's events with their fields on the io thread, and an
// observer that stays out of the way when nobody listens.
#include "http/observer.hpp"
#include "integration/sampling/sampling_support.hpp"
#include "integration/support/local_service.hpp"
#include "integration/support/training_data.hpp"

#include <tinker/events.hpp>
#include <tinker/service_client.hpp>

#include <gtest/gtest.h>

#include <boost/asio/use_awaitable.hpp>

#include <cstdlib>
#include <deque>
#include <regex>
#include <string>
#include <thread>
#include <variant>
#include <vector>

namespace tinker::test {
namespace {

namespace asio = boost::asio;
using asio::use_awaitable;
using std::chrono::milliseconds;

// Its own key: the sampling back-off is shared per (base URL, key) across the process.
constexpr std::string_view observed_key = "tml-observability-test-key-0042";
constexpr std::string_view hf_token = "hf_ObservabilityTestToken0123456789abcdef";
// Shaped like a JWT (header {"alg":"HS256"}, payload {"sub":"x"}).
constexpr std::string_view fake_jwt = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJlc2lnbmF0dXJlMDEyMw";

local::FaultRule paused_queue(const char* endpoint) {
  local::FaultRule rule(endpoint, local::FaultKind::pause_queue);
  rule.delay = milliseconds(300);
  rule.on_calls = {1};
  return rule;
}

// One fault of each kind the retry layers handle differently.
std::vector<local::FaultRule> mixed_faults() {
  return {fault_once("forward_backward", local::FaultKind::status, 503), paused_queue("optim_step"),
          fault_once("asample", local::FaultKind::status, 429),
          fault_once("retrieve_future", local::FaultKind::status, 500)};
}

asio::awaitable<void> training_and_sampling(ServiceClient& service) {
  TrainingClient training = co_await service.async_create_lora_training_client(
      LoraTrainingOptions(std::string(tiny_model), 4), use_awaitable);
  const ForwardBackwardInput input(tiny_batch(2, 8), loss_fn::cross_entropy);
  auto gradients = co_await training.async_forward_backward(input, use_awaitable);
  co_await gradients.async_get(use_awaitable);
  const AdamParams adam(1e-3);
  auto update = co_await training.async_optim_step(adam, use_awaitable);
  co_await update.async_get(use_awaitable);
  SamplingClient sampler = co_await service.async_create_sampling_client(
      SamplingSource::from_base_model(std::string(tiny_model)), use_awaitable);
  const ModelInput prompt = ModelInput::from_ints(std::vector<TokenId>{5, 6, 7});
  const SamplingParams params(4);
  const SampleOptions options;
  auto sample = co_await sampler.async_sample(prompt, 1, params, options, use_awaitable);
  co_await sample.async_get(use_awaitable);
}

// Asks for a training run named `id`: the id travels in the URL and the server's 404 body quotes it.
asio::awaitable<void> ask_for_run(ServiceClient& service, std::string id) {
  RestClient rest = service.create_rest_client();
  try {
    co_await rest.async_get_training_run(std::move(id), AccessScope::owned, use_awaitable);
  } catch (const std::exception&) {
    // expected: no such run
  }
}

// What the sink and the hook received. An event's string_views die with the call: the kept copy
// points into `texts` instead (a deque: its strings never move).
class Captured {
 public:
  std::vector<std::string> lines;
  std::vector<Event> events;
  std::deque<std::string> texts;
  bool off_thread = false;

  void keep(const Event& event) {
    Event copy = event;
    std::visit(
        [&](auto& e) {
          using E = std::decay_t<decltype(e)>;
          if constexpr (std::is_same_v<E, RequestFinished>) {
            own(e.method, e.path, e.error, e.request_id);
          } else if constexpr (std::is_same_v<E, RetryScheduled>) {
            own(e.path, e.reason);
          } else if constexpr (std::is_same_v<E, BackoffStarted> || std::is_same_v<E, BackoffEnded>) {
            own(e.path);
          } else if constexpr (std::is_same_v<E, FutureStateChanged>) {
            own(e.request_id, e.operation, e.queue_state_reason, e.error);
          } else if constexpr (std::is_same_v<E, HeartbeatFailing>) {
            own(e.session_id, e.reason);
          }
        },
        copy);
    events.push_back(copy);
  }

 private:
  template <class... Views>
  void own(Views&... views) {
    ((views = texts.emplace_back(views)), ...);
  }
};

class ObservabilityTest : public LocalService {
 protected:
  std::unique_ptr<ServiceClient> observed_client(LogLevel level, bool hook) {
    ClientOptions options = client_options();
    options.api_key = Secret(std::string(observed_key));
    options.log_level = level;
    ServiceClientOptions service_options(options);
    Captured* out = &captured;
    service_options.log = [out](LogLevel, std::string_view line) { out->lines.emplace_back(line); };
    if (hook) {
      const std::thread::id io_thread = std::this_thread::get_id();  // the test runs `io`
      service_options.on_event = [out, io_thread](const Event& event) {
        if (std::this_thread::get_id() != io_thread) out->off_thread = true;
        out->keep(event);
      };
    }
    return make_service_client(std::move(service_options));
  }

  std::vector<std::string> lines_starting(std::string_view prefix) const {
    std::vector<std::string> found;
    for (const auto& line : captured.lines) {
      if (line.starts_with(prefix)) found.push_back(line);
    }
    return found;
  }

  bool has_line_matching(const std::string& pattern) const {
    const std::regex re(pattern);
    for (const auto& line : captured.lines) {
      if (std::regex_search(line, re)) return true;
    }
    return false;
  }

  template <class E>
  std::vector<E> events_of() const {
    std::vector<E> found;
    for (const auto& event : captured.events) {
      if (const E* e = std::get_if<E>(&event)) found.push_back(*e);
    }
    return found;
  }

  void use_fast_sampling(ServiceClient& service) {
    service.holder()->set_sample_tuning(fast_tuning(milliseconds(20), milliseconds(40)));
  }

  std::string all_text() const {
    std::string text;
    for (const auto& line : captured.lines) text += line + "\n";
    for (const auto& piece : captured.texts) text += piece + "\n";
    return text;
  }

  Captured captured;
};

TEST_F(ObservabilityTest, DebugLogsOneLineWithItsFieldsPerExchange) {
  auto service = observed_client(LogLevel::debug, false);
  use_fast_sampling(*service);
  run(training_and_sampling(*service));

  const auto exchanges = lines_starting("http ");
  ASSERT_FALSE(exchanges.empty());
  const std::regex shape(
      R"(^http ([A-Z]+) (/\S*) status=(\d+) ms=\d+\.\d request_id=(\S+) attempt=(\d+) sent=(\d+) received=(\d+)$)");
  bool saw_forward_backward = false;
  bool saw_asample = false;
  for (const auto& line : exchanges) {
    std::smatch m;
    ASSERT_TRUE(std::regex_match(line, m, shape)) << line;
    EXPECT_NE(m[3], "0") << line;  // no faults here: every exchange had an answer
    EXPECT_NE(m[4], "-") << line;  // tinker-local sends x-request-id with every answer
    EXPECT_EQ(m[5], "1") << line;
    if (m[2] == "/api/v1/forward_backward") {
      saw_forward_backward = true;
      EXPECT_EQ(m[3], "200") << line;
      EXPECT_GT(std::stoul(m[6]), 0U) << line;
      EXPECT_GT(std::stoul(m[7]), 0U) << line;
    }
    if (m[2] == "/api/v1/asample") saw_asample = true;
  }
  EXPECT_TRUE(saw_forward_backward);
  EXPECT_TRUE(saw_asample);
  // The client's retrieve_future exchanges are the server's (no poll is left running).
  std::size_t polls = 0;
  for (const auto& line : exchanges) polls += line.starts_with("http POST /api/v1/retrieve_future ") ? 1 : 0;
  EXPECT_EQ(polls, requests_to(server->audit(), "retrieve_future").size());
}

TEST_F(ObservabilityTest, InfoLogsEachRetryWithItsReasonAndEachBackoffAndPause) {
  auto service = observed_client(LogLevel::info, false);
  use_fast_sampling(*service);
  server->set_faults(mixed_faults());
  run(training_and_sampling(*service));

  EXPECT_TRUE(has_line_matching(
      R"re(^retry transport /api/v1/forward_backward attempt=2 in_ms=\d+ reason="HTTP 503 \(.+\)"$)re"))
      << all_text();
  EXPECT_TRUE(has_line_matching(R"(^retry future_poll /api/v1/retrieve_future attempt=\d+ in_ms=0 reason="HTTP 500)"));
  EXPECT_TRUE(has_line_matching(R"(^back-off started sampling /api/v1/asample cause=rate_limited for_ms=20$)"));
  EXPECT_TRUE(has_line_matching(R"(^back-off ended sampling /api/v1/asample cause=rate_limited waited_ms=\d+$)"));
  EXPECT_TRUE(has_line_matching(
      R"(^future \S+ OptimStep state=paused queue=paused_capacity .*\(waiting in a paused queue\)$)"));
  EXPECT_TRUE(lines_starting("http ").empty()) << "exchange lines are debug only";
}

TEST_F(ObservabilityTest, AConnectionResetIsRetriedWithItsReason) {
  auto service = observed_client(LogLevel::info, false);
  server->set_faults({fault_once("forward_backward", local::FaultKind::reset_before)});
  run(training_and_sampling(*service));
  // attempt 1 again when the reset connection came from the pool (it was closed while idle), else 2.
  EXPECT_TRUE(has_line_matching(R"(^retry transport /api/v1/forward_backward attempt=[12] in_ms=\d+ reason=".+"$)"))
      << all_text();
}

TEST_F(ObservabilityTest, WarningLevelAddsNoRetryLines) {
  auto service = observed_client(LogLevel::warning, false);
  use_fast_sampling(*service);
  server->set_faults(mixed_faults());
  run(training_and_sampling(*service));
  EXPECT_TRUE(lines_starting("retry ").empty());
  EXPECT_TRUE(lines_starting("http ").empty());
  EXPECT_TRUE(lines_starting("back-off ").empty());
}

TEST_F(ObservabilityTest, NoCredentialInAnyLineOrEventAlsoInUrlsAndErrorBodies) {
  ::setenv("HF_TOKEN", std::string(hf_token).c_str(), 1);
  auto service = observed_client(LogLevel::debug, true);
  ::unsetenv("HF_TOKEN");
  use_fast_sampling(*service);
  server->set_faults(mixed_faults());
  run(training_and_sampling(*service));
  // Each credential in a URL path, echoed back by the server's 404 body.
  for (std::string_view secret : {observed_key, hf_token, fake_jwt}) run(ask_for_run(*service, std::string(secret)));

  const std::string text = all_text();
  ASSERT_TRUE(has_line_matching(R"(^http GET /api/v1/training_runs/<redacted>(\?\S*)? status=404)")) << text;
  EXPECT_EQ(text.find(observed_key), std::string::npos) << text;
  EXPECT_EQ(text.find(hf_token), std::string::npos) << text;
  EXPECT_EQ(text.find("eyJ"), std::string::npos) << text;  // neither the fake JWT nor any real one
}

TEST_F(ObservabilityTest, NoJwtOfTheSessionInAnyLine) {
  local::ServerOptions options = fast_server_options();
  options.client_config.pjwt_auth_enabled = true;
  start_server(options);
  auto service = observed_client(LogLevel::debug, true);
  server->set_faults({fault_once("forward_backward", local::FaultKind::status, 503)});
  run(training_and_sampling(*service));
  ASSERT_FALSE(lines_starting("http POST /api/v1/auth/token").empty());
  const std::string text = all_text();
  EXPECT_EQ(text.find("eyJ"), std::string::npos) << text;
  EXPECT_EQ(text.find(observed_key), std::string::npos) << text;
}

TEST_F(ObservabilityTest, TheHookHearsEveryKindOfEventWithItsFieldsOnTheIoThread) {
  auto service = observed_client(LogLevel::off, true);
  use_fast_sampling(*service);
  detail::ClientHolder::Timing timing;
  timing.heartbeat_interval = milliseconds(20);
  service->holder()->set_timing(timing);
  std::vector<local::FaultRule> faults = mixed_faults();
  local::FaultRule heartbeat("session_heartbeat", local::FaultKind::status);
  heartbeat.status = 400;  // not retried by the transport retries: each heartbeat fails at once
  heartbeat.probability = 1.0;
  faults.push_back(heartbeat);
  server->set_faults(faults);
  run(training_and_sampling(*service));
  run_until(io, [&] { return !events_of<HeartbeatFailing>().empty(); });

  EXPECT_FALSE(captured.off_thread);
  EXPECT_TRUE(captured.lines.empty()) << "logging is off";

  bool finished_forward_backward = false;
  for (const auto& e : events_of<RequestFinished>()) {
    if (e.path != "/api/v1/forward_backward" || e.status != 200) continue;
    finished_forward_backward = true;
    EXPECT_EQ(e.method, "POST");
    EXPECT_EQ(e.attempt, 2);  // after the 503
    EXPECT_GT(e.bytes_sent, 0U);
    EXPECT_GT(e.bytes_received, 0U);
    EXPECT_FALSE(e.request_id.empty());
  }
  EXPECT_TRUE(finished_forward_backward);

  bool transport_retry = false;
  for (const auto& e : events_of<RetryScheduled>()) {
    if (e.layer == RetryLayer::transport && e.path == "/api/v1/forward_backward") {
      transport_retry = true;
      EXPECT_EQ(e.status, 503);
      EXPECT_EQ(e.attempt, 2);
      EXPECT_EQ(e.delay, milliseconds(1));  // the server's retry-after-ms
    }
  }
  EXPECT_TRUE(transport_retry);

  const auto started = events_of<BackoffStarted>();
  const auto ended = events_of<BackoffEnded>();
  ASSERT_EQ(started.size(), 1U);
  ASSERT_EQ(ended.size(), 1U);
  EXPECT_EQ(started[0].layer, RetryLayer::sampling);
  EXPECT_EQ(started[0].cause, BackoffCause::rate_limited);
  EXPECT_EQ(started[0].delay, milliseconds(20));
  EXPECT_EQ(ended[0].layer, RetryLayer::sampling);

  bool paused = false;
  bool complete_after_pause = false;
  for (const auto& e : events_of<FutureStateChanged>()) {
    if (e.operation != "OptimStep") continue;
    if (e.state == FutureState::paused) {
      paused = true;
      EXPECT_EQ(e.queue_state, QueueState::paused_capacity);
    }
    if (e.state == FutureState::complete && paused) complete_after_pause = true;
  }
  EXPECT_TRUE(paused);
  EXPECT_TRUE(complete_after_pause);

  const auto heartbeats = events_of<HeartbeatFailing>();
  ASSERT_FALSE(heartbeats.empty());
  EXPECT_EQ(heartbeats[0].session_id, service->session_id());
  EXPECT_FALSE(heartbeats[0].warning);  // far from the 120 s
}

TEST_F(ObservabilityTest, NobodyListeningMeansNothingIsObserved) {
  auto quiet = observed_client(LogLevel::warning, false);
  const http::Observer* observer = quiet->holder()->http().observer();
  ASSERT_NE(observer, nullptr);
  EXPECT_FALSE(observer->watches_exchanges());
  EXPECT_FALSE(observer->watches_events());

  auto hooked = observed_client(LogLevel::off, true);
  EXPECT_TRUE(hooked->holder()->http().observer()->watches_exchanges());
  EXPECT_TRUE(hooked->holder()->http().observer()->watches_events());
}

}  // namespace
}  // namespace tinker::test
