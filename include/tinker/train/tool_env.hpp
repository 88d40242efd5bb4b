/// @file
/// Multi-turn tool-use environments (`doc/training-loops.md#tool-use`), as the cookbook's
/// `tool_use` library builds them: the model sees the tools declared in its renderer's format,
/// each of its turns is parsed into a message with tool calls, the calls run as C++ callbacks and
/// their results come back as tool messages, until the model answers without a call or the turn
/// limit ends the episode; a reward callback then grades the episode.
#pragma once

#include <tinker/renderers.hpp>
#include <tinker/train/rl_env.hpp>

#include <boost/asio/awaitable.hpp>

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tinker::train {

/// A tool call's arguments, parsed from the JSON object the model wrote.
class ToolArguments {
 public:
  /// Parses `json_object_text`. Throws tinker::error (invalid_argument) when it is not a JSON
  /// object (the environment turns that into an error result for the model).
  explicit ToolArguments(std::string_view json_object_text);
  /// Copyable.
  ToolArguments(const ToolArguments&);
  /// Copyable.
  ToolArguments& operator=(const ToolArguments&);
  ~ToolArguments();  ///< out of line (the parsed object is private)

  /// The argument names, in the order written.
  std::vector<std::string> names() const;
  /// Whether `name` was given.
  bool has(std::string_view name) const;
  /// `name` as a string; empty when absent or not a string.
  std::optional<std::string> string(std::string_view name) const;
  /// `name` as a number (integers included); empty when absent or not a number.
  std::optional<double> number(std::string_view name) const;
  /// `name` as a boolean; empty when absent or not a boolean.
  std::optional<bool> boolean(std::string_view name) const;
  /// `name`'s value as JSON text (any type); empty when absent.
  std::optional<std::string> json(std::string_view name) const;
  /// The whole object as JSON text.
  const std::string& text() const noexcept { return text_; }

 private:
  class Parsed;
  std::string text_;
  std::unique_ptr<Parsed> parsed_;
};

/// A function the model may call: its declaration and the C++ callback that runs it. The
/// callback gets the parsed arguments and returns the result text the model reads; an exception
/// it throws becomes an "Error: ..." result (the episode goes on, as in the cookbook). Called on
/// the io thread, once per call, from one rollout at a time per Env: a tool shared between envs
/// must be safe to call from their rollouts, which all run on that thread.
class Tool {
 public:
  /// An empty tool.
  Tool() = default;
  /// `spec_` run by `run_`.
  Tool(renderers::ToolSpec spec_, std::function<std::string(const ToolArguments&)> run_)
      : spec(std::move(spec_)), run(std::move(run_)) {}

  renderers::ToolSpec spec;                              ///< name, description, JSON Schema parameters
  std::function<std::string(const ToolArguments&)> run;  ///< the callback
};

/// What a tool episode did, given to the reward callback when it ends.
class ToolEpisode {
 public:
  /// The whole conversation: the tool declarations, the initial messages, then every assistant
  /// turn and tool result. The last message is the final assistant turn.
  std::vector<renderers::Message> history;
  std::size_t initial_size = 0;     ///< messages of `history` before the first assistant turn
  int turns = 0;                    ///< assistant turns taken
  int tool_calls = 0;               ///< calls that reached a tool (well-formed, known name, object arguments)
  int failed_tool_calls = 0;        ///< calls that could not run: unknown tool, bad arguments, callback threw
  bool turn_limit_reached = false;  ///< ended by max_turns while still calling tools

  /// The final assistant turn (history.back()).
  const renderers::Message& final_message() const { return history.back(); }
};

/// Grades an episode that ended with an answer or at the turn limit (one ended by a parse error
/// gets ToolEnvOptions::failed_parse_reward instead, unless ToolEnvOptions::grade_parse_errors).
using ToolRewardFn = std::function<double(const ToolEpisode& episode)>;

/// How a ToolEnv runs.
class ToolEnvOptions {
 public:
  /// The cookbook's defaults.
  ToolEnvOptions() = default;

  int max_turns = 5;  ///< assistant turns before the episode ends (the last one is graded as is)
  /// The reward of a turn the renderer could not read (no end-of-turn marker, or tool calls that
  /// were all unreadable): the cookbook's failed_parse_reward.
  double failed_parse_reward = -0.1;
  bool terminate_on_parse_error = true;  ///< a parse error ends the episode (else the turn is kept and it goes on)
  /// Also grade an episode that a parse error ended: its reward is then failed_parse_reward plus
  /// the reward callback's. The cookbook skips the callback; this keeps the credit for what the
  /// episode did before its unreadable turn (a tool call that ran), a shaping a weak policy needs.
  bool grade_parse_errors = false;
  std::string system_prompt;  ///< given to create_conversation_prefix_with_tools with the tools
};

/// One tool-use episode. The observation of each turn is the whole conversation rendered as a
/// generation prompt, stopping at the renderer's stop sequences. Per-step metrics: `turns`,
/// `tool_calls`, `tool_errors`, `parse_error`, `max_turns`.
class ToolEnv : public Env {
 public:
  /// `tools` declared with `renderer` (create_conversation_prefix_with_tools) before
  /// `initial_messages`; `reward` grades the episode. Throws tinker::error (invalid_argument)
  /// naming the argument for a null renderer, an empty reward callback, a tool without a name or
  /// callback, two tools of one name, max_turns < 1, or a renderer without a tool format.
  ToolEnv(std::shared_ptr<const renderers::Renderer> renderer, std::vector<Tool> tools,
          std::vector<renderers::Message> initial_messages, ToolRewardFn reward, ToolEnvOptions options = {});

  /// The declarations and initial messages, rendered for the assistant's first turn.
  boost::asio::awaitable<Observation> initial_observation() override;
  /// Parses the turn, runs its tool calls, and answers the tool results (or the reward when the
  /// episode ends).
  boost::asio::awaitable<StepResult> step(const std::vector<TokenId>& action) override;

  /// The conversation so far.
  const std::vector<renderers::Message>& history() const noexcept { return episode_.history; }
  /// The episode so far.
  const ToolEpisode& episode() const noexcept { return episode_; }

 private:
  StepResult finish(double reward, StepResult result) const;
  void run_tool_calls(const std::vector<renderers::ToolCall>& calls);

  std::shared_ptr<const renderers::Renderer> renderer_;
  std::vector<Tool> tools_;
  ToolRewardFn reward_;
  ToolEnvOptions options_;
  ToolEpisode episode_;
};

/// A group of `group_size` ToolEnvs on the same task (the same tools and initial messages), so
/// their rewards are compared with each other. The tools are copied into each env: state a
/// callback captures by shared pointer is shared by the group (the cookbook's "per task" tool
/// lifetime); make a builder per task for state per task.
class ToolEnvGroupBuilder : public EnvGroupBuilder {
 public:
  /// What ToolEnv takes, `group_size` (>= 1) envs of it, and the group's logging tags. Throws as
  /// ToolEnv does, and for group_size 0.
  ToolEnvGroupBuilder(std::shared_ptr<const renderers::Renderer> renderer, std::vector<Tool> tools,
                      std::vector<renderers::Message> initial_messages, ToolRewardFn reward, std::size_t group_size,
                      ToolEnvOptions options = {}, std::vector<std::string> tags = {});

  /// `group_size` fresh ToolEnvs.
  boost::asio::awaitable<std::vector<std::unique_ptr<Env>>> make_envs() override;
  /// The tags given.
  std::vector<std::string> logging_tags() const override { return tags_; }

 private:
  std::shared_ptr<const renderers::Renderer> renderer_;
  std::vector<Tool> tools_;
  std::vector<renderers::Message> initial_messages_;
  ToolRewardFn reward_;
  std::size_t group_size_;
  ToolEnvOptions options_;
  std::vector<std::string> tags_;
};

}  // namespace tinker::train
