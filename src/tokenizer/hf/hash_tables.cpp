// See hash_tables.hpp.
#include "tokenizer/hf/hash_tables.hpp"

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
  entries_.reserve(count);
  if (slots_for(count) > slots_.size()) rehash(slots_for(count));
}

void StringIdMap::rehash(std::size_t slot_count) {
  slots_.assign(slot_count, Slot{});
  mask_ = slot_count - 1;
  for (std::size_t e = 0; e < entries_.size(); ++e) {
    const std::uint64_t hash = hash_bytes(key_of(entries_[e]));
    std::size_t i = static_cast<std::size_t>(hash) & mask_;
    while (slots_[i].entry != 0) i = (i + 1) & mask_;
    slots_[i].tag = static_cast<std::uint32_t>(hash >> 32);
    slots_[i].entry = static_cast<std::uint32_t>(e + 1);
  }
}

void StringIdMap::insert_or_assign(std::string_view key, TokenId id) {
  if ((entries_.size() + 1) * 2 > slots_.size()) rehash(slots_for(entries_.size() + 1));
  const std::uint64_t hash = hash_bytes(key);
  const auto tag = static_cast<std::uint32_t>(hash >> 32);
  std::size_t i = static_cast<std::size_t>(hash) & mask_;
  for (; slots_[i].entry != 0; i = (i + 1) & mask_) {
    Entry& entry = entries_[slots_[i].entry - 1];
    if (slots_[i].tag == tag && key_of(entry) == key) {
      entry.id = id;
      return;
    }
  }
  if (keys_.size() + key.size() > UINT32_MAX) throw std::length_error("token table larger than 4 GiB");
  entries_.push_back(Entry{static_cast<std::uint32_t>(keys_.size()), static_cast<std::uint32_t>(key.size()), id});
  keys_.append(key);
  slots_[i].tag = tag;
  slots_[i].entry = static_cast<std::uint32_t>(entries_.size());
}

TokenId StringIdMap::find(std::string_view key, std::uint64_t hash) const noexcept {
  if (slots_.empty()) return -1;
  const auto tag = static_cast<std::uint32_t>(hash >> 32);
  for (std::size_t i = static_cast<std::size_t>(hash) & mask_;; i = (i + 1) & mask_) {
    const Slot slot = slots_[i];
    if (slot.entry == 0) return -1;
    if (slot.tag == tag) {
      const Entry& entry = entries_[slot.entry - 1];
      if (key_of(entry) == key) return entry.id;
    }
  }
}

std::size_t StringIdMap::memory_bytes() const noexcept {
  return keys_.capacity() + entries_.capacity() * sizeof(Entry) + slots_.capacity() * sizeof(Slot);
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
