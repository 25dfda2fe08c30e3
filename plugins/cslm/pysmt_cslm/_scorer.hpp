// The CSLM as a compiled scorer (pysmt's include/pysmt/compiled_scorer.h): the search calls it
// directly, without Python, and it computes exactly what CslmFeature.start and score_batch compute
// with self-normalized scores (features.py is the specification): the options' input ids and
// back-off terms per sentence, then per batch the requests' n-grams through a context table, the
// hidden layers of contexts used for the first time, the logits summed per request in n-gram
// order, plus the option's back-off term.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "pysmt/compiled_scorer.h"
#include "pysmt/context_table.hpp"
#include "pysmt_cslm/_network.hpp"

namespace pysmt_cslm {

class CompiledCslm {
 public:
  // `words` (the training text's words) have input ids `ids` and back-off terms `backoff`; any other word
  // is `unknown_id` with `unseen`. Contexts kept across sentences: a sentence starts with an empty table
  // when more than `cache_size` are kept.
  CompiledCslm(std::shared_ptr<Network> network, std::vector<std::string> words, std::vector<int32_t> ids,
               std::vector<double> backoff, int32_t unknown_id, double unseen, int32_t begin_id, int32_t end_id,
               int64_t cache_size);

  const pysmt_scorer *scorer() const { return &scorer_; }
  // Counts since made, for benchmarks: requests, n-grams, contexts put through the network.
  int64_t requests() const { return requests_; }
  int64_t ngrams() const { return ngrams_; }
  int64_t computed() const { return computed_; }
  // The first sentence's option words (the first with at least ten): how many, and how many the shortlist
  // has (for the feature's coverage warning); 0, 0 until then.
  std::pair<int64_t, int64_t> coverage() const { return {coverage_words_, coverage_known_}; }

 private:
  struct Terms {
    int32_t id;
    double backoff;
  };
  int start(const pysmt_options *options, int64_t *initial);
  int score(size_t count, const int64_t *states, const int32_t *options, const uint8_t *ends, double *scores,
            int64_t *new_states);
  const Terms &terms(const pysmt_options *options, int32_t number);

  std::shared_ptr<Network> network_;
  HiddenStore hidden_;
  pysmt::ContextTable table_;
  std::unordered_map<std::string, Terms> by_word_;
  Terms unknown_;
  int32_t begin_id_, end_id_;
  int64_t cache_size_;
  std::vector<Terms> by_number_;  // the decoder's word numbers' terms (id -1: not looked up yet)
  const void *vocabulary_ = nullptr;
  // the sentence's options: input ids option_ids_[option_offsets_[k]:option_offsets_[k + 1]], back-off sums
  std::vector<int32_t> option_ids_;
  std::vector<int64_t> option_offsets_;
  std::vector<double> option_backoff_;
  pysmt::Ngrams ngrams_batch_;
  std::vector<int32_t> sequence_, fresh_contexts_;
  std::vector<double> totals_;
  int64_t requests_ = 0, ngrams_ = 0, computed_ = 0, coverage_words_ = 0, coverage_known_ = 0;
  std::string error_;
  pysmt_scorer scorer_;
};

}  // namespace pysmt_cslm
