// The compiled twin of pysmt/features/distortion.py: minus the jump between consecutive phrases.
#pragma once

#include <cstdlib>
#include <vector>

#include "pysmt/features/_stateful.hpp"

namespace pysmt {

class DistortionTwin : public CompiledFeature {
 public:
  DistortionTwin() : CompiledFeature(1) {}
  void clear() override { ends_.clear(); }
  void initial() override { ends_.push_back(0); }
  double extend(int parent, int, int start, int end, bool, double *delta) override {
    delta[0] = -static_cast<double>(std::abs(ends_[parent] - start));
    pending_ = end;
    return weigh(delta);
  }
  void commit() override { ends_.push_back(pending_); }
  void pop() override { ends_.pop_back(); }
  uint64_t hash(int hyp) const override { return static_cast<uint64_t>(ends_[hyp]); }
  bool equal(int a, int b) const override { return ends_[a] == ends_[b]; }

 private:
  std::vector<int> ends_;  // the previous phrase's end, per hypothesis
  int pending_ = 0;
};

}  // namespace pysmt
