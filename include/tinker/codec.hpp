// Wire codecs: JSON (spec 1.4/1.5) for every type in include/tinker/types/, protobuf (spec 17)
// for the bulk messages, and zstd framing for protobuf request bodies.
//
// The SDK clients use these internally; they are public so that tools, servers and tests can
// encode and decode exactly what goes over the wire.
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

/// Non-throwing form: on failure returns the error code, fills `diag.message` and leaves
/// `out` unspecified.
template <class T>
boost::system::error_code from_json(std::string_view json_text, T& out, diagnostics& diag) noexcept;

/// Protobuf encodings of the spec 17 messages (package tinker_public).
/// Throws `tinker::error` (invalid_argument) naming the field path for values the protobuf form
/// cannot carry (an image_asset_pointer chunk, a token id outside int32, ...).
std::string to_protobuf(const ForwardBackwardRequest& request);
std::string to_protobuf(const ForwardBackwardOutput& output);
std::string to_protobuf(const SampleResponse& response);

/// Decodes a protobuf message; defined for ForwardBackwardRequest, ForwardBackwardOutput and
/// SampleResponse. Throws `tinker::error` (decode_error) naming the field path.
template <class T>
T from_protobuf(std::string_view bytes);

/// One zstd frame holding `data` (what `Content-Encoding: zstd` means for request bodies).
std::string zstd_compress(std::string_view data, int level = 3);

/// Decompresses one zstd frame. Throws `tinker::error` (decode_error) if the frame is corrupt
/// or would decompress to more than `max_size` bytes (a guard against decompression bombs).
std::string zstd_decompress(std::string_view frame, std::size_t max_size);

}  // namespace tinker
