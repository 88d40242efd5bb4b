// rl_grpo: reinforcement learning with groups of samples (GRPO-style), on additions.
//
// Each iteration draws a batch of problems "What is x + y?", renders each as a chat prompt, and
// samples a group of `--group-size` replies per problem from the current policy. A reply's
// reward comes from a program, not a model: 1 if the last integer in it is x + y, 0 for another
// number, -0.1 for a reply with no number at all (the cookbook's format penalty). Each
// reply's advantage is its reward minus its group's mean (GRPO's centring: no value function;
// groups whose replies all scored the same teach nothing and are dropped). The policy is trained
// with the `importance_sampling` loss on the sampled tokens, whose inputs are the advantages and
// the sampler's own logprobs of those tokens (the loss weights each token by
// exp(logprob - sampling logprob), correcting for any gap between the sampler and the learner).
// After each step, save_weights_and_get_sampling_client gives a sampler on the new weights, so
// every iteration samples on-policy.
//
// It prints the mean reward and the fraction of right answers of each iteration, and exits
// non-zero unless the mean reward of the last three iterations beats that of the first three.
// On tinker-local's tiny model the rise is the format: within a few iterations it learns to
// answer with a number (reward -0.1 -> 0), while right answers stay near chance; a real model
// starts there and raises the fraction of right answers.
//
//   rl_grpo [--base-model NAME] [--iterations N] [--problems P] [--group-size G]
//           [--learning-rate LR] [--max-tokens T] [--max-operand M] [--seed S]
//
// Mirrors the cookbook's minimal RL loop (tinker_cookbook/recipes/rl_loop.py) on its arithmetic
// environment (recipes/math_rl/arithmetic_env.py: the same question, few-shot prefix and answer
// check; rl/problem_env.py: the reward formula and format coefficient 0.1).
#include "common/sample_support.hpp"

#include <algorithm>
#include <cctype>
#include <iomanip>
#include <iostream>
#include <numeric>
#include <optional>
#include <random>
#include <string>
#include <vector>

namespace {

namespace asio = boost::asio;
namespace renderers = tinker::renderers;

class Settings {
 public:
  std::string base_model;
  int iterations = 20;
  int problems = 8;
  int group_size = 16;
  int max_tokens = 4;
  int max_operand = 9;
  int seed = 0;
  double learning_rate = 2e-3;
};

class Problem {
 public:
  int x = 0;
  int y = 0;
  tinker::ModelInput prompt;
};

/// The cookbook's format coefficient (ProblemEnv.format_coef): what a reply without an answer loses.
constexpr double format_coef = 0.1;

// The conversation for "x + y" with one solved example before it, so that the expected shape of
// a reply (just the number) is in the prompt.
renderers::Message user(std::string text) {
  return renderers::Message("user", std::move(text));
}

tinker::ModelInput addition_prompt(const renderers::Renderer& renderer, int x, int y) {
  const std::vector<renderers::Message> conversation{
      user("What is 4 + 5?"), renderers::Message("assistant", "9"),
      user("What is " + std::to_string(x) + " + " + std::to_string(y) + "?")};
  return renderer.build_generation_prompt(conversation);
}

std::vector<Problem> draw_problems(const renderers::Renderer& renderer, std::mt19937& random, int count,
                                   int max_operand) {
  std::uniform_int_distribution<int> digit(0, max_operand);
  std::vector<Problem> problems;
  for (int i = 0; i < count; ++i) {
    Problem problem;
    problem.x = digit(random);
    problem.y = digit(random);
    problem.prompt = addition_prompt(renderer, problem.x, problem.y);
    problems.push_back(std::move(problem));
  }
  return problems;
}

// The last run of digits in `text` (with a leading '-'), as the cookbook's _extract_final_int.
std::optional<long> last_integer(const std::string& text) {
  std::optional<long> found;
  for (std::size_t i = 0; i < text.size();) {
    if (!std::isdigit(static_cast<unsigned char>(text[i]))) {
      ++i;
      continue;
    }
    std::size_t end = i;
    while (end < text.size() && std::isdigit(static_cast<unsigned char>(text[end])) && end - i < 9) ++end;
    const long value = std::stol(text.substr(i, end - i));
    found = i > 0 && text[i - 1] == '-' ? -value : value;
    i = end;
  }
  return found;
}

// The cookbook's problem reward: format_coef * (well_formed - 1) + correct. Well formed here means
// "gives a number at all" (as its math environment checks for a \boxed{} answer); correct means
// the last number is the sum.
double reward(const renderers::Renderer& renderer, const Problem& problem, const tinker::SampledSequence& reply) {
  const renderers::ParsedResponse parsed = renderer.parse_response(reply.tokens);
  const std::optional<long> answer = last_integer(parsed.message.text());
  const double well_formed = answer ? 1.0 : 0.0;
  const double correct = answer == problem.x + problem.y ? 1.0 : 0.0;
  return format_coef * (well_formed - 1.0) + correct;
}

// One importance-sampling datum: the prompt followed by the reply, trained only on the reply's
// tokens, each with the reply's advantage and the logprob the sampler gave it.
tinker::Datum policy_datum(const tinker::ModelInput& prompt, const tinker::SampledSequence& reply, double advantage) {
  std::vector<tinker::TokenId> tokens = prompt.to_ints();
  const std::size_t prompt_targets = tokens.size() - 1;  // targets that predict prompt tokens
  tokens.insert(tokens.end(), reply.tokens.begin(), reply.tokens.end());
  const std::vector<tinker::TokenId> input(tokens.begin(), tokens.end() - 1);
  const std::vector<tinker::TokenId> targets(tokens.begin() + 1, tokens.end());

  if (!reply.logprobs || reply.logprobs->size() != reply.tokens.size()) {
    throw tinker::error(tinker::errc::invalid_argument, "a sampled reply came without one logprob per token");
  }
  std::vector<float> sampling_logprobs(prompt_targets, 0.0f);
  const std::vector<float>& sampled = *reply.logprobs;
  sampling_logprobs.insert(sampling_logprobs.end(), sampled.begin(), sampled.end());
  std::vector<float> advantages(prompt_targets, 0.0f);  // zero advantage: the prompt is not trained
  advantages.resize(targets.size(), static_cast<float>(advantage));

  tinker::LossFnInputs inputs{{"target_tokens", tinker::TensorData::from_tokens(targets)},
                              {"logprobs", tinker::TensorData::from_floats(sampling_logprobs)},
                              {"advantages", tinker::TensorData::from_floats(advantages)}};
  return tinker::Datum(tinker::ModelInput::from_ints(input), std::move(inputs));
}

class Rollouts {
 public:
  std::vector<tinker::Datum> data;
  double mean_reward = 0.0;
  double accuracy = 0.0;  ///< fraction of replies with the right answer
  std::string example;    ///< the first problem and its first reply
};

// Samples every group (all requests in flight at once), scores the replies and turns the groups
// with a reward spread into training data.
asio::awaitable<Rollouts> roll_out(const tinker::SamplingClient& sampler, const renderers::Renderer& renderer,
                                   const std::vector<Problem>& problems, const tinker::SamplingParams& params,
                                   int group_size) {
  const tinker::SampleOptions options;
  std::vector<tinker::Future<tinker::SampleResponse>> pending;
  for (const Problem& problem : problems) {
    pending.push_back(
        co_await sampler.async_sample(problem.prompt, group_size, params, options, tinker::use_awaitable));
  }
  Rollouts rollouts;
  for (std::size_t p = 0; p < problems.size(); ++p) {
    const tinker::SampleResponse response = co_await pending[p].async_get(tinker::use_awaitable);
    std::vector<double> rewards;
    for (const tinker::SampledSequence& reply : response.sequences) {
      rewards.push_back(reward(renderer, problems[p], reply));
    }
    const double group_mean = std::accumulate(rewards.begin(), rewards.end(), 0.0) / rewards.size();
    rollouts.mean_reward += group_mean / problems.size();
    rollouts.accuracy += static_cast<double>(std::count(rewards.begin(), rewards.end(), 1.0)) /
                         static_cast<double>(rewards.size() * problems.size());
    if (p == 0) {
      rollouts.example = std::to_string(problems[p].x) + " + " + std::to_string(problems[p].y) + " -> \"" +
                         renderer.parse_response(response.sequences.at(0).tokens).message.text() + "\"";
    }
    if (std::all_of(rewards.begin(), rewards.end(), [&](double r) { return r == rewards.front(); })) continue;
    for (std::size_t g = 0; g < rewards.size(); ++g) {
      rollouts.data.push_back(policy_datum(problems[p].prompt, response.sequences[g], rewards[g] - group_mean));
    }
  }
  co_return rollouts;
}

asio::awaitable<void> train_step(const tinker::TrainingClient& training, const std::vector<tinker::Datum>& data,
                                 double learning_rate) {
  const tinker::ForwardBackwardInput input(data, tinker::loss_fn::importance_sampling);
  const tinker::AdamParams adam(learning_rate);
  auto gradients = co_await training.async_forward_backward(input, tinker::use_awaitable);
  auto update = co_await training.async_optim_step(adam, tinker::use_awaitable);
  co_await gradients.async_get(tinker::use_awaitable);
  co_await update.async_get(tinker::use_awaitable);
}

double mean_of(const std::vector<double>& values, std::size_t first, std::size_t count) {
  return std::accumulate(values.begin() + first, values.begin() + first + count, 0.0) / count;
}

asio::awaitable<bool> run_grpo(tinker::ServiceClient& service, Settings settings) {
  tinker::LoraTrainingOptions options(settings.base_model, 16);
  options.seed = settings.seed;
  const tinker::TrainingClient training =
      co_await service.async_create_lora_training_client(options, tinker::use_awaitable);
  const auto tokenizer = co_await training.async_get_tokenizer(tinker::use_awaitable);
  const std::string renderer_name = renderers::recommended_renderer(settings.base_model);
  const std::unique_ptr<renderers::Renderer> renderer = renderers::make_renderer(renderer_name, tokenizer);
  std::cout << "model " << settings.base_model << ", renderer " << renderer_name << ", " << settings.problems
            << " problems x " << settings.group_size << " samples per iteration\n";

  std::mt19937 random(static_cast<unsigned>(settings.seed));
  std::vector<double> rewards;
  for (int iteration = 0; iteration < settings.iterations; ++iteration) {
    tinker::SamplingParams params(settings.max_tokens, 1.0);
    params.stop = renderer->stop_sequences();
    params.seed = static_cast<std::uint64_t>(settings.seed) * 1000 + iteration;
    // A sampler on the current weights: the replies are on-policy.
    const tinker::SamplingClient sampler =
        co_await training.async_save_weights_and_get_sampling_client(tinker::use_awaitable);
    const std::vector<Problem> problems = draw_problems(*renderer, random, settings.problems, settings.max_operand);
    const Rollouts rollouts = co_await roll_out(sampler, *renderer, problems, params, settings.group_size);
    rewards.push_back(rollouts.mean_reward);
    std::cout << "iteration " << std::setw(3) << iteration + 1 << "  mean reward " << std::fixed << std::setprecision(3)
              << rollouts.mean_reward << "  correct " << rollouts.accuracy << "  (" << rollouts.data.size()
              << " replies trained)  e.g. " << rollouts.example << "\n";
    if (!rollouts.data.empty()) co_await train_step(training, rollouts.data, settings.learning_rate);
  }

  const double first = mean_of(rewards, 0, 3);
  const double last = mean_of(rewards, rewards.size() - 3, 3);
  const bool rose = last > first;
  std::cout << "mean reward, first three iterations " << std::setprecision(3) << first << ", last three " << last
            << (rose ? " (rose)" : " (DID NOT RISE)") << "\n";
  co_return rose;
}

}  // namespace

int main(int argc, char** argv) {
  return samples::guarded_main([&] {
    const samples::Flags flags(argc, argv,
                               {"--base-model", "--iterations", "--problems", "--group-size", "--learning-rate",
                                "--max-tokens", "--max-operand", "--seed"});
    const samples::Backend backend("rl-grpo");
    Settings settings;
    settings.base_model = backend.base_model(flags);
    settings.iterations = flags.integer("--iterations", settings.iterations);
    settings.problems = flags.integer("--problems", settings.problems);
    settings.group_size = flags.integer("--group-size", settings.group_size);
    settings.max_tokens = flags.integer("--max-tokens", settings.max_tokens);
    settings.max_operand = flags.integer("--max-operand", settings.max_operand);
    settings.seed = flags.integer("--seed", settings.seed);
    // Higher rates collapse the tiny model onto one reply within a few iterations; 4e-5 is the
    // cookbook rl_loop default for real models.
    settings.learning_rate = flags.number("--learning-rate", backend.is_local() ? 1e-3 : 4e-5);
    if (settings.iterations < 6 || settings.problems < 1 || settings.group_size < 2 || settings.max_tokens < 1) {
      throw std::invalid_argument("need --iterations >= 6, --problems >= 1, --group-size >= 2 and --max-tokens >= 1");
    }
    return samples::run_async(backend, [&](tinker::ServiceClient& service) { return run_grpo(service, settings); });
  });
}
