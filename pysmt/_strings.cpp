// Strings with a hash index (see _strings.hpp).
#include "pysmt/_strings.hpp"

#include <zlib.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>

namespace pysmt {

uint32_t crc32_of(std::string_view text) {
  return static_cast<uint32_t>(crc32(0L, reinterpret_cast<const Bytef *>(text.data()), static_cast<uInt>(text.size())));
}

bool is_utf8(std::string_view text) {
  const auto *p = reinterpret_cast<const unsigned char *>(text.data());
  const unsigned char *end = p + text.size();
  while (p < end) {
    if (end - p >= 8) {  // ASCII eight bytes at a time
      uint64_t word;
      std::memcpy(&word, p, 8);
      if (!(word & 0x8080808080808080ull)) {
        p += 8;
        continue;
      }
    }
    unsigned char lead = *p;
    if (lead < 0x80) {
      ++p;
      continue;
    }
    std::ptrdiff_t more = lead >= 0xC2 && lead <= 0xDF   ? 1
                          : lead >= 0xE0 && lead <= 0xEF ? 2
                          : lead >= 0xF0 && lead <= 0xF4 ? 3
                                                         : 0;
    if (!more || end - p <= more) return false;
    for (std::ptrdiff_t k = 1; k <= more; ++k)
      if ((p[k] & 0xC0) != 0x80) return false;
    if ((lead == 0xE0 && p[1] < 0xA0) || (lead == 0xF0 && p[1] < 0x90) || (lead == 0xF4 && p[1] >= 0x90)) return false;
    p += more + 1;
  }
  return true;
}

int64_t StringIndex::first_not_utf8() const {
  for (size_t k = 0; k < size(); ++k)
    if (!is_utf8((*this)[k])) return static_cast<int64_t>(k);
  return -1;
}

StringIndex::StringIndex(const char *blob, const int64_t *offsets, size_t count, const uint32_t *slots,
                         size_t num_slots)
    : view_(true), view_blob_(blob), view_offsets_(offsets), view_slots_(slots), count_(count), num_slots_(num_slots) {}

int64_t StringIndex::find(std::string_view text) const {
  size_t size = num_slots();
  if (size == 0) {  // sorted, no index: binary search by bytes
    size_t low = 0, high = this->size();
    while (low < high) {
      size_t middle = (low + high) / 2;
      if ((*this)[middle] < text)
        low = middle + 1;
      else
        high = middle;
    }
    return low < this->size() && (*this)[low] == text ? static_cast<int64_t>(low) : -1;
  }
  const uint32_t *slots = slots_data();
  size_t slot = crc32_of(text) % size;
  for (size_t probes = 0; probes < size; ++probes) {  // an empty slot always comes first, unless damaged
    uint32_t index = slots[slot];
    if (!index) return -1;
    if ((*this)[index - 1] == text) return index - 1;
    slot = slot + 1 < size ? slot + 1 : 0;
  }
  return -1;
}

int64_t StringIndex::add(std::string_view text) {
  if (view_) throw std::logic_error("StringIndex: strings can be added to an index built here only");
  int64_t known = slots_.empty() ? -1 : find(text);
  if (known >= 0) return known;
  size_t count = offsets_.size() - 1;
  if (count + 1 >= 0xffffffffu) throw std::length_error("StringIndex: more than 2^32 - 2 strings");
  blob_.insert(blob_.end(), text.begin(), text.end());
  offsets_.push_back(static_cast<int64_t>(blob_.size()));
  if (2 * (count + 1) > slots_.size()) {
    rehash(std::max<size_t>(64, 4 * (count + 1)));
  } else {
    size_t slot = crc32_of(text) % slots_.size();
    while (slots_[slot]) slot = slot + 1 < slots_.size() ? slot + 1 : 0;
    slots_[slot] = static_cast<uint32_t>(count + 1);
  }
  return static_cast<int64_t>(count);
}

void StringIndex::rehash(size_t num_slots) {
  slots_.assign(num_slots, 0);
  for (size_t k = 0; k + 1 < offsets_.size(); ++k) {
    size_t slot = crc32_of((*this)[k]) % num_slots;
    while (slots_[slot]) slot = slot + 1 < num_slots ? slot + 1 : 0;
    slots_[slot] = static_cast<uint32_t>(k + 1);
  }
}

}  // namespace pysmt
