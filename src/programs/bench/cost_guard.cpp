#include "programs/bench/cost_guard.hpp"

#include <algorithm>
#include <cctype>
#include <istream>
#include <ostream>

namespace tinker::bench {
namespace {

std::string count(std::int64_t n) {
  std::string digits = std::to_string(n);
  for (int i = static_cast<int>(digits.size()) - 3; i > 0; i -= 3) digits.insert(static_cast<std::size_t>(i), ",");
  return digits;
}

Plan sample_plan(const SampleSettings& s) {
  Plan plan;
  plan.scenario = "sample";
  plan.operations = s.requests;
  plan.http_requests = 2 * s.requests;
  plan.tokens = s.requests * (s.prompt_tokens + s.num_samples * s.max_tokens);
  plan.detail = count(s.requests) + " samples of " + count(s.num_samples) + " x " + count(s.max_tokens) +
                " tokens after a " + count(s.prompt_tokens) + "-token prompt, " + count(s.in_flight) + " in flight";
  return plan;
}

Plan logprobs_plan(const LogprobsSettings& s) {
  Plan plan;
  plan.scenario = "logprobs";
  plan.operations = s.requests;
  plan.http_requests = 2 * s.requests;
  plan.tokens = s.requests * s.prompt_tokens;
  plan.detail = count(s.requests) + " compute_logprobs of " + count(s.prompt_tokens) + " tokens";
  return plan;
}

Plan train_plan(const TrainSettings& s) {
  Plan plan;
  plan.scenario = "train";
  plan.operations = 1 + 2 * s.steps;  // create_model, then forward_backward + optim_step per step
  plan.http_requests = 2 * plan.operations;
  plan.tokens = s.steps * s.batch * s.tokens;
  plan.detail = count(s.steps) + " steps of " + count(s.batch) + " x " + count(s.tokens) + " tokens (" + s.loss + ")";
  return plan;
}

Plan rl_plan(const RlSettings& s) {
  Plan plan;
  plan.scenario = "rl";
  // create_model and the first sampler (save + session), then per iteration the samples, a step, a new sampler.
  plan.operations = 3 + s.iterations * (s.prompts + 4);
  plan.http_requests = 2 * plan.operations;
  const std::int64_t sequence = s.prompt_tokens + s.max_tokens;
  plan.tokens = s.iterations * s.prompts * (s.prompt_tokens + s.group_size * s.max_tokens + s.group_size * sequence);
  plan.detail = count(s.iterations) + " iterations of " + count(s.prompts) + " prompts x " + count(s.group_size) +
                " samples of " + count(s.max_tokens) + " tokens, then one training step on them";
  return plan;
}

Plan checkpoint_plan(const CheckpointSettings& s) {
  Plan plan;
  plan.scenario = "checkpoint";
  plan.operations = 1 + s.repeats * (s.download ? 4 : 3);
  plan.http_requests = 2 * plan.operations;
  plan.detail = count(s.repeats) + " x (save_state, save_weights_for_sampler, load_state" +
                (s.download ? std::string(", archive download") : std::string()) +
                "); the checkpoints expire after an hour";
  return plan;
}

}  // namespace

std::vector<Plan> plans_of(const Invocation& invocation) {
  std::vector<Plan> plans;
  for (Scenario scenario : invocation.scenarios) {
    switch (scenario) {
      case Scenario::sample: plans.push_back(sample_plan(invocation.sample)); break;
      case Scenario::logprobs: plans.push_back(logprobs_plan(invocation.logprobs)); break;
      case Scenario::train: plans.push_back(train_plan(invocation.train)); break;
      case Scenario::rl: plans.push_back(rl_plan(invocation.rl)); break;
      case Scenario::checkpoint: plans.push_back(checkpoint_plan(invocation.checkpoint)); break;
    }
  }
  return plans;
}

Consent ask_consent(const Target& target, const std::vector<Plan>& plans, bool yes, const Asking& asking,
                    std::ostream& err) {
  if (target.kind != "url" || is_loopback_url(target.base_url)) return Consent::not_needed;
  Plan total;
  err << "tinker-bench is about to use " << target.base_url << " with " << target.base_model
      << ", which spends money:\n";
  for (const Plan& plan : plans) {
    err << "  " << plan.scenario << ": " << plan.detail << "\n    " << count(plan.operations)
        << " operations, at least " << count(plan.http_requests) << " HTTP requests, " << count(plan.tokens)
        << " tokens\n";
    total.operations += plan.operations;
    total.http_requests += plan.http_requests;
    total.tokens += plan.tokens;
  }
  err << "  total: " << count(total.operations) << " operations, at least " << count(total.http_requests)
      << " HTTP requests, " << count(total.tokens) << " tokens\n";
  if (yes) return Consent::given;
  if (!asking.interactive || asking.input == nullptr) {
    err << "Refused: nothing was sent. Pass --yes to run without a terminal to confirm on.\n";
    return Consent::refused;
  }
  err << "Proceed? [y/N] " << std::flush;
  std::string answer;
  if (!std::getline(*asking.input, answer)) answer.clear();
  std::transform(answer.begin(), answer.end(), answer.begin(), [](unsigned char c) { return std::tolower(c); });
  if (answer == "y" || answer == "yes") return Consent::given;
  err << "Refused: nothing was sent.\n";
  return Consent::refused;
}

}  // namespace tinker::bench
