#include "programs/cli/sampling_turn.hpp"

#include <tinker/async.hpp>
#include <tinker/error.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <chrono>
#include <fstream>
#include <iterator>
#include <ostream>
#include <sstream>
#include <utility>

namespace tinker::cli {
namespace {
namespace asio = boost::asio;

// Shared by the two branches of a wait with a spinner: the sampling branch sets `done` and
// cancels the timer however it ends, which ends the spinner.
class SpinnerState {
 public:
  explicit SpinnerState(const asio::any_io_executor& executor) : timer(executor) {}
  asio::steady_timer timer;
  bool done = false;
};

class StopSpinnerOnExit {
 public:
  explicit StopSpinnerOnExit(SpinnerState& state) : state_(state) {}
  ~StopSpinnerOnExit() {
    state_.done = true;
    state_.timer.cancel();
  }
  StopSpinnerOnExit(const StopSpinnerOnExit&) = delete;
  StopSpinnerOnExit& operator=(const StopSpinnerOnExit&) = delete;

 private:
  SpinnerState& state_;
};

asio::awaitable<void> draw_spinner(std::ostream& out, SpinnerState& state) {
  static constexpr std::string_view frames = "|/-\\";
  for (std::size_t frame = 0; !state.done; ++frame) {
    out << '\r' << frames[frame % frames.size()] << ' ' << std::flush;
    state.timer.expires_after(std::chrono::milliseconds(120));
    const auto [ec] = co_await state.timer.async_wait(asio::as_tuple(asio::use_awaitable));
    if (ec) break;  // the sample ended, or Ctrl-C
  }
  out << "\r\x1b[K" << std::flush;
}

asio::awaitable<std::vector<SampledSequence>> request_samples(const SamplingClient& client, ModelInput prompt,
                                                              SamplingParams params, std::int64_t num_samples) {
  auto future =
      co_await client.async_sample(std::move(prompt), num_samples, std::move(params), SampleOptions(), use_awaitable);
  SampleResponse response = co_await future.async_get(use_awaitable);
  if (response.sequences.size() != static_cast<std::size_t>(num_samples)) {
    throw CliError("the server answered " + std::to_string(response.sequences.size()) + " samples instead of " +
                   std::to_string(num_samples));
  }
  co_return std::move(response.sequences);
}

asio::awaitable<std::vector<SampledSequence>> request_samples_then_stop(const SamplingClient& client, ModelInput prompt,
                                                                        SamplingParams params, std::int64_t num_samples,
                                                                        SpinnerState& state) {
  const StopSpinnerOnExit stop(state);
  co_return co_await request_samples(client, std::move(prompt), std::move(params), num_samples);
}

}  // namespace

asio::awaitable<std::vector<SampledSequence>> sample_sequences(Context& context, const SamplingClient& client,
                                                               ModelInput prompt, SamplingParams params,
                                                               std::int64_t num_samples, bool spinner) {
  if (!spinner) co_return co_await request_samples(client, std::move(prompt), std::move(params), num_samples);
  using namespace asio::experimental::awaitable_operators;
  // `&&`: a failed sample cancels the spinner and its error propagates; a finished one stops it.
  SpinnerState state(context.executor);
  co_return co_await (request_samples_then_stop(client, std::move(prompt), std::move(params), num_samples, state) &&
                      draw_spinner(context.out, state));
}

std::vector<renderers::Message> conversation_prefix(const renderers::Renderer& renderer,
                                                    const std::string& system_prompt,
                                                    std::span<const renderers::ToolSpec> tools) {
  if (!tools.empty()) return renderer.create_conversation_prefix_with_tools(tools, system_prompt);
  if (system_prompt.empty()) return {};
  return {renderers::Message("system", system_prompt)};
}

std::vector<renderers::ToolSpec> read_tools_file(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) throw CliError("--tools " + path + ": cannot open the file");
  const std::string text((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  try {
    return renderers::tools_from_json(text);
  } catch (const error& e) {
    throw CliError("--tools " + path + ": " + e.diag().message);
  }
}

}  // namespace tinker::cli
