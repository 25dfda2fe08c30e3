// A context-free feature's scores in isolation as the compiled option builder computes them (the
// C++ side of pysmt/features/base.py's CompiledScores): the same numbers the feature's `evaluate`
// gives a phrase pair. The penalties' are in _penalties.hpp, the KenLM estimate beside its twin
// (_language_model.hpp).
#pragma once

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

}  // namespace pysmt
