// The compiled twin of pysmt/features/language_model.py: KenLM scores of each option's target words
// after the hypothesis' LM state, and </s> when the sentence is complete.
//
// The search applies the same target phrase to the same LM state many times (hypotheses that differ
// only in what they cover): about half of cube pruning's extensions and two thirds of normal
// search's on the news system. So the twin keeps, per sentence, a row per LM state it has extended
// from, with a cell per target phrase: the (state, phrase) results it has asked KenLM for. A
// hypothesis is extended by many options in a row, so its state's row is found once (a hash probe)
// and its cells are read one after another (phrases are numbered in option order); each hypothesis
// keeps its row. The scores are KenLM's, summed in the same order: the cache changes no number.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "pysmt/_flat_map.hpp"
#include "pysmt/features/_isolation.hpp"
#include "pysmt/features/_stateful.hpp"
#include "pysmt/models/_kenlm.hpp"

namespace pysmt {

// The feature's estimate in isolation (its `evaluate`): the phrase's log probability without left
// context, as KenLM's Python module scores it (float accumulation), in natural log.
class LanguageModelEstimates : public IsolationScores {
 public:
  explicit LanguageModelEstimates(std::shared_ptr<LanguageModel> model) : IsolationScores(1), ids_(std::move(model)) {}
  void score(const PairView &pair, double *scores, double *estimates) override;

 private:
  LmWordIds ids_;
};

class KenLMTwin : public CompiledFeature {
 public:
  explicit KenLMTwin(std::shared_ptr<LanguageModel> model) : CompiledFeature(1), model_(model), lm_ids_(model) {}

  // Per sentence: each option's target words as the LM's ids, and its phrase number.
  void prepare(const SentenceOptions &options) override;

  void clear() override;
  void initial() override {
    states_.push_back(model_->begin());
    row_of_hyp_.push_back(kNoRowYet);
  }
  double extend(int parent, int option, int start, int end, bool complete, double *delta) override;
  void commit() override {
    states_.push_back(pending_);
    row_of_hyp_.push_back(kNoRowYet);
  }
  void pop() override {
    states_.pop_back();
    row_of_hyp_.pop_back();
  }
  uint64_t hash(int hyp) const override { return lm::ngram::hash_value(states_[hyp]); }
  bool equal(int a, int b) const override { return states_[a] == states_[b]; }

  // Counts since the twin was made: words asked of KenLM, and words scored (asked, or from the cache).
  uint64_t queries() const { return queries_; }
  uint64_t words() const { return words_; }

 private:
  // What a (state, phrase) gives: KenLM's log10 sum of the phrase's words and the state after them.
  struct Scored {
    double total = 0.0;
    lm::ngram::State after;
  };
  // The cells used at most (rows x phrases, 4 bytes each); past this the rows start again empty.
  static constexpr size_t kMaxCells = size_t(1) << 22;

  // The row of hypothesis `parent`'s state (made if new), or -1 when its hash is taken by another state.
  int32_t row_of(int parent);
  // The extension's scores and (pending) state from a (state, phrase) result, plus </s> when `complete`.
  double finish(const Scored &scored, bool complete, double *delta);

  std::shared_ptr<LanguageModel> model_;
  LmWordIds lm_ids_;
  std::vector<uint32_t> ids_;  // option k's words as LM ids: ids_[offsets_[k]:offsets_[k + 1]]
  std::vector<int64_t> offsets_;
  std::vector<int32_t> phrase_of_option_;  // options with the same target words share a phrase number
  int32_t phrases_ = 0;
  std::vector<lm::ngram::State> states_;
  FlatMap<int32_t> rows_;                    // hash of a state -> its row
  std::vector<int32_t> row_parent_;          // per row: a hypothesis with that state (to check the hash)
  std::vector<std::vector<int32_t>> cells_;  // row r, phrase p: index into scored_, or -1 (the rows' memory
                                             // is kept from sentence to sentence: row_parent_.size() are used)
  std::vector<Scored> scored_;
  std::vector<int32_t> row_of_hyp_;  // each hypothesis' row: kNoRowYet until asked, -1 for none
  lm::ngram::State pending_;
  static constexpr int32_t kNoRowYet = -2;
  uint64_t queries_ = 0, words_ = 0;
};

}  // namespace pysmt
