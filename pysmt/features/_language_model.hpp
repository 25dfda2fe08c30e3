// The compiled twin of pysmt/features/language_model.py: KenLM scores of each option's target words
// after the hypothesis' LM state, and </s> when the sentence is complete.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "pysmt/features/_stateful.hpp"
#include "pysmt/models/_kenlm.hpp"

namespace pysmt {

class KenLMTwin : public CompiledFeature {
 public:
  explicit KenLMTwin(std::shared_ptr<LanguageModel> model) : CompiledFeature(1), model_(std::move(model)) {}

  // Per sentence: option k's target words as the LM's word ids are ids[offsets[k]:offsets[k + 1]].
  void set_options(const uint32_t *ids, size_t num_ids, const int64_t *offsets, size_t num_offsets) {
    ids_.assign(ids, ids + num_ids);
    offsets_.assign(offsets, offsets + num_offsets);
  }

  void clear() override { states_.clear(); }
  void initial() override { states_.push_back(model_->begin()); }
  double extend(int parent, int option, int start, int end, bool complete, double *delta) override;
  uint64_t hash(int hyp) const override { return lm::ngram::hash_value(states_[hyp]); }
  bool equal(int a, int b) const override { return states_[a] == states_[b]; }

 private:
  std::shared_ptr<LanguageModel> model_;
  std::vector<uint32_t> ids_;
  std::vector<int64_t> offsets_;
  std::vector<lm::ngram::State> states_;
};

}  // namespace pysmt
