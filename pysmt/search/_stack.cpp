// A stack of hypotheses covering the same number of source words (stack.py's Stack).
#include <algorithm>

#include "pysmt/search/_search.hpp"

namespace pysmt {

size_t SignatureHash::operator()(int hyp) const { return static_cast<size_t>(search->hyp(hyp).signature); }
bool SignatureEqual::operator()(int a, int b) const { return search->same_signature(a, b); }

void Stack::sort_best_first(std::vector<int> &ids) const {
  std::sort(ids.begin(), ids.end(), [this](int a, int b) {
    const Hyp &x = search_->hyp(a), &y = search_->hyp(b);
    if (x.future != y.future) return x.future > y.future;
    return x.seq < y.seq;
  });
}

std::vector<int> Stack::finish() {
  prune();
  std::vector<int> out(hyps_.begin(), hyps_.end());
  sort_best_first(out);
  return out;
}

// Stack.add: threshold, recombination (the loser becomes an arc), lazy pruning at twice the size.
bool Stack::add(int id) {
  if (!admits(search_->hyp(id).future)) return false;  // also drops nan (a score that overflowed)
  if (!complete_) search_->seal(id);
  const Hyp &h = search_->hyp(id);
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
      return winner == id;
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
      return winner == id;
    }
  }
  hyps_.insert(id);
  if (h.future > best_) {
    best_ = h.future;
    worst_ = std::max(worst_, best_ + beam_);
  }
  if (static_cast<int>(hyps_.size()) >= 2 * size_) prune();
  return true;
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

}  // namespace pysmt
