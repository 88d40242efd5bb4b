#include "client/session/credentials.hpp"

#include <boost/asio/async_result.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>

#include <sys/wait.h>

#include <cmath>
#include <cstdio>
#include "core/wire/jwt.hpp"

#include <limits>
#include <thread>
#include <utility>

namespace tinker::client::session {
namespace {

namespace asio = boost::asio;

std::optional<std::int64_t> seconds_claim(const boost::json::object& claims, std::string_view name) {
  const boost::json::value* value = claims.if_contains(name);
  if (value == nullptr) return std::nullopt;
  if (value->is_int64()) return value->get_int64();
  if (value->is_uint64() && value->get_uint64() <= static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
    return static_cast<std::int64_t>(value->get_uint64());
  if (value->is_double() && std::isfinite(value->get_double()) && std::abs(value->get_double()) < 1e18)
    return static_cast<std::int64_t>(value->get_double());  // NumericDate may carry a fraction
  return std::nullopt;
}

bool is_space(char c) noexcept {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

std::string_view trim(std::string_view text) noexcept {
  while (!text.empty() && is_space(text.front())) text.remove_prefix(1);
  while (!text.empty() && is_space(text.back())) text.remove_suffix(1);
  return text;
}

boost::system::error_code command_failed(diagnostics& diag, std::string message) {
  diag.clear();
  diag.message = std::move(message);
  return make_error_code(errc::authentication_failed);
}

// The outcome of a command run on the helper thread.
class CommandOutcome {
 public:
  CommandOutcome() = default;
  boost::system::error_code ec;
  Secret secret;
  diagnostics diag;
};

}  // namespace

std::optional<JwtClaims> decode_jwt_claims(std::string_view jwt) {
  const std::optional<boost::json::object> parsed = wire::jwt_claims(jwt);
  if (!parsed) return std::nullopt;
  const boost::json::object& object = *parsed;
  JwtClaims claims;
  claims.exp = seconds_claim(object, "exp");
  claims.sub = wire::string_claim(object, "sub");
  claims.email = wire::string_claim(object, "email");
  if (claims.email && claims.email->empty()) claims.email.reset();
  claims.iss = wire::string_claim(object, "iss");
  return claims;
}

bool looks_like_jwt(std::string_view credential) noexcept {
  return credential.starts_with("eyJ");
}

boost::system::error_code run_credential_command(const std::string& command, Secret& out, diagnostics& diag) {
  // The command may print a credential: nothing it prints is ever quoted in a message.
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr)
    return command_failed(diag, "the credential command (TINKER_CREDENTIAL_CMD) could not be started");
  constexpr std::size_t max_output = 64 * 1024;
  std::string output;
  char buffer[4096];
  for (;;) {
    const std::size_t n = std::fread(buffer, 1, sizeof buffer, pipe);
    if (n == 0) break;
    if (output.size() < max_output) output.append(buffer, n);
  }
  const int status = ::pclose(pipe);
  if (status == -1 || !WIFEXITED(status)) {
    return command_failed(diag, "the credential command (TINKER_CREDENTIAL_CMD) did not exit normally");
  }
  if (WEXITSTATUS(status) != 0) {
    return command_failed(diag, "the credential command (TINKER_CREDENTIAL_CMD) exited with status " +
                                    std::to_string(WEXITSTATUS(status)));
  }
  const std::string_view credential = trim(output);
  if (credential.empty()) {
    return command_failed(diag, "the credential command (TINKER_CREDENTIAL_CMD) printed nothing");
  }
  if (output.size() >= max_output) {
    return command_failed(diag, "the credential command (TINKER_CREDENTIAL_CMD) printed more than 64 KiB");
  }
  out = Secret(std::string(credential));
  return {};
}

asio::awaitable<boost::system::error_code> async_run_credential_command(std::string command, Secret& out,
                                                                        diagnostics& diag) {
  const asio::any_io_executor executor = co_await asio::this_coro::executor;
  auto initiation = [executor](auto handler, std::string cmd) {
    auto work = asio::make_work_guard(executor);  // the io_context waits for the command
    std::thread([handler = std::move(handler), cmd = std::move(cmd), work = std::move(work)]() mutable {
      CommandOutcome outcome;
      outcome.ec = run_credential_command(cmd, outcome.secret, outcome.diag);
      const asio::any_io_executor target = work.get_executor();
      // The work guard travels with the completion and is released on the io thread: released
      // here, after the post, it could touch an io_context that is already gone.
      asio::post(target, [handler = std::move(handler), outcome = std::move(outcome),
                          work = std::move(work)]() mutable { std::move(handler)(std::move(outcome)); });
    }).detach();
  };
  CommandOutcome outcome = co_await asio::async_initiate<decltype(asio::use_awaitable), void(CommandOutcome)>(
      initiation, asio::use_awaitable, std::move(command));
  if (outcome.ec) {
    diag = std::move(outcome.diag);
    co_return outcome.ec;
  }
  out = std::move(outcome.secret);
  co_return boost::system::error_code{};
}

}  // namespace tinker::client::session
