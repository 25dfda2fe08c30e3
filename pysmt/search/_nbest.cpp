// N-best extraction from the search graph (nbest.py's nbest is the specification).
#include <algorithm>
#include <set>

#include "pysmt/search/_search.hpp"

namespace pysmt {

NbestList Search::nbest(const std::vector<int> &finals, const NbestRequest &request) const {
  return describe(derivations(finals, request), request);
}

// The `size` best derivations behind `finals`, best first, exactly as nbest.py enumerates them:
// Moses' trellis paths through recombination arcs, expanded best first, each deviating only after
// the last deviation; ties go to the derivation queued first; at most `budget` are examined.
std::vector<Search::Derivation> Search::derivations(const std::vector<int> &finals, const NbestRequest &request) const {
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
    // No more than `budget` entries can still be taken, so the rest may go (the spec trims at
    // `budget`; trimming at twice that keeps the same entries within reach and does it less often).
    if (heap.size() > 2 * budget) {
      std::nth_element(heap.begin(), heap.begin() + budget, heap.end(), better);
      heap.resize(budget);
      std::make_heap(heap.begin(), heap.end(), worse);
    }
    if (request.distinct) {
      std::vector<int32_t> surface;
      for (auto it = entry.nodes.rbegin(); it != entry.nodes.rend(); ++it) {
        int option = hyps_[*it].option;
        surface.insert(surface.end(), options_.target_ids.begin() + options_.target_offsets[option],
                       options_.target_ids.begin() + options_.target_offsets[option + 1]);
      }
      if (!seen.insert(std::move(surface)).second) continue;  // left out, its deviations queued (as Moses)
    }
    result.push_back(Derivation{std::move(entry.nodes), entry.score});
  }
  return result;
}

// Derivations as Python takes them: options applied (first to last) and unweighted score vectors,
// summed in the order of LogLinearModel.breakdown (per step: the option's scores, then the
// stateful features' deltas), so both engines give the same numbers to the last bit.
NbestList Search::describe(const std::vector<Derivation> &derivations, const NbestRequest &request) const {
  NbestList out;
  size_t k = derivations.size(), dims = static_cast<size_t>(options_.dims);
  out.dims = dims;
  out.score.resize(k);
  out.offsets.resize(k + 1);
  out.scores.assign(k * dims, 0.0);
  size_t step = 0;
  for (size_t i = 0; i < k; ++i) {
    const Derivation &d = derivations[i];
    out.score[i] = d.score;
    out.offsets[i] = static_cast<int64_t>(step);
    double *total = out.scores.data() + i * dims;
    for (auto it = d.nodes.rbegin(); it != d.nodes.rend(); ++it, ++step) {
      int option = hyps_[*it].option;
      out.options.push_back(option);
      const double *row = options_.scores.data() + static_cast<size_t>(option) * dims;
      for (size_t j = 0; j < dims; ++j) total[j] += row[j];
      const double *deltas = &deltas_[static_cast<size_t>(*it) * dims_];
      for (int s = 0; s < dims_; ++s) total[request.stateful_columns[s]] += deltas[s];
    }
  }
  out.offsets[k] = static_cast<int64_t>(step);
  return out;
}

}  // namespace pysmt
