// What every sample needs besides its recipe: command-line flags, the choice between the Tinker
// service and an embedded tinker-local, running a coroutine to completion, the chat dataset and
// a few numbers (weighted mean loss, learning-rate schedule).
//
// Only the public API is used here, so a sample copied out of this repository keeps working with
// this file beside it.
#pragma once

#include <tinker/local/server.hpp>
#include <tinker/renderers.hpp>
#include <tinker/tinker.hpp>

#include <boost/asio/awaitable.hpp>

#include <filesystem>
#include <functional>
#include <initializer_list>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace samples {

/// Flags of the form `--name value`. Unknown flags and missing values are refused, listing the
/// known flags, so a typo never silently runs with a default.
class Flags {
 public:
  Flags(int argc, char** argv, std::initializer_list<std::string_view> known);

  std::string text(std::string_view name, std::string fallback) const;
  int integer(std::string_view name, int fallback) const;
  double number(std::string_view name, double fallback) const;

 private:
  std::map<std::string, std::string, std::less<>> values_;
};

/// Where a sample runs. With TINKER_API_KEY (or TINKER_CREDENTIAL_CMD) set: the service from the
/// environment. Without: a tinker-local server started in this process on a loopback port, with
/// its real tiny language model, so every sample runs offline.
class Backend {
 public:
  explicit Backend(std::string_view sample_name);
  ~Backend();
  Backend(const Backend&) = delete;
  Backend& operator=(const Backend&) = delete;

  bool is_local() const noexcept { return local_server_ != nullptr; }
  const tinker::ClientOptions& client() const noexcept { return client_; }
  tinker::ServiceClientOptions service_options() const { return tinker::ServiceClientOptions(client_); }

  /// `--base-model` if given; else tinker-local/tiny-lm locally (a ChatML tokenizer, so the
  /// qwen3_instruct renderer) and Qwen/Qwen3.5-4B on the service (the cookbook's default; qwen3_5).
  std::string base_model(const Flags& flags) const;

 private:
  tinker::ClientOptions client_;
  std::unique_ptr<tinker::local::Server> local_server_;
};

/// A sample's asynchronous body: given a ServiceClient, returns whether its check passed.
using AsyncSample = std::function<boost::asio::awaitable<bool>(tinker::ServiceClient&)>;

/// Creates a ServiceClient on a fresh io_context, runs `sample` on it to completion and returns
/// its result; exceptions propagate.
bool run_async(const Backend& backend, const AsyncSample& sample);

/// Runs `sample` and turns its result into an exit status; any exception is printed and gives
/// EXIT_FAILURE too.
int guarded_main(const std::function<bool()>& sample);

using Conversation = std::vector<tinker::renderers::Message>;

/// A JSONL file of {"messages": [{"role": ..., "content": ...}, ...]} lines (the cookbook's
/// conversation shape, read by tinker::renderers::conversation_from_json). Throws tinker::error
/// (invalid_argument) naming the file, the line and the JSON path that cannot be read.
std::vector<Conversation> read_conversations(const std::filesystem::path& jsonl);

/// `--data-dir` (default: the samples/data directory of the source tree) joined with `file`.
std::filesystem::path data_file(const Flags& flags, std::string_view file);

/// One supervised datum per conversation, trained on every assistant message.
std::vector<tinker::Datum> supervised_data(const tinker::renderers::Renderer& renderer,
                                           const std::vector<Conversation>& conversations);

/// Mean negative log-likelihood per trained token: -sum(w * logprob) / sum(w), the weights
/// read from each datum's `weights` input.
double mean_nll(const std::vector<tinker::Datum>& data, const tinker::ForwardBackwardOutput& output);

/// mean_nll of `data` under the training client's current weights: a forward pass (no
/// gradients) with the cross-entropy loss.
boost::asio::awaitable<double> forward_nll(const tinker::TrainingClient& training,
                                           const std::vector<tinker::Datum>& data);

/// Linear decay from `base` at step 0 to base / steps at the last step (the cookbook's "linear"
/// schedule: lr * (1 - step / steps)).
double linear_decay(double base, int step, int steps);

}  // namespace samples
