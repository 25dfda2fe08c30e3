// A Python stateful feature asked in batches (see _deferred.hpp).
#include "pysmt/search/_deferred.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string_view>
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

namespace {

const char *word_of(const void *vocabulary, int32_t number, size_t *length) {
  std::string_view word = static_cast<const TargetVocabulary *>(vocabulary)->word(number);
  *length = word.size();
  return word.data();
}

}  // namespace

void ScorerCalls::fail(const std::string &what, bool reported) const {
  const char *message = reported && scorer_->error ? scorer_->error(scorer_->self) : nullptr;
  throw FeatureFault("feature " + feature_ + ": " + what + (message && *message ? std::string(": ") + message : ""));
}

int64_t ScorerCalls::start(const SentenceOptions &options) const {
  pysmt_options given{static_cast<int32_t>(options.size()), options.target_offsets.data(), options.target_ids.data(),
                      word_of, options.vocabulary};
  int64_t initial = -1;
  if (scorer_->start(scorer_->self, &given, &initial) != 0) fail("its compiled scorer failed to start a sentence", true);
  if (initial < 0) fail("its compiled scorer started a sentence in state " + std::to_string(initial));
  return initial;
}

void ScorerCalls::score(const std::vector<DeferredFeature::Request> &requests, std::vector<double> &scores,
                        std::vector<int64_t> &states) const {
  size_t k = requests.size(), width = static_cast<size_t>(scorer_->num_scores);
  std::vector<int64_t> parents(k);
  std::vector<int32_t> options(k);
  std::vector<uint8_t> ends(k);
  for (size_t i = 0; i < k; ++i) {
    parents[i] = requests[i].state;
    options[i] = requests[i].option;
    ends[i] = requests[i].end ? 1 : 0;
  }
  scores.assign(k * width, 0.0);
  states.assign(k, -1);
  if (scorer_->score(scorer_->self, k, parents.data(), options.data(), ends.data(), scores.data(), states.data()) != 0)
    fail("its compiled scorer failed", true);
  for (size_t i = 0; i < k * width; ++i)
    if (std::isnan(scores[i]) || scores[i] == std::numeric_limits<double>::infinity())
      fail("its compiled scorer returned " + std::to_string(scores[i]) + " as score " + std::to_string(i % width + 1) +
           " of request " + std::to_string(i / width + 1) + " (scores must be finite, or -inf to forbid a translation)");
  for (size_t i = 0; i < k; ++i)
    if (states[i] < 0) fail("its compiled scorer returned state id " + std::to_string(states[i]));
}

}  // namespace pysmt
