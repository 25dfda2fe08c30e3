// The compiled search core: hypotheses, stacks, recombination, normal search and cube pruning,
// future cost of coverages, and the built-in stateful features (KenLM, distortion, lexicalized
// reordering), on typed per-sentence arrays. Everything else (models' loading, options, the
// stateless features, n-best lists) stays in Python; pysmt/search/compiled.py drives this module.
//
// It is a transcription of the Python reference search (normal.py, cube.py, stack.py, model.py
// and the features), step for step and in the same floating-point order, so that both give the
// same translations and scores; tests/test_compiled_search.py checks it.

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <queue>
#include <set>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "lm/model.hh"
#include "lm/state.hh"
#include "util/murmur_hash.hh"

namespace py = pybind11;

namespace {

const double LOG10_TO_LN = std::log(10.0);
const double NEG_INF = -std::numeric_limits<double>::infinity();

template <typename T>
using Array = py::array_t<T, py::array::c_style | py::array::forcecast>;

// ---------------------------------------------------------------------------------------------
// KenLM through its C++ API

class LanguageModel {
 public:
  explicit LanguageModel(const std::string &path) {
    lm::ngram::Config config;
    model_.reset(lm::ngram::LoadVirtual(path.c_str(), config));
    if (model_->StateSize() != sizeof(lm::ngram::State))
      throw std::runtime_error(path + ": unsupported KenLM model type");
    end_ = model_->BaseVocabulary().EndSentence();
  }

  unsigned order() const { return model_->Order(); }

  lm::WordIndex index(const std::string &word) const { return model_->BaseVocabulary().Index(word); }

  float base(const lm::ngram::State &in, lm::WordIndex word, lm::ngram::State &out) const {
    return model_->BaseScore(&in, word, &out);
  }

  void begin(lm::ngram::State &state) const { model_->BeginSentenceWrite(&state); }

  lm::WordIndex end() const { return end_; }

  // Python's kenlm.Model.score(phrase, bos=False, eos=False), which accumulates in float.
  double estimate(const std::vector<std::string> &words) const {
    lm::ngram::State state, out;
    model_->NullContextWrite(&state);
    float total = 0;
    for (const auto &word : words) {
      total += model_->BaseScore(&state, index(word), &out);
      state = out;
    }
    return static_cast<double>(total) * LOG10_TO_LN;
  }

 private:
  std::unique_ptr<lm::base::Model> model_;
  lm::WordIndex end_;
};

// A KenLM state as Python sees it (the reference search's states): the bytes of its length, words
// and backoffs, so that equal bytes mean equal states.
py::bytes state_bytes(const lm::ngram::State &state) {
  std::string out(1 + state.length * (sizeof(lm::WordIndex) + sizeof(float)), '\0');
  out[0] = static_cast<char>(state.length);
  std::memcpy(&out[1], state.words, state.length * sizeof(lm::WordIndex));
  std::memcpy(&out[1 + state.length * sizeof(lm::WordIndex)], state.backoff, state.length * sizeof(float));
  return py::bytes(out);
}

lm::ngram::State state_from_bytes(const std::string &in) {
  lm::ngram::State state;
  std::memset(&state, 0, sizeof(state));
  state.length = static_cast<unsigned char>(in.at(0));
  std::memcpy(state.words, &in[1], state.length * sizeof(lm::WordIndex));
  std::memcpy(state.backoff, &in[1 + state.length * sizeof(lm::WordIndex)], state.length * sizeof(float));
  return state;
}

// ---------------------------------------------------------------------------------------------
// Stateful features: each keeps its states (and nothing else) per hypothesis id.

class StatefulFeature {
 public:
  explicit StatefulFeature(int num_scores) : num_scores(num_scores), weights(num_scores, 0.0) {}
  virtual ~StatefulFeature() = default;

  // Per sentence: forget the states of the last one.
  virtual void clear() = 0;
  virtual void initial() = 0;  // the state of hypothesis 0, the empty one
  // Append the state of a new hypothesis (extending `parent` by `option`); write its unweighted
  // scores to `delta` and return their weighted sum, as LogLinearModel.extend adds them.
  virtual double extend(int parent, int option, int start, int end, bool complete, double *delta) = 0;
  virtual uint64_t hash(int hyp) const = 0;
  virtual bool equal(int a, int b) const = 0;
  // Deferred features (Python ones) leave their scores to Search::resolve.
  virtual bool deferred() const { return false; }

  const int num_scores;
  std::vector<double> weights;

 protected:
  double weigh(const double *delta) const {
    if (num_scores == 1) return weights[0] * delta[0];
    double sum = 0;  // Python's sum(map(mul, weights, delta)): left to right from 0
    for (int k = 0; k < num_scores; ++k) sum += weights[k] * delta[k];
    return sum;
  }
};

class KenLMFeature : public StatefulFeature {
 public:
  explicit KenLMFeature(std::shared_ptr<LanguageModel> model) : StatefulFeature(1), model_(std::move(model)) {}

  // Per sentence: each option's target words as the LM's word ids.
  void set_options(Array<uint32_t> ids, Array<int64_t> offsets) {
    ids_.assign(ids.data(), ids.data() + ids.size());
    offsets_.assign(offsets.data(), offsets.data() + offsets.size());
  }

  void clear() override { states_.clear(); }

  void initial() override {
    lm::ngram::State state;
    std::memset(&state, 0, sizeof(state));
    model_->begin(state);
    states_.push_back(state);
  }

  double extend(int parent, int option, int, int, bool complete, double *delta) override {
    lm::ngram::State state = states_[parent], out;
    double total = 0.0;
    for (int64_t k = offsets_[option]; k < offsets_[option + 1]; ++k) {
      total += model_->base(state, ids_[k], out);
      state = out;
    }
    delta[0] = total * LOG10_TO_LN;
    if (complete) delta[0] += static_cast<double>(model_->base(state, model_->end(), out)) * LOG10_TO_LN;
    states_.push_back(state);
    return weigh(delta);
  }

  uint64_t hash(int hyp) const override { return lm::ngram::hash_value(states_[hyp]); }
  bool equal(int a, int b) const override { return states_[a] == states_[b]; }

 private:
  std::shared_ptr<LanguageModel> model_;
  std::vector<uint32_t> ids_;
  std::vector<int64_t> offsets_;
  std::vector<lm::ngram::State> states_;
};

class DistortionFeature : public StatefulFeature {
 public:
  DistortionFeature() : StatefulFeature(1) {}
  void clear() override { ends_.clear(); }
  void initial() override { ends_.push_back(0); }
  double extend(int parent, int, int start, int end, bool, double *delta) override {
    delta[0] = -static_cast<double>(std::abs(ends_[parent] - start));
    ends_.push_back(end);
    return weigh(delta);
  }
  uint64_t hash(int hyp) const override { return static_cast<uint64_t>(ends_[hyp]); }
  bool equal(int a, int b) const override { return ends_[a] == ends_[b]; }

 private:
  std::vector<int> ends_;
};

// Moses' lexicalized reordering, as pysmt/features/lexical_reordering.py computes it.
class ReorderingFeature : public StatefulFeature {
 public:
  enum Model { MSD = 0, MSLR = 1, MONOTONICITY = 2, LEFTRIGHT = 3 };

  ReorderingFeature(int num_scores, int model, bool backward, bool forward, std::vector<int> backward_slots,
                    std::vector<int> forward_slots, int forward_table_offset)
      : StatefulFeature(num_scores), model_(model), backward_(backward), forward_(forward),
        backward_slots_(std::move(backward_slots)), forward_slots_(std::move(forward_slots)),
        forward_table_offset_(forward_table_offset) {}

  // Per sentence: each option's row of (logged) table scores as an index into `rows`, -1 for none.
  // Identical rows share an index, so states compare rows by value, as the Python tuples do.
  void set_options(Array<int32_t> row_of_option, Array<double> rows) {
    row_of_option_.assign(row_of_option.data(), row_of_option.data() + row_of_option.size());
    width_ = rows.ndim() == 2 ? static_cast<int>(rows.shape(1)) : 0;
    rows_.assign(rows.data(), rows.data() + rows.size());
  }

  void clear() override { states_.clear(); }
  void initial() override { states_.push_back(State{-1, -1, -1, true}); }

  double extend(int parent, int option, int start, int end, bool, double *delta) override {
    const State &prev = states_[parent];
    std::fill(delta, delta + num_scores, 0.0);
    int orientation;
    int previous_row = -1;
    if (prev.initial) {
      orientation = first(start);
    } else {
      orientation = this->orientation(prev.start, prev.end, start, end);
      previous_row = prev.row;
    }
    int row = row_of_option_[option];
    if (row >= 0 && backward_) delta[backward_slots_[orientation]] = rows_[row * width_ + orientation];
    if (previous_row >= 0)
      delta[forward_slots_[orientation]] = rows_[previous_row * width_ + forward_table_offset_ + orientation];
    states_.push_back(State{start, end, forward_ ? row : -1, false});
    return weigh(delta);
  }

  uint64_t hash(int hyp) const override {
    const State &s = states_[hyp];
    if (s.initial) return 0x9e3779b97f4a7c15ULL;
    return (static_cast<uint64_t>(s.start) * 1000003u + static_cast<uint64_t>(s.end)) * 1000003u +
           static_cast<uint64_t>(s.row + 1);
  }
  bool equal(int a, int b) const override {
    const State &x = states_[a], &y = states_[b];
    return x.initial == y.initial && x.start == y.start && x.end == y.end && x.row == y.row;
  }

 private:
  struct State {
    int start, end, row;
    bool initial;
  };
  static const int M = 0, S = 1, D = 2, DL = 2, DR = 3, NM = 1, R = 0, L = 1;

  int first(int start) const {
    if (model_ == LEFTRIGHT) return R;
    if (start == 0) return M;
    return model_ == MSD ? D : model_ == MSLR ? DR : NM;
  }
  int orientation(int prev_start, int prev_end, int start, int end) const {
    if (model_ == LEFTRIGHT) return prev_end - 1 <= start ? R : L;
    if (start == prev_end) return M;
    if (model_ == MONOTONICITY) return NM;
    if (prev_start == end) return S;
    if (model_ == MSD) return D;
    return start >= prev_end ? DR : DL;
  }

  int model_;
  bool backward_, forward_;
  std::vector<int> backward_slots_, forward_slots_;
  int forward_table_offset_;
  int width_ = 0;
  std::vector<int32_t> row_of_option_;
  std::vector<double> rows_;
  std::vector<State> states_;
};

// A stateful feature written in Python, asked through its array interface in batches:
// score_batch(states, options, ends) -> (scores, new state ids). States are the feature's ids. The
// object called is the feature's StatefulCalls (pysmt/search/plugin_results.py), which checks what
// the feature returns, so what arrives here has the right shapes, dtypes and values.
class DeferredFeature : public StatefulFeature {
 public:
  DeferredFeature(py::object feature, int num_scores, int buffer_size)
      : StatefulFeature(num_scores), feature_(std::move(feature)), buffer_size_(std::max(buffer_size, 1)) {}

  void set_initial(int64_t id) { initial_id_ = id; }
  void clear() override {
    states_.clear();
    answers_.clear();
  }
  void initial() override { states_.push_back(initial_id_); }
  double extend(int, int, int, int, bool, double *delta) override {
    states_.push_back(-1);  // known once resolved
    std::fill(delta, delta + num_scores, 0.0);
    return 0.0;
  }
  uint64_t hash(int hyp) const override { return static_cast<uint64_t>(states_[hyp]) * 0x9e3779b97f4a7c15ULL; }
  bool equal(int a, int b) const override { return states_[a] == states_[b]; }
  bool deferred() const override { return true; }

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
  struct Answer {
    std::vector<double> scores;
    int64_t state;
  };

  // Ask Python for every request not answered yet this sentence, a buffer at a time (with the GIL).
  void answer(const std::vector<Request> &requests) {
    std::vector<Request> asked;
    std::unordered_set<Request, RequestHash> queued;
    for (const Request &r : requests)
      if (!answers_.count(r) && queued.insert(r).second) asked.push_back(r);
    if (asked.empty()) return;
    py::gil_scoped_acquire gil;
    for (size_t begin = 0; begin < asked.size(); begin += buffer_size_) {
      size_t k = std::min(asked.size() - begin, static_cast<size_t>(buffer_size_));
      Array<int64_t> states(k);
      Array<int32_t> options(k);
      py::array_t<bool> ends(k);
      for (size_t i = 0; i < k; ++i) {
        states.mutable_data()[i] = asked[begin + i].state;
        options.mutable_data()[i] = asked[begin + i].option;
        ends.mutable_data()[i] = asked[begin + i].end;
      }
      py::tuple result = feature_.attr("score_batch")(states, options, ends);
      Array<double> scores = result[0].cast<Array<double>>();
      Array<int64_t> new_states = result[1].cast<Array<int64_t>>();
      if (scores.size() != static_cast<py::ssize_t>(k * num_scores) || new_states.size() != static_cast<py::ssize_t>(k))
        throw std::logic_error("StatefulCalls.score_batch returned arrays of the wrong shape");
      for (size_t i = 0; i < k; ++i)
        answers_[asked[begin + i]] = Answer{
            std::vector<double>(scores.data() + i * num_scores, scores.data() + (i + 1) * num_scores),
            new_states.data()[i]};
    }
  }

  int64_t state(int hyp) const { return states_[hyp]; }
  // Fill a resolved hypothesis' state and scores; return its weighted score.
  double settle(int hyp, const Request &request, double *delta) {
    const Answer &a = answers_.at(request);
    states_[hyp] = a.state;
    std::copy(a.scores.begin(), a.scores.end(), delta);
    double sum = 0;  // plugin_results.weighted_sum: left to right from 0; -inf (forbidden) whatever the weight
    for (int k = 0; k < num_scores; ++k) {
      if (delta[k] == NEG_INF) return NEG_INF;
      sum += weights[k] * delta[k];
    }
    return sum;
  }

 private:
  py::object feature_;
  int buffer_size_;
  int64_t initial_id_ = 0;
  std::vector<int64_t> states_;
  std::unordered_map<Request, Answer, RequestHash> answers_;
};

// ---------------------------------------------------------------------------------------------
// The search

struct Hyp {
  int prev, option;
  int covered, end;
  double score, future;
  int64_t seq;
  uint64_t signature;  // hash of coverage, end and feature states
};

struct SearchConfig {
  bool cube;
  int stack_size;
  double beam;  // log(beam-threshold), or -inf
  int pop_limit;
  int distortion_limit;
  bool keep_arcs;
  int pops_per_round;  // cube pruning with deferred features
};

class Search;

struct SignatureHash {
  const Search *search;
  size_t operator()(int hyp) const;
};
struct SignatureEqual {
  const Search *search;
  bool operator()(int a, int b) const;
};

class Stack {
 public:
  Stack(Search *search, const SearchConfig &config, bool complete)
      : search_(search), size_(config.stack_size), beam_(config.beam), complete_(complete),
        keep_arcs_(config.keep_arcs), hyps_(16, SignatureHash{search}, SignatureEqual{search}) {}

  double worst() const { return worst_; }
  void add(int id);
  void prune();
  std::vector<int> finish() {
    prune();
    std::vector<int> out(hyps_.begin(), hyps_.end());
    sort_best_first(out);
    return out;
  }
  void sort_best_first(std::vector<int> &ids) const;

 private:
  Search *search_;
  int size_;
  double beam_;
  bool complete_, keep_arcs_;
  std::unordered_set<int, SignatureHash, SignatureEqual> hyps_;
  double best_ = NEG_INF, worst_ = NEG_INF;
};

class Search {
 public:
  Search(const SearchConfig &config, int n, std::vector<std::shared_ptr<StatefulFeature>> features)
      : config_(config), n_(n), words_((n + 63) / 64), features_(std::move(features)) {
    for (const auto &f : features_) {
      offsets_.push_back(dims_);
      dims_ += f->num_scores;
      if (f->deferred()) deferred_.push_back(static_cast<int>(offsets_.size()) - 1);
    }
  }

  // Options: spans sorted by (start, end), each span's options best first.
  void set_options(const int32_t *start, const int32_t *end, const double *isolation, int num_options,
                   const int32_t *span_start, const int32_t *span_end, const int64_t *span_offsets,
                   const int32_t *span_options, int num_spans, const double *future_table) {
    opt_start_ = start;
    opt_end_ = end;
    opt_isolation_ = isolation;
    num_options_ = num_options;
    span_options_ = span_options;
    spans_.assign(n_, {});
    for (int s = 0; s < num_spans; ++s)
      spans_[span_start[s]].push_back(Span{span_end[s], span_offsets[s], span_offsets[s + 1]});
    future_table_ = future_table;
  }

  std::vector<int> run() {
    for (auto &f : features_) f->clear();
    hyps_.clear();
    coverage_.clear();
    deltas_.clear();
    arcs_.clear();
    seq_ = 1;
    std::vector<Stack> stacks;
    stacks.reserve(n_ + 1);
    for (int i = 0; i <= n_; ++i) stacks.emplace_back(this, config_, i == n_);
    // the empty hypothesis
    coverage_.assign(words_, 0);
    for (auto &f : features_) f->initial();
    deltas_.assign(dims_, 0.0);
    double cost = future_of(&coverage_[0]);
    hyps_.push_back(Hyp{-1, -1, 0, 0, 0.0, cost, 0, 0});
    hyps_[0].signature = signature(0);
    stacks[0].add(0);
    return config_.cube ? cube(stacks) : normal(stacks);
  }

  // What n-best extraction needs to know besides the search graph.
  struct NbestRequest {
    int size;
    size_t budget;  // derivations examined at most (pysmt/search/nbest.py: size * NBEST_FACTOR)
    bool distinct;
    const double *option_scores;  // num_options x model_dims: each option's unweighted scores
    int model_dims;
    std::vector<int> stateful_columns;  // model column of each stateful score (this search's deltas)
    const int64_t *target_offsets;  // distinct only: option k's target word ids are
    const int32_t *target_ids;      //   target_ids[target_offsets[k]:target_offsets[k + 1]]
  };
  struct Derivation {
    std::vector<int> nodes;  // hypotheses, last applied option first
    double score;
  };

  // The `size` best derivations behind `finals`, best first, exactly as pysmt/search/nbest.py
  // (the executable specification) enumerates them: Moses' trellis paths through recombination
  // arcs, expanded best first, each deviating only after the last deviation; ties go to the
  // derivation queued first; at most `budget` are examined.
  std::vector<Derivation> nbest(const std::vector<int> &finals, const NbestRequest &request) const {
    struct Entry {
      double score;
      int64_t tie;
      std::vector<int> nodes;
      int last;
    };
    auto worse = [](const Entry &a, const Entry &b) {
      return a.score < b.score || (a.score == b.score && a.tie > b.tie);
    };
    auto better = [&worse](const Entry &a, const Entry &b) { return worse(b, a); };
    auto chain = [this](int id, std::vector<int> &nodes) {
      for (; id >= 0 && hyps_[id].option >= 0; id = hyps_[id].prev) nodes.push_back(id);
    };
    const size_t budget = request.budget;
    std::vector<Entry> heap;  // a max-heap by `worse`: the best entry on top
    int64_t tie = 0;
    for (int id : finals) {
      heap.push_back(Entry{hyps_[id].score, tie++, {}, -1});
      chain(id, heap.back().nodes);
    }
    std::make_heap(heap.begin(), heap.end(), worse);
    std::vector<Derivation> result;
    std::set<std::vector<int32_t>> seen;
    size_t examined = 0;
    while (!heap.empty() && result.size() < static_cast<size_t>(request.size) && examined < budget) {
      std::pop_heap(heap.begin(), heap.end(), worse);
      Entry entry = std::move(heap.back());
      heap.pop_back();
      ++examined;
      if (request.distinct) {
        std::vector<int32_t> surface;
        for (auto it = entry.nodes.rbegin(); it != entry.nodes.rend(); ++it) {
          int option = hyps_[*it].option;
          surface.insert(surface.end(), request.target_ids + request.target_offsets[option],
                         request.target_ids + request.target_offsets[option + 1]);
        }
        if (!seen.insert(std::move(surface)).second) continue;
      }
      for (size_t position = static_cast<size_t>(entry.last + 1); position < entry.nodes.size(); ++position) {
        auto it = arcs_.find(entry.nodes[position]);
        if (it == arcs_.end()) continue;
        for (int arc : it->second) {
          Entry next{entry.score - hyps_[entry.nodes[position]].score + hyps_[arc].score, tie++,
                     std::vector<int>(entry.nodes.begin(), entry.nodes.begin() + position), static_cast<int>(position)};
          chain(arc, next.nodes);
          heap.push_back(std::move(next));
          std::push_heap(heap.begin(), heap.end(), worse);
        }
      }
      result.push_back(Derivation{std::move(entry.nodes), entry.score});
      // No more than `budget` entries can still be taken, so the rest may go (the spec trims at
      // `budget`; trimming at twice that keeps the same entries within reach and does it less often).
      if (heap.size() > 2 * budget) {
        std::nth_element(heap.begin(), heap.begin() + budget, heap.end(), better);
        heap.resize(budget);
        std::make_heap(heap.begin(), heap.end(), worse);
      }
    }
    return result;
  }

  // Derivations as Python takes them: options applied (first to last) and unweighted score vectors,
  // summed in the order of LogLinearModel.breakdown (per step: the option's scores, then the
  // stateful features' deltas), so both engines give the same numbers to the last bit.
  py::dict describe(const std::vector<Derivation> &derivations, const NbestRequest &request) const {
    size_t k = derivations.size(), steps = 0, dims = static_cast<size_t>(request.model_dims);
    for (const auto &d : derivations) steps += d.nodes.size();
    Array<double> score(k), scores({k, dims});
    Array<int64_t> offsets(k + 1);
    Array<int32_t> options(steps);
    size_t step = 0;
    for (size_t i = 0; i < k; ++i) {
      const Derivation &d = derivations[i];
      score.mutable_data()[i] = d.score;
      offsets.mutable_data()[i] = static_cast<int64_t>(step);
      double *total = scores.mutable_data() + i * dims;
      std::fill(total, total + dims, 0.0);
      for (auto it = d.nodes.rbegin(); it != d.nodes.rend(); ++it, ++step) {
        int option = hyps_[*it].option;
        options.mutable_data()[step] = option;
        const double *row = request.option_scores + static_cast<size_t>(option) * dims;
        for (size_t j = 0; j < dims; ++j) total[j] += row[j];
        const double *deltas = &deltas_[static_cast<size_t>(*it) * dims_];
        for (int s = 0; s < dims_; ++s) total[request.stateful_columns[s]] += deltas[s];
      }
    }
    offsets.mutable_data()[k] = static_cast<int64_t>(step);
    py::dict out;
    out["score"] = score;
    out["offsets"] = offsets;
    out["options"] = options;
    out["scores"] = scores;
    return out;
  }

  // -- used by stacks
  const Hyp &hyp(int id) const { return hyps_[id]; }
  bool same_signature(int a, int b) const {
    const Hyp &x = hyps_[a], &y = hyps_[b];
    if (x.end != y.end || x.signature != y.signature) return false;
    if (std::memcmp(&coverage_[a * words_], &coverage_[b * words_], words_ * sizeof(uint64_t)) != 0) return false;
    for (const auto &f : features_)
      if (!f->equal(a, b)) return false;
    return true;
  }
  void add_arc(int winner, int loser) {
    std::vector<int> &arcs = arcs_[winner];
    auto it = arcs_.find(loser);
    if (it != arcs_.end()) {
      arcs.insert(arcs.end(), it->second.begin(), it->second.end());
      arcs_.erase(it);
    }
    arcs.push_back(loser);
  }

 private:
  struct Span {
    int end;
    int64_t begin, stop;  // its options: span_options_[begin:stop]
  };
  struct Edge {
    std::vector<int> hyps;
    int64_t begin, count;
    double cost;
    bool complete;
    std::unordered_set<uint64_t> seen;
  };

  bool covered_at(const uint64_t *cov, int position) const { return (cov[position >> 6] >> (position & 63)) & 1; }

  bool overlaps(const uint64_t *cov, int start, int end) const {
    for (int p = start; p < end; ++p)
      if (covered_at(cov, p)) return true;
    return false;
  }

  int first_gap(const uint64_t *cov) const {
    for (int p = 0; p < n_; ++p)
      if (!covered_at(cov, p)) return p;
    return n_;
  }

  bool jump_allowed(int previous_end, bool has_previous, int start) const {
    int limit = config_.distortion_limit;
    if (limit < 0) return true;
    return (has_previous ? std::abs(previous_end - start) : start) <= limit;
  }

  bool gap_reachable(int gap, int start, int end) const {
    int limit = config_.distortion_limit;
    return limit < 0 || start == gap || end - gap <= limit;
  }

  // FutureCost.__call__: the table's estimate summed over the uncovered runs, left to right.
  double future_of(const uint64_t *cov) {
    std::string key(reinterpret_cast<const char *>(cov), words_ * sizeof(uint64_t));
    auto it = future_cache_.find(key);
    if (it != future_cache_.end()) return it->second;
    double cost = 0.0;
    int start = -1;
    for (int p = 0; p <= n_; ++p) {
      bool covered = p == n_ || covered_at(cov, p);
      if (covered && start >= 0) {
        cost += future_table_[start * (n_ + 1) + p];
        start = -1;
      } else if (!covered && start < 0) {
        start = p;
      }
    }
    future_cache_.emplace(std::move(key), cost);
    return cost;
  }

  uint64_t signature(int id) const {
    const Hyp &h = hyps_[id];
    uint64_t value = util::MurmurHashNative(&coverage_[id * words_], words_ * sizeof(uint64_t), h.end);
    for (const auto &f : features_) value = value * 0x100000001b3ULL ^ f->hash(id);
    return value;
  }

  // LogLinearModel.extend
  int extend(int parent, int option, const uint64_t *new_coverage, double cost, bool complete) {
    const Hyp &p = hyps_[parent];
    int id = static_cast<int>(hyps_.size());
    int start = opt_start_[option], end = opt_end_[option];
    double score = p.score + opt_isolation_[option];
    deltas_.resize(deltas_.size() + dims_);
    double *delta = &deltas_[static_cast<size_t>(id) * dims_];
    for (const auto &f : features_) {
      score += f->extend(parent, option, start, end, complete, delta);
      delta += f->num_scores;
    }
    coverage_.insert(coverage_.end(), new_coverage, new_coverage + words_);
    hyps_.push_back(Hyp{parent, option, p.covered + end - start, end, score, score + cost, seq_++, 0});
    if (deferred_.empty()) hyps_.back().signature = signature(id);
    return id;
  }

  // LogLinearModel.resolve: the deferred features' scores of new hypotheses, asked in batches.
  void resolve(const std::vector<int> &ids) {
    if (deferred_.empty() || ids.empty()) return;
    std::vector<std::vector<DeferredFeature::Request>> requests(deferred_.size());
    for (size_t d = 0; d < deferred_.size(); ++d) {
      auto *f = static_cast<DeferredFeature *>(features_[deferred_[d]].get());
      requests[d].reserve(ids.size());
      for (int id : ids)
        requests[d].push_back({f->state(hyps_[id].prev), hyps_[id].option, hyps_[id].covered == n_});
      f->answer(requests[d]);
    }
    for (size_t i = 0; i < ids.size(); ++i) {
      int id = ids[i];
      double gained = 0.0;
      for (size_t d = 0; d < deferred_.size(); ++d) {
        auto *f = static_cast<DeferredFeature *>(features_[deferred_[d]].get());
        gained += f->settle(id, requests[d][i], &deltas_[static_cast<size_t>(id) * dims_ + offsets_[deferred_[d]]]);
      }
      hyps_[id].score += gained;
      hyps_[id].future += gained;
      hyps_[id].signature = signature(id);
    }
  }

  std::vector<uint64_t> with_span(int hyp, int start, int end) const {
    std::vector<uint64_t> cov(&coverage_[hyp * words_], &coverage_[hyp * words_] + words_);
    for (int p = start; p < end; ++p) cov[p >> 6] |= uint64_t(1) << (p & 63);
    return cov;
  }

  std::vector<int> normal(std::vector<Stack> &stacks) {
    std::vector<int> built;  // every expansion of stack i, in the order built
    for (int i = 0; i < n_; ++i) {
      built.clear();
      for (int id : stacks[i].finish()) {
        std::vector<uint64_t> coverage(&coverage_[id * words_], &coverage_[id * words_] + words_);
        const Hyp h = hyps_[id];
        int gap = first_gap(coverage.data());
        for (int start = gap; start < n_; ++start) {
          if (covered_at(coverage.data(), start) || !jump_allowed(h.end, h.option >= 0, start)) continue;
          for (const Span &span : spans_[start]) {
            if (overlaps(coverage.data(), start, span.end) || !gap_reachable(gap, start, span.end)) break;
            std::vector<uint64_t> next = with_span(id, start, span.end);
            double cost = future_of(next.data());
            int covered = i + span.end - start;
            bool complete = covered == n_;
            for (int64_t k = span.begin; k < span.stop; ++k)
              built.push_back(extend(id, span_options_[k], next.data(), cost, complete));
            (void)covered;
          }
        }
      }
      resolve(built);
      for (int id : built) stacks[hyps_[id].covered].add(id);
    }
    return stacks[n_].finish();
  }

  std::vector<int> cube(std::vector<Stack> &stacks) {
    std::vector<std::vector<Edge>> todo(n_ + 1);
    for (int i = 0; i <= n_; ++i) {
      if (i > 0) {
        fill_stack(stacks[i], todo[i]);
        todo[i].clear();
      }
      std::vector<int> hyps = stacks[i].finish();
      if (i == n_) return hyps;
      // group by coverage, groups in order of their best hypothesis
      std::vector<std::vector<int>> groups;
      std::unordered_map<std::string, size_t> group_of;
      for (int id : hyps) {
        std::string key(reinterpret_cast<const char *>(&coverage_[id * words_]), words_ * sizeof(uint64_t));
        auto found = group_of.emplace(std::move(key), groups.size());
        if (found.second) groups.emplace_back();
        groups[found.first->second].push_back(id);
      }
      for (const auto &group : groups) {
        const uint64_t *coverage = &coverage_[group[0] * words_];
        int gap = first_gap(coverage);
        for (int start = gap; start < n_; ++start) {
          if (covered_at(coverage, start)) continue;
          std::vector<int> jumpers;
          for (int id : group)
            if (jump_allowed(hyps_[id].end, hyps_[id].option >= 0, start)) jumpers.push_back(id);
          if (jumpers.empty()) continue;
          for (const Span &span : spans_[start]) {
            if (overlaps(coverage, start, span.end) || !gap_reachable(gap, start, span.end)) break;
            std::vector<uint64_t> next = with_span(group[0], start, span.end);
            int covered = i + span.end - start;
            todo[covered].push_back(Edge{jumpers, span.begin, span.stop - span.begin, future_of(next.data()),
                                         covered == n_, {}});
          }
        }
      }
    }
    return {};
  }

  struct Candidate {
    double future;  // nan (a score that overflowed) ranked as -inf: cube.heap_key
    int64_t seq;
    int hyp, edge, x, y;
    bool operator<(const Candidate &o) const {  // for std::priority_queue: the top is the best
      if (future != o.future) return future < o.future;
      return seq > o.seq;
    }
  };

  // fill_stack in cube.py: the heap holds complete candidates; new ones are scored a round at a time.
  void fill_stack(Stack &stack, std::vector<Edge> &edges) {
    std::priority_queue<Candidate> heap;
    std::vector<uint64_t> next(words_);
    struct Fresh {
      int hyp, edge, x, y;
    };
    std::vector<Fresh> fresh;
    std::vector<int> fresh_ids;
    auto build = [&](int e, int x, int y) {
      Edge &edge = edges[e];
      edge.seen.insert((static_cast<uint64_t>(x) << 32) | static_cast<uint64_t>(y));
      int parent = edge.hyps[x];
      int option = span_options_[edge.begin + y];
      const uint64_t *cov = &coverage_[parent * words_];
      std::copy(cov, cov + words_, next.begin());
      for (int p = opt_start_[option]; p < opt_end_[option]; ++p) next[p >> 6] |= uint64_t(1) << (p & 63);
      fresh.push_back(Fresh{extend(parent, option, next.data(), edge.cost, edge.complete), e, x, y});
    };
    int round = deferred_.empty() ? 1 : config_.pops_per_round;
    for (size_t e = 0; e < edges.size(); ++e) build(static_cast<int>(e), 0, 0);
    int pops = 0;
    while (pops < config_.pop_limit) {
      if (!fresh.empty()) {
        fresh_ids.clear();
        for (const Fresh &f : fresh) fresh_ids.push_back(f.hyp);
        resolve(fresh_ids);
        for (const Fresh &f : fresh) {
          double future = hyps_[f.hyp].future;
          heap.push(Candidate{std::isnan(future) ? NEG_INF : future, hyps_[f.hyp].seq, f.hyp, f.edge, f.x, f.y});
        }
        fresh.clear();
      }
      if (heap.empty() || !(heap.top().future >= stack.worst())) break;
      for (int popped = 0; !heap.empty() && pops < config_.pop_limit && popped < round &&
                           heap.top().future >= stack.worst();
           ++popped) {
        Candidate c = heap.top();
        heap.pop();
        stack.add(c.hyp);
        ++pops;
        const Edge &edge = edges[c.edge];
        uint64_t right = (static_cast<uint64_t>(c.x) << 32) | static_cast<uint64_t>(c.y + 1);
        if (c.y + 1 < edge.count && !edge.seen.count(right)) build(c.edge, c.x, c.y + 1);
        uint64_t down = (static_cast<uint64_t>(c.x + 1) << 32) | static_cast<uint64_t>(c.y);
        if (c.x + 1 < static_cast<int>(edges[c.edge].hyps.size()) && !edges[c.edge].seen.count(down))
          build(c.edge, c.x + 1, c.y);
      }
    }
  }

  SearchConfig config_;
  int n_, words_;
  std::vector<std::shared_ptr<StatefulFeature>> features_;
  std::vector<int> offsets_, deferred_;  // each feature's first delta; the deferred features
  int dims_ = 0;
  const int32_t *opt_start_ = nullptr, *opt_end_ = nullptr, *span_options_ = nullptr;
  const double *opt_isolation_ = nullptr, *future_table_ = nullptr;
  int num_options_ = 0;
  std::vector<std::vector<Span>> spans_;
  std::vector<Hyp> hyps_;
  std::vector<uint64_t> coverage_;
  std::vector<double> deltas_;
  std::unordered_map<int, std::vector<int>> arcs_;
  std::unordered_map<std::string, double> future_cache_;
  int64_t seq_ = 1;
};

size_t SignatureHash::operator()(int hyp) const { return static_cast<size_t>(search->hyp(hyp).signature); }
bool SignatureEqual::operator()(int a, int b) const { return search->same_signature(a, b); }

void Stack::sort_best_first(std::vector<int> &ids) const {
  std::sort(ids.begin(), ids.end(), [this](int a, int b) {
    const Hyp &x = search_->hyp(a), &y = search_->hyp(b);
    if (x.future != y.future) return x.future > y.future;
    return x.seq < y.seq;
  });
}

// Stack.add: threshold, recombination (the loser becomes an arc), lazy pruning at twice the size.
void Stack::add(int id) {
  const Hyp &h = search_->hyp(id);
  if (h.future == NEG_INF || !(h.future >= worst_)) return;  // also drops nan (a score that overflowed)
  if (complete_) {  // complete hypotheses all recombine: one signature
    if (!hyps_.empty()) {
      int existing = *hyps_.begin();
      int winner = existing, loser = id;
      if (h.future > search_->hyp(existing).future) {
        hyps_.clear();
        hyps_.insert(id);
        winner = id;
        loser = existing;
      }
      if (keep_arcs_) search_->add_arc(winner, loser);
      return;
    }
  } else {
    auto it = hyps_.find(id);
    if (it != hyps_.end()) {
      int existing = *it;
      int winner = existing, loser = id;
      if (h.future > search_->hyp(existing).future) {
        hyps_.erase(it);
        hyps_.insert(id);
        winner = id;
        loser = existing;
      }
      if (keep_arcs_) search_->add_arc(winner, loser);
      return;
    }
  }
  hyps_.insert(id);
  if (h.future > best_) {
    best_ = h.future;
    worst_ = std::max(worst_, best_ + beam_);
  }
  if (static_cast<int>(hyps_.size()) >= 2 * size_) prune();
}

// Stack.prune (Moses' PruneToSize)
void Stack::prune() {
  if (static_cast<int>(hyps_.size()) <= size_) return;
  std::vector<int> ranked(hyps_.begin(), hyps_.end());
  sort_best_first(ranked);
  std::vector<int> kept;
  for (int k = 0; k < size_ && k < static_cast<int>(ranked.size()); ++k)
    if (search_->hyp(ranked[k]).future > best_ + beam_) kept.push_back(ranked[k]);
  if (static_cast<int>(kept.size()) == size_) worst_ = std::max(worst_, search_->hyp(kept.back()).future);
  hyps_.clear();
  hyps_.insert(kept.begin(), kept.end());
}

py::dict search(int n, bool cube, int stack_size, double beam_threshold, int pop_limit, int distortion_limit,
                int pops_per_round, Array<int32_t> opt_start, Array<int32_t> opt_end, Array<double> opt_isolation,
                Array<int32_t> span_start, Array<int32_t> span_end, Array<int64_t> span_offsets,
                Array<int32_t> span_options, Array<double> future_table,
                std::vector<std::shared_ptr<StatefulFeature>> features, int nbest_size, int64_t nbest_budget,
                bool distinct, Array<double> option_scores, std::vector<int> stateful_columns, Array<int64_t> target_offsets,
                Array<int32_t> target_ids) {
  if (future_table.size() != static_cast<py::ssize_t>((n + 1) * (n + 1)))
    throw std::invalid_argument("future_table must have (n + 1) * (n + 1) entries");
  if (span_offsets.size() != span_start.size() + 1 || span_end.size() != span_start.size())
    throw std::invalid_argument("span arrays disagree");
  if (nbest_size < 1 || nbest_budget < nbest_size)
    throw std::invalid_argument("need 1 <= nbest_size <= nbest_budget");
  if (option_scores.ndim() != 2 || option_scores.shape(0) != opt_start.size())
    throw std::invalid_argument("option_scores must have a row per option");
  if (distinct && target_offsets.size() != opt_start.size() + 1)
    throw std::invalid_argument("a distinct n-best list needs every option's target word ids");
  int model_dims = static_cast<int>(option_scores.shape(1));
  int stateful_dims = 0;
  for (const auto &f : features) stateful_dims += f->num_scores;
  if (static_cast<int>(stateful_columns.size()) != stateful_dims)
    throw std::invalid_argument("stateful_columns must name a column per stateful score");
  for (int column : stateful_columns)
    if (column < 0 || column >= model_dims) throw std::invalid_argument("stateful column outside the score vector");
  Search::NbestRequest request{nbest_size,        static_cast<size_t>(nbest_budget), distinct,
                               option_scores.data(), model_dims,          std::move(stateful_columns),
                               target_offsets.data(), target_ids.data()};
  SearchConfig config{cube,      stack_size, beam_threshold > 0 ? std::log(beam_threshold) : NEG_INF, pop_limit,
                      distortion_limit, nbest_size > 1, std::max(pops_per_round, 1)};  // arcs: n-best lists only
  Search search(config, n, std::move(features));
  search.set_options(opt_start.data(), opt_end.data(), opt_isolation.data(), static_cast<int>(opt_start.size()),
                     span_start.data(), span_end.data(), span_offsets.data(), span_options.data(),
                     static_cast<int>(span_start.size()), future_table.data());
  std::vector<Search::Derivation> derivations;
  {
    py::gil_scoped_release release;
    derivations = search.nbest(search.run(), request);
  }
  return search.describe(derivations, request);
}

}  // namespace

// The states of an n-gram feature written in Python (the CSLM): every distinct context, the last
// `width` target word ids, numbered in order of arrival. A state id is its context's number, so a
// feature can keep per-context results (a network's hidden layer) in arrays indexed by state. The
// per-request work of such a feature -- its n-grams' contexts and the new states -- is hashing
// short word sequences, which costs microseconds per request in Python and is done here. The table
// also says which contexts an n-gram uses for the first time (since the last clear), so the feature
// computes each context's results once, with no lookup of its own.
class ContextTable {
 public:
  explicit ContextTable(int width) : width_(width) {
    if (width < 1) throw std::invalid_argument("a context holds at least one word");
  }
  int width() const { return width_; }
  int64_t size() const { return static_cast<int64_t>(words_.size() / width_); }
  void clear() {
    std::fill(slots_.begin(), slots_.end(), kEmpty);
    words_.clear();
    used_.clear();
  }
  int64_t intern(const int32_t *context) {
    // open addressing, linear probing, at most half full: a lookup touches one slot and one context
    if (2 * (size() + 1) > static_cast<int64_t>(slots_.size())) rehash(std::max<size_t>(1024, 2 * slots_.size()));
    size_t slot = find(context);
    if (slots_[slot] != kEmpty) return slots_[slot];
    int64_t id = size();
    slots_[slot] = id;
    words_.insert(words_.end(), context, context + width_);
    used_.push_back(false);
    return id;
  }
  // Whether this is the first n-gram to use context `id` (and remember that it is not any more).
  bool first_use(int64_t id) {
    bool first = !used_[static_cast<size_t>(id)];
    used_[static_cast<size_t>(id)] = true;
    return first;
  }
  const int32_t *context(int64_t id) const {
    if (id < 0 || id >= size()) throw std::out_of_range("no such context id");
    return &words_[static_cast<size_t>(id) * width_];
  }

 private:
  static constexpr int64_t kEmpty = -1;
  size_t hash(const int32_t *context) const {
    return static_cast<size_t>(util::MurmurHashNative(context, width_ * sizeof(int32_t)));
  }
  // The slot holding `context`, or the empty slot where it belongs.
  size_t find(const int32_t *context) const {
    size_t mask = slots_.size() - 1, slot = hash(context) & mask;
    while (slots_[slot] != kEmpty &&
           std::memcmp(&words_[static_cast<size_t>(slots_[slot]) * width_], context, width_ * sizeof(int32_t)))
      slot = (slot + 1) & mask;
    return slot;
  }
  void rehash(size_t count) {  // count: a power of two
    slots_.assign(count, kEmpty);
    for (int64_t id = 0; id < size(); ++id) slots_[find(&words_[static_cast<size_t>(id) * width_])] = id;
  }

  int width_;
  std::vector<int64_t> slots_;  // context ids; kEmpty where none
  std::vector<int32_t> words_;
  std::vector<bool> used_;
};

PYBIND11_MODULE(_stack_search, m) {
  m.doc() = "pysmt's compiled search core (see pysmt/search/compiled.py)";

  py::class_<ContextTable>(m, "ContextTable")
      .def(py::init<int>(), py::arg("width"))
      .def_property_readonly("width", &ContextTable::width)
      .def("__len__", &ContextTable::size)
      .def("clear", &ContextTable::clear)
      .def("intern", [](ContextTable &t, Array<int32_t> contexts) {
        if (contexts.ndim() != 2 || contexts.shape(1) != t.width()) throw std::invalid_argument("contexts must be (n, width)");
        Array<int64_t> ids(contexts.shape(0));
        for (py::ssize_t k = 0; k < contexts.shape(0); ++k) ids.mutable_data()[k] = t.intern(contexts.data(k, 0));
        return ids;
      }, "The ids of contexts (n x width word ids), numbering new ones")
      .def("contexts", [](const ContextTable &t, Array<int64_t> ids) {
        Array<int32_t> out({ids.size(), static_cast<py::ssize_t>(t.width())});
        for (py::ssize_t k = 0; k < ids.size(); ++k)
          std::copy(t.context(ids.data()[k]), t.context(ids.data()[k]) + t.width(), out.mutable_data(k, 0));
        return out;
      }, "The word ids of contexts (n x width)")
      .def("extend", [](ContextTable &t, Array<int64_t> states, Array<int32_t> words, Array<int64_t> lengths,
                        Array<bool> ends, int32_t end_word) {
        // Request r appends words[r, :lengths[r]] to state states[r] (and ends the sentence after them
        // when ends[r]): its n-grams in order, as (context id, word, r), and its new state.
        py::ssize_t k = states.size(), w = words.ndim() == 2 ? words.shape(1) : -1;
        if (w < 0 || words.shape(0) != k || lengths.size() != k || ends.size() != k)
          throw std::invalid_argument("extend: states, words (k x width), lengths and ends disagree");
        std::vector<int64_t> rows, owners, fresh;
        std::vector<int32_t> targets;
        Array<int64_t> next(k);
        std::vector<int32_t> sequence;
        const int c = t.width();
        for (py::ssize_t r = 0; r < k; ++r) {
          int64_t n = lengths.data()[r];
          if (n < 0 || n > w) throw std::invalid_argument("extend: a length is out of range");
          const int32_t *start = t.context(states.data()[r]);
          sequence.assign(start, start + c);
          sequence.insert(sequence.end(), words.data(r, 0), words.data(r, 0) + n);
          auto ngram = [&](int64_t context, int32_t word) {
            rows.push_back(context);
            targets.push_back(word);
            owners.push_back(r);
            if (t.first_use(context)) fresh.push_back(context);
          };
          for (int64_t j = 0; j < n; ++j) ngram(j == 0 ? states.data()[r] : t.intern(&sequence[j]), sequence[c + j]);
          int64_t after = t.intern(&sequence[n]);
          next.mutable_data()[r] = after;
          if (ends.data()[r]) ngram(after, end_word);
        }
        return py::make_tuple(Array<int64_t>(rows.size(), rows.data()), Array<int32_t>(targets.size(), targets.data()),
                              Array<int64_t>(owners.size(), owners.data()), next,
                              Array<int64_t>(fresh.size(), fresh.data()));
      }, "(context ids, words, request of each n-gram) of the requests' n-grams, their new states, and the "
         "contexts used for the first time");

  py::class_<LanguageModel, std::shared_ptr<LanguageModel>>(m, "LanguageModel")
      .def(py::init<const std::string &>(), py::arg("path"))
      .def_property_readonly("order", &LanguageModel::order)
      .def("ids", [](const LanguageModel &lm, const std::vector<std::string> &words) {
        Array<uint32_t> out(words.size());
        for (size_t k = 0; k < words.size(); ++k) out.mutable_data()[k] = lm.index(words[k]);
        return out;
      })
      .def("estimate", &LanguageModel::estimate, "log p of a phrase without left context (natural log)")
      .def("begin_state", [](const LanguageModel &lm) {
        lm::ngram::State state;
        std::memset(&state, 0, sizeof(state));
        lm.begin(state);
        return state_bytes(state);
      })
      .def("extend", [](const LanguageModel &lm, const std::string &state_in, const std::vector<std::string> &words) {
        lm::ngram::State state = state_from_bytes(state_in), out;
        std::memset(&out, 0, sizeof(out));
        double total = 0.0;
        for (const auto &word : words) {
          total += lm.base(state, lm.index(word), out);
          state = out;
        }
        return py::make_tuple(total * LOG10_TO_LN, state_bytes(state));
      }, "(log p of the words after the state (natural log), the state after them)")
      .def("final", [](const LanguageModel &lm, const std::string &state_in) {
        lm::ngram::State state = state_from_bytes(state_in), out;
        return static_cast<double>(lm.base(state, lm.end(), out)) * LOG10_TO_LN;
      }, "log p of </s> after the state (natural log)");

  py::class_<StatefulFeature, std::shared_ptr<StatefulFeature>>(m, "StatefulFeature")
      .def_readonly("num_scores", &StatefulFeature::num_scores)
      .def("set_weights", [](StatefulFeature &f, const std::vector<double> &weights) {
        if (static_cast<int>(weights.size()) != f.num_scores) throw std::invalid_argument("wrong number of weights");
        f.weights = weights;
      });
  py::class_<KenLMFeature, StatefulFeature, std::shared_ptr<KenLMFeature>>(m, "KenLMFeature")
      .def(py::init<std::shared_ptr<LanguageModel>>())
      .def("set_options", &KenLMFeature::set_options);
  py::class_<DistortionFeature, StatefulFeature, std::shared_ptr<DistortionFeature>>(m, "DistortionFeature")
      .def(py::init<>());
  py::class_<ReorderingFeature, StatefulFeature, std::shared_ptr<ReorderingFeature>>(m, "ReorderingFeature")
      .def(py::init<int, int, bool, bool, std::vector<int>, std::vector<int>, int>(), py::arg("num_scores"),
           py::arg("model"), py::arg("backward"), py::arg("forward"), py::arg("backward_slots"),
           py::arg("forward_slots"), py::arg("forward_table_offset"))
      .def("set_options", &ReorderingFeature::set_options);
  py::class_<DeferredFeature, StatefulFeature, std::shared_ptr<DeferredFeature>>(m, "DeferredFeature")
      .def(py::init<py::object, int, int>(), py::arg("feature"), py::arg("num_scores"), py::arg("buffer_size"))
      .def("set_initial", &DeferredFeature::set_initial);

  m.def("search", &search,
        "Run normal search or cube pruning over one sentence's options; return its n-best derivations");
}
