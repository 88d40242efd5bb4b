// Request bodies written by hand for tinker-local's API tests, and readers for the answers.
//
// JSON goes through Boost.JSON values built field by field; protobuf goes through the
// protoc-generated classes of tinker_public. Nothing here uses the SDK's codecs
// (tinker::to_json / from_json / to_protobuf / from_protobuf): the tests check the server
// against the protocol as documented (doc/protocol.md), not against the code it shares with the
// client.
#pragma once

#include "tinker_public.pb.h"

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tinker::local::test {

using Tokens = std::vector<std::int64_t>;

std::string to_text(const boost::json::value& value);

// ---- JSON requests (doc/protocol.md#core-types) ---------------------------------------------

boost::json::array int_array(const std::vector<std::int64_t>& values);
boost::json::array number_array(const std::vector<double>& values);
/// {"chunks": [{"tokens": [...], "type": "encoded_text"}]}
boost::json::object model_input(const Tokens& tokens);
/// {"data": [...], "dtype": "int64", "shape": [n]}
boost::json::object int64_tensor(const Tokens& values);
/// {"data": [...], "dtype": "float32", "shape": [n]}
boost::json::object float32_tensor(const std::vector<double>& values);
/// A cross_entropy datum for `sequence`: model_input = S[:-1], target_tokens = S[1:],
/// weights all 1.
boost::json::object cross_entropy_datum(const Tokens& sequence);
/// {"<input_key>": {"data": data, "loss_fn": loss_fn}, "model_id": .., "seq_id": ..}
/// input_key is "forward_backward_input" (8.7.4) or "forward_input" (legacy 8.7.5).
boost::json::object forward_backward_body(const std::string& model_id, std::int64_t seq_id, boost::json::array data,
                                          std::string_view loss_fn = "cross_entropy",
                                          std::string_view input_key = "forward_backward_input");
/// Every AdamParams field with the given learning rate.
boost::json::object adam_params(double learning_rate);
boost::json::object optim_step_body(const std::string& model_id, std::int64_t seq_id, double learning_rate);

// ---- JSON answers ----------------------------------------------------------------------------

/// A JSON number (integer or floating) as a double; throws when `value` is not a number.
double number(const boost::json::value& value);
std::vector<double> numbers(const boost::json::value& array);
std::vector<std::int64_t> integers(const boost::json::value& array);
/// `object[key]`, throwing std::runtime_error naming the key (and the object) when absent.
const boost::json::value& field(const boost::json::value& object, std::string_view key);
/// For a temporary object: the field by value, so it outlives the object.
boost::json::value field(boost::json::value&& object, std::string_view key);
/// The array `object[key]`, by value (safe in a range-for over a temporary object).
boost::json::array items(const boost::json::value& object, std::string_view key);
std::string string_field(const boost::json::value& object, std::string_view key);
/// The per-datum "logprobs" of a JSON ForwardBackwardOutput, checking each is a
/// float32 TensorData.
std::vector<std::vector<double>> json_logprobs(const boost::json::value& output);

// ---- protobuf (doc/protocol.md#protobuf) -----------------------------------------------------

std::string int32_le(const std::vector<std::int32_t>& values);
std::string int64_le(const std::vector<std::int64_t>& values);
std::string float32_le(const std::vector<float>& values);
/// Little-endian arrays back to values; throw when the byte count is not a multiple of the width.
std::vector<std::int32_t> int32s_from_le(std::string_view bytes);
std::vector<std::int64_t> int64s_from_le(std::string_view bytes);
std::vector<float> floats_from_le(std::string_view bytes);

/// A cross_entropy Datum with dense INT64 target_tokens and FLOAT32 weights.
tinker_public::Datum proto_cross_entropy_datum(const Tokens& sequence);
tinker_public::ForwardBackwardRequest proto_forward_backward(const std::string& model_id, std::int32_t seq_id,
                                                             const std::vector<Tokens>& sequences,
                                                             bool forward_only = false);
/// One zstd frame (default level).
std::string zstd_compress(std::string_view bytes);

/// Per-datum float arrays of a FLOAT32 BatchedTensor, sliced by its byte offsets;
/// throws when offsets are not num_datums+1 increasing multiples of 4 ending at data.size().
std::vector<std::vector<float>> batched_floats(const tinker_public::BatchedTensor& tensor, std::int64_t num_datums);

}  // namespace tinker::local::test
