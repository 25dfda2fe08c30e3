// A Python stateful feature asked in batches (see _deferred.hpp).
#include "pysmt/search/_deferred.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string_view>
#include <unordered_set>

namespace pysmt {

double DeferredFeature::extend(int, int, int, int, bool, double *delta) {
  std::fill(delta, delta + num_scores, 0.0);
  return 0.0;
}

int32_t DeferredFeature::answer_of(const Request &request, bool &added) {
  if (2 * (answered_.size() + 1) > slots_.size()) {  // at most half full: rebuild twice as large
    slots_.assign(2 * slots_.size(), 0);
    for (size_t a = 0; a < answered_.size(); ++a) {
      size_t slot = RequestHash{}(answered_[a]) & (slots_.size() - 1);
      while (slots_[slot]) slot = (slot + 1) & (slots_.size() - 1);
      slots_[slot] = static_cast<int32_t>(a + 1);
    }
  }
  size_t mask = slots_.size() - 1;
  for (size_t slot = RequestHash{}(request)&mask;; slot = (slot + 1) & mask) {
    int32_t held = slots_[slot];
    if (held && answered_[static_cast<size_t>(held - 1)] == request) {
      added = false;
      return held - 1;
    }
    if (!held) {
      added = true;
      slots_[slot] = static_cast<int32_t>(answered_.size() + 1);
      answered_.push_back(request);
      answer_scores_.resize(answer_scores_.size() + static_cast<size_t>(num_scores));
      answer_states_.push_back(-1);
      return static_cast<int32_t>(answered_.size() - 1);
    }
  }
}

void DeferredFeature::answer(const std::vector<Request> &requests, std::vector<int32_t> &answers) {
  answers.clear();
  asked_.clear();
  for (const Request &r : requests) {
    bool added = false;
    answers.push_back(answer_of(r, added));
    if (added) asked_.push_back(answers.back());  // each distinct request once, in the order first asked
  }
  for (size_t begin = 0; begin < asked_.size(); begin += static_cast<size_t>(buffer_size_)) {
    size_t k = std::min(asked_.size() - begin, static_cast<size_t>(buffer_size_));
    batch_.clear();
    for (size_t i = 0; i < k; ++i) batch_.push_back(answered_[static_cast<size_t>(asked_[begin + i])]);
    ask_(batch_, batch_scores_, batch_states_);
    for (size_t i = 0; i < k; ++i) {
      size_t a = static_cast<size_t>(asked_[begin + i]);
      std::copy(batch_scores_.begin() + static_cast<std::ptrdiff_t>(i * num_scores),
                batch_scores_.begin() + static_cast<std::ptrdiff_t>((i + 1) * num_scores),
                answer_scores_.begin() + static_cast<std::ptrdiff_t>(a * num_scores));
      answer_states_[a] = batch_states_[i];
    }
  }
}

double DeferredFeature::settle(int hyp, int32_t answer, double *delta) {
  size_t a = static_cast<size_t>(answer);
  states_[hyp] = answer_states_[a];
  std::copy(answer_scores_.begin() + static_cast<std::ptrdiff_t>(a * num_scores),
            answer_scores_.begin() + static_cast<std::ptrdiff_t>((a + 1) * num_scores), delta);
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
  if (scorer_->start(scorer_->self, &given, &initial) != 0)
    fail("its compiled scorer failed to start a sentence", true);
  if (initial < 0) fail("its compiled scorer started a sentence in state " + std::to_string(initial));
  return initial;
}

void ScorerCalls::score(const std::vector<DeferredFeature::Request> &requests, std::vector<double> &scores,
                        std::vector<int64_t> &states) {
  size_t k = requests.size(), width = static_cast<size_t>(scorer_->num_scores);
  parents_.resize(k);
  options_.resize(k);
  ends_.resize(k);
  std::vector<int64_t> &parents = parents_;
  std::vector<int32_t> &options = options_;
  std::vector<uint8_t> &ends = ends_;
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
           " of request " + std::to_string(i / width + 1) +
           " (scores must be finite, or -inf to forbid a translation)");
  for (size_t i = 0; i < k; ++i)
    if (states[i] < 0) fail("its compiled scorer returned state id " + std::to_string(states[i]));
}

}  // namespace pysmt
