// The safetensors header check shared by SafetensorsFile::open and from_bytes: every rule of
// include/tinker/safetensors.hpp is applied here, before any tensor byte is read.
#pragma once

#include <tinker/safetensors.hpp>

#include <cstddef>
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

namespace tinker::safetensors::detail {

/// The largest header accepted, as the reference implementation allows (100 MB).
inline constexpr std::uint64_t max_header_bytes = 100'000'000;

struct ParsedHeader {
  std::vector<TensorInfo> tensors;  // ascending begin, then name
  std::map<std::string, std::string> metadata;
  std::uint64_t data_offset = 0;  // 8 + header length
};

/// Checks the header of `file` (the whole file's bytes) and returns what it declares. Throws
/// errc::invalid_file with a message starting "<label>: " (and naming the tensor when there is one).
ParsedHeader parse_header(std::span<const std::byte> file, const std::string& label);

}  // namespace tinker::safetensors::detail
