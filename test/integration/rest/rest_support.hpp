// Shared pieces of the RestClient tests: a fixture with fast REST timings (archive "still
// building" wait, trace export polling) and a coroutine that makes a run with checkpoints.
#pragma once

#include "client/session/holder.hpp"
#include "integration/support/local_service.hpp"
#include "integration/support/training_data.hpp"

#include <tinker/rest_client.hpp>
#include <tinker/service_client.hpp>
#include <tinker/training_client.hpp>

#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>

#include <chrono>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace tinker::test {

/// A training run with `names` saved as training checkpoints and one sampler checkpoint.
class RunWithCheckpoints {
 public:
  std::string run_id;
  std::vector<std::string> training_paths;  ///< tinker:// paths, in the order of `names`
  std::string sampler_path;
};

inline boost::asio::awaitable<RunWithCheckpoints> make_run(ServiceClient& service, std::vector<std::string> names,
                                                           std::optional<std::int64_t> ttl_seconds = std::nullopt) {
  const LoraTrainingOptions options(std::string(tiny_model), 4);
  TrainingClient training = co_await service.async_create_lora_training_client(options, use_awaitable);
  RunWithCheckpoints run;
  run.run_id = training.model_id();
  for (const std::string& name : names) {
    const SaveStateOptions save(ttl_seconds);
    auto saving = co_await training.async_save_state(name, save, use_awaitable);
    run.training_paths.push_back((co_await saving.async_get(use_awaitable)).path);
  }
  auto sampler = co_await training.async_save_weights_for_sampler("for-sampling", std::nullopt, use_awaitable);
  run.sampler_path = (co_await sampler.async_get(use_awaitable)).path.value_or("");
  co_return run;
}

/// Runs `io` until `future` is ready; returns its failure code (success when it has a value).
template <class T>
boost::system::error_code failure_of(boost::asio::io_context& io, std::future<T>& future) {
  try {
    run_until_ready(io, future);
  } catch (const boost::system::system_error& e) {
    return e.code();
  }
  return {};
}

class RestService : public LocalService {
 protected:
  /// A ServiceClient whose REST waits take milliseconds instead of seconds.
  std::unique_ptr<ServiceClient> make_fast_service(ServiceClientOptions options) {
    auto service = make_service_client(std::move(options));
    detail::ClientHolder::Timing timing;
    timing.archive_build_wait = std::chrono::milliseconds(10);
    timing.trace_export_poll_interval = std::chrono::milliseconds(10);
    service->holder()->set_timing(timing);
    return service;
  }
  std::unique_ptr<ServiceClient> make_fast_service() {
    return make_fast_service(ServiceClientOptions(client_options()));
  }
};

}  // namespace tinker::test
