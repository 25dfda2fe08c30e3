// The compiled twin of the KenLM feature (see _language_model.hpp).
#include "pysmt/features/_language_model.hpp"

namespace pysmt {

double KenLMTwin::extend(int parent, int option, int, int, bool complete, double *delta) {
  lm::ngram::State state = states_[parent], out;
  double total = 0.0;
  for (int64_t k = offsets_[option]; k < offsets_[option + 1]; ++k) {
    total += model_->base(state, ids_[k], out);
    state = out;
  }
  delta[0] = total * kLog10ToLn;
  if (complete) delta[0] += static_cast<double>(model_->base(state, model_->end(), out)) * kLog10ToLn;
  states_.push_back(state);
  return weigh(delta);
}

}  // namespace pysmt
