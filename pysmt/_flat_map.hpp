// A hash map from 64-bit keys to small values, for the compiled core's per-sentence tables (the LM's
// phrase cache, the cube's seen grid points): open addressing with linear probing in one array,
// cleared without freeing, so a sentence's lookups allocate nothing once the table has grown.
// std::unordered_map allocates a node per entry, which the profile showed as a tenth of cube pruning.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace pysmt {

template <typename Value>
class FlatMap {
 public:
  explicit FlatMap(size_t capacity = 1024) { slots_.resize(round_up(capacity)); }

  // The value of `key`, or nullptr.
  Value *find(uint64_t key) {
    for (size_t i = home(key);; i = (i + 1) & mask()) {
      Slot &slot = slots_[i];
      if (slot.generation != generation_) return nullptr;
      if (slot.key == key) return &slot.value;
    }
  }

  // The value of `key`, inserted (value-initialized) if missing; second: whether it was inserted.
  std::pair<Value *, bool> insert(uint64_t key) {
    if (2 * (size_ + 1) > slots_.size()) grow();
    for (size_t i = home(key);; i = (i + 1) & mask()) {
      Slot &slot = slots_[i];
      if (slot.generation != generation_) {
        slot.generation = generation_;
        slot.key = key;
        slot.value = Value();
        ++size_;
        return {&slot.value, true};
      }
      if (slot.key == key) return {&slot.value, false};
    }
  }

  // Empty the map: in O(1) (entries of older generations count as free slots), unless the table is
  // far larger than what it last held (after a long sentence), when it starts again small: lookups
  // spread over a table of mostly stale slots miss the processor's caches.
  void clear() {
    if (slots_.size() > 1024 && 8 * size_ < slots_.size()) {
      std::vector<Slot>(round_up(4 * size_)).swap(slots_);
      generation_ = 1;
    } else if (++generation_ == 0) {  // after 2^32 clears: reset the slots once
      for (Slot &slot : slots_) slot.generation = 0;
      generation_ = 1;
    }
    size_ = 0;
  }

  size_t size() const { return size_; }

 private:
  struct Slot {
    uint64_t key = 0;
    uint32_t generation = 0;
    Value value{};
  };

  static size_t round_up(size_t n) {
    size_t size = 16;
    while (size < n) size *= 2;
    return size;
  }
  size_t mask() const { return slots_.size() - 1; }
  size_t home(uint64_t key) const {
    key ^= key >> 33;  // murmur3's finalizer: keys made of small fields spread over the table
    key *= 0xff51afd7ed558ccdULL;
    key ^= key >> 33;
    return static_cast<size_t>(key) & mask();
  }
  void grow() {
    std::vector<Slot> old(slots_.size() * 2);
    old.swap(slots_);
    uint32_t live = generation_;
    generation_ = 1;
    size_ = 0;
    for (Slot &slot : old)
      if (slot.generation == live) *insert(slot.key).first = std::move(slot.value);
  }

  std::vector<Slot> slots_;
  uint32_t generation_ = 1;
  size_t size_ = 0;
};

}  // namespace pysmt
