// safetensors files (src/weights): SafetensorsFile::from_bytes on the input, the header check that
// stands between a downloaded model and every exporter. Besides the sanitizers: failures are
// invalid_file and name the file; an accepted file's tensors lie inside its data section, in data
// order, share no byte, and hold dtype x shape bytes; every tensor's bytes can be read, and small
// float tensors convert to floats.
#include "fuzz_support.hpp"

#include <tinker/safetensors.hpp>

#include <cstddef>
#include <cstdint>
#include <string>

namespace {

constexpr const char* fuzz_label = "fuzz.safetensors";
// Float tensors up to this many elements are converted (bigger ones only touched byte by byte).
constexpr std::uint64_t fuzz_max_converted = 1 << 12;

void check_tensors(const tinker::safetensors::SafetensorsFile& file) {
  using namespace tinker::safetensors;
  const std::uint64_t data_size = file.file_size() - file.data_offset();
  std::uint64_t furthest_end = 0;
  const TensorInfo* previous = nullptr;
  for (const auto& tensor : file.tensors()) {
    if (tensor.begin > tensor.end || tensor.end > data_size) tinker::fuzz::property_failed("a range outside the data");
    if (tensor.byte_size() != tensor.element_count() * dtype_size(tensor.dtype)) {
      tinker::fuzz::property_failed("a byte length other than dtype x shape");
    }
    if (previous != nullptr && previous->begin > tensor.begin)
      tinker::fuzz::property_failed("tensors out of data order");
    if (tensor.byte_size() > 0) {
      if (tensor.begin < furthest_end) tinker::fuzz::property_failed("two tensors share bytes");
      furthest_end = tensor.end;
    }
    if (file.find(tensor.name) != &tensor) tinker::fuzz::property_failed("find() gives another tensor");
    previous = &tensor;

    unsigned sum = 0;  // every byte read, so the sanitizer sees any read outside the input
    for (const std::byte b : file.data(tensor)) sum += static_cast<unsigned>(b);
    volatile unsigned sink = sum;
    (void)sink;
    if (is_float(tensor.dtype) && tensor.element_count() <= fuzz_max_converted) {
      if (file.read_f32(tensor).size() != tensor.element_count()) tinker::fuzz::property_failed("read_f32 size");
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace tinker;
  std::string bytes(reinterpret_cast<const char*>(data), size);
  try {
    const auto file = safetensors::SafetensorsFile::from_bytes(std::move(bytes), fuzz_label);
    check_tensors(file);
  } catch (const error& e) {
    if (e.code() != errc::invalid_file) fuzz::property_failed("from_bytes threw a code other than invalid_file");
    if (std::string_view(e.what()).find(fuzz_label) == std::string_view::npos) {
      fuzz::property_failed("an error that does not name the file");
    }
  }
  return 0;
}
