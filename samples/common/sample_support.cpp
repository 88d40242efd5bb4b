#include "sample_support.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <stdexcept>

#ifndef TINKER_SAMPLES_DATA_DIR
#define TINKER_SAMPLES_DATA_DIR "samples/data"
#endif

namespace samples {
namespace {

namespace asio = boost::asio;

std::string joined(std::initializer_list<std::string_view> names) {
  std::string text;
  for (std::string_view name : names) text += (text.empty() ? "" : ", ") + std::string(name);
  return text;
}

}  // namespace

Flags::Flags(int argc, char** argv, std::initializer_list<std::string_view> known) {
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    bool is_known = false;
    for (std::string_view name : known) is_known = is_known || flag == name;
    if (!is_known) throw std::invalid_argument("unknown option " + flag + " (known: " + joined(known) + ")");
    if (i + 1 >= argc) throw std::invalid_argument("missing value after " + flag);
    values_[flag] = argv[++i];
  }
}

std::string Flags::text(std::string_view name, std::string fallback) const {
  const auto found = values_.find(name);
  return found == values_.end() ? fallback : found->second;
}

int Flags::integer(std::string_view name, int fallback) const {
  const auto found = values_.find(name);
  if (found == values_.end()) return fallback;
  std::size_t used = 0;
  int value = 0;
  try {
    value = std::stoi(found->second, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != found->second.size()) {
    throw std::invalid_argument(std::string(name) + ": \"" + found->second + "\" is not an integer");
  }
  return value;
}

double Flags::number(std::string_view name, double fallback) const {
  const auto found = values_.find(name);
  if (found == values_.end()) return fallback;
  std::size_t used = 0;
  double value = 0.0;
  try {
    value = std::stod(found->second, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != found->second.size()) {
    throw std::invalid_argument(std::string(name) + ": \"" + found->second + "\" is not a number");
  }
  return value;
}

Backend::Backend(std::string_view sample_name) : client_(tinker::ClientOptions::from_environment()) {
  if (!client_.api_key.empty() || client_.credential_command) return;
  // No key: a tinker-local on an ephemeral loopback port. Its key check accepts any tml- key.
  local_server_ = std::make_unique<tinker::local::Server>();
  local_server_->start();
  client_.base_url = local_server_->base_url();
  client_.api_key = tinker::Secret("tml-" + std::string(sample_name) + "-local");
  std::cout << "TINKER_API_KEY is not set: using tinker-local at " << client_.base_url << "\n";
}

Backend::~Backend() = default;

std::string Backend::base_model(const Flags& flags) const {
  return flags.text("--base-model", is_local() ? "tinker-local/tiny-lm" : "Qwen/Qwen3.5-4B");
}

bool run_async(const Backend& backend, const AsyncSample& sample) {
  asio::io_context io;
  bool passed = false;
  {
    tinker::ServiceClient service(io.get_executor(), backend.service_options());
    auto done = asio::co_spawn(io, sample(service), asio::use_future);
    while (done.wait_for(std::chrono::seconds(0)) != std::future_status::ready) io.run_one();
    passed = done.get();
  }
  io.poll();  // let the client's background work finish its shutdown
  return passed;
}

int guarded_main(const std::function<bool()>& sample) {
  try {
    return sample() ? EXIT_SUCCESS : EXIT_FAILURE;
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return EXIT_FAILURE;
  }
}

std::vector<Conversation> read_conversations(const std::filesystem::path& jsonl) {
  std::ifstream in(jsonl);
  if (!in) throw tinker::error(tinker::errc::invalid_argument, "cannot open " + jsonl.string());
  std::vector<Conversation> conversations;
  std::string text;
  for (std::size_t line = 1; std::getline(in, text); ++line) {
    if (text.find_first_not_of(" \t\r") == std::string::npos) continue;  // blank lines are allowed
    try {
      conversations.push_back(tinker::renderers::conversation_from_json(text));
    } catch (const tinker::error& e) {
      throw tinker::error(tinker::errc::invalid_argument,
                          jsonl.string() + ":" + std::to_string(line) + ": " + e.what());
    }
  }
  if (conversations.empty()) throw tinker::error(tinker::errc::invalid_argument, jsonl.string() + ": no conversations");
  return conversations;
}

std::filesystem::path data_file(const Flags& flags, std::string_view file) {
  return std::filesystem::path(flags.text("--data-dir", TINKER_SAMPLES_DATA_DIR)) / file;
}

std::vector<tinker::Datum> supervised_data(const tinker::renderers::Renderer& renderer,
                                           const std::vector<Conversation>& conversations) {
  std::vector<tinker::Datum> data;
  for (const Conversation& conversation : conversations) {
    const auto example =
        renderer.build_supervised_example(conversation, tinker::renderers::TrainOn::all_assistant_messages);
    data.push_back(example.to_datum());
  }
  return data;
}

double mean_nll(const std::vector<tinker::Datum>& data, const tinker::ForwardBackwardOutput& output) {
  double loss = 0.0;
  double weight = 0.0;
  for (std::size_t i = 0; i < data.size(); ++i) {
    const std::vector<float> weights = data[i].loss_fn_inputs.at("weights").to_dense_floats();
    const std::vector<float> logprobs = output.loss_fn_outputs.at(i).at("logprobs").to_dense_floats();
    for (std::size_t t = 0; t < weights.size() && t < logprobs.size(); ++t) {
      loss -= static_cast<double>(weights[t]) * logprobs[t];
      weight += weights[t];
    }
  }
  return weight == 0.0 ? 0.0 : loss / weight;
}

boost::asio::awaitable<double> forward_nll(const tinker::TrainingClient& training,
                                           const std::vector<tinker::Datum>& data) {
  const tinker::ForwardBackwardInput input(data, tinker::loss_fn::cross_entropy);
  auto scoring = co_await training.async_forward(input, tinker::use_awaitable);
  const tinker::ForwardBackwardOutput output = co_await scoring.async_get(tinker::use_awaitable);
  co_return mean_nll(data, output);
}

double linear_decay(double base, int step, int steps) {
  return base * (1.0 - static_cast<double>(step) / static_cast<double>(steps));
}

}  // namespace samples
