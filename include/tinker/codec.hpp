/// \file
/// Wire codecs: JSON for every type in include/tinker/types/ (`doc/protocol.md#json-encoding`),
/// protobuf for the bulk messages (`doc/protocol.md#protobuf`), and zstd framing for protobuf
/// request bodies.
///
/// The SDK clients use these internally; they are public so that tools, servers and tests can
/// encode and decode exactly what goes over the wire. Every function is thread-safe.
#pragma once

#include <tinker/error.hpp>
#include <tinker/types.hpp>

#include <cstddef>
#include <string>
#include <string_view>

namespace tinker {

/// Encodes `value` as compact JSON: null fields omitted, defaulted fields and `type`
/// discriminators kept, float32 values in their shortest round-trip form.
/// Throws `tinker::error` (invalid_argument) naming the field path if the value cannot be
/// encoded (NaN/Inf in a tensor, a forward-only ForwardBackwardRequest, ...).
/// Defined for every wire type of include/tinker/types/.
template <class T>
std::string to_json(const T& value);

/// Appends the JSON encoding of `value` to `out` (no reallocation when `out` has capacity).
template <class T>
void append_json(const T& value, std::string& out);

/// Decodes JSON text. Unknown keys are ignored; a wrong type, missing required field or
/// malformed document throws `tinker::error` (decode_error) whose message names the field path,
/// e.g. `sequences[3].tokens[7]: expected integer, got string`.
template <class T>
T from_json(std::string_view json_text);

/// Non-throwing form of from_json: on failure returns the error code (decode_error), fills
/// `diag.message` and leaves `out` unspecified; on success returns an empty code.
template <class T>
boost::system::error_code from_json(std::string_view json_text, T& out, diagnostics& diag) noexcept;

/// The protobuf encoding of a forward_backward request (package `tinker_public`).
/// Throws `tinker::error` (invalid_argument) naming the field path for values the protobuf form
/// cannot carry (an image_asset_pointer chunk, a token id outside int32, ...).
std::string to_protobuf(const ForwardBackwardRequest& request);
/// The protobuf encoding of a forward_backward result (what a server sends). Throws as above.
std::string to_protobuf(const ForwardBackwardOutput& output);
/// The protobuf encoding of a sample result (what a server sends). Throws as above.
std::string to_protobuf(const SampleResponse& response);

/// Decodes a protobuf message; defined for ForwardBackwardRequest, ForwardBackwardOutput and
/// SampleResponse. Throws `tinker::error` (decode_error) naming the field path.
template <class T>
T from_protobuf(std::string_view bytes);

/// One zstd frame holding `data` (what `Content-Encoding: zstd` means for request bodies), at
/// compression `level` (zstd's 1-19; 3 is zstd's default).
std::string zstd_compress(std::string_view data, int level = 3);

/// Decompresses one zstd frame. Throws `tinker::error` (decode_error) if the frame is corrupt
/// or would decompress to more than `max_size` bytes (a guard against decompression bombs).
std::string zstd_decompress(std::string_view frame, std::size_t max_size);

}  // namespace tinker
