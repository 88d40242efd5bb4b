#include "http/headers.hpp"

#include "core/ascii.hpp"

#include <tinker/version.hpp>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <random>

#if defined(__APPLE__)
#include <TargetConditionals.h>
#endif

namespace tinker::http {
namespace {

// The X-Stainless-OS header, from the platform this library was compiled for.
constexpr const char* os_name() noexcept {
#if defined(__ANDROID__)
  return "Android";
#elif defined(__linux__)
  return "Linux";
#elif defined(__APPLE__) && TARGET_OS_IPHONE
  return "iOS";
#elif defined(__APPLE__)
  return "MacOS";
#elif defined(_WIN32)
  return "Windows";
#elif defined(__FreeBSD__)
  return "FreeBSD";
#elif defined(__OpenBSD__)
  return "OpenBSD";
#else
  return "Unknown";
#endif
}

// The X-Stainless-Arch header; like the Python SDK, any 32-bit x86 reports "x32".
constexpr const char* arch_name() noexcept {
#if defined(__x86_64__) || defined(_M_X64)
  return "x64";
#elif defined(__aarch64__) || defined(_M_ARM64)
  return "arm64";
#elif defined(__arm__) || defined(_M_ARM)
  return "arm";
#elif defined(__i386__) || defined(_M_IX86)
  return "x32";
#else
  return "unknown";
#endif
}

#define TINKER_STRINGIFY_IMPL(x) #x
#define TINKER_STRINGIFY(x) TINKER_STRINGIFY_IMPL(x)

// The compiler that built the SDK (clang also defines __GNUC__, so it is tested first).
constexpr const char* runtime_version() noexcept {
#if defined(__clang__)
  return "clang-" TINKER_STRINGIFY(__clang_major__) "." TINKER_STRINGIFY(__clang_minor__) "." TINKER_STRINGIFY(
      __clang_patchlevel__);
#elif defined(__GNUC__)
  return "gcc-" TINKER_STRINGIFY(__GNUC__) "." TINKER_STRINGIFY(__GNUC_MINOR__) "." TINKER_STRINGIFY(
      __GNUC_PATCHLEVEL__);
#elif defined(_MSC_VER)
  return "msvc-" TINKER_STRINGIFY(_MSC_FULL_VER);
#else
  return "unknown";
#endif
}

#undef TINKER_STRINGIFY
#undef TINKER_STRINGIFY_IMPL

std::mt19937_64& uuid_engine() {
  thread_local std::mt19937_64 engine{[] {
    std::random_device device;
    std::seed_seq seed{device(), device(), device(), device(), device(), device(), device(), device()};
    return std::mt19937_64(seed);
  }()};
  return engine;
}

// The two hex digits of every byte value: a UUID is written a byte (two characters) at a time.
constexpr std::array<char, 512> make_hex_pairs() {
  constexpr std::string_view digits = "0123456789abcdef";
  std::array<char, 512> pairs{};
  for (std::size_t byte = 0; byte < 256; ++byte) {
    pairs[2 * byte] = digits[byte >> 4];
    pairs[2 * byte + 1] = digits[byte & 0xF];
  }
  return pairs;
}
constexpr std::array<char, 512> hex_pairs = make_hex_pairs();

// The low `bytes` bytes of `bits`, most significant first, as 2 * `bytes` hex digits.
char* write_hex(char* out, std::uint64_t bits, int bytes) {
  for (int shift = (bytes - 1) * 8; shift >= 0; shift -= 8) {
    std::memcpy(out, &hex_pairs[2 * ((bits >> shift) & 0xFF)], 2);
    out += 2;
  }
  return out;
}

// Writes 36 characters (formatting in place: a string growing by one character per digit cost
// more than the random numbers).
void write_uuid4(char* out) {
  std::uint64_t high = uuid_engine()();
  std::uint64_t low = uuid_engine()();
  high = (high & ~0xF000ULL) | 0x4000ULL;                // version 4 in bits 48..51
  low = (low & ~(0xC000ULL << 48)) | (0x8000ULL << 48);  // variant 10xx (RFC 9562)
  out = write_hex(out, high >> 32, 4);
  *out++ = '-';
  out = write_hex(out, high >> 16, 2);
  *out++ = '-';
  out = write_hex(out, high, 2);
  *out++ = '-';
  out = write_hex(out, low >> 48, 2);
  *out++ = '-';
  write_hex(out, low, 6);
}

void set_header(std::vector<Header>& headers, const std::string& name, const std::string& value) {
  const auto same_name = [&](const Header& h) { return ascii::iequals(h.name, name); };
  const auto existing = std::find_if(headers.begin(), headers.end(), same_name);
  if (existing != headers.end()) {
    existing->value = value;
  } else {
    headers.emplace_back(name, value);
  }
}

}  // namespace

std::string uuid4() {
  std::string text(36, '\0');
  write_uuid4(text.data());
  return text;
}

void write_idempotency_key(char* out) {
  constexpr std::string_view prefix = "tinker-cpp-retry-";
  static_assert(prefix.size() + 36 == idempotency_key_size);
  write_uuid4(std::copy(prefix.begin(), prefix.end(), out));
}

std::string new_idempotency_key() {
  std::string key(idempotency_key_size, '\0');
  write_idempotency_key(key.data());
  return key;
}

std::vector<Header> standard_headers(const ClientOptions& o) {
  std::vector<Header> headers;
  headers.reserve(10 + o.default_headers.size());
  headers.emplace_back("User-Agent", std::string("tinker-cpp/") + sdk_version);
  headers.emplace_back("X-Stainless-Lang", "cpp");
  headers.emplace_back("X-Stainless-Package-Version", protocol_version);
  headers.emplace_back("X-Stainless-OS", os_name());
  headers.emplace_back("X-Stainless-Arch", arch_name());
  headers.emplace_back("X-Stainless-Runtime", "cpp");
  headers.emplace_back("X-Stainless-Runtime-Version", runtime_version());
  headers.emplace_back("X-Stainless-Async", "async:asio");
  if (o.cloudflare_access_client_id && !o.cloudflare_access_client_id->empty()) {
    headers.emplace_back("CF-Access-Client-Id", *o.cloudflare_access_client_id);
  }
  if (!o.cloudflare_access_client_secret.empty()) {
    headers.emplace_back("CF-Access-Client-Secret", o.cloudflare_access_client_secret.reveal());
  }
  for (const auto& [name, value] : o.default_headers) set_header(headers, name, value);
  return headers;
}

}  // namespace tinker::http
