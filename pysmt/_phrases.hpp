// What a sentence's translation options are, as the compiled core sees them: the C++ side of
// pysmt/phrases.py. The option builder (search/_options) makes them from the phrase tables; the
// search reads them, and the stateful features' twins (features/_*) prepare their per-option data
// from them. Nothing here knows Python or any feature.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "pysmt/_strings.hpp"

namespace pysmt {

// Target words by number: the words of the phrase tables an option builder reads and the unknown
// words it passes through, each numbered once. The numbers are the core's own; a twin maps them to
// its model's ids (the LM's) once per word.
class TargetVocabulary {
 public:
  int32_t id(std::string_view word) { return static_cast<int32_t>(words_.add(word)); }
  std::string_view word(int32_t id) const { return words_[static_cast<size_t>(id)]; }
  size_t size() const { return words_.size(); }

 private:
  StringIndex words_;
};

// A phrase pair as a context-free feature's compiled scores see it (features/_isolation.hpp).
struct PairView {
  const int32_t *target;  // its target words (TargetVocabulary numbers)
  int length;
  bool unknown;  // an unknown word passed through (not a markup translation)
  const TargetVocabulary *vocabulary;
};

// The `table` of an option that comes from no phrase table: an unknown word passed through, a markup translation.
inline constexpr int32_t kUnknownTable = -1;
inline constexpr int32_t kMarkupTable = -2;

// One sentence's translation options. Options are numbered as pysmt/search/options.py numbers them
// (spans by start, then end; a span's pairs as the table limit ranked them); each span's list is
// best first (by future), as the search takes them.
struct SentenceOptions {
  std::vector<std::string> words;  // the source sentence
  int dims = 0;                    // the model's scores per option
  const TargetVocabulary *vocabulary = nullptr;

  // per option k
  std::vector<int32_t> start, end;            // its source span [start, end)
  std::vector<double> isolation;              // weighted score in isolation
  std::vector<double> future;                 // isolation plus the weighted estimates (future cost, ranking)
  std::vector<double> scores;                 // k * dims ...: its unweighted scores in isolation
  std::vector<int64_t> target_offsets = {0};  // its target words: target_ids[target_offsets[k]:target_offsets[k + 1]]
  std::vector<int32_t> target_ids;            //   (TargetVocabulary numbers)
  std::vector<int32_t> table;  // the phrase table (the builder's number) its pair comes from; kUnknownTable: an
                               // unknown word; kMarkupTable: a markup translation (--xml-input)
  std::vector<int64_t> entry;  // the pair's entry in that table (-1: an unknown word; a markup option's number)

  // Moses' reordering constraints from markup (pysmt/search/reordering_constraint.py), empty without any: a
  // wall after each position, the zone whose local wall each position is (-1: none), zones' first and last words.
  std::vector<char> walls;
  std::vector<int32_t> local_walls;
  std::vector<int32_t> zone_first, zone_last;

  // spans, sorted by (start, end): span s has options span_options[span_offsets[s]:span_offsets[s + 1]]
  std::vector<int32_t> span_start, span_end, span_options;
  std::vector<int64_t> span_offsets = {0};

  int length() const { return static_cast<int>(words.size()); }
  size_t size() const { return start.size(); }
  // The source words [start, end) joined by single spaces.
  std::string source(int start, int end) const {
    std::string text;
    for (int p = start; p < end; ++p) {
      if (p > start) text.push_back(' ');
      text += words[static_cast<size_t>(p)];
    }
    return text;
  }
  // Option k's target words joined by single spaces.
  std::string target_text(size_t k) const {
    std::string text;
    for (int64_t w = target_offsets[k]; w < target_offsets[k + 1]; ++w) {
      if (w > target_offsets[k]) text.push_back(' ');
      text += vocabulary->word(target_ids[static_cast<size_t>(w)]);
    }
    return text;
  }
};

}  // namespace pysmt
