#include "http/message.hpp"

#include "core/ascii.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <utility>

namespace tinker::http {

const char* to_string(Method method) noexcept {
  switch (method) {
    case Method::get: return "GET";
    case Method::post: return "POST";
    case Method::put: return "PUT";
    case Method::delete_: return "DELETE";
  }
  return "GET";
}

const char* to_string(PoolKind kind) noexcept {
  switch (kind) {
    case PoolKind::session: return "session";
    case PoolKind::training: return "training";
    case PoolKind::sampling: return "sampling";
    case PoolKind::futures: return "futures";
    case PoolKind::storage: return "storage";
  }
  return "unknown";
}

ResponseHeaders::ResponseHeaders(std::initializer_list<Header> fields) {
  for (const Header& field : fields) emplace_back(field.name, field.value);
}

ResponseHeaders::ResponseHeaders(const std::vector<Header>& fields) {
  for (const Header& field : fields) emplace_back(field.name, field.value);
}

namespace {

// Each field is stored as its name's and value's sizes, then the name and the value.
using FieldSize = std::uint32_t;
constexpr std::size_t field_sizes_bytes = 2 * sizeof(FieldSize);

// `text` lower-cased (ASCII letters only) at `out`, eight characters at a time: every name of
// every response goes through here. For a byte c below 0x80 (no sum carries into the next byte),
// the high bit of c + 0x3F is set iff c >= 'A', and that of c + 0x25 iff c > 'Z'. Only 'A'..'Z'
// has the first set, the second clear and its own high bit clear; it gets 0x20 (that high bit
// shifted right by 2).
void write_lower(char* out, std::string_view text) noexcept {
  constexpr std::uint64_t ones = 0x0101010101010101ULL;
  std::size_t i = 0;
  for (; i + 8 <= text.size(); i += 8) {
    std::uint64_t word = 0;
    std::memcpy(&word, text.data() + i, 8);
    const std::uint64_t low7 = word & (0x7F * ones);
    const std::uint64_t at_least_a = low7 + (0x3F * ones);
    const std::uint64_t beyond_z = low7 + (0x25 * ones);
    const std::uint64_t upper = (at_least_a & ~beyond_z & ~word) & (0x80 * ones);
    word |= upper >> 2;
    std::memcpy(out + i, &word, 8);
  }
  for (; i < text.size(); ++i) out[i] = ascii::to_lower(text[i]);
}

}  // namespace

ResponseHeaders::ResponseHeaders(const ResponseHeaders& other) : count_(other.count_) {
  if (other.size_ == 0) return;
  grow(other.size_);
  std::memcpy(text_.get(), other.text_.get(), other.size_);
  size_ = other.size_;
}

ResponseHeaders& ResponseHeaders::operator=(const ResponseHeaders& other) {
  if (this != &other) *this = ResponseHeaders(other);
  return *this;
}

ResponseHeaders::ResponseHeaders(ResponseHeaders&& other) noexcept
    : text_(std::move(other.text_)),
      size_(std::exchange(other.size_, 0)),
      capacity_(std::exchange(other.capacity_, 0)),
      count_(std::exchange(other.count_, 0)) {}

ResponseHeaders& ResponseHeaders::operator=(ResponseHeaders&& other) noexcept {
  text_ = std::move(other.text_);
  size_ = std::exchange(other.size_, 0);
  capacity_ = std::exchange(other.capacity_, 0);
  count_ = std::exchange(other.count_, 0);
  return *this;
}

void ResponseHeaders::grow(std::size_t capacity) {
  auto larger = std::make_unique_for_overwrite<char[]>(capacity);
  if (size_ != 0) std::memcpy(larger.get(), text_.get(), size_);
  text_ = std::move(larger);
  capacity_ = capacity;
}

// Runs for every field of every response: the room checked once, the bytes written in place.
void ResponseHeaders::emplace_back(std::string_view name, std::string_view value) {
  const std::size_t needed = size_ + field_sizes_bytes + name.size() + value.size();
  if (needed > capacity_) grow(std::max(needed, 2 * capacity_));
  char* out = text_.get() + size_;
  const std::array<FieldSize, 2> sizes{static_cast<FieldSize>(name.size()), static_cast<FieldSize>(value.size())};
  std::memcpy(out, sizes.data(), field_sizes_bytes);
  out += field_sizes_bytes;
  write_lower(out, name);
  out += name.size();
  if (!value.empty()) std::memcpy(out, value.data(), value.size());
  size_ = needed;
  ++count_;
}

void ResponseHeaders::set(std::string_view name, std::string_view value) {
  ResponseHeaders replaced;
  bool found = false;
  for (const HeaderView field : *this) {
    const bool same = ascii::iequals(field.name, name);
    found = found || same;
    replaced.emplace_back(field.name, same ? value : field.value);
  }
  if (!found) replaced.emplace_back(name, value);
  *this = std::move(replaced);
}

// Names are stored lower-cased: `name` is lower-cased once, then each field costs a size
// comparison (every response is asked for its content type).
std::string_view ResponseHeaders::find(std::string_view name) const noexcept {
  std::array<char, 64> lowered{};
  if (name.size() > lowered.size()) {
    for (const HeaderView field : *this) {
      if (ascii::iequals(field.name, name)) return field.value;
    }
    return {};
  }
  write_lower(lowered.data(), name);
  const char* at = text_.get();
  const char* const end = size_ == 0 ? at : at + size_;
  while (at != end) {
    std::array<FieldSize, 2> sizes;
    std::memcpy(sizes.data(), at, field_sizes_bytes);
    const char* field_name = at + field_sizes_bytes;
    if (sizes[0] == name.size() && std::memcmp(field_name, lowered.data(), name.size()) == 0) {
      return std::string_view(field_name + sizes[0], sizes[1]);
    }
    at = field_name + sizes[0] + sizes[1];
  }
  return {};
}

HeaderView ResponseHeaders::const_iterator::operator*() const noexcept {
  std::array<FieldSize, 2> sizes;
  std::memcpy(sizes.data(), at_, field_sizes_bytes);
  const char* name = at_ + field_sizes_bytes;
  return HeaderView{std::string_view(name, sizes[0]), std::string_view(name + sizes[0], sizes[1])};
}

ResponseHeaders::const_iterator& ResponseHeaders::const_iterator::operator++() noexcept {
  const HeaderView field = **this;
  at_ = field.value.data() + field.value.size();
  return *this;
}

bool Response::is_json() const noexcept {
  // As the Python SDK decides: the media type (parameters such as "; charset=utf-8" stripped) ends
  // with "json", which also accepts "application/problem+json".
  std::string_view type = content_type();
  type = ascii::trim(type.substr(0, type.find(';')));
  return ascii::iends_with(type, "json");
}

bool Response::is_protobuf() const noexcept {
  constexpr std::string_view protobuf = "application/x-protobuf";
  const std::string_view type = content_type();
  // The usual spelling first (one memcmp; every sample result is checked twice).
  return type.starts_with(protobuf) || ascii::icontains(type, protobuf);
}

}  // namespace tinker::http
