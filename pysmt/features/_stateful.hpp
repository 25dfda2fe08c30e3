// A stateful feature as the compiled search sees it (the C++ side of pysmt/features/base.py's
// CompiledTwin): it keeps its states (and nothing else) per hypothesis id, and scores one extension
// at a time. The built-in twins (_language_model, _distortion, _lexical_reordering) compute exactly
// what their Python feature's `extend` computes; pysmt/search/_deferred.hpp asks a Python feature.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

#include "pysmt/_phrases.hpp"

namespace pysmt {

inline const double kNegInf = -std::numeric_limits<double>::infinity();

class CompiledFeature {
 public:
  explicit CompiledFeature(int num_scores) : num_scores(num_scores), weights(num_scores, 0.0) {}
  virtual ~CompiledFeature() = default;

  // Per sentence, before the search: take what the feature needs of the sentence's options (word ids
  // in its model, table rows).
  virtual void prepare(const SentenceOptions &) {}
  // Per sentence: forget the states of the last one.
  virtual void clear() = 0;
  // Append the state of hypothesis 0, the empty one.
  virtual void initial() = 0;
  // Score a new hypothesis (extending hypothesis `parent` by option `option`, which covers [start,
  // end)): write its unweighted scores to `delta` and return their weighted sum, as
  // LogLinearModel.extend adds them; keep its state pending. `complete`: it covers the whole sentence.
  virtual double extend(int parent, int option, int start, int end, bool complete, double *delta) = 0;
  // Append the pending state, as the newest hypothesis' (the search stores the hypothesis): normal
  // search stores only the hypotheses a stack takes, most are dropped at once.
  virtual void commit() = 0;
  // Forget the state of the newest hypothesis (a hypothesis that lost its stack's recombination).
  virtual void pop() = 0;
  virtual uint64_t hash(int hyp) const = 0;
  virtual bool equal(int a, int b) const = 0;
  // Deferred features (Python ones, asked in batches) leave their scores to Search::resolve.
  virtual bool deferred() const { return false; }

  const int num_scores;
  std::vector<double> weights;

 protected:
  // The weighted sum of `delta`, as Python's sum(map(mul, weights, delta)): left to right from 0.
  double weigh(const double *delta) const {
    if (num_scores == 1) return weights[0] * delta[0];
    double sum = 0;
    for (int k = 0; k < num_scores; ++k) sum += weights[k] * delta[k];
    return sum;
  }
};

}  // namespace pysmt
