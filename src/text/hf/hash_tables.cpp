// See hash_tables.hpp.
#include "text/hf/hash_tables.hpp"

#include <bit>
#include <stdexcept>

namespace tinker::tokenizer_detail::hf {
namespace {

// Tables stay at most half full: probes stay short, and lookups of absent keys (most of a BPE
// model's pair lookups) end at an empty slot quickly.
std::size_t slots_for(std::size_t count) {
  return std::bit_ceil(std::max<std::size_t>(16, count * 2));
}

}  // namespace

void StringIdMap::reserve(std::size_t count, std::size_t key_bytes) {
  keys_.reserve(key_bytes);
  if (slots_for(count) > slots_.size()) rehash(slots_for(count));
}

void StringIdMap::rehash(std::size_t slot_count) {
  std::vector<Slot> old = std::move(slots_);
  slots_.assign(slot_count, Slot{});
  mask_ = slot_count - 1;
  for (const Slot& slot : old) {
    if (slot.length == empty) continue;
    std::size_t i = static_cast<std::size_t>(hash_bytes(key_of(slot))) & mask_;
    while (slots_[i].length != empty) i = (i + 1) & mask_;
    slots_[i] = slot;
  }
}

void StringIdMap::insert_or_assign(std::string_view key, TokenId id) {
  if ((count_ + 1) * 2 > slots_.size()) rehash(slots_for(count_ + 1));
  const std::uint64_t hash = hash_bytes(key);
  const auto tag = static_cast<std::uint32_t>(hash >> 32);
  std::size_t i = static_cast<std::size_t>(hash) & mask_;
  for (; slots_[i].length != empty; i = (i + 1) & mask_) {
    if (slots_[i].tag == tag && key_of(slots_[i]) == key) {
      slots_[i].id = id;
      return;
    }
  }
  if (keys_.size() + key.size() >= empty) throw std::length_error("token table larger than 4 GiB");
  slots_[i] = Slot{tag, static_cast<std::uint32_t>(keys_.size()), static_cast<std::uint32_t>(key.size()), id};
  keys_.append(key);
  ++count_;
}

TokenId StringIdMap::find(std::string_view key, std::uint64_t hash) const noexcept {
  if (slots_.empty()) return -1;
  const auto tag = static_cast<std::uint32_t>(hash >> 32);
  for (std::size_t i = static_cast<std::size_t>(hash) & mask_;; i = (i + 1) & mask_) {
    const Slot& slot = slots_[i];
    if (slot.length == empty) return -1;
    if (slot.tag == tag && slot.length == key.size() &&
        std::memcmp(keys_.data() + slot.offset, key.data(), key.size()) == 0) {
      return slot.id;
    }
  }
}

void MergeMap::reserve(std::size_t count) {
  if (slots_for(count) > slots_.size()) rehash(slots_for(count));
}

void MergeMap::rehash(std::size_t slot_count) {
  std::vector<Merge> old = std::move(slots_);
  slots_.assign(slot_count, Merge{empty_key, 0, 0});
  mask_ = slot_count - 1;
  shift_ = static_cast<unsigned>(64 - std::countr_zero(slot_count));
  for (const Merge& merge : old) {
    if (merge.key == empty_key) continue;
    std::size_t i = slot_of(merge.key);
    while (slots_[i].key != empty_key) i = (i + 1) & mask_;
    slots_[i] = merge;
  }
}

void MergeMap::insert_or_assign(TokenId left, TokenId right, std::uint32_t rank, TokenId merged) {
  if ((count_ + 1) * 2 > slots_.size()) rehash(slots_for(count_ + 1));
  const std::uint64_t key = pack(left, right);
  std::size_t i = slot_of(key);
  for (; slots_[i].key != empty_key; i = (i + 1) & mask_) {
    if (slots_[i].key == key) {
      slots_[i].rank = rank;
      slots_[i].merged = merged;
      return;
    }
  }
  slots_[i] = Merge{key, rank, merged};
  ++count_;
}

}  // namespace tinker::tokenizer_detail::hf
