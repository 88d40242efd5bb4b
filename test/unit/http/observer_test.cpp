// http::Observer (doc/observability.md): level gating, redaction of known secrets and of anything shaped like a
// credential, query strings, and hooks and sinks that throw.
#include "http/observer.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

namespace tinker::http {
namespace {

class Lines {
 public:
  std::vector<std::string> lines;
  LogSink sink() {
    return [this](LogLevel, std::string_view line) { lines.emplace_back(line); };
  }
};

TEST(ObserverTest, WatchesOnlyWhatSomebodyListensTo) {
  Lines out;
  EXPECT_FALSE(Observer(out.sink(), LogLevel::warning, nullptr).watches_events());
  EXPECT_FALSE(Observer(out.sink(), LogLevel::warning, nullptr).watches_exchanges());
  EXPECT_TRUE(Observer(out.sink(), LogLevel::info, nullptr).watches_events());
  EXPECT_FALSE(Observer(out.sink(), LogLevel::info, nullptr).watches_exchanges());
  EXPECT_TRUE(Observer(out.sink(), LogLevel::debug, nullptr).watches_exchanges());
  EXPECT_FALSE(Observer(nullptr, LogLevel::debug, nullptr).watches_exchanges());  // no sink, no lines
  const Observer hooked(nullptr, LogLevel::off, [](const Event&) {});
  EXPECT_TRUE(hooked.watches_exchanges());
  EXPECT_TRUE(hooked.watches_events());
}

TEST(ObserverTest, DropsLinesAboveItsLevel) {
  Lines out;
  const Observer observer(out.sink(), LogLevel::info, nullptr);
  observer.log(LogLevel::debug, "hidden");
  observer.log(LogLevel::info, "shown");
  observer.log(LogLevel::warning, "shown too");
  EXPECT_EQ(out.lines, (std::vector<std::string>{"shown", "shown too"}));
}

TEST(ObserverTest, RedactsEveryKnownSecretFromEveryLine) {
  Lines out;
  Observer observer(out.sink(), LogLevel::debug, nullptr);
  observer.add_secret(Secret("plain-secret-value"));
  observer.add_secret(Secret("abc"));  // too short to redact without shredding text: ignored
  observer.log(LogLevel::warning, R"(HTTP 401: {"detail":"key plain-secret-value is not valid"} abc)");
  ASSERT_EQ(out.lines.size(), 1U);
  EXPECT_EQ(out.lines[0], R"(HTTP 401: {"detail":"key <redacted> is not valid"} abc)");
}

TEST(ObserverTest, RedactsTheHfTokenOfTheEnvironment) {
  ::setenv("HF_TOKEN", "my-own-token-from-env", 1);
  Lines out;
  const Observer observer(out.sink(), LogLevel::debug, nullptr);
  ::unsetenv("HF_TOKEN");
  observer.log(LogLevel::info, "token my-own-token-from-env in an error body");
  EXPECT_EQ(out.lines.at(0), "token <redacted> in an error body");
}

TEST(ObserverTest, RedactsWhatLooksLikeACredential) {
  EXPECT_EQ(redact_credential_shapes("jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJl, ok"),
            "jwt <redacted>, ok");
  EXPECT_EQ(redact_credential_shapes("hf_abcdefghijklmnopqrstuvwxyz0123 and hf_short"), "<redacted> and hf_short");
  EXPECT_EQ(redact_credential_shapes("key=tml-0123456789abcdefXYZ!"), "key=<redacted>!");
  EXPECT_EQ(redact_credential_shapes("tinker-local/tiny-lm and eyJ"), "tinker-local/tiny-lm and eyJ");
  EXPECT_EQ(redact_credential_shapes("xhf_abcdefghijklmnopqrstuvwxyz0123"), "xhf_abcdefghijklmnopqrstuvwxyz0123");
}

TEST(ObserverTest, RedactsQueryValuesButTheHarmlessOnes) {
  EXPECT_EQ(redact_query("/api/v1/training_runs"), "/api/v1/training_runs");
  EXPECT_EQ(redact_query("/api/v1/training_runs?limit=20&offset=40"), "/api/v1/training_runs?limit=20&offset=40");
  EXPECT_EQ(redact_query("/x?api_key=tml-secret&token=hf_x&X-Amz-Signature=abc&limit=5&flag"),
            "/x?api_key=***&token=***&X-Amz-Signature=***&limit=5&flag");
  EXPECT_EQ(redact_query("/x?token=abc#fragment"), "/x?token=***");
  EXPECT_EQ(path_of("/x/y?token=abc"), "/x/y");
}

TEST(ObserverTest, TheExchangeLineHasEveryFieldAndNoQueryValue) {
  Lines out;
  const Observer observer(out.sink(), LogLevel::debug, nullptr);
  RequestFinished event;
  event.method = "GET";
  event.path = "/archive";
  event.status = 200;
  event.duration = std::chrono::microseconds(12'345);
  event.attempt = 2;
  event.bytes_sent = 0;
  event.bytes_received = 4096;
  event.request_id = "req-1";
  observer.request_finished(event, "/archive?signature=s3cr3t&limit=1");
  EXPECT_EQ(out.lines.at(0),
            "http GET /archive?signature=***&limit=1 status=200 ms=12.3 request_id=req-1 attempt=2 sent=0 "
            "received=4096");
}

TEST(ObserverTest, AThrowingSinkOrHookIsIgnored) {
  int calls = 0;
  const Observer observer([](LogLevel, std::string_view) { throw std::runtime_error("sink"); }, LogLevel::debug,
                          [&calls](const Event&) {
                            ++calls;
                            throw std::runtime_error("hook");
                          });
  RetryScheduled event;
  EXPECT_NO_THROW(observer.retry_scheduled(event));
  EXPECT_EQ(calls, 1);
}

}  // namespace
}  // namespace tinker::http
