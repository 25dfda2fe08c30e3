// KenLM through its C++ API: the one place pysmt's compiled code loads and queries an n-gram model.
// The KenLM twin of the search (pysmt/features/_language_model.hpp) and the Python side
// (pysmt/models/language_model.py, through the bindings in pysmt/_bind_models.cpp) share one loaded model,
// so both engines see the same numbers.
#pragma once

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "lm/model.hh"
#include "lm/state.hh"
#include "pysmt/_phrases.hpp"

namespace pysmt {

// KenLM scores are log10; Moses' TransformLMScore turns them into natural logs.
inline const double kLog10ToLn = std::log(10.0);

class LanguageModel {
 public:
  explicit LanguageModel(const std::string &path);

  unsigned order() const { return model_->Order(); }
  lm::WordIndex index(const std::string &word) const { return model_->BaseVocabulary().Index(word); }
  // log10 p(word | in), and the state after it.
  float base(const lm::ngram::State &in, lm::WordIndex word, lm::ngram::State &out) const {
    return model_->BaseScore(&in, word, &out);
  }
  // The sentence-start state (<s>), every byte set.
  lm::ngram::State begin() const;
  // The state without context (a phrase's estimate starts there).
  lm::ngram::State null_context() const {
    lm::ngram::State state;
    model_->NullContextWrite(&state);
    return state;
  }
  lm::WordIndex end() const { return end_; }

  // Python's kenlm.Model.score(phrase, bos=False, eos=False), which accumulates in float (natural log).
  double estimate(const std::vector<std::string> &words) const;
  // (natural-log score of the words after `state`, the state after them).
  std::pair<double, lm::ngram::State> extend(const lm::ngram::State &state,
                                             const std::vector<std::string> &words) const;
  // Natural-log score of </s> after `state`.
  double final(const lm::ngram::State &state) const;

 private:
  std::unique_ptr<lm::base::Model> model_;
  lm::WordIndex end_;
};

// The LM's ids of the core's target-word numbers (TargetVocabulary), each looked up once.
class LmWordIds {
 public:
  explicit LmWordIds(std::shared_ptr<LanguageModel> model) : model_(std::move(model)) {}
  lm::WordIndex operator()(int32_t word, const TargetVocabulary &vocabulary) {
    size_t k = static_cast<size_t>(word);
    if (k >= ids_.size()) ids_.resize(std::max(vocabulary.size(), k + 1), kUnset);
    if (ids_[k] == kUnset) ids_[k] = model_->index(std::string(vocabulary.word(word)));
    return ids_[k];
  }
  const LanguageModel &model() const { return *model_; }

 private:
  static constexpr lm::WordIndex kUnset = static_cast<lm::WordIndex>(-1);
  std::shared_ptr<LanguageModel> model_;
  std::vector<lm::WordIndex> ids_;
};

// A KenLM state as the Python reference search keeps it: the bytes of its length, words and
// backoffs, so that equal bytes mean equal states.
std::string state_bytes(const lm::ngram::State &state);
lm::ngram::State state_from_bytes(const std::string &bytes);

}  // namespace pysmt
