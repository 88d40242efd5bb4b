// rl_grpo: reinforcement learning with groups of samples (GRPO-style), on additions, with the
// tinker::train RL trainer (doc/training-loops.md#rl).
//
// The dataset is the cookbook's arithmetic environment as ProblemEnvs: each step asks
// `--problems` questions "What is x + y?" (after one solved example, so the expected shape of a
// reply is in the prompt) and samples a group of `--group-size` replies to each. A reply's reward
// is the cookbook's format_coef * (well_formed - 1) + correct: well formed when it holds a number,
// correct when its last number is x + y; so -0.1, 0 or 1. train_rl does the rest: advantages
// centred in each group (groups whose replies all scored the same are dropped), the
// `importance_sampling` loss on the reply tokens with the sampler's logprobs, a sampler on the new
// weights after every step, metrics.jsonl and checkpoints in `--log-dir`.
//
// It prints the mean reward and the fraction of right answers of each step, and exits non-zero
// unless the mean reward of the last three steps beats that of the first three. On tinker-local's
// tiny model the rise is the format: within a few steps it answers with a number (reward -0.1 ->
// 0), while right answers stay near chance; a real model starts there and raises the fraction of
// right answers.
//
//   rl_grpo [--base-model NAME] [--iterations N] [--problems P] [--group-size G]
//           [--learning-rate LR] [--max-tokens T] [--max-operand M] [--seed S]
//           [--max-steps-off-policy K] [--log-dir DIR]
//
// Mirrors the cookbook's RL recipes (tinker_cookbook/recipes/math_rl/arithmetic_env.py on
// rl/problem_env.py and rl/train.py).
#include "common/sample_support.hpp"

#include <tinker/train/evaluators.hpp>
#include <tinker/train/problem_env.hpp>
#include <tinker/train/rl.hpp>

#include <filesystem>
#include <iomanip>
#include <iostream>
#include <random>
#include <string>

namespace {

namespace asio = boost::asio;
namespace renderers = tinker::renderers;
namespace train = tinker::train;

class Settings {
 public:
  std::string base_model;
  int iterations = 20;
  int problems = 8;
  int group_size = 16;
  int max_tokens = 4;
  int max_operand = 9;
  int seed = 0;
  int max_steps_off_policy = 0;
  double learning_rate = 1e-3;
  std::filesystem::path log_dir;
};

// Problem `index` of step `batch`, drawn from a generator seeded by the position: a resumed run
// asks the same questions.
train::Problem addition(const Settings& settings, std::size_t batch, std::size_t index) {
  std::seed_seq seeds{static_cast<std::size_t>(settings.seed), batch, index};
  std::mt19937 random(seeds);
  std::uniform_int_distribution<int> digit(0, settings.max_operand);
  const int x = digit(random);
  const int y = digit(random);
  return train::Problem("What is " + std::to_string(x) + " + " + std::to_string(y) + "?", std::to_string(x + y));
}

bool gives_number(const std::string& reply, const train::Problem&) {
  return train::last_number(reply).has_value();
}

bool gives_sum(const std::string& reply, const train::Problem& problem) {
  return train::last_number(reply) == std::stod(problem.answer);
}

double mean_reward(const train::RLResult& result, std::size_t first, std::size_t count) {
  double sum = 0.0;
  for (std::size_t i = first; i < first + count; ++i) sum += *result.metrics[i].get("env/all/reward/total");
  return sum / static_cast<double>(count);
}

asio::awaitable<bool> run_grpo(tinker::ServiceClient& service, Settings settings) {
  const auto base = tinker::SamplingSource::from_base_model(settings.base_model);
  const tinker::SamplingClient base_sampler =
      co_await service.async_create_sampling_client(base, tinker::use_awaitable);
  const auto tokenizer = co_await base_sampler.async_get_tokenizer(tinker::use_awaitable);
  const std::string renderer_name = renderers::recommended_renderer(settings.base_model);
  const std::shared_ptr<const renderers::Renderer> renderer = renderers::make_renderer(renderer_name, tokenizer);

  train::ProblemEnvOptions env;
  env.convo_prefix = {renderers::Message("user", "What is 4 + 5?"), renderers::Message("assistant", "9")};
  env.termination = train::FormatTermination::any;  // the tiny model rarely ends its turn in 4 tokens
  env.check_format = gives_number;
  auto problems = [settings](std::size_t batch, std::size_t index) { return addition(settings, batch, index); };
  train::ProblemDataset dataset(renderer, problems, gives_sum, settings.iterations, settings.problems,
                                settings.group_size, env, "addition");

  train::RLOptions options;
  options.run.log_path = settings.log_dir;
  options.run.base_model = settings.base_model;
  options.run.lora_rank = 16;
  options.run.seed = settings.seed;
  options.run.renderer_name = renderer_name;
  options.run.if_exists = train::ExistingRun::overwrite;
  options.learning_rate = settings.learning_rate;
  options.max_tokens = settings.max_tokens;
  options.max_steps_off_policy = settings.max_steps_off_policy;
  std::cout << "model " << settings.base_model << ", renderer " << renderer_name << ", " << settings.problems
            << " problems x " << settings.group_size << " samples per step, run directory " << settings.log_dir << "\n";
  const train::RLResult result = co_await train::train_rl(service, dataset, options);

  for (const train::StepMetrics& step : result.metrics) {
    std::cout << "step " << std::setw(3) << step.step + 1 << "  mean reward " << std::fixed << std::setprecision(3)
              << *step.get("env/all/reward/total") << "  correct " << *step.get("env/all/correct") << "  ("
              << static_cast<int>(*step.get("rl/datums_trained")) << " replies trained)\n";
  }
  const double first = mean_reward(result, 0, 3);
  const double last = mean_reward(result, result.metrics.size() - 3, 3);
  const bool rose = last > first;
  std::cout << "mean reward, first three steps " << std::setprecision(3) << first << ", last three " << last
            << (rose ? " (rose)" : " (DID NOT RISE)") << "\n";
  co_return rose;
}

}  // namespace

int main(int argc, char** argv) {
  return samples::guarded_main([&] {
    const samples::Flags flags(argc, argv,
                               {"--base-model", "--iterations", "--problems", "--group-size", "--learning-rate",
                                "--max-tokens", "--max-operand", "--seed", "--max-steps-off-policy", "--log-dir"});
    const samples::Backend backend("rl-grpo");
    Settings settings;
    settings.base_model = backend.base_model(flags);
    settings.iterations = flags.integer("--iterations", settings.iterations);
    settings.problems = flags.integer("--problems", settings.problems);
    settings.group_size = flags.integer("--group-size", settings.group_size);
    settings.max_tokens = flags.integer("--max-tokens", settings.max_tokens);
    settings.max_operand = flags.integer("--max-operand", settings.max_operand);
    settings.seed = flags.integer("--seed", settings.seed);
    settings.max_steps_off_policy = flags.integer("--max-steps-off-policy", settings.max_steps_off_policy);
    // Higher rates collapse the tiny model onto one reply within a few steps; 4e-5 is the
    // cookbook's RL default for real models.
    settings.learning_rate = flags.number("--learning-rate", backend.is_local() ? 1e-3 : 4e-5);
    settings.log_dir = flags.text("--log-dir", (std::filesystem::temp_directory_path() / "tinker-rl-grpo").string());
    if (settings.iterations < 6 || settings.problems < 1 || settings.group_size < 2 || settings.max_tokens < 1) {
      throw std::invalid_argument("need --iterations >= 6, --problems >= 1, --group-size >= 2 and --max-tokens >= 1");
    }
    return samples::run_async(backend, [&](tinker::ServiceClient& service) { return run_grpo(service, settings); });
  });
}
