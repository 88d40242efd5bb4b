// The child program of the kill test (run_kill_test.cpp): trains a run directory with
// tinker::train::train_supervised (shuffled batches, a linear schedule, submit_ahead 1) against the
// service of TINKER_BASE_URL / TINKER_API_KEY, resuming what the directory holds. The test kills it
// with SIGKILL at random times and starts it again until it exits 0.
//
//   tinker_resume_child RUN_DIR TOTAL_STEPS SAVE_EVERY
//
// Besides the run's own files it appends one line per start to RUN_DIR/lineage.txt:
// "<model id> <start step> <checkpoint resumed from, or ->", which the test follows from the final
// checkpoint back to step 0 through the server's audit.
#include "integration/train/resume_loop.hpp"

#include <tinker/train/run_dir.hpp>
#include <tinker/train/supervised.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>

#include <chrono>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <future>
#include <iostream>
#include <stdexcept>
#include <string>

namespace {

namespace asio = boost::asio;

// Called before every step (eval_every 1) with the training client, it appends one line to
// lineage.txt when the model changes, that is at the first step a start of the child runs; the
// line is flushed before that step's training is submitted (a kill before it leaves a model with
// no training operations, which no lineage goes through). It scores nothing.
class LineageRecorder : public tinker::train::TrainingEvaluator {
 public:
  LineageRecorder(std::filesystem::path run_dir, std::int64_t start_step, std::string resumed_from)
      : run_dir_(std::move(run_dir)), start_step_(start_step), resumed_from_(std::move(resumed_from)) {}

  asio::awaitable<tinker::train::StepMetrics> evaluate(const tinker::TrainingClient& training) override {
    if (training.model_id() != last_model_) {
      last_model_ = training.model_id();
      std::ofstream lineage(run_dir_ / "lineage.txt", std::ios::app);
      lineage << last_model_ << ' ' << start_step_ << ' ' << resumed_from_ << '\n';
      lineage.flush();
      if (!lineage) throw std::runtime_error("cannot write " + (run_dir_ / "lineage.txt").string());
    }
    co_return tinker::train::StepMetrics();
  }

 private:
  std::filesystem::path run_dir_;
  std::int64_t start_step_;
  std::string resumed_from_;
  std::string last_model_;
};

asio::awaitable<void> train(tinker::ServiceClient& service, std::filesystem::path run_dir, std::int64_t total_steps,
                            std::int64_t save_every) {
  // What the trainer resumes from: the newest checkpoint with a state path (it loads).
  const auto newest = tinker::train::get_last_checkpoint(run_dir);
  const std::string resumed_from = newest ? *newest->state_path : "-";
  const std::int64_t start_step = newest ? newest->step : 0;
  tinker::train::SupervisedOptions options;
  options.run = tinker::test::resume::run_options(run_dir.string(), total_steps, save_every);
  options.run.config_json = "{}";  // the trainer's own configuration
  options.learning_rate = 2e-3;
  options.batch_size = 2;
  options.max_steps = total_steps;
  options.data_seed = 7;
  options.eval_every = 1;
  options.evaluate_at_end = false;
  tinker::train::SupervisedEvaluators lineage;
  lineage.training.push_back(std::make_shared<LineageRecorder>(run_dir, start_step, resumed_from));
  const tinker::train::DatumDataset data(tinker::test::resume::kill_test_examples());
  const tinker::train::SupervisedSummary summary =
      co_await tinker::train::train_supervised(service, data, std::move(options), std::move(lineage));
  std::cout << "final " << summary.final_checkpoint.value().sampler_path.value_or("-") << "\n";
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::cerr << "usage: tinker_resume_child RUN_DIR TOTAL_STEPS SAVE_EVERY\n";
    return 2;
  }
  try {
    asio::io_context io;
    tinker::ServiceClient service(io.get_executor());  // TINKER_BASE_URL, TINKER_API_KEY
    auto done = asio::co_spawn(io, train(service, argv[1], std::stoll(argv[2]), std::stoll(argv[3])), asio::use_future);
    while (done.wait_for(std::chrono::seconds(0)) != std::future_status::ready)
      io.run_one_for(std::chrono::milliseconds(50));
    done.get();
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "tinker_resume_child: " << e.what() << "\n";
    return 1;
  }
}
