// tinker::use_awaitable against tinker-local: a real client call awaited with the token alone and
// through each of Asio's adapters (as_tuple, redirect_error, bind_cancellation_slot, deferred,
// parallel_group). The failing call is a RestClient lookup of a run that does not exist: a 404
// with the server's message and request id.
#include "integration/support/local_service.hpp"

#include <tinker/async.hpp>
#include <tinker/rest_client.hpp>
#include <tinker/service_client.hpp>

#include <gtest/gtest.h>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/deferred.hpp>
#include <boost/asio/experimental/parallel_group.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/use_future.hpp>

#include <array>
#include <chrono>
#include <string>
#include <tuple>

namespace tinker::test {
namespace {

namespace asio = boost::asio;
using boost::system::error_code;

constexpr const char* missing_run = "run-that-does-not-exist";

class UseAwaitableTest : public LocalService {
 protected:
  void SetUp() override {
    LocalService::SetUp();
    service = make_service_client();
  }

  RestClient rest() const { return service->create_rest_client(); }

  std::unique_ptr<ServiceClient> service;
};

// What a coroutine threw.
class Thrown {
 public:
  bool is_tinker_error = false;
  error_code code;
  diagnostics diag;
};

template <class T>
Thrown thrown_by(boost::asio::io_context& io, std::future<T>& future) {
  Thrown thrown;
  try {
    run_until_ready(io, future);
  } catch (const error& e) {
    thrown.is_tinker_error = true;
    thrown.code = e.code();
    thrown.diag = e.diag();
  } catch (const boost::system::system_error& e) {
    thrown.code = e.code();
  }
  return thrown;
}

// The diagnostics of the server's answer to a lookup of a missing run.
void expect_not_found_diagnostics(const diagnostics& diag) {
  EXPECT_EQ(diag.http_status, 404);
  EXPECT_FALSE(diag.request_id.empty());
  EXPECT_NE(diag.message.find(missing_run), std::string::npos) << diag.message;
}

// ---- coroutines (named, parameters by value: the GCC 12 rules) -----------------------------

asio::awaitable<std::size_t> model_count(const ServiceClient* service) {
  const GetServerCapabilitiesResponse capabilities =
      co_await service->async_get_server_capabilities(tinker::use_awaitable);
  co_return capabilities.supported_models.size();
}

asio::awaitable<asio::any_io_executor> training_executor(const ServiceClient* service) {
  LoraTrainingOptions options{std::string(tiny_model)};
  const TrainingClient training = co_await service->async_create_lora_training_client(std::move(options));
  co_return training.get_executor();
}

asio::awaitable<asio::any_io_executor> sampling_executor(const ServiceClient* service) {
  SamplingSource source = SamplingSource::from_base_model(std::string(tiny_model));
  const SamplingClient sampler = co_await service->async_create_sampling_client(std::move(source));
  co_return sampler.get_executor();
}

asio::awaitable<TrainingRun> missing(RestClient rest) {
  co_return co_await rest.async_get_training_run(missing_run, AccessScope::owned, tinker::use_awaitable);
}

asio::awaitable<TrainingRun> missing_with_diag(RestClient rest, diagnostics* diag) {
  co_return co_await rest.async_get_training_run(missing_run, AccessScope::owned, *diag, tinker::use_awaitable);
}

// No token at all: the default token is tinker::use_awaitable.
asio::awaitable<TrainingRun> missing_default_token(RestClient rest) {
  co_return co_await rest.async_get_training_run(missing_run, AccessScope::owned);
}

TEST_F(UseAwaitableTest, APlainCoAwaitWithTheDefaultTokenThrowsTinkerErrorWithTheServersDiagnostics) {
  auto future = asio::co_spawn(io, missing_default_token(rest()), asio::use_future);
  const Thrown thrown = thrown_by(io, future);
  EXPECT_TRUE(thrown.is_tinker_error);
  EXPECT_EQ(thrown.code, errc::not_found);
  expect_not_found_diagnostics(thrown.diag);
}

TEST_F(UseAwaitableTest, EveryClientReportsTheExecutorItsServiceClientWasGiven) {
  const asio::any_io_executor expected = io.get_executor();
  EXPECT_EQ(service->get_executor(), expected);
  EXPECT_EQ(rest().get_executor(), expected);
  EXPECT_EQ(run(training_executor(service.get())), expected);
  EXPECT_EQ(run(sampling_executor(service.get())), expected);
}

TEST_F(UseAwaitableTest, ACoAwaitedCallReturnsItsValue) {
  EXPECT_GE(run(model_count(service.get())), 1u);
}

TEST_F(UseAwaitableTest, AFailedCallThrowsTinkerErrorWithTheServersDiagnostics) {
  auto future = asio::co_spawn(io, missing(rest()), asio::use_future);
  const Thrown thrown = thrown_by(io, future);
  EXPECT_TRUE(thrown.is_tinker_error);
  EXPECT_EQ(thrown.code, errc::not_found);
  expect_not_found_diagnostics(thrown.diag);
}

TEST_F(UseAwaitableTest, TheDiagnosticsOverloadReceivesWhatTheErrorCarries) {
  diagnostics diag;
  auto future = asio::co_spawn(io, missing_with_diag(rest(), &diag), asio::use_future);
  const Thrown thrown = thrown_by(io, future);
  EXPECT_TRUE(thrown.is_tinker_error);
  EXPECT_EQ(thrown.code, errc::not_found);
  expect_not_found_diagnostics(diag);
  EXPECT_EQ(thrown.diag, diag);
}

// ---- as_tuple ------------------------------------------------------------------------------

asio::awaitable<std::tuple<error_code, TrainingRun>> missing_as_tuple(RestClient rest, diagnostics* diag) {
  co_return co_await rest.async_get_training_run(missing_run, AccessScope::owned, *diag,
                                                 asio::as_tuple(tinker::use_awaitable));
}

asio::awaitable<std::tuple<error_code, GetServerCapabilitiesResponse>> capabilities_as_tuple(
    const ServiceClient* service) {
  co_return co_await service->async_get_server_capabilities(asio::as_tuple(tinker::use_awaitable));
}

TEST_F(UseAwaitableTest, AsTupleGivesTheCodeAndLeavesTheDiagnosticsToTheOverload) {
  diagnostics diag;
  const auto [code, run_found] = run(missing_as_tuple(rest(), &diag));
  EXPECT_EQ(code, errc::not_found);
  EXPECT_TRUE(run_found.training_run_id.empty());
  expect_not_found_diagnostics(diag);

  const auto [ok, capabilities] = run(capabilities_as_tuple(service.get()));
  EXPECT_FALSE(ok);
  EXPECT_FALSE(capabilities.supported_models.empty());
}

// ---- redirect_error ------------------------------------------------------------------------

asio::awaitable<error_code> missing_redirected(RestClient rest) {
  error_code code;
  co_await rest.async_get_training_run(missing_run, AccessScope::owned,
                                       asio::redirect_error(tinker::use_awaitable, code));
  co_return code;
}

asio::awaitable<error_code> capabilities_redirected(const ServiceClient* service) {
  error_code code = make_error_code(errc::timeout);
  co_await service->async_get_server_capabilities(asio::redirect_error(tinker::use_awaitable, code));
  co_return code;
}

TEST_F(UseAwaitableTest, RedirectErrorSetsTheCodeInsteadOfThrowing) {
  EXPECT_EQ(run(missing_redirected(rest())), errc::not_found);
  EXPECT_FALSE(run(capabilities_redirected(service.get())));  // success overwrites the preset code
}

// ---- bind_cancellation_slot ----------------------------------------------------------------

asio::awaitable<TrainingRunsResponse> list_runs(RestClient rest, asio::cancellation_slot slot, bool* started) {
  const ListTrainingRunsOptions options;
  *started = true;
  co_return co_await rest.async_list_training_runs(options, asio::bind_cancellation_slot(slot, tinker::use_awaitable));
}

TEST_F(UseAwaitableTest, EmittingOnTheBoundSlotCancelsTheCall) {
  // The server would hold the listing for 10 s: only the cancellation can end the call sooner.
  local::FaultRule held("training_runs", local::FaultKind::delay);
  held.delay = std::chrono::seconds(10);
  held.on_calls = {1};
  server->set_faults({held});

  asio::cancellation_signal stop;
  bool started = false;
  auto future = asio::co_spawn(io, list_runs(rest(), stop.slot(), &started), asio::use_future);
  while (!started) io.run_one();  // the call has been initiated when the coroutine suspends
  stop.emit(asio::cancellation_type::terminal);
  const Thrown thrown = thrown_by(io, future);
  EXPECT_TRUE(thrown.is_tinker_error);
  EXPECT_EQ(thrown.code, errc::cancelled);
}

// ---- deferred ------------------------------------------------------------------------------

asio::awaitable<TrainingRun> missing_deferred_then_token(RestClient rest) {
  auto lookup = rest.async_get_training_run(missing_run, AccessScope::owned, asio::deferred);
  co_return co_await std::move(lookup)(tinker::use_awaitable);
}

TEST_F(UseAwaitableTest, ADeferredCallAwaitedWithTheTokenThrowsWithItsDiagnostics) {
  auto future = asio::co_spawn(io, missing_deferred_then_token(rest()), asio::use_future);
  const Thrown thrown = thrown_by(io, future);
  EXPECT_TRUE(thrown.is_tinker_error);
  EXPECT_EQ(thrown.code, errc::not_found);
  expect_not_found_diagnostics(thrown.diag);
}

// ---- parallel_group ------------------------------------------------------------------------

using GroupResult =
    std::tuple<std::array<std::size_t, 2>, error_code, GetServerCapabilitiesResponse, error_code, TrainingRun>;

asio::awaitable<GroupResult> capabilities_and_missing(const ServiceClient* service, RestClient rest,
                                                      diagnostics* diag) {
  auto capabilities = service->async_get_server_capabilities(asio::deferred);
  auto lookup = rest.async_get_training_run(missing_run, AccessScope::owned, *diag, asio::deferred);
  co_return co_await asio::experimental::make_parallel_group(std::move(capabilities), std::move(lookup))
      .async_wait(asio::experimental::wait_for_all(), tinker::use_awaitable);
}

TEST_F(UseAwaitableTest, AParallelGroupOfCallsIsAwaitedWithTheToken) {
  diagnostics diag;
  const auto [order, ok, capabilities, code, run_found] = run(capabilities_and_missing(service.get(), rest(), &diag));
  EXPECT_FALSE(ok);
  EXPECT_FALSE(capabilities.supported_models.empty());
  EXPECT_EQ(code, errc::not_found);
  EXPECT_TRUE(run_found.training_run_id.empty());
  expect_not_found_diagnostics(diag);
  EXPECT_EQ(order[0] + order[1], 1u);  // both finished, in some order
}

}  // namespace
}  // namespace tinker::test
