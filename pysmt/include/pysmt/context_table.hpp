// Numbered n-gram contexts: the bookkeeping of an n-gram feature written as a plugin (the CSLM is
// one), header-only, so that the module pysmt._contexts (pysmt.plugin.ContextTable, for features in
// Python) and a plugin's compiled scorer (compiled_scorer.h) share it: include it with
// pysmt.get_include().
//
// The states of such a feature are its contexts, the last `width` target word ids, numbered in order
// of arrival. A state id is its context's number, so the feature keeps per-context results (a
// network's hidden layer) in arrays indexed by state. The table also says which contexts an n-gram
// uses for the first time (since the last clear), so the feature computes each context's results
// once, with no lookup of its own.
#pragma once

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <vector>

namespace pysmt {

class ContextTable {
 public:
  explicit ContextTable(int width) : width_(width) {
    if (width < 1) throw std::invalid_argument("a context holds at least one word");
  }
  int width() const { return width_; }
  int64_t size() const { return static_cast<int64_t>(words_.size() / static_cast<size_t>(width_)); }
  void clear() {
    std::fill(slots_.begin(), slots_.end(), kEmpty);
    words_.clear();
    used_.clear();
  }
  // The id of a context (`width` word ids), numbering it if new.
  int64_t intern(const int32_t *context) {
    // open addressing, linear probing, at most half full: a lookup touches one slot and one context
    if (2 * (size() + 1) > static_cast<int64_t>(slots_.size())) rehash(std::max<size_t>(1024, 2 * slots_.size()));
    size_t slot = find(context);
    if (slots_[slot] != kEmpty) return slots_[slot];
    int64_t id = size();
    slots_[slot] = id;
    words_.insert(words_.end(), context, context + width_);
    used_.push_back(false);
    return id;
  }
  // Whether this is the first n-gram to use context `id` (and remember that it is not any more).
  bool first_use(int64_t id) {
    bool first = !used_[static_cast<size_t>(id)];
    used_[static_cast<size_t>(id)] = true;
    return first;
  }
  const int32_t *context(int64_t id) const {
    if (id < 0 || id >= size()) throw std::out_of_range("no such context id");
    return &words_[static_cast<size_t>(id) * static_cast<size_t>(width_)];
  }

 private:
  static constexpr int64_t kEmpty = -1;
  // Where a context's slot search starts (any mix of the words does: ids do not depend on it).
  size_t hash(const int32_t *context) const {
    uint64_t h = 0x9e3779b97f4a7c15ULL;
    for (int k = 0; k < width_; ++k) {
      h ^= static_cast<uint32_t>(context[k]);
      h *= 0xbf58476d1ce4e5b9ULL;
      h ^= h >> 31;
    }
    return static_cast<size_t>(h);
  }
  // The slot holding `context`, or the empty slot where it belongs.
  size_t find(const int32_t *context) const {
    size_t mask = slots_.size() - 1, slot = hash(context) & mask;
    while (slots_[slot] != kEmpty &&
           !same(&words_[static_cast<size_t>(slots_[slot]) * static_cast<size_t>(width_)], context))
      slot = (slot + 1) & mask;
    return slot;
  }
  bool same(const int32_t *a, const int32_t *b) const {  // a loop the compiler inlines (memcmp was a call)
    for (int k = 0; k < width_; ++k)
      if (a[k] != b[k]) return false;
    return true;
  }
  void rehash(size_t count) {  // count: a power of two
    slots_.assign(count, kEmpty);
    for (int64_t id = 0; id < size(); ++id)
      slots_[find(&words_[static_cast<size_t>(id) * static_cast<size_t>(width_)])] = id;
  }

  int width_;
  std::vector<int64_t> slots_;  // context ids; kEmpty where none
  std::vector<int32_t> words_;
  std::vector<bool> used_;
};

// A batch of requests' n-grams, as an n-gram feature scores them: n-gram i is word words[i] after
// context contexts[i], for request owners[i]; `fresh` lists the contexts used for the first time.
struct Ngrams {
  std::vector<int64_t> contexts, owners, fresh;
  std::vector<int32_t> words;
  void clear() {
    contexts.clear();
    owners.clear();
    fresh.clear();
    words.clear();
  }
};

// Request `owner` appends `words` (`count` ids) to state `state` (and ends the sentence after them
// with `end_word` when `end`): its n-grams go to `out` in order; returns its new state.
inline int64_t extend(ContextTable &table, int64_t state, const int32_t *words, int64_t count, bool end,
                      int32_t end_word, int64_t owner, Ngrams &out, std::vector<int32_t> &sequence) {
  const int width = table.width();
  const int32_t *start = table.context(state);
  sequence.assign(start, start + width);
  sequence.insert(sequence.end(), words, words + count);
  auto ngram = [&](int64_t context, int32_t word) {
    out.contexts.push_back(context);
    out.words.push_back(word);
    out.owners.push_back(owner);
    if (table.first_use(context)) out.fresh.push_back(context);
  };
  for (int64_t j = 0; j < count; ++j) ngram(j == 0 ? state : table.intern(&sequence[j]), sequence[width + j]);
  int64_t after = table.intern(&sequence[count]);
  if (end) ngram(after, end_word);
  return after;
}

}  // namespace pysmt
