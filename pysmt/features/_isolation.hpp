// A context-free feature's scores in isolation as the compiled option builder computes them (the
// C++ side of pysmt/features/base.py's CompiledScores): the same numbers the feature's `evaluate`
// gives a phrase pair. The penalties' are in _penalties.hpp, the KenLM estimate beside its twin
// (_language_model.hpp); per-word sums, for plugins, are here.
#pragma once

#include <string>
#include <unordered_map>
#include <vector>

#include "pysmt/_phrases.hpp"

namespace pysmt {

class IsolationScores {
 public:
  explicit IsolationScores(int num_scores) : num_scores(num_scores) {}
  virtual ~IsolationScores() = default;
  // Write the feature's `num_scores` scores and estimates of a pair (both arrive as zeros).
  virtual void score(const PairView &pair, double *scores, double *estimates) = 0;
  const int num_scores;
};

// A score (or an estimate) that is a sum over the pair's target words of a value per word, added in
// word order from 0: what plugins' per-word features compute (the RNN plugin's wp counts words outside a
// shortlist, the CSLM estimates a phrase by its words' unigrams), computed here instead of in Python.
class WordScores : public IsolationScores {
 public:
  WordScores(const std::vector<std::string> &words, const std::vector<double> &values, double fallback, bool estimate)
      : IsolationScores(1), fallback_(fallback), estimate_(estimate) {
    for (size_t k = 0; k < words.size(); ++k) by_word_[words[k]] = values[k];
  }
  void score(const PairView &pair, double *scores, double *estimates) override {
    double sum = 0.0;
    for (int k = 0; k < pair.length; ++k) sum += value(pair.target[k], *pair.vocabulary);
    (estimate_ ? estimates : scores)[0] = sum;
  }

 private:
  double value(int32_t word, const TargetVocabulary &vocabulary) {
    size_t k = static_cast<size_t>(word);
    if (k >= known_.size()) {
      known_.resize(k + 1, false);
      values_.resize(k + 1, 0.0);
    }
    if (!known_[k]) {
      auto found = by_word_.find(std::string(vocabulary.word(word)));
      values_[k] = found == by_word_.end() ? fallback_ : found->second;
      known_[k] = true;
    }
    return values_[k];
  }

  std::unordered_map<std::string, double> by_word_;
  double fallback_;
  bool estimate_;
  std::vector<bool> known_;  // per word number of the option builder's vocabulary
  std::vector<double> values_;
};

}  // namespace pysmt
