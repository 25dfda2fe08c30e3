// A stack of hypotheses covering the same number of source words (stack.py's Stack).
#include <algorithm>

#include "pysmt/search/_search.hpp"

namespace pysmt {

bool Stack::better(int a, int b) const {
  const Hyp &x = search_->hyp(a), &y = search_->hyp(b);
  if (x.future != y.future) return x.future > y.future;
  return x.seq < y.seq;
}

size_t Stack::slot_of(int id) const {
  size_t mask = slots_.size() - 1;
  for (size_t slot = static_cast<size_t>(search_->hyp(id).signature) & mask;; slot = (slot + 1) & mask) {
    uint32_t held = slots_[slot];
    if (!held || search_->same_signature(ids_[held - 1], id)) return slot;
  }
}

void Stack::rehash(size_t size) {
  slots_.assign(size, 0);
  for (size_t k = 0; k < ids_.size(); ++k) slots_[slot_of(ids_[k])] = static_cast<uint32_t>(k + 1);
}

std::vector<int> Stack::finish() {
  prune();
  std::vector<int> out = ids_;
  std::sort(out.begin(), out.end(), [this](int a, int b) { return better(a, b); });
  return out;
}

// Stack.add: threshold, recombination (the loser becomes an arc), lazy pruning at twice the size.
bool Stack::add(int id) {
  if (!admits(search_->hyp(id).future)) return false;  // also drops nan (a score that overflowed)
  int *existing = nullptr;
  size_t slot = 0;
  if (complete_) {  // complete hypotheses all recombine: one signature
    if (!ids_.empty()) existing = &ids_[0];
  } else {
    search_->seal(id);
    slot = slot_of(id);
    if (slots_[slot]) existing = &ids_[slots_[slot] - 1];
  }
  if (existing) {
    int held = *existing;
    bool wins = search_->hyp(id).future > search_->hyp(held).future;
    if (wins) *existing = id;  // the same signature: the same slot
    if (keep_arcs_) search_->add_arc(wins ? id : held, wins ? held : id);
    return wins;
  }
  ids_.push_back(id);
  if (!complete_) {
    slots_[slot] = static_cast<uint32_t>(ids_.size());
    if (2 * ids_.size() > slots_.size()) rehash(2 * slots_.size());
  }
  double future = search_->hyp(id).future;
  if (future > best_) {
    best_ = future;
    worst_ = std::max(worst_, best_ + beam_);
  }
  if (static_cast<int64_t>(ids_.size()) >= 2 * static_cast<int64_t>(size_)) prune();
  return true;
}

// Stack.prune (Moses' PruneToSize): the best `size` within the beam of the best.
void Stack::prune() {
  if (static_cast<int64_t>(ids_.size()) <= size_) return;
  std::nth_element(ids_.begin(), ids_.begin() + (size_ - 1), ids_.end(), [this](int a, int b) { return better(a, b); });
  std::vector<int> kept;
  double lowest = kNegInf;
  for (int k = 0; k < size_; ++k) {
    double future = search_->hyp(ids_[k]).future;
    if (future > best_ + beam_) {
      lowest = kept.empty() ? future : std::min(lowest, future);
      kept.push_back(ids_[k]);
    }
  }
  if (static_cast<int>(kept.size()) == size_) worst_ = std::max(worst_, lowest);
  ids_.swap(kept);
  rehash(slots_.size());
}

}  // namespace pysmt
