// A plugin's stateful feature, asked through its array interface in batches: score_batch(states,
// options, ends) -> (scores, new state ids). Its states are the feature's ids. The search asks only
// for the hypotheses it has built, each distinct request once a sentence, a buffer at a time
// (pysmt/search/model.py's LogLinearModel.resolve is the specification). How a batch reaches the
// feature is a callback: into Python (the bindings, pysmt/_bind_deferred.cpp), or into a compiled scorer the
// plugin offers (include/pysmt/compiled_scorer.h: ScorerCalls, below), without Python.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "pysmt/compiled_scorer.h"
#include "pysmt/features/_stateful.hpp"

namespace pysmt {

class DeferredFeature : public CompiledFeature {
 public:
  struct Request {
    int64_t state;
    int option;
    bool end;
    bool operator==(const Request &o) const { return state == o.state && option == o.option && end == o.end; }
  };
  struct RequestHash {
    size_t operator()(const Request &r) const {
      return static_cast<size_t>((static_cast<uint64_t>(r.state) * 1000003u + static_cast<uint64_t>(r.option)) * 2u +
                                 (r.end ? 1u : 0u));
    }
  };
  // Scores `requests` (at most buffer_size of them): fills scores (requests x num_scores) and new states.
  using Ask = std::function<void(const std::vector<Request> &requests, std::vector<double> &scores,
                                 std::vector<int64_t> &states)>;

  // Per sentence, for a compiled scorer: start it over the sentence's options; the empty hypothesis' state.
  using Start = std::function<int64_t(const SentenceOptions &options)>;

  DeferredFeature(Ask ask, int num_scores, int buffer_size, Start start = nullptr)
      : CompiledFeature(num_scores), ask_(std::move(ask)), start_(std::move(start)),
        buffer_size_(buffer_size < 1 ? 1 : buffer_size) {}

  void set_initial(int64_t id) { initial_id_ = id; }
  void prepare(const SentenceOptions &options) override {
    if (start_) initial_id_ = start_(options);
  }
  void clear() override {
    states_.clear();
    answered_.clear();
    answer_scores_.clear();
    answer_states_.clear();
    std::fill(slots_.begin(), slots_.end(), 0);
  }
  void initial() override { states_.push_back(initial_id_); }
  double extend(int, int, int, int, bool, double *delta) override;
  void commit() override { states_.push_back(-1); }  // known once resolved
  void pop() override { states_.pop_back(); }
  uint64_t hash(int hyp) const override { return static_cast<uint64_t>(states_[hyp]) * 0x9e3779b97f4a7c15ULL; }
  bool equal(int a, int b) const override { return states_[a] == states_[b]; }
  bool deferred() const override { return true; }

  // Ask for every request not answered yet this sentence, a buffer at a time; `answers`: the answer
  // of each request (for settle).
  void answer(const std::vector<Request> &requests, std::vector<int32_t> &answers);
  int64_t state(int hyp) const { return states_[hyp]; }
  // Fill a resolved hypothesis' state and scores from its request's answer; return its weighted score.
  double settle(int hyp, int32_t answer, double *delta);

 private:
  // The answer of a request, made (unanswered yet) if new: its number; `added` says which.
  int32_t answer_of(const Request &request, bool &added);

  Ask ask_;
  Start start_;
  int buffer_size_;
  int64_t initial_id_ = 0;
  std::vector<int64_t> states_;
  // The sentence's answers, by number: the request, its scores (num_scores each) and new state; found
  // through an open-addressing table of answer numbers + 1 (no allocation per request).
  std::vector<Request> answered_;
  std::vector<double> answer_scores_;
  std::vector<int64_t> answer_states_;
  std::vector<int32_t> slots_ = std::vector<int32_t>(1024, 0);
  // buffers of answer(), kept from call to call
  std::vector<int32_t> asked_;
  std::vector<Request> batch_;
  std::vector<double> batch_scores_;
  std::vector<int64_t> batch_states_;
};

// A plugin's compiled scorer (include/pysmt/compiled_scorer.h) as a deferred feature's callbacks, with
// what the search checks of its answers (as plugin_results.py checks a Python feature's): scores
// finite or -inf, state ids not negative. A fault is a FeatureFault naming the feature.
struct FeatureFault : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class ScorerCalls {
 public:
  ScorerCalls(const pysmt_scorer *scorer, std::string feature) : scorer_(scorer), feature_(std::move(feature)) {}
  int64_t start(const SentenceOptions &options) const;
  void score(const std::vector<DeferredFeature::Request> &requests, std::vector<double> &scores,
             std::vector<int64_t> &states);

 private:
  // A FeatureFault naming the feature; `reported`: the scorer said it failed (its message is added).
  [[noreturn]] void fail(const std::string &what, bool reported = false) const;
  const pysmt_scorer *scorer_;
  std::string feature_;
  std::vector<int64_t> parents_;  // buffers of score(), kept from call to call
  std::vector<int32_t> options_;
  std::vector<uint8_t> ends_;
};

}  // namespace pysmt
