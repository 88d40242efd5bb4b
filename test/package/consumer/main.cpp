// A program outside the tinker-cpp source tree, built against an installed tinker-cpp (CMake's
// find_package or pkg-config): it starts tinker-local in-process, trains one LoRA step through
// the blocking facade and prints the loss. Exit status 0 means the installed package works.
#include <tinker/local/server.hpp>
#include <tinker/sync/service_client.hpp>
#include <tinker/sync/training_client.hpp>
#include <tinker/tinker.hpp>
#include <tinker/version.hpp>

#include <cstdio>
#include <exception>
#include <vector>

int main() {
  try {
    tinker::local::Server server;
    server.start();
    tinker::ClientOptions client;
    client.base_url = server.base_url();
    client.api_key = tinker::Secret("tml-package-consumer");
    const tinker::sync::ServiceClient service{tinker::ServiceClientOptions(client)};
    const tinker::sync::TrainingClient training = service.create_lora_training_client("tinker-local/tiny-lm", 4);

    const std::vector<tinker::TokenId> tokens{1, 2, 3, 4, 5, 6, 7, 8};
    const std::vector<tinker::TokenId> targets{2, 3, 4, 5, 6, 7, 8, 9};
    tinker::LossFnInputs inputs{{"target_tokens", tinker::TensorData::from_tokens(targets)},
                                {"weights", tinker::TensorData::from_floats(std::vector<float>(targets.size(), 1.0f))}};
    const std::vector<tinker::Datum> batch{tinker::Datum(tinker::ModelInput::from_ints(tokens), std::move(inputs))};
    auto gradients = training.forward_backward(tinker::ForwardBackwardInput(batch, tinker::loss_fn::cross_entropy));
    auto update = training.optim_step(tinker::AdamParams(1e-3));
    const tinker::ForwardBackwardOutput output = gradients.get();
    update.get();
    std::printf("tinker %s: trained one step against tinker-local, %zu loss output(s)\n", tinker::sdk_version,
                output.loss_fn_outputs.size());
    server.stop();
    return output.loss_fn_outputs.size() == 1 ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "package consumer failed: %s\n", e.what());
    return 1;
  }
}
