// tinker-cpp quickstart (foundation stage): prints the SDK version and round-trips a training
// Datum through both wire codecs, JSON and protobuf (zstd-compressed, as the service asks).
// A later stage replaces this with a real LoRA training run against tinker-local.
#include <tinker/tinker.hpp>

#include <cstdlib>
#include <iostream>

namespace {

// One supervised example: predict each next token of "1 2 3 4", masking the first target.
tinker::Datum make_datum() {
  const std::vector<tinker::TokenId> sequence{9707, 11, 1879, 13, 151643};
  const std::vector<tinker::TokenId> input(sequence.begin(), sequence.end() - 1);
  const std::vector<tinker::TokenId> targets(sequence.begin() + 1, sequence.end());
  const std::vector<float> weights{0.0f, 1.0f, 1.0f, 1.0f};
  return tinker::Datum(tinker::ModelInput::from_ints(input),
                       {{"target_tokens", tinker::TensorData::from_tokens(targets)},
                        {"weights", tinker::TensorData::from_floats(weights)}});
}

}  // namespace

int main() try {
  std::cout << "tinker-cpp " << tinker::sdk_version << " (Tinker protocol " << tinker::protocol_version << ")\n";

  const tinker::Datum datum = make_datum();
  const std::string json = tinker::to_json(datum);
  std::cout << "Datum as JSON (" << json.size() << " bytes): " << json << "\n";
  const bool json_ok = tinker::from_json<tinker::Datum>(json) == datum;

  // Protobuf carries data inside a forward_backward request (spec section 17).
  const tinker::ForwardBackwardRequest request("session:train:0", 1,
                                               tinker::ForwardBackwardInput({datum}, tinker::loss_fn::cross_entropy));
  const std::string proto = tinker::to_protobuf(request);
  const std::string compressed = tinker::zstd_compress(proto);
  const auto decoded =
      tinker::from_protobuf<tinker::ForwardBackwardRequest>(tinker::zstd_decompress(compressed, 1 << 20));
  std::cout << "forward_backward request as protobuf: " << proto.size() << " bytes (" << compressed.size()
            << " with zstd)\n";
  const bool proto_ok = decoded == request;

  std::cout << "JSON round trip: " << (json_ok ? "identical" : "DIFFERENT") << "\n"
            << "protobuf round trip: " << (proto_ok ? "identical" : "DIFFERENT") << "\n";
  return json_ok && proto_ok ? EXIT_SUCCESS : EXIT_FAILURE;
} catch (const tinker::error& e) {
  std::cerr << "error: " << e.what() << "\n";
  return EXIT_FAILURE;
}
