// The compiled twin of the lexicalized reordering feature (see _lexical_reordering.hpp).
#include "pysmt/features/_lexical_reordering.hpp"

#include <algorithm>
#include <stdexcept>

#include "util/murmur_hash.hh"

namespace pysmt {

int orientation_count(ReorderingModel model) {
  switch (model) {
    case ReorderingModel::msd:
      return 3;
    case ReorderingModel::mslr:
      return 4;
    case ReorderingModel::monotonicity:
      return 2;
    case ReorderingModel::leftright:
      return 2;
  }
  throw std::invalid_argument("unknown reordering model");
}

Orientation first_orientation(ReorderingModel model, int start) {
  if (model == ReorderingModel::leftright) return Orientation::R;
  if (start == 0) return Orientation::M;
  return model == ReorderingModel::msd    ? Orientation::D
         : model == ReorderingModel::mslr ? Orientation::DR
                                          : Orientation::NM;
}

Orientation orientation(ReorderingModel model, int prev_start, int prev_end, int start, int end) {
  if (model == ReorderingModel::leftright) return prev_end - 1 <= start ? Orientation::R : Orientation::L;
  if (start == prev_end) return Orientation::M;
  if (model == ReorderingModel::monotonicity) return Orientation::NM;
  if (prev_start == end) return Orientation::S;
  if (model == ReorderingModel::msd) return Orientation::D;
  return start >= prev_end ? Orientation::DR : Orientation::DL;
}

const double *LexicalReorderingTwin::row_of(const SentenceOptions &options, size_t k) {
  if (options.table[k] == kUnknownTable) return default_scores_.empty() ? nullptr : default_scores_.data();
  if (options.table[k] == kMarkupTable) {  // looked up as any pair (its source and target), not kept: per sentence
    std::string text = options.source(options.start[k], options.end[k]);
    if (!source_only_) text += " ||| " + options.target_text(k);
    int64_t row = table_->find(text);
    if (row >= 0) return table_->scores(row);
    return default_scores_.empty() ? nullptr : default_scores_.data();
  }
  uint64_t key = (static_cast<uint64_t>(options.table[k]) << 48) ^ static_cast<uint64_t>(options.entry[k]);
  auto [row, fresh] = rows_of_entries_.insert(key);
  if (fresh) {
    std::string text = options.source(options.start[k], options.end[k]);
    if (!source_only_) text += " ||| " + options.target_text(k);
    *row = table_->find(text) + 1;
  }
  if (*row > 0) return table_->scores(*row - 1);
  return default_scores_.empty() ? nullptr : default_scores_.data();
}

void LexicalReorderingTwin::prepare(const SentenceOptions &options) {
  width_ = table_->num_scores();
  row_of_option_.assign(options.size(), -1);
  rows_.clear();
  FlatMap<std::vector<int32_t>> by_hash(2 * options.size());
  for (size_t k = 0; k < options.size(); ++k) {
    const double *row = row_of(options, k);
    if (!row) continue;
    std::vector<int32_t> &same_hash =
        *by_hash.insert(util::MurmurHashNative(row, static_cast<size_t>(width_) * sizeof(double), 0)).first;
    for (int32_t other : same_hash)
      if (std::equal(row, row + width_, rows_.data() + static_cast<size_t>(other) * width_)) {
        row_of_option_[k] = other;
        break;
      }
    if (row_of_option_[k] < 0) {
      row_of_option_[k] = static_cast<int32_t>(rows_.size() / static_cast<size_t>(width_));
      same_hash.push_back(row_of_option_[k]);
      rows_.insert(rows_.end(), row, row + width_);
    }
  }
}

double LexicalReorderingTwin::extend(int parent, int option, int start, int end, bool, double *delta) {
  const State &prev = states_[parent];
  std::fill(delta, delta + num_scores, 0.0);
  int taken;
  int previous_row = -1;
  if (prev.initial) {
    taken = static_cast<int>(first_orientation(model_, start));
  } else {
    taken = static_cast<int>(orientation(model_, prev.start, prev.end, start, end));
    previous_row = prev.row;
  }
  int row = row_of_option_[option];
  int backward = row >= 0 && backward_ ? backward_slots_[taken] : -1;
  int forward = previous_row >= 0 ? forward_slots_[taken] : -1;
  if (backward >= 0) delta[backward] = rows_[row * width_ + taken];
  if (forward >= 0) delta[forward] = rows_[previous_row * width_ + forward_table_offset_ + taken];
  pending_ = State{start, end, forward_ ? row : -1, false};
  if (num_scores == 1) return weigh(delta);
  // weigh(delta), whose other products are zeros that change no sum (a backward slot precedes the forward ones)
  double sum = 0.0;
  if (backward >= 0) sum += weights[static_cast<size_t>(backward)] * delta[backward];
  if (forward >= 0) sum += weights[static_cast<size_t>(forward)] * delta[forward];
  return sum;
}

uint64_t LexicalReorderingTwin::hash(int hyp) const {
  const State &s = states_[hyp];
  if (s.initial) return 0x9e3779b97f4a7c15ULL;
  return (static_cast<uint64_t>(s.start) * 1000003u + static_cast<uint64_t>(s.end)) * 1000003u +
         static_cast<uint64_t>(s.row + 1);
}

}  // namespace pysmt
