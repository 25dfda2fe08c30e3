// Strings as pysmt's tables keep them (the source phrases, reordering keys, target words and
// alignments of pysmt/models/): one UTF-8 blob plus offsets (count + 1), found through a hash index
// in the binary tables' format (binary_table.py: slot crc32(bytes) % size holds index + 1, 0 when
// empty, linear probing, wrapping) or, for sorted strings without an index, by binary search.
//
// A view trusts its arrays: offsets from 0 to the blob's size, never decreasing, and slots of at most
// `count`. A binary table's are checked once when it is loaded (pysmt/models/binary_checks.py), not
// per lookup.
//
// Either built here, string by string (a text table being loaded: a Python dict of its sources or
// keys took several times the strings' size), or a view of stored arrays (a binary table's,
// memory-mapped), which stay owned by the caller.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

namespace pysmt {

class StringIndex {
 public:
  // Empty; strings are added with add().
  StringIndex() : offsets_(1, 0) {}
  // A view of stored strings: `slots` (num_slots > 0) is their hash index; without one the strings
  // must be sorted by their bytes.
  StringIndex(const char *blob, const int64_t *offsets, size_t count, const uint32_t *slots, size_t num_slots);

  // The index of `text`, added if new (an index built here only).
  int64_t add(std::string_view text);
  // The index of `text`, or -1.
  int64_t find(std::string_view text) const;
  std::string_view operator[](size_t k) const {
    const int64_t *offsets = offsets_data();
    return std::string_view(blob_data() + offsets[k], static_cast<size_t>(offsets[k + 1] - offsets[k]));
  }
  size_t size() const { return view_ ? count_ : offsets_.size() - 1; }
  // The index of the first string that is not UTF-8 as Python reads it (text_of: "surrogatepass"), or -1.
  int64_t first_not_utf8() const;
  bool owned() const { return !view_; }
  // Bytes held (an index built here: blob, offsets and slots).
  size_t memory() const { return blob_.capacity() + offsets_.capacity() * 8 + slots_.capacity() * 4; }

 private:
  const char *blob_data() const { return view_ ? view_blob_ : blob_.data(); }
  const int64_t *offsets_data() const { return view_ ? view_offsets_ : offsets_.data(); }
  const uint32_t *slots_data() const { return view_ ? view_slots_ : slots_.data(); }
  size_t num_slots() const { return view_ ? num_slots_ : slots_.size(); }
  void rehash(size_t num_slots);

  bool view_ = false;
  const char *view_blob_ = nullptr;
  const int64_t *view_offsets_ = nullptr;
  const uint32_t *view_slots_ = nullptr;
  size_t count_ = 0, num_slots_ = 0;
  std::vector<char> blob_;
  std::vector<int64_t> offsets_;
  std::vector<uint32_t> slots_;
};

// Whether the bytes are UTF-8 as Python decodes it with "surrogatepass" (encoded surrogates allowed;
// no overlong forms, nothing past U+10FFFF, no sequence cut short).
bool is_utf8(std::string_view text);

// zlib's CRC-32 of the bytes (Python's zlib.crc32), the home slot of a string.
uint32_t crc32_of(std::string_view text);

}  // namespace pysmt
