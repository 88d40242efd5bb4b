// The child program of the kill test (run_kill_test.cpp): trains a run directory with the
// deterministic loop of resume_loop.hpp against the service of TINKER_BASE_URL / TINKER_API_KEY,
// resuming what the directory holds. The test kills it with SIGKILL at random times and starts it
// again until it exits 0.
//
//   tinker_resume_child RUN_DIR TOTAL_STEPS SAVE_EVERY
//
// Besides the run's own files it appends one line per start to RUN_DIR/lineage.txt:
// "<model id> <start step> <checkpoint resumed from, or ->", which the test follows from the final
// checkpoint back to step 0 through the server's audit.
#include "integration/train/resume_loop.hpp"

#include <tinker/train/run_dir.hpp>

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

// One line, written and flushed before training starts (a kill before it leaves a model with no
// training operations, which no lineage goes through).
void record_lineage(const std::filesystem::path& run_dir, const tinker::train::TrainingRun& run,
                    const std::string& resumed_from) {
  std::ofstream lineage(run_dir / "lineage.txt", std::ios::app);
  lineage << run.training().model_id() << ' ' << run.start_step() << ' ' << resumed_from << '\n';
  lineage.flush();
  if (!lineage) throw std::runtime_error("cannot write " + (run_dir / "lineage.txt").string());
}

asio::awaitable<void> train(tinker::ServiceClient& service, std::filesystem::path run_dir, std::int64_t total_steps,
                            std::int64_t save_every) {
  // What TrainingRun::open resumes from: the newest checkpoint with a state path (it loads).
  const auto newest = tinker::train::get_last_checkpoint(run_dir);
  const std::string resumed_from = newest ? *newest->state_path : "-";
  tinker::test::resume::Hooks hooks;
  hooks.after_open = [run_dir, resumed_from](const tinker::train::TrainingRun& run) {
    record_lineage(run_dir, run, resumed_from);
  };
  const tinker::train::RunOptions options =
      tinker::test::resume::run_options(run_dir.string(), total_steps, save_every);
  const tinker::train::CheckpointRecord final_record =
      co_await tinker::test::resume::train_to_completion(service, options, hooks);
  std::cout << "final " << final_record.sampler_path.value_or("-") << "\n";
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
