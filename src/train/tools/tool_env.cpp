// ToolEnv and ToolEnvGroupBuilder (include/tinker/train/tool_env.hpp): the cookbook's
// AgentToolMessageEnv behind its token-level adapter (EnvFromMessageEnv), in one class.
#include <tinker/error.hpp>
#include <tinker/train/tool_env.hpp>

#include <set>
#include <string>
#include <utility>

namespace tinker::train {
namespace {

void refuse_tool_env(const std::string& what) {
  throw tinker::error(errc::invalid_argument, "ToolEnv: " + what);
}

void check_tool_env_arguments(const renderers::Renderer* renderer, const std::vector<Tool>& tools,
                              const ToolRewardFn& reward, const ToolEnvOptions& options) {
  if (renderer == nullptr) refuse_tool_env("renderer must not be null");
  if (!reward) refuse_tool_env("reward must not be empty");
  if (options.max_turns < 1) {
    refuse_tool_env("ToolEnvOptions::max_turns must be >= 1, got " + std::to_string(options.max_turns));
  }
  std::set<std::string, std::less<>> names;
  for (std::size_t i = 0; i < tools.size(); ++i) {
    const std::string where = "tools[" + std::to_string(i) + "]";
    if (tools[i].spec.name.empty()) refuse_tool_env(where + ".spec.name must not be empty");
    if (!tools[i].run) refuse_tool_env(where + " (\"" + tools[i].spec.name + "\").run must not be empty");
    if (!names.insert(tools[i].spec.name).second) {
      refuse_tool_env(where + ": a second tool named \"" + tools[i].spec.name + "\"");
    }
  }
}

// The declarations (in the renderer's tool format) followed by the task's messages.
std::vector<renderers::Message> tool_conversation_start(const renderers::Renderer& renderer,
                                                        const std::vector<Tool>& tools,
                                                        std::vector<renderers::Message> initial_messages,
                                                        const std::string& system_prompt) {
  std::vector<renderers::Message> history;
  if (!tools.empty()) {
    std::vector<renderers::ToolSpec> specs;
    for (const Tool& tool : tools) specs.push_back(tool.spec);
    history = renderer.create_conversation_prefix_with_tools(specs, system_prompt);
  } else if (!system_prompt.empty()) {
    history.emplace_back("system", system_prompt);
  }
  for (renderers::Message& message : initial_messages) history.push_back(std::move(message));
  return history;
}

renderers::Message tool_result_message(const renderers::ToolCall& call, std::string text) {
  renderers::Message message("tool", std::move(text));
  message.name = call.name;
  message.tool_call_id = call.id;
  return message;
}

}  // namespace

ToolEnv::ToolEnv(std::shared_ptr<const renderers::Renderer> renderer, std::vector<Tool> tools,
                 std::vector<renderers::Message> initial_messages, ToolRewardFn reward, ToolEnvOptions options)
    : renderer_(std::move(renderer)),
      tools_(std::move(tools)),
      reward_(std::move(reward)),
      options_(std::move(options)) {
  check_tool_env_arguments(renderer_.get(), tools_, reward_, options_);
  episode_.history = tool_conversation_start(*renderer_, tools_, std::move(initial_messages), options_.system_prompt);
  episode_.initial_size = episode_.history.size();
}

boost::asio::awaitable<Observation> ToolEnv::initial_observation() {
  co_return Observation(renderer_->build_generation_prompt(episode_.history), renderer_->stop_sequences());
}

// Runs each call in the order the model wrote them (the callbacks are synchronous, so the
// cookbook's parallel and sequential modes give the same result) and appends the results.
void ToolEnv::run_tool_calls(const std::vector<renderers::ToolCall>& calls) {
  for (const renderers::ToolCall& call : calls) {
    const Tool* tool = nullptr;
    for (const Tool& candidate : tools_) {
      if (candidate.spec.name == call.name) tool = &candidate;
    }
    std::string result;
    bool ran = false;
    if (tool == nullptr) {
      result = "Error: tool '" + call.name + "' not found";
    } else {
      try {
        const ToolArguments arguments(call.arguments);
        result = tool->run(arguments);
        ran = true;
      } catch (const tinker::error& failure) {
        result = "Error: " + failure.diag().message;  // without the error code's own words
      } catch (const std::exception& failure) {
        result = std::string("Error: ") + failure.what();
      }
    }
    if (ran) {
      ++episode_.tool_calls;
    } else {
      ++episode_.failed_tool_calls;
    }
    episode_.history.push_back(tool_result_message(call, std::move(result)));
  }
}

StepResult ToolEnv::finish(double reward, StepResult result) const {
  result.reward = reward;
  result.episode_done = true;
  result.metrics.set("turns", episode_.turns);
  return result;
}

boost::asio::awaitable<StepResult> ToolEnv::step(const std::vector<TokenId>& action) {
  ++episode_.turns;
  const bool last_turn = episode_.turns >= options_.max_turns;
  renderers::ParsedResponse parsed = renderer_->parse_response(action);
  StepResult result;
  // A turn without its end marker (cut by max_tokens) or whose calls were all unreadable is a
  // parse error: the cookbook gives it failed_parse_reward and skips the reward callback.
  const bool unreadable_calls = !parsed.message.unparsed_tool_calls.empty() && parsed.message.tool_calls.empty();
  const bool parse_error = parsed.termination == renderers::ParseTermination::malformed || unreadable_calls;
  // As in the cookbook, a turn mixing readable and unreadable calls runs the readable ones
  // without a penalty but still reports the parse error.
  const bool any_unreadable = parse_error || !parsed.message.unparsed_tool_calls.empty();
  result.metrics.set("parse_error", any_unreadable ? 1.0 : 0.0);
  episode_.history.push_back(std::move(parsed.message));
  if (parse_error) {
    if (options_.terminate_on_parse_error || last_turn) {
      if (last_turn) result.metrics.set("max_turns", 1.0);
      const double graded = options_.grade_parse_errors ? reward_(episode_) : 0.0;
      co_return finish(options_.failed_parse_reward + graded, std::move(result));
    }
    result.reward = options_.failed_parse_reward;
    result.next = Observation(renderer_->build_generation_prompt(episode_.history), renderer_->stop_sequences());
    co_return result;
  }

  // Copied: run_tool_calls appends to the history, which may move the message.
  const std::vector<renderers::ToolCall> calls = episode_.history.back().tool_calls;
  const int ran_before = episode_.tool_calls;
  const int failed_before = episode_.failed_tool_calls;
  run_tool_calls(calls);
  result.metrics.set("tool_calls", episode_.tool_calls - ran_before);
  result.metrics.set("tool_errors", episode_.failed_tool_calls - failed_before);

  if (calls.empty() || last_turn) {
    episode_.turn_limit_reached = !calls.empty();
    result.metrics.set("max_turns", episode_.turn_limit_reached ? 1.0 : 0.0);
    co_return finish(reward_(episode_), std::move(result));
  }
  result.next = Observation(renderer_->build_generation_prompt(episode_.history), renderer_->stop_sequences());
  co_return result;
}

ToolEnvGroupBuilder::ToolEnvGroupBuilder(std::shared_ptr<const renderers::Renderer> renderer, std::vector<Tool> tools,
                                         std::vector<renderers::Message> initial_messages, ToolRewardFn reward,
                                         std::size_t group_size, ToolEnvOptions options, std::vector<std::string> tags)
    : renderer_(std::move(renderer)),
      tools_(std::move(tools)),
      initial_messages_(std::move(initial_messages)),
      reward_(std::move(reward)),
      group_size_(group_size),
      options_(std::move(options)),
      tags_(std::move(tags)) {
  if (group_size_ == 0)
    throw tinker::error(errc::invalid_argument, "ToolEnvGroupBuilder: group_size must be >= 1, got 0");
  // One env made now checks every argument (and the renderer's tool format) at construction.
  [[maybe_unused]] const ToolEnv check(renderer_, tools_, initial_messages_, reward_, options_);
}

boost::asio::awaitable<std::vector<std::unique_ptr<Env>>> ToolEnvGroupBuilder::make_envs() {
  std::vector<std::unique_ptr<Env>> envs;
  envs.reserve(group_size_);
  for (std::size_t i = 0; i < group_size_; ++i) {
    envs.push_back(std::make_unique<ToolEnv>(renderer_, tools_, initial_messages_, reward_, options_));
  }
  co_return envs;
}

}  // namespace tinker::train
