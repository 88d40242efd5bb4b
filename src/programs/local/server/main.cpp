// tinker-local: a Tinker-compatible server on loopback. See --help.
#include "programs/local/server/cli.hpp"

#include <tinker/error.hpp>
#include <tinker/local/model_dir.hpp>
#include <tinker/local/server.hpp>
#include <tinker/safetensors.hpp>
#include <tinker/version.hpp>

#include <cstdio>
#include <exception>
#include <iostream>
#include <string_view>
#include <vector>

int main(int argc, char** argv) {
  using tinker::local::front::CommandLine;
  std::vector<std::string_view> args(argv + 1, argv + argc);
  CommandLine command;
  try {
    command = tinker::local::front::parse_command_line(args);
  } catch (const tinker::local::front::CommandLineError& e) {
    std::cerr << "tinker-local: " << e.what() << " (see --help)\n";
    return 2;
  }
  if (command.help) {
    std::cout << tinker::local::front::usage_text();
    return 0;
  }
  if (command.version) {
    std::cout << "tinker-local " << tinker::sdk_version << " (Tinker protocol of Python SDK "
              << tinker::protocol_version << ")\n";
    return 0;
  }
  if (command.export_model) {
    const auto& job = *command.export_model;
    try {
      tinker::local::export_model(command.options, job.model, job.output_dir, job.dtype);
    } catch (const std::exception& e) {
      std::cerr << "tinker-local: " << e.what() << "\n";
      return 1;
    }
    std::cout << "wrote " << job.model << " to " << job.output_dir.string() << " ("
              << tinker::safetensors::to_string(job.dtype) << ")\n";
    return 0;
  }
  try {
    tinker::local::Server server(std::move(command.options));
    server.start();
    std::cout << "tinker-local listening on " << server.base_url() << std::endl;  // flushed: scripts wait for it
    server.wait_for_shutdown_signal();
  } catch (const std::exception& e) {
    std::cerr << "tinker-local: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
