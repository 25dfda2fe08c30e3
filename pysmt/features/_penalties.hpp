// The compiled scores of pysmt/features/penalties.py's features (see _isolation.hpp).
#pragma once

#include "pysmt/features/_isolation.hpp"

namespace pysmt {

// penalties.py's WordPenaltyFeature: minus the number of target words.
class WordPenaltyScores : public IsolationScores {
 public:
  WordPenaltyScores() : IsolationScores(1) {}
  void score(const PairView &pair, double *scores, double *) override { scores[0] = -static_cast<double>(pair.length); }
};

// penalties.py's PhrasePenaltyFeature: 1 per phrase pair.
class PhrasePenaltyScores : public IsolationScores {
 public:
  PhrasePenaltyScores() : IsolationScores(1) {}
  void score(const PairView &, double *scores, double *) override { scores[0] = 1.0; }
};

// penalties.py's UnknownWordPenaltyFeature: `value` (Moses' LOWEST_SCORE) for an unknown word passed through.
class UnknownWordScores : public IsolationScores {
 public:
  explicit UnknownWordScores(double value) : IsolationScores(1), value_(value) {}
  void score(const PairView &pair, double *scores, double *) override { scores[0] = pair.unknown ? value_ : 0.0; }

 private:
  double value_;
};

}  // namespace pysmt
