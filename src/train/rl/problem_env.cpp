// ProblemEnv, ProblemGroupBuilder and ProblemDataset: single-turn graded problems as RL envs.
#include <tinker/error.hpp>
#include <tinker/train/problem_env.hpp>

#include <string>
#include <utility>

namespace tinker::train {

ProblemEnv::ProblemEnv(std::shared_ptr<const renderers::Renderer> renderer, Problem problem, ProblemCheck check_answer,
                       ProblemEnvOptions options)
    : renderer_(std::move(renderer)),
      problem_(std::move(problem)),
      check_answer_(std::move(check_answer)),
      options_(std::move(options)) {
  if (!renderer_) throw error(errc::invalid_argument, "ProblemEnv: renderer must not be null");
  if (!check_answer_) throw error(errc::invalid_argument, "ProblemEnv: check_answer must not be empty");
}

boost::asio::awaitable<Observation> ProblemEnv::initial_observation() {
  std::vector<renderers::Message> conversation = options_.convo_prefix;
  conversation.emplace_back("user", problem_.question);
  co_return Observation(renderer_->build_generation_prompt(conversation), renderer_->stop_sequences());
}

boost::asio::awaitable<StepResult> ProblemEnv::step(const std::vector<TokenId>& action) {
  co_return grade(action);
}

StepResult ProblemEnv::grade(const std::vector<TokenId>& action) const {
  const renderers::ParsedResponse parsed = renderer_->parse_response(action);
  const std::string text = parsed.message.text();
  bool terminated = true;
  if (options_.termination == FormatTermination::stop_sequence) {
    terminated = parsed.termination == renderers::ParseTermination::stop_sequence;
  } else if (options_.termination == FormatTermination::clean) {
    terminated = parsed.termination != renderers::ParseTermination::malformed;
  }
  const bool well_formed = terminated && (!options_.check_format || options_.check_format(text, problem_));
  const bool correct = check_answer_(text, problem_);
  StepResult result;
  result.reward = options_.format_coef * ((well_formed ? 1.0 : 0.0) - 1.0) + (correct ? 1.0 : 0.0);
  result.episode_done = true;
  result.metrics.set("format", well_formed ? 1.0 : 0.0);
  result.metrics.set("correct", correct ? 1.0 : 0.0);
  return result;
}

ProblemGroupBuilder::ProblemGroupBuilder(std::shared_ptr<const renderers::Renderer> renderer, Problem problem,
                                         ProblemCheck check_answer, std::size_t group_size, ProblemEnvOptions options,
                                         std::string dataset_name)
    : renderer_(std::move(renderer)),
      problem_(std::move(problem)),
      check_answer_(std::move(check_answer)),
      group_size_(group_size),
      options_(std::move(options)),
      dataset_name_(std::move(dataset_name)) {
  if (group_size_ < 1) throw error(errc::invalid_argument, "ProblemGroupBuilder: group_size must be >= 1, got 0");
  if (!renderer_) throw error(errc::invalid_argument, "ProblemGroupBuilder: renderer must not be null");
  if (!check_answer_) throw error(errc::invalid_argument, "ProblemGroupBuilder: check_answer must not be empty");
}

boost::asio::awaitable<std::vector<std::unique_ptr<Env>>> ProblemGroupBuilder::make_envs() {
  std::vector<std::unique_ptr<Env>> envs;
  envs.reserve(group_size_);
  for (std::size_t i = 0; i < group_size_; ++i) {
    envs.push_back(std::make_unique<ProblemEnv>(renderer_, problem_, check_answer_, options_));
  }
  co_return envs;
}

ProblemDataset::ProblemDataset(std::shared_ptr<const renderers::Renderer> renderer, ProblemSource source,
                               ProblemCheck check_answer, std::size_t batches, std::size_t problems_per_batch,
                               std::size_t group_size, ProblemEnvOptions options, std::string dataset_name)
    : renderer_(std::move(renderer)),
      source_(std::move(source)),
      check_answer_(std::move(check_answer)),
      batches_(batches),
      problems_per_batch_(problems_per_batch),
      group_size_(group_size),
      options_(std::move(options)),
      dataset_name_(std::move(dataset_name)) {
  auto refuse = [](const char* what) { throw error(errc::invalid_argument, std::string("ProblemDataset: ") + what); };
  if (!renderer_) refuse("renderer must not be null");
  if (!source_) refuse("source must not be empty");
  if (!check_answer_) refuse("check_answer must not be empty");
  if (batches_ < 1) refuse("batches must be >= 1, got 0");
  if (problems_per_batch_ < 1) refuse("problems_per_batch must be >= 1, got 0");
  if (group_size_ < 1) refuse("group_size must be >= 1, got 0");
}

std::vector<std::shared_ptr<EnvGroupBuilder>> ProblemDataset::get_batch(std::size_t index) {
  if (index >= batches_) {
    throw error(errc::invalid_argument, "ProblemDataset::get_batch: index " + std::to_string(index) +
                                            " is outside [0, " + std::to_string(batches_) + ")");
  }
  std::vector<std::shared_ptr<EnvGroupBuilder>> builders;
  builders.reserve(problems_per_batch_);
  for (std::size_t i = 0; i < problems_per_batch_; ++i) {
    builders.push_back(std::make_shared<ProblemGroupBuilder>(renderer_, source_(index, i), check_answer_, group_size_,
                                                             options_, dataset_name_));
  }
  return builders;
}

}  // namespace tinker::train
