// Definitions of the public JSON templates of <tinker/codec.hpp>, explicitly instantiated for
// every wire type by TINKER_INSTANTIATE_JSON in the json_codec_*.cpp files.
#pragma once

#include "core/wire/json_codec.hpp"
#include "core/wire/json_schema.hpp"

#include <tinker/codec.hpp>

#include <new>
#include <ostream>

namespace tinker {

namespace wire {
/// The capacity to reserve before encoding `value`. Request bodies are mostly small: one
/// allocation up front instead of the 4-5 of growing from empty (a retrieve_future body fits; a
/// held poll keeps its body, so not more).
template <class T>
std::size_t json_capacity_hint(const T&) {
  return 128;
}
/// Bulk requests: an upper bound of their text from the values they carry (json_codec_training.cpp),
/// so that the body is written once into one buffer instead of being copied at every doubling.
std::size_t json_capacity_hint(const ForwardBackwardRequest& value);
std::size_t json_capacity_hint(const ForwardRequest& value);
}  // namespace wire

template <class T>
std::string to_json(const T& value) {
  std::string out;
  out.reserve(wire::json_capacity_hint(value));
  wire::encode_json(value, out, /*lenient=*/false);
  return out;
}

template <class T>
void append_json(const T& value, std::string& out) {
  const std::size_t old_size = out.size();
  try {
    wire::encode_json(value, out, /*lenient=*/false);
  } catch (...) {
    out.resize(old_size);  // leave the caller's buffer as it was
    throw;
  }
}

template <class T>
T from_json(std::string_view json_text) {
  T out;
  wire::decode_json(json_text, out);
  return out;
}

template <class T>
boost::system::error_code from_json(std::string_view json_text, T& out, diagnostics& diag) noexcept {
  try {
    wire::decode_json(json_text, out);
    return {};
  } catch (const error& e) {
    diag = e.diag();
    return e.code();
  } catch (const std::bad_alloc&) {
    diag.clear();
    diag.message = "out of memory while decoding";
    return make_error_code(errc::decode_error);
  } catch (const std::exception& e) {
    diag.clear();
    diag.message = e.what();
    return make_error_code(errc::decode_error);
  }
}

}  // namespace tinker

// Instantiates the codec for one type and defines its operator<< (lenient JSON).
#define TINKER_INSTANTIATE_JSON(T)                                                              \
  template std::string to_json<T>(const T&);                                                    \
  template void append_json<T>(const T&, std::string&);                                         \
  template T from_json<T>(std::string_view);                                                    \
  template boost::system::error_code from_json<T>(std::string_view, T&, diagnostics&) noexcept; \
  std::ostream& operator<<(std::ostream& os, const T& value) {                                  \
    std::string text;                                                                           \
    wire::encode_json(value, text, /*lenient=*/true);                                           \
    return os << text;                                                                          \
  }                                                                                             \
  static_assert(true)
