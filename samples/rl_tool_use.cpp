// rl_tool_use: RL of a tool-using agent (a calculator), multi-turn, with async off-policy training.
//
// Each episode is one arithmetic question ("What is 17 * 23?"). The model sees a `calculator`
// tool declared in its renderer's tool format (Renderer::create_conversation_prefix_with_tools);
// each of its turns is parsed into a message with tool calls, the calls run as a C++ callback
// (the calculator below) and their results come back as tool messages, until the model answers
// without a call or the turn limit (--max-turns, 2) ends the episode (tinker::train::ToolEnv).
// The reward, given when the episode ends: 1 for a final answer whose last number is right, 0.5
// for having used the calculator at all, and the cookbook's format penalty (-0.1) when a turn
// cannot be read (no end-of-turn marker, or an unreadable call).
//
// Training is tinker::train::train_rl with `max_steps_off_policy = 1`: the batch of step t + 1 is
// sampled while step t trains. A sampling evaluator (tinker::train::GradedSamplingEvaluator)
// measures every 4 steps how often the policy answers a held-out question with a well-formed
// calculator call. With --warmup-steps N, a supervised warm-up on N batches of demonstrations
// (train_supervised) comes first and the RL run starts from its weights
// (RunOptions::load_checkpoint_path), as a real recipe starts RL from a model that can call tools.
//
// It prints the mean reward of each step and exits non-zero unless the mean reward of the last
// three steps beats that of the first three. What rises on tinker-local's tiny model is the
// format: it learns to end its turn (turns the renderer cannot read fall from ~97% to none, the
// reward from -0.1 to 0); it never writes a tool call on its own (one is ~40 tokens of its
// 1024-token vocabulary). After a 30-step warm-up a quarter or more of its readable turns are
// well-formed calls, but over a few RL steps on the tiny model the reward then does not rise.
// A real model (Qwen/Qwen3.5-4B on the service) calls the tool from the start, and its reward
// rises with the right answers.
//
//   rl_tool_use [--base-model NAME] [--steps N] [--problems P] [--group-size G] [--max-turns T]
//               [--learning-rate LR] [--max-tokens M] [--seed S] [--warmup-steps W] [--log-dir DIR]
//
// Mirrors the cookbook's tool-use library (tinker_cookbook/tool_use: AgentToolMessageEnv,
// build_agent_tool_env) and its async RL (rl/train.py with AsyncConfig).
#include "common/sample_support.hpp"

#include <tinker/train/evaluators.hpp>
#include <tinker/train/rl.hpp>
#include <tinker/train/supervised.hpp>
#include <tinker/train/tool_env.hpp>

#include <unistd.h>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <memory>
#include <numeric>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

namespace asio = boost::asio;
namespace renderers = tinker::renderers;
namespace train = tinker::train;

class Settings {
 public:
  std::string base_model;
  std::filesystem::path log_path;
  int steps = 16;
  int problems = 4;
  int group_size = 8;
  int max_turns = 2;
  int max_tokens = 24;
  int seed = 0;
  int warmup_steps = 0;
  double learning_rate = 2e-3;
  double warmup_learning_rate = 2e-3;
};

// ---- The calculator: + - * / and parentheses over decimal numbers, by recursive descent. ----

class ExpressionReader {
 public:
  explicit ExpressionReader(std::string text) : text_(std::move(text)) {}

  double read() {
    const double value = sum();
    skip_spaces();
    if (at_ < text_.size()) throw std::invalid_argument("unexpected '" + text_.substr(at_, 1) + "'");
    return value;
  }

 private:
  double sum() {
    double value = product();
    for (char op = next(); op == '+' || op == '-'; op = next()) {
      ++at_;
      value = op == '+' ? value + product() : value - product();
    }
    return value;
  }
  double product() {
    double value = factor();
    for (char op = next(); op == '*' || op == '/'; op = next()) {
      ++at_;
      const double right = factor();
      if (op == '/' && right == 0) throw std::invalid_argument("division by zero");
      value = op == '*' ? value * right : value / right;
    }
    return value;
  }
  double factor() {
    const char c = next();
    if (c == '-') {
      ++at_;
      return -factor();
    }
    if (c == '(') {
      ++at_;
      const double value = sum();
      if (next() != ')') throw std::invalid_argument("missing ')'");
      ++at_;
      return value;
    }
    std::size_t used = 0;
    const std::string rest = text_.substr(at_);
    if (rest.empty() || !(std::isdigit(static_cast<unsigned char>(rest[0])) || rest[0] == '.')) {
      throw std::invalid_argument("expected a number");
    }
    const double value = std::stod(rest, &used);
    at_ += used;
    return value;
  }
  char next() {
    skip_spaces();
    return at_ < text_.size() ? text_[at_] : '\0';
  }
  void skip_spaces() {
    while (at_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[at_]))) ++at_;
  }

  std::string text_;
  std::size_t at_ = 0;
};

std::string format_number(double value) {
  if (value == std::floor(value) && std::abs(value) < 1e15) return std::to_string(static_cast<long long>(value));
  std::ostringstream out;
  out << std::setprecision(10) << value;
  return out.str();
}

train::Tool calculator_tool() {
  renderers::ToolSpec spec("calculator", "Evaluates an arithmetic expression with + - * / and parentheses.",
                           R"({"type": "object", "properties": {"expression": {"type": "string", )"
                           R"("description": "e.g. 17 * 23"}}, "required": ["expression"]})");
  return train::Tool(std::move(spec), [](const train::ToolArguments& arguments) {
    const std::optional<std::string> expression = arguments.string("expression");
    if (!expression) throw std::invalid_argument("the argument 'expression' (a string) is required");
    return format_number(ExpressionReader(*expression).read());
  });
}

// ---- The task. ----

class Question {
 public:
  std::string expression;  ///< "17 * 23"
  std::string text;        ///< "What is 17 * 23?"
  long answer = 0;
};

Question draw_question(std::mt19937& random) {
  std::uniform_int_distribution<int> operand(2, 99);
  const int x = operand(random);
  const int y = operand(random);
  const bool multiply = std::uniform_int_distribution<int>(0, 1)(random) == 1;
  const std::string expression = std::to_string(x) + (multiply ? " * " : " + ") + std::to_string(y);
  return Question{expression, "What is " + expression + "?",
                  multiply ? static_cast<long>(x) * y : static_cast<long>(x) + y};
}

constexpr double tool_use_bonus = 0.5;

// The episode's reward: 1 when the final answer's last number is right, plus tool_use_bonus when
// the model called the calculator successfully at least once.
train::ToolRewardFn answer_reward(long answer) {
  return [answer](const train::ToolEpisode& episode) {
    const std::optional<double> given = train::last_number(episode.final_message().text());
    const double correct = episode.final_message().role == "assistant" && given == static_cast<double>(answer);
    return correct + (episode.tool_calls > 0 ? tool_use_bonus : 0.0);
  };
}

class CalculatorDataset : public train::RLDataset {
 public:
  CalculatorDataset(std::shared_ptr<const renderers::Renderer> renderer, const Settings& settings)
      : renderer_(std::move(renderer)), settings_(settings) {}

  std::size_t size() const override { return static_cast<std::size_t>(settings_.steps); }

  // Batch `index` depends on the index alone (a resumed run sees the same batches).
  std::vector<std::shared_ptr<train::EnvGroupBuilder>> get_batch(std::size_t index) override {
    std::mt19937 random(static_cast<unsigned>(settings_.seed * 100003 + static_cast<int>(index)));
    train::ToolEnvOptions options;
    options.max_turns = settings_.max_turns;
    // An episode whose answer turn is unreadable keeps the credit of its tool call: without it
    // the penalty of that turn would teach the model to stop calling the tool rather than to
    // finish its answer.
    options.grade_parse_errors = true;
    std::vector<std::shared_ptr<train::EnvGroupBuilder>> batch;
    for (int p = 0; p < settings_.problems; ++p) {
      const Question question = draw_question(random);
      batch.push_back(std::make_shared<train::ToolEnvGroupBuilder>(
          renderer_, std::vector<train::Tool>{calculator_tool()},
          std::vector<renderers::Message>{renderers::Message("user", question.text)}, answer_reward(question.answer),
          static_cast<std::size_t>(settings_.group_size), options));
    }
    return batch;
  }

 private:
  std::shared_ptr<const renderers::Renderer> renderer_;
  Settings settings_;
};

// Held-out questions with the tools declared; a reply is "correct" when it is a well-formed
// calculator call.
std::shared_ptr<train::SamplingEvaluator> tool_call_evaluator(std::shared_ptr<const renderers::Renderer> renderer,
                                                              const Settings& settings) {
  std::mt19937 random(static_cast<unsigned>(settings.seed + 7919));
  const renderers::ToolSpec spec = calculator_tool().spec;
  std::vector<train::EvalPrompt> prompts;
  for (int i = 0; i < 8; ++i) {
    std::vector<renderers::Message> conversation = renderer->create_conversation_prefix_with_tools({&spec, 1});
    conversation.emplace_back("user", draw_question(random).text);
    prompts.emplace_back(std::move(conversation), "calculator");
  }
  const train::Grader calls_the_tool = [](const renderers::Message& reply, const std::string& tool) {
    for (const renderers::ToolCall& call : reply.tool_calls) {
      if (call.name == tool) return train::Grade(true);
    }
    return train::Grade(false);
  };
  train::SamplingEvaluatorOptions options;
  options.metric_prefix = "test/tool_call/";
  options.max_tokens = settings.max_tokens;
  // Sampled as in training (the tiny model's greedy replies repeat themselves), with a fixed seed
  // so each evaluation draws the same way.
  options.temperature = 1.0;
  options.seed = static_cast<std::uint64_t>(settings.seed);
  return std::make_shared<train::GradedSamplingEvaluator>(std::move(renderer), std::move(prompts), calls_the_tool,
                                                          options);
}

// ---- Warm-up: a short supervised phase on demonstrations, so the policy can call the tool. ----

// A solved episode: the question, a calculator call, its result, and the answer.
std::vector<renderers::Message> demonstration(const renderers::Renderer& renderer, const Question& question,
                                              const std::string& expression) {
  const renderers::ToolSpec spec = calculator_tool().spec;
  std::vector<renderers::Message> conversation = renderer.create_conversation_prefix_with_tools({&spec, 1});
  conversation.emplace_back("user", question.text);
  renderers::Message call("assistant", "");
  call.tool_calls.emplace_back("calculator", "{\"expression\": \"" + expression + "\"}");
  conversation.push_back(std::move(call));
  renderers::Message result("tool", std::to_string(question.answer));
  result.name = "calculator";
  conversation.push_back(std::move(result));
  conversation.emplace_back("assistant", std::to_string(question.answer));
  return conversation;
}

// `settings.warmup_steps` supervised steps on demonstrations (train_supervised, trained on the
// assistant turns); returns the final training checkpoint for the RL run to start from.
asio::awaitable<std::string> warm_up(tinker::ServiceClient& service,
                                     std::shared_ptr<const renderers::Renderer> renderer, Settings settings) {
  constexpr std::size_t batch_size = 16;
  std::mt19937 random(static_cast<unsigned>(settings.seed + 31));
  std::vector<train::Conversation> demonstrations;
  for (std::size_t i = 0; i < batch_size * static_cast<std::size_t>(settings.warmup_steps); ++i) {
    const Question question = draw_question(random);
    demonstrations.push_back(demonstration(*renderer, question, question.expression));
  }
  const train::DatumDataset dataset = train::render_conversations(*renderer, demonstrations);
  train::SupervisedOptions options;
  options.run.log_path = settings.log_path / "warm-up";
  options.run.base_model = settings.base_model;
  options.run.lora_rank = 16;
  options.run.seed = static_cast<std::uint64_t>(settings.seed);
  options.run.renderer_name = renderer->name();
  options.run.if_exists = train::ExistingRun::overwrite;
  options.run.show_progress = false;
  options.learning_rate = settings.warmup_learning_rate;
  options.lr_schedule = train::LrSchedule();  // constant
  options.batch_size = batch_size;
  options.eval_every = 0;
  options.evaluate_at_end = false;
  const train::SupervisedSummary summary = co_await train::train_supervised(service, dataset, options);
  if (!summary.final_checkpoint || !summary.final_checkpoint->state_path) {
    throw std::runtime_error("the warm-up saved no training checkpoint");
  }
  co_return *summary.final_checkpoint->state_path;
}

double mean_reward(const train::StepMetrics& metrics) {
  return metrics.get("env/all/reward/total").value_or(0.0);
}

asio::awaitable<bool> run_tool_rl(tinker::ServiceClient& service, Settings settings) {
  const tinker::SamplingClient base =
      co_await service.async_create_sampling_client(tinker::SamplingSource::from_base_model(settings.base_model),
                                                    tinker::SamplingRetryConfig(), tinker::use_awaitable);
  const auto tokenizer = co_await base.async_get_tokenizer(tinker::use_awaitable);
  const std::string renderer_name = renderers::recommended_renderer(settings.base_model);
  const std::shared_ptr<const renderers::Renderer> renderer = renderers::make_renderer(renderer_name, tokenizer);
  std::cout << "model " << settings.base_model << ", renderer " << renderer_name << ", " << settings.problems
            << " questions x " << settings.group_size << " episodes per step, up to " << settings.max_turns
            << " turns each\n";

  std::optional<std::string> warm_weights;
  if (settings.warmup_steps > 0) warm_weights = co_await warm_up(service, renderer, settings);
  CalculatorDataset dataset(renderer, settings);
  train::RLOptions options;
  options.run.log_path = settings.log_path / "rl";
  options.run.load_checkpoint_path = warm_weights;
  options.run.base_model = settings.base_model;
  options.run.lora_rank = 16;
  options.run.seed = static_cast<std::uint64_t>(settings.seed);
  options.run.renderer_name = renderer_name;
  options.run.if_exists = train::ExistingRun::overwrite;
  options.run.show_progress = false;
  options.learning_rate = settings.learning_rate;
  options.max_tokens = settings.max_tokens;
  options.max_steps_off_policy = 1;
  options.eval_every = 4;
  std::vector<std::shared_ptr<train::SamplingEvaluator>> evaluators;
  evaluators.push_back(tool_call_evaluator(renderer, settings));
  const train::RLResult result = co_await train::train_rl(service, dataset, options, evaluators);

  std::vector<double> rewards;
  for (const train::StepMetrics& step : result.metrics) {
    rewards.push_back(mean_reward(step));
    std::cout << "step " << std::setw(3) << step.step << "  mean reward " << std::fixed << std::setprecision(3)
              << rewards.back() << "  parse errors " << step.get("env/all/parse_error").value_or(0.0)
              << "  tool calls/turn " << step.get("env/all/tool_calls").value_or(0.0);
    if (const auto calls = step.get("test/tool_call/accuracy")) std::cout << "  held-out calls " << *calls;
    std::cout << "\n";
  }
  if (rewards.size() < 6) throw std::runtime_error("train_rl ran fewer than 6 steps");
  const double first = std::accumulate(rewards.begin(), rewards.begin() + 3, 0.0) / 3;
  const double last = std::accumulate(rewards.end() - 3, rewards.end(), 0.0) / 3;
  const bool rose = last > first;
  std::cout << "mean reward, first three steps " << std::setprecision(3) << first << ", last three " << last
            << (rose ? " (rose)" : " (DID NOT RISE)") << "\n";
  co_return rose;
}

}  // namespace

int main(int argc, char** argv) {
  return samples::guarded_main([&] {
    const samples::Flags flags(argc, argv,
                               {"--base-model", "--steps", "--problems", "--group-size", "--max-turns",
                                "--learning-rate", "--max-tokens", "--seed", "--log-dir", "--warmup-steps"});
    const samples::Backend backend("rl-tool-use");
    Settings settings;
    settings.base_model = backend.base_model(flags);
    settings.steps = flags.integer("--steps", settings.steps);
    settings.problems = flags.integer("--problems", settings.problems);
    settings.group_size = flags.integer("--group-size", settings.group_size);
    settings.max_turns = flags.integer("--max-turns", settings.max_turns);
    settings.max_tokens = flags.integer("--max-tokens", backend.is_local() ? settings.max_tokens : 256);
    settings.seed = flags.integer("--seed", settings.seed);
    settings.warmup_steps = flags.integer("--warmup-steps", settings.warmup_steps);
    settings.learning_rate = flags.number("--learning-rate", backend.is_local() ? settings.learning_rate : 4e-5);
    settings.warmup_learning_rate = backend.is_local() ? settings.warmup_learning_rate : 1e-4;
    // The run directory: a temporary one (removed at the end) unless --log-dir names one to keep.
    const std::string kept_path = flags.text("--log-dir", "");
    settings.log_path = kept_path.empty() ? std::filesystem::temp_directory_path() /
                                                ("tinker-rl-tool-use-" + std::to_string(::getpid()))
                                          : std::filesystem::path(kept_path);
    if (settings.steps < 6 || settings.problems < 1 || settings.group_size < 2 || settings.max_turns < 1 ||
        settings.max_tokens < 1) {
      throw std::invalid_argument(
          "need --steps >= 6, --problems >= 1, --group-size >= 2, --max-turns >= 1 and --max-tokens >= 1");
    }
    const bool rose =
        samples::run_async(backend, [&](tinker::ServiceClient& service) { return run_tool_rl(service, settings); });
    if (kept_path.empty()) std::filesystem::remove_all(settings.log_path);
    return rose;
  });
}
