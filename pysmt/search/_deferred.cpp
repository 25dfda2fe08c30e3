// A Python stateful feature asked in batches (see _deferred.hpp).
#include "pysmt/search/_deferred.hpp"

#include <algorithm>
#include <unordered_set>

namespace pysmt {

double DeferredFeature::extend(int, int, int, int, bool, double *delta) {
  states_.push_back(-1);  // known once resolved
  std::fill(delta, delta + num_scores, 0.0);
  return 0.0;
}

void DeferredFeature::answer(const std::vector<Request> &requests) {
  std::vector<Request> asked;
  std::unordered_set<Request, RequestHash> queued;
  for (const Request &r : requests)
    if (!answers_.count(r) && queued.insert(r).second) asked.push_back(r);
  std::vector<Request> batch;
  std::vector<double> scores;
  std::vector<int64_t> states;
  for (size_t begin = 0; begin < asked.size(); begin += buffer_size_) {
    size_t k = std::min(asked.size() - begin, static_cast<size_t>(buffer_size_));
    batch.assign(asked.begin() + begin, asked.begin() + begin + k);
    ask_(batch, scores, states);
    for (size_t i = 0; i < k; ++i)
      answers_[batch[i]] = Answer{std::vector<double>(scores.begin() + i * num_scores,
                                                      scores.begin() + (i + 1) * num_scores),
                                  states[i]};
  }
}

double DeferredFeature::settle(int hyp, const Request &request, double *delta) {
  const Answer &a = answers_.at(request);
  states_[hyp] = a.state;
  std::copy(a.scores.begin(), a.scores.end(), delta);
  double sum = 0;  // plugin_results.weighted_sum: left to right from 0; -inf (forbidden) whatever the weight
  for (int k = 0; k < num_scores; ++k) {
    if (delta[k] == kNegInf) return kNegInf;
    sum += weights[k] * delta[k];
  }
  return sum;
}

}  // namespace pysmt
