// The compiled twin of pysmt/features/lexical_reordering.py (Moses' phrase-based LexicalReordering),
// and the one definition of its models and orientations, which the bindings export to Python.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "pysmt/_flat_map.hpp"
#include "pysmt/features/_stateful.hpp"
#include "pysmt/models/_reordering_table.hpp"

namespace pysmt {

// The orientation classes a model tells apart (Moses' LexicalReorderingConfiguration::ModelType).
enum class ReorderingModel { msd = 0, mslr = 1, monotonicity = 2, leftright = 3 };

// Moses' ReorderingType values: a table row's column (per direction) of each orientation.
// msd: M, S, D; mslr: M, S, DL, DR; monotonicity: M, NM; leftright: R, L.
enum class Orientation { M = 0, S = 1, D = 2, DL = 2, DR = 3, NM = 1, R = 0, L = 1 };

// How many orientations (table columns per direction) a model has.
int orientation_count(ReorderingModel model);
// The orientation of the first phrase, which starts at source position `start`.
Orientation first_orientation(ReorderingModel model, int start);
// The orientation of [start, end) after [prev_start, prev_end) (exclusive ends).
Orientation orientation(ReorderingModel model, int prev_start, int prev_end, int start, int end);

class LexicalReorderingTwin : public CompiledFeature {
 public:
  // `table` is looked up by phrase pair ("src ||| tgt"), or by source phrase when `source_only`;
  // `default_scores` (logged; empty: none) stand for a pair the table lacks and an unknown word.
  LexicalReorderingTwin(int num_scores, ReorderingModel model, bool backward, bool forward,
                        std::vector<int> backward_slots, std::vector<int> forward_slots, int forward_table_offset,
                        std::shared_ptr<const ReorderingTableView> table, bool source_only,
                        std::vector<double> default_scores)
      : CompiledFeature(num_scores), model_(model), backward_(backward), forward_(forward),
        backward_slots_(std::move(backward_slots)), forward_slots_(std::move(forward_slots)),
        forward_table_offset_(forward_table_offset), table_(std::move(table)), source_only_(source_only),
        default_scores_(std::move(default_scores)) {}

  // Per sentence: each option's table row. Identical rows share an index, so states compare rows by
  // value, as the Python feature's tuples do.
  void prepare(const SentenceOptions &options) override;
  void clear() override { states_.clear(); }
  void initial() override { states_.push_back(State{-1, -1, -1, true}); }
  double extend(int parent, int option, int start, int end, bool complete, double *delta) override;
  void commit() override { states_.push_back(pending_); }
  void pop() override { states_.pop_back(); }
  uint64_t hash(int hyp) const override;
  bool equal(int a, int b) const override {
    const State &x = states_[a], &y = states_[b];
    return x.initial == y.initial && x.start == y.start && x.end == y.end && x.row == y.row;
  }

 private:
  struct State {
    int start, end, row;  // the previous phrase's span, and its row when the forward model needs it
    bool initial;
  };
  // The table row of option k's pair (nullptr: none), looked up once per table entry.
  const double *row_of(const SentenceOptions &options, size_t k);

  ReorderingModel model_;
  bool backward_, forward_;
  std::vector<int> backward_slots_, forward_slots_;
  int forward_table_offset_;
  std::shared_ptr<const ReorderingTableView> table_;
  bool source_only_;
  std::vector<double> default_scores_;
  FlatMap<int64_t> rows_of_entries_;  // (phrase table, entry) -> reordering row + 1 (0: none)
  int width_ = 0;
  std::vector<int32_t> row_of_option_;
  std::vector<double> rows_;
  std::vector<State> states_;
  State pending_{-1, -1, -1, true};
};

}  // namespace pysmt
