// The compiled search: hypotheses, stacks and recombination (_stack.cpp), normal search and cube
// pruning over one sentence's options (_search.cpp), and n-best extraction (_nbest.cpp).
//
// It is a transcription of the Python reference search (normal.py, cube.py, stack.py, nbest.py and
// model.py), step for step and in the same floating-point order, so that both give the same
// translations and scores; tests/search/test_compiled_search.py checks it. Nothing here knows
// Python: the bindings (pysmt/_bind_search.cpp) turn numpy arrays into the plain views below.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "pysmt/_flat_map.hpp"
#include "pysmt/_phrases.hpp"
#include "pysmt/features/_stateful.hpp"
#include "pysmt/search/_deferred.hpp"

namespace pysmt {

enum class Algorithm { normal = 0, cube = 1 };

struct SearchSettings {
  Algorithm algorithm = Algorithm::normal;
  int stack_size = 200;
  double beam_threshold = 1e-5;  // relative to the stack's best, in probability; 0: none
  int pop_limit = 1000;
  int distortion_limit = 6;  // -1: none
  int pops_per_round = 32;   // cube pruning with deferred features: pops whose candidates are scored together
};

// What n-best extraction needs to know besides the search graph and the options.
struct NbestRequest {
  int size = 1;
  size_t budget = 1;  // derivations examined at most (pysmt/search/nbest.py: size * NBEST_FACTOR)
  bool distinct = false;
  std::vector<int> stateful_columns;  // the model's column of each stateful score (in the features' order)
};

// The n-best derivations as Python takes them: derivation i applies options[offsets[i]:offsets[i + 1]]
// (first to last), has model score score[i] and unweighted scores scores[i * dims:(i + 1) * dims].
// `hypotheses`: how many the search built (scored), for benchmarks.
struct NbestList {
  std::vector<double> score;
  std::vector<int64_t> offsets;
  std::vector<int32_t> options;
  std::vector<double> scores;
  size_t dims = 0;
  int64_t hypotheses = 0;
};

struct Hyp {
  int prev, option;
  int covered, end;
  double score, future;
  int64_t seq;
  uint64_t signature;  // hash of coverage, end and feature states (Search::seal, once a stack takes it)
};

class Search;

// stack.py's Stack: threshold and histogram pruning, recombination (the loser becomes an arc).
// Hypotheses are found by signature in an open-addressing table of positions in ids_ (a stack holds
// a few hundred: the table stays in the processor's cache; std::unordered_set cost an allocation per
// hypothesis).
class Stack {
 public:
  Stack(Search *search, int size, double log_beam, bool complete, bool keep_arcs)
      : search_(search), size_(size), beam_(log_beam), complete_(complete), keep_arcs_(keep_arcs), slots_(16, 0) {}

  double worst() const { return worst_; }
  // Whether a hypothesis of this total (score + future) would be looked at by add(), or dropped at once.
  bool admits(double future) const { return future != kNegInf && future >= worst_; }
  // Take a hypothesis whose scores are all known (recombining and pruning as Moses does); false when
  // it was dropped or lost a recombination (so that, without arcs, nothing refers to it).
  bool add(int id);
  void prune();
  // Pruned to size, best first.
  std::vector<int> finish();

 private:
  // Best first: higher future, then the earlier made.
  bool better(int a, int b) const;
  // The slot of hypothesis `id`'s signature: holding its equal's position + 1, or 0 (free) where it goes.
  size_t slot_of(int id) const;
  void rehash(size_t size);

  Search *search_;
  int size_;
  double beam_;
  bool complete_, keep_arcs_;
  std::vector<int> ids_;         // the hypotheses held
  std::vector<uint32_t> slots_;  // by signature: position in ids_ + 1, 0 for a free slot
  double best_ = kNegInf, worst_ = kNegInf;
};

// The storage of a search's hypotheses, kept from one sentence to the next (a thread's own): a
// sentence's vectors grow to tens of megabytes, and growing them afresh every sentence (copies, the
// kernel's zeroed pages) cost a tenth of the search.
struct SearchStorage {
  std::vector<Hyp> hyps;
  std::vector<uint64_t> coverage;
  std::vector<double> deltas;
  std::vector<int> jumpers;
};

class Search {
 public:
  Search(const SearchSettings &settings, const SentenceOptions &options,
         std::vector<std::shared_ptr<CompiledFeature>> features, bool keep_arcs);
  ~Search();
  Search(const Search &) = delete;
  Search &operator=(const Search &) = delete;

  // The complete hypotheses, best first.
  std::vector<int> run();
  // How many hypotheses run() built (scored), kept or not.
  int64_t built() const { return seq_ - 1; }
  // The n-best list behind `finals` (nbest.py's nbest), with score vectors summed as
  // LogLinearModel.breakdown sums them.
  NbestList nbest(const std::vector<int> &finals, const NbestRequest &request) const;

  // -- used by stacks
  const Hyp &hyp(int id) const { return hyps_[id]; }
  // Compute a hypothesis' recombination signature (the stack it enters needs it).
  void seal(int id) { hyps_[id].signature = signature(id); }
  bool same_signature(int a, int b) const;
  void add_arc(int winner, int loser);

 private:
  struct Span {
    int end;
    int64_t begin, stop;  // its options: options_.span_options[begin:stop]
  };
  struct Edge {              // cube pruning: hypotheses of one coverage x the options of one span
    int64_t hyps, num_hyps;  // jumpers_[hyps:hyps + num_hyps], best first
    int64_t begin, count;    // its options: options_.span_options[begin:begin + count]
    double cost;
    bool complete;
  };
  struct Derivation {
    std::vector<int> nodes;  // hypotheses, last applied option first
    double score;
  };
  // cube pruning: a candidate in a stack's heap, its hypothesis and where it lies in its edge (a Point).
  // No hypothesis is ever discarded in cube pruning, so ids follow creation: the id stands for cube.py's seq.
  struct Candidate {
    double future;  // nan (a score that overflowed) ranked as -inf: cube.heap_key
    int32_t hyp, point;
    bool operator<(const Candidate &o) const {  // a max-heap: the top is the best
      if (future != o.future) return future < o.future;
      return hyp > o.hyp;
    }
  };
  struct Point {
    int edge, x, y;
  };

  bool covered_at(const uint64_t *cov, int position) const { return (cov[position >> 6] >> (position & 63)) & 1; }
  bool overlaps(const uint64_t *cov, int start, int end) const;
  int first_gap(const uint64_t *cov) const;
  bool jump_allowed(int previous_end, bool has_previous, int start) const;
  bool gap_reachable(int gap, int start, int end) const;
  // reordering_constraint.py's allows: the markup's walls and zones kept by covering [start, end) after `cov`.
  bool reordering_allowed(const uint64_t *cov, int gap, int start, int end) const;
  double future_of(const uint64_t *cov) const;
  uint64_t signature(int id) const;
  // Score extending hypothesis `parent` by `option` (the features keep the new states pending, the
  // deltas wait in pending_deltas_); its score.
  double score(int parent, int option, bool complete);
  // Store the hypothesis just scored; its id.
  int commit(int parent, int option, const uint64_t *new_coverage, double score, double cost);
  // score, then commit.
  int extend(int parent, int option, const uint64_t *new_coverage, double cost, bool complete);
  // Forget the newest hypothesis (no stack took it and nothing refers to it).
  void discard(int id);
  // This thread's storage kept between sentences.
  static SearchStorage &storage();
  // Normal search without deferred features: score a new hypothesis and add it to its stack at once;
  // store it only when the stack takes it (most are dropped), forget it when it loses a recombination.
  void offer(Stack &stack, int parent, int option, const uint64_t *new_coverage, double cost, bool complete);
  void resolve(const std::vector<int> &ids);
  void with_span(int hyp, int start, int end, uint64_t *out) const;
  std::vector<int> normal(std::vector<Stack> &stacks);
  std::vector<int> cube(std::vector<Stack> &stacks);
  void fill_stack(Stack &stack, std::vector<Edge> &edges);
  std::vector<Derivation> derivations(const std::vector<int> &finals, const NbestRequest &request) const;
  NbestList describe(const std::vector<Derivation> &derivations, const NbestRequest &request) const;

  SearchSettings settings_;
  const SentenceOptions &options_;
  std::vector<double> future_table_;  // (n + 1) x (n + 1): the future-cost estimate of [start, end)
  int n_, words_;
  bool keep_arcs_;
  std::vector<std::shared_ptr<CompiledFeature>> features_;
  std::vector<int> offsets_, deferred_;  // each feature's first delta; the deferred features
  int dims_ = 0;
  std::vector<std::vector<Span>> spans_;
  std::vector<Hyp> hyps_;
  std::vector<uint64_t> coverage_;
  std::vector<double> deltas_;
  std::vector<double> pending_deltas_;  // the deltas of the hypothesis scored last
  std::unordered_map<int, std::vector<int>> arcs_;
  std::vector<int> jumpers_;  // cube pruning: the hypotheses of every edge of the sentence
  // cube pruning, the finished stack's coverage groups: each hypothesis' group, members by group
  std::vector<int32_t> group_of_;
  std::vector<int64_t> group_start_, group_fill_;
  std::vector<int> members_;
  FlatMap<int32_t> groups_by_word_;                         // (sentences of at most 64 words)
  std::unordered_map<std::string, int32_t> groups_by_key_;  // (longer ones)
  // cube pruning, the stack being filled: its heap, its grid points built, those not scored yet
  std::vector<Candidate> heap_;
  std::vector<Point> points_;
  std::vector<int32_t> fresh_;
  std::vector<int> fresh_ids_;
  // resolve(): per deferred feature, the requests of the hypotheses being resolved and their answers
  std::vector<std::vector<DeferredFeature::Request>> requests_;
  std::vector<std::vector<int32_t>> answers_;
  std::vector<int64_t> edge_bits_;  // cube pruning, per edge of the stack being filled: its first word in bits_
  std::vector<uint64_t> bits_;      //   (or -1), a bit per grid point built
  int first_hyp_ = 0;               //   the hypothesis of its first grid point
  int64_t seq_ = 1;
};

// Run the search over one sentence's options and return its n-best list (the bindings' one entry
// point): the features prepare their per-option data first.
NbestList search(const SentenceOptions &options, const SearchSettings &settings,
                 std::vector<std::shared_ptr<CompiledFeature>> features, const NbestRequest &request);

}  // namespace pysmt
