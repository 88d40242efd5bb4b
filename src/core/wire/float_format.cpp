// Shortest round-trip formatting of float32, after Ulf Adams' Ryu algorithm (PLDI 2018), for
// the float case only. libstdc++'s std::to_chars(float) is correct but spends ~33 ns per value
// on this machine; tensors are the bulk of every request, so this path is specialised.
//
// The multiplier tables are computed at compile time from their definitions instead of being
// pasted in, with 128-bit integers (5^46 < 2^107 and the largest 2^j needed is 2^128).
#include "core/wire/float_format.hpp"

#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>

namespace tinker::wire {
namespace {

__extension__ typedef unsigned __int128 uint128;

constexpr int mantissa_bits = 23;
constexpr int exponent_bias = 127;
constexpr int pow5_inv_bitcount = 59;
constexpr int pow5_bitcount = 61;

// ceil(log2(5^e)) for e > 0, and 1 for e == 0.
constexpr int pow5bits(int e) {
  return static_cast<int>(((static_cast<std::uint32_t>(e) * 1217359u) >> 19) + 1);
}
// floor(log10(2^e)) and floor(log10(5^e)).
constexpr std::uint32_t log10_pow2(int e) {
  return (static_cast<std::uint32_t>(e) * 78913u) >> 18;
}
constexpr std::uint32_t log10_pow5(int e) {
  return (static_cast<std::uint32_t>(e) * 732923u) >> 20;
}

constexpr uint128 pow5(int e) {
  uint128 p = 1;
  for (int i = 0; i < e; ++i) p *= 5;
  return p;
}

// floor(2^j / 5^i) + 1 with j = pow5bits(i) - 1 + 59 (j reaches 128 at i = 30: use 2^128 - 1,
// which has the same quotient because 5^i does not divide a power of two).
constexpr std::array<std::uint64_t, 31> make_pow5_inv_split() {
  std::array<std::uint64_t, 31> table{};
  for (int i = 0; i < 31; ++i) {
    const int j = pow5bits(i) - 1 + pow5_inv_bitcount;
    const uint128 two_j = j >= 128 ? ~uint128{0} : uint128{1} << j;
    table[i] = static_cast<std::uint64_t>(two_j / pow5(i)) + 1;
  }
  return table;
}

// 5^i scaled to 61 significant bits: floor(5^i / 2^(pow5bits(i) - 61)).
// 48 entries: the "last removed digit" of the smallest denormals reads index i + 1 = 47.
constexpr std::array<std::uint64_t, 48> make_pow5_split() {
  std::array<std::uint64_t, 48> table{};
  for (int i = 0; i < 48; ++i) {
    const int shift = pow5bits(i) - pow5_bitcount;
    const uint128 p = pow5(i);
    table[i] = static_cast<std::uint64_t>(shift >= 0 ? p >> shift : p << -shift);
  }
  return table;
}

constexpr auto pow5_inv_split = make_pow5_inv_split();
constexpr auto pow5_split = make_pow5_split();

std::uint32_t mul_shift(std::uint32_t m, std::uint64_t factor, int shift) {
  const std::uint64_t low = static_cast<std::uint64_t>(m) * static_cast<std::uint32_t>(factor);
  const std::uint64_t high = static_cast<std::uint64_t>(m) * static_cast<std::uint32_t>(factor >> 32);
  return static_cast<std::uint32_t>(((low >> 32) + high) >> (shift - 32));
}

bool multiple_of_pow5(std::uint32_t value, std::uint32_t p) {
  std::uint32_t count = 0;
  while (value % 5 == 0) value /= 5, ++count;
  return count >= p;
}

bool multiple_of_pow2(std::uint32_t value, std::uint32_t p) {
  return (value & ((1u << p) - 1)) == 0;
}

struct Decimal {
  std::uint32_t mantissa;
  int exponent;  // value = mantissa * 10^exponent
};

// Ryu step by step: the interval of decimals that round back to the float, scaled to integers
// (vm, vr, vp), then digits removed while the interval still allows it.
[[gnu::always_inline]] inline Decimal shortest_decimal(std::uint32_t ieee_mantissa, std::uint32_t ieee_exponent) {
  const int e2 = (ieee_exponent == 0 ? 1 : static_cast<int>(ieee_exponent)) - exponent_bias - mantissa_bits - 2;
  const std::uint32_t m2 = ieee_exponent == 0 ? ieee_mantissa : (1u << mantissa_bits) | ieee_mantissa;
  const bool accept_bounds = (m2 & 1) == 0;
  const std::uint32_t mv = 4 * m2;
  const std::uint32_t mp = 4 * m2 + 2;
  const std::uint32_t mm_shift = ieee_mantissa != 0 || ieee_exponent <= 1;
  const std::uint32_t mm = 4 * m2 - 1 - mm_shift;

  std::uint32_t vr, vp, vm;
  int e10;
  bool vm_trailing_zeros = false;
  bool vr_trailing_zeros = false;
  std::uint32_t last_removed = 0;
  // The digit just below vr's last one, needed for rounding when no digit gets removed (Ryu
  // computes it up front; here only its multiplier is chosen up front, see below).
  std::uint64_t last_factor = 0;
  int last_shift = 0;
  if (e2 >= 0) {
    const std::uint32_t q = log10_pow2(e2);
    e10 = static_cast<int>(q);
    const int k = pow5_inv_bitcount + pow5bits(static_cast<int>(q)) - 1;
    const int i = -e2 + static_cast<int>(q) + k;
    vr = mul_shift(mv, pow5_inv_split[q], i);
    vp = mul_shift(mp, pow5_inv_split[q], i);
    vm = mul_shift(mm, pow5_inv_split[q], i);
    if (q != 0) {
      last_factor = pow5_inv_split[q - 1];
      last_shift = -e2 + static_cast<int>(q) - 1 + pow5_inv_bitcount + pow5bits(static_cast<int>(q - 1)) - 1;
    }
    if (q <= 9) {
      if (mv % 5 == 0) {
        vr_trailing_zeros = multiple_of_pow5(mv, q);
      } else if (accept_bounds) {
        vm_trailing_zeros = multiple_of_pow5(mm, q);
      } else {
        vp -= multiple_of_pow5(mp, q);
      }
    }
  } else {
    const std::uint32_t q = log10_pow5(-e2);
    e10 = static_cast<int>(q) + e2;
    const int i = -e2 - static_cast<int>(q);
    const int k = pow5bits(i) - pow5_bitcount;
    int j = static_cast<int>(q) - k;
    vr = mul_shift(mv, pow5_split[i], j);
    vp = mul_shift(mp, pow5_split[i], j);
    vm = mul_shift(mm, pow5_split[i], j);
    if (q != 0) {
      last_factor = pow5_split[static_cast<std::size_t>(i + 1)];
      last_shift = static_cast<int>(q) - 1 - (pow5bits(i + 1) - pow5_bitcount);
    }
    if (q <= 1) {
      vr_trailing_zeros = true;
      if (accept_bounds) {
        vm_trailing_zeros = mm_shift == 1;
      } else {
        --vp;
      }
    } else if (q < 31) {
      vr_trailing_zeros = multiple_of_pow2(mv, q - 1);
    }
  }

  const auto removed_digit_below_vr = [&] { return mul_shift(mv, last_factor, last_shift) % 10; };
  int removed = 0;
  std::uint32_t output;
  if (vm_trailing_zeros || vr_trailing_zeros) {
    if (last_factor != 0 && (vp - 1) / 10 <= vm / 10) last_removed = removed_digit_below_vr();
    while (vp / 10 > vm / 10) {
      vm_trailing_zeros &= vm % 10 == 0;
      vr_trailing_zeros &= last_removed == 0;
      last_removed = vr % 10;
      vr /= 10, vp /= 10, vm /= 10, ++removed;
    }
    if (vm_trailing_zeros) {
      while (vm % 10 == 0) {
        vr_trailing_zeros &= last_removed == 0;
        last_removed = vr % 10;
        vr /= 10, vp /= 10, vm /= 10, ++removed;
      }
    }
    if (vr_trailing_zeros && last_removed == 5 && vr % 2 == 0) last_removed = 4;  // round half to even
    output = vr + ((vr == vm && (!accept_bounds || !vm_trailing_zeros)) || last_removed >= 5);
  } else {
    while (vp / 10 > vm / 10) {
      last_removed = vr % 10;
      vr /= 10, vp /= 10, vm /= 10, ++removed;
    }
    // Ryu's up-front condition (vp - 1) / 10 <= vm / 10 always holds when the loop removed
    // nothing, and its value is overwritten otherwise: computing it only here is equivalent and
    // spares a branch that mispredicts on ~40% of values.
    if (removed == 0 && last_factor != 0) last_removed = removed_digit_below_vr();
    output = vr + (vr == vm || last_removed >= 5);
  }
  return {output, e10 + removed};
}

constexpr std::array<std::uint32_t, 10> powers_of_10{1,      10,      100,      1000,      10000,
                                                     100000, 1000000, 10000000, 100000000, 1000000000};

// Number of decimal digits of v (at most 9 here), without branches: digit counts vary from value
// to value, and mispredicted branches cost more than the arithmetic.
int decimal_length(std::uint32_t v) {
  const int approx = (std::bit_width(v | 1) * 1233) >> 12;  // floor(log10(2^bits)), off by at most one
  return approx + 1 - static_cast<int>(v < powers_of_10[static_cast<std::size_t>(approx)]);
}

constexpr std::array<char, 200> make_digit_pairs() {
  std::array<char, 200> pairs{};
  for (int i = 0; i < 100; ++i) {
    pairs[2 * i] = static_cast<char>('0' + i / 10);
    pairs[2 * i + 1] = static_cast<char>('0' + i % 10);
  }
  return pairs;
}
constexpr auto digit_pairs = make_digit_pairs();

// The eight decimal digits of x < 10^8 as ASCII in a little-endian word, computed in parallel
// lanes (SWAR): split into 4-digit halves, each half into 2-digit lanes, each of those into
// digits. Every multiplier is a rounded-up reciprocal that is exact for the lane's range, and
// every product stays inside its lane.
std::uint64_t eight_digits(std::uint32_t x) {
  const std::uint64_t high4 = (static_cast<std::uint64_t>(x) * 109951163u) >> 40;  // x / 10^4
  const std::uint64_t halves = high4 | ((x - high4 * 10000) << 32);                // 32-bit lanes < 10^4
  const std::uint64_t high2 = ((halves * 10486) >> 20) & 0x0000007F0000007Full;    // lane / 100
  const std::uint64_t pairs = high2 | ((halves - high2 * 100) << 16);              // 16-bit lanes < 100
  const std::uint64_t tens = ((pairs * 103) >> 10) & 0x000F000F000F000Full;        // lane / 10
  const std::uint64_t digits = tens | ((pairs - tens * 10) << 8);                  // 8-bit lanes < 10
  return digits + 0x3030303030303030ull;
}

// Writes v as exactly ten digits with leading zeros (callers take the last `length`): no
// loops, no data-dependent branches.
void write_ten_digits(char* out, std::uint32_t v) {
  const std::uint32_t high = v / 100000000;  // < 43
  std::memcpy(out, &digit_pairs[2 * high], 2);
  const std::uint64_t low = eight_digits(v - high * 100000000);
  std::memcpy(out + 2, &low, 8);
}

}  // namespace

namespace {
[[gnu::always_inline]] inline char* format_one(char* out, float value) {
  const auto bits = std::bit_cast<std::uint32_t>(value);
  const bool negative = (bits >> 31) != 0;
  const std::uint32_t ieee_exponent = (bits >> mantissa_bits) & 0xFF;
  const std::uint32_t ieee_mantissa = bits & ((1u << mantissa_bits) - 1);
  if (negative) *out++ = '-';
  if (ieee_exponent == 0 && ieee_mantissa == 0) {
    // "-0.0" keeps the sign through a reader that would take "-0" for the integer 0.
    std::memcpy(out, negative ? "0.0" : "0", negative ? 3 : 1);
    return out + (negative ? 3 : 1);
  }
  const Decimal d = shortest_decimal(ieee_mantissa, ieee_exponent);
  const int length = decimal_length(d.mantissa);
  const int sci_exponent = d.exponent + length - 1;
  // Digits go to a local buffer first; every copy below has a fixed size, so it compiles to a
  // couple of vector moves instead of a library call (output may be overwritten past its end,
  // which the max_float_chars budget allows for).
  char buffer[32];  // the fixed-size copies below may carry unused bytes past the digits along
  write_ten_digits(buffer, d.mantissa);
  const char* digits = buffer + 10 - length;
  if (d.exponent >= 0 && sci_exponent < 16) {  // integer: digits then zeros
    std::memcpy(out, digits, 16);
    std::memset(out + length, '0', 16);
    return out + length + d.exponent;
  }
  if (d.exponent < 0 && sci_exponent >= 0) {  // 123.45
    const int int_digits = sci_exponent + 1;
    std::memcpy(out, digits, 16);
    out[int_digits] = '.';
    std::memcpy(out + int_digits + 1, digits + int_digits, 16);
    return out + length + 1;
  }
  if (sci_exponent < 0 && sci_exponent >= -5) {  // 0.000123
    const int zeros = -sci_exponent - 1;
    std::memcpy(out, "0.00000", 8);
    std::memcpy(out + 2 + zeros, digits, 16);
    return out + 2 + zeros + length;
  }
  // 1.2345e-7 (JSON accepts any exponent form).
  out[0] = digits[0];
  out[1] = '.';
  std::memcpy(out + 2, digits + 1, 16);
  char* cursor = length > 1 ? out + length + 1 : out + 1;
  *cursor++ = 'e';
  int e = sci_exponent;
  if (e < 0) *cursor++ = '-', e = -e;
  if (e >= 10) *cursor++ = static_cast<char>('0' + e / 10);
  *cursor++ = static_cast<char>('0' + e % 10);
  return cursor;
}
}  // namespace

char* format_shortest(char* out, float value) {
  return format_one(out, value);
}

char* format_shortest_list(char* out, std::span<const float> values) {
  // One loop in this translation unit, so the whole per-value path is inlined; the finiteness
  // check rides along instead of taking a pass of its own.
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (!std::isfinite(values[i])) return nullptr;
    if (i != 0) *out++ = ',';
    out = format_one(out, values[i]);
  }
  return out;
}

}  // namespace tinker::wire
