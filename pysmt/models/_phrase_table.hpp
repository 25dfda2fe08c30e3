// A phrase table as the compiled core reads it: the typed arrays pysmt/models/phrase_table.py keeps
// (a text table's, made at load, or a binary table's, memory-mapped), owned by the Python side.
// Entries of source phrase s are rows block_start[s]:block_start[s + 1], in the table's order.
//
// The view trusts its arrays, as the option builder does (no check per lookup): block_start runs from 0
// to `entries` without decreasing; each entry's target_start and target_len lie inside target_ids, its
// target_ids inside the vocabulary and its alignment_id inside the alignments; scores has a row per
// entry. A binary table's arrays are checked once when it is loaded (pysmt/models/binary_checks.py).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>

#include "pysmt/_strings.hpp"

namespace pysmt {

struct PhraseTableArrays {
  const int64_t *block_start = nullptr;   // sources + 1
  const int64_t *target_start = nullptr;  // per entry: its words in target_ids
  const int32_t *target_len = nullptr;
  const int32_t *target_ids = nullptr;    // ids into the vocabulary
  const float *scores = nullptr;          // entries x num_scores, logged
  const int32_t *alignment_id = nullptr;  // per entry, into the alignments
  size_t entries = 0;
  int num_scores = 0;
};

class PhraseTableView {
 public:
  PhraseTableView(std::shared_ptr<const StringIndex> sources, std::shared_ptr<const StringIndex> vocabulary,
                  std::shared_ptr<const StringIndex> alignments, const PhraseTableArrays &arrays)
      : sources_(std::move(sources)), vocabulary_(std::move(vocabulary)), alignments_(std::move(alignments)),
        arrays_(arrays) {}

  // The entries [first, last) of a source phrase (its words joined by single spaces); empty if absent.
  std::pair<int64_t, int64_t> entries(std::string_view source) const {
    int64_t id = sources_->find(source);
    if (id < 0) return {0, 0};
    return {arrays_.block_start[id], arrays_.block_start[id + 1]};
  }
  int target_length(int64_t entry) const { return arrays_.target_len[entry]; }
  const int32_t *target(int64_t entry) const { return arrays_.target_ids + arrays_.target_start[entry]; }
  const float *scores(int64_t entry) const { return arrays_.scores + entry * arrays_.num_scores; }
  std::string_view alignment(int64_t entry) const { return (*alignments_)[arrays_.alignment_id[entry]]; }
  std::string_view word(int32_t id) const { return (*vocabulary_)[id]; }
  size_t vocabulary_size() const { return vocabulary_->size(); }
  int num_scores() const { return arrays_.num_scores; }
  size_t size() const { return arrays_.entries; }

 private:
  std::shared_ptr<const StringIndex> sources_, vocabulary_, alignments_;
  PhraseTableArrays arrays_;
};

}  // namespace pysmt
