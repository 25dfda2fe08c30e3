// Normal search and cube pruning over one sentence's options (see _search.hpp).
#include "pysmt/search/_search.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>

#include "pysmt/search/_deferred.hpp"
#include "pysmt/search/_options.hpp"
#include "util/murmur_hash.hh"

namespace pysmt {

Search::Search(const SearchSettings &settings, const SentenceOptions &options,
               std::vector<std::shared_ptr<CompiledFeature>> features, bool keep_arcs)
    : settings_(settings), options_(options), future_table_(future_costs(options)), n_(options.length()),
      words_((options.length() + 63) / 64), keep_arcs_(keep_arcs), features_(std::move(features)) {
  for (const auto &f : features_) {
    offsets_.push_back(dims_);
    dims_ += f->num_scores;
    if (f->deferred()) deferred_.push_back(static_cast<int>(offsets_.size()) - 1);
  }
  spans_.assign(n_, {});
  for (size_t s = 0; s < options.span_start.size(); ++s)
    spans_[options.span_start[s]].push_back(
        Span{options.span_end[s], options.span_offsets[s], options.span_offsets[s + 1]});
  SearchStorage &kept = storage();
  hyps_.swap(kept.hyps);
  coverage_.swap(kept.coverage);
  deltas_.swap(kept.deltas);
  jumpers_.swap(kept.jumpers);
}

Search::~Search() {
  SearchStorage &kept = storage();
  hyps_.clear();
  coverage_.clear();
  deltas_.clear();
  jumpers_.clear();
  hyps_.swap(kept.hyps);
  coverage_.swap(kept.coverage);
  deltas_.swap(kept.deltas);
  jumpers_.swap(kept.jumpers);
}

SearchStorage &Search::storage() {
  static thread_local SearchStorage kept;
  return kept;
}

std::vector<int> Search::run() {
  for (auto &f : features_) f->clear();
  hyps_.clear();
  coverage_.clear();
  deltas_.clear();
  arcs_.clear();
  seq_ = 1;
  double log_beam = settings_.beam_threshold > 0 ? std::log(settings_.beam_threshold) : kNegInf;
  std::vector<Stack> stacks;
  stacks.reserve(n_ + 1);
  for (int i = 0; i <= n_; ++i) stacks.emplace_back(this, settings_.stack_size, log_beam, i == n_, keep_arcs_);
  // the empty hypothesis
  coverage_.assign(words_, 0);
  for (auto &f : features_) f->initial();
  deltas_.assign(dims_, 0.0);
  pending_deltas_.assign(dims_, 0.0);
  jumpers_.clear();
  double cost = future_of(&coverage_[0]);
  hyps_.push_back(Hyp{-1, -1, 0, 0, 0.0, cost, 0, 0});
  stacks[0].add(0);
  return settings_.algorithm == Algorithm::cube ? cube(stacks) : normal(stacks);
}

bool Search::same_signature(int a, int b) const {
  const Hyp &x = hyps_[a], &y = hyps_[b];
  if (x.end != y.end || x.signature != y.signature) return false;
  if (std::memcmp(&coverage_[a * words_], &coverage_[b * words_], words_ * sizeof(uint64_t)) != 0) return false;
  for (const auto &f : features_)
    if (!f->equal(a, b)) return false;
  return true;
}

void Search::add_arc(int winner, int loser) {
  std::vector<int> &arcs = arcs_[winner];
  auto it = arcs_.find(loser);
  if (it != arcs_.end()) {
    arcs.insert(arcs.end(), it->second.begin(), it->second.end());
    arcs_.erase(it);
  }
  arcs.push_back(loser);
}

bool Search::overlaps(const uint64_t *cov, int start, int end) const {
  for (int p = start; p < end; ++p)
    if (covered_at(cov, p)) return true;
  return false;
}

int Search::first_gap(const uint64_t *cov) const {
  for (int p = 0; p < n_; ++p)
    if (!covered_at(cov, p)) return p;
  return n_;
}

// distortion_limit.py
bool Search::jump_allowed(int previous_end, bool has_previous, int start) const {
  int limit = settings_.distortion_limit;
  if (limit < 0) return true;
  return (has_previous ? std::abs(previous_end - start) : start) <= limit;
}

bool Search::gap_reachable(int gap, int start, int end) const {
  int limit = settings_.distortion_limit;
  return limit < 0 || start == gap || end - gap <= limit;
}

// reordering_constraint.py (Moses' ReorderingConstraint::Check), with the same names.
bool Search::reordering_allowed(const uint64_t *cov, int gap, int start, int end) const {
  const SentenceOptions &o = options_;
  if (o.walls.empty() && o.zone_first.empty()) return true;
  int last = end - 1;  // Moses' inclusive end
  if (gap != start)
    for (int p = gap; p < last; ++p)
      if (o.walls[static_cast<size_t>(p)]) return false;
  int last_covered = -1;
  for (int p = n_ - 1; p >= 0; --p)
    if (covered_at(cov, p)) {
      last_covered = p;
      break;
    }
  if (gap > last_covered && gap == start) return true;  // monotone
  int limit = settings_.distortion_limit;
  for (size_t z = 0; z < o.zone_first.size(); ++z) {
    int first = o.zone_first[z], final = o.zone_last[z];
    bool outside = last < first || start > final;
    if ((last_covered < first && outside) || gap > final) continue;
    int done = 0;
    for (int p = first; p <= final; ++p) done += covered_at(cov, p);
    if (done == final - first + 1) continue;
    if (outside) {
      if (done) return false;  // the zone is open: nothing outside it
      continue;
    }
    if (limit >= 0 && start != gap && final - gap >= limit) return false;  // its gap out of reach
    if (start <= first) continue;
    if (last > final) {
      if (final - start + 1 < final - first + 1 - done) return false;  // leaves it unfinished
      continue;
    }
    bool seen_gap = false;
    for (int p = first; p < std::min(final, last); ++p) {
      seen_gap = seen_gap || (!covered_at(cov, p) && p < start);
      if (seen_gap && o.local_walls[static_cast<size_t>(p)] == static_cast<int32_t>(z)) return false;
    }
  }
  return true;
}

// FutureCost.__call__: the table's estimate summed over the uncovered runs, left to right.
double Search::future_of(const uint64_t *cov) const {
  double cost = 0.0;
  const double *table = future_table_.data();
  int p = 0;
  while (p < n_) {
    // the next uncovered position at or after p, then the next covered one after it (or n)
    uint64_t open = ~cov[p >> 6] >> (p & 63);
    while (!open) {
      p = (p | 63) + 1;
      if (p >= n_) return cost;
      open = ~cov[p >> 6];
    }
    p += __builtin_ctzll(open);
    if (p >= n_) break;
    int q = p;
    uint64_t shut = cov[q >> 6] >> (q & 63);
    while (!shut) {
      q = (q | 63) + 1;
      if (q >= n_) break;
      shut = cov[q >> 6];
    }
    if (q < n_) q += __builtin_ctzll(shut);
    if (q > n_) q = n_;
    cost += table[p * (n_ + 1) + q];
    p = q;
  }
  return cost;
}

uint64_t Search::signature(int id) const {
  const Hyp &h = hyps_[id];
  uint64_t value = util::MurmurHashNative(&coverage_[id * words_], words_ * sizeof(uint64_t), h.end);
  for (const auto &f : features_) value = value * 0x100000001b3ULL ^ f->hash(id);
  return value;
}

// LogLinearModel.extend
double Search::score(int parent, int option, bool complete) {
  const Hyp &p = hyps_[parent];
  int start = options_.start[option], end = options_.end[option];
  double score = p.score + options_.isolation[option];
  double *delta = pending_deltas_.data();
  for (const auto &f : features_) {
    score += f->extend(parent, option, start, end, complete, delta);
    delta += f->num_scores;
  }
  ++seq_;  // every hypothesis scored takes a number, stored or not (normal.py's seq)
  return score;
}

int Search::commit(int parent, int option, const uint64_t *new_coverage, double score, double cost) {
  const Hyp &p = hyps_[parent];
  int id = static_cast<int>(hyps_.size());
  deltas_.insert(deltas_.end(), pending_deltas_.begin(), pending_deltas_.end());
  for (const auto &f : features_) f->commit();
  coverage_.insert(coverage_.end(), new_coverage, new_coverage + words_);
  int covered = p.covered + options_.end[option] - options_.start[option];
  hyps_.push_back(Hyp{parent, option, covered, options_.end[option], score, score + cost, seq_ - 1, 0});
  return id;
}

int Search::extend(int parent, int option, const uint64_t *new_coverage, double cost, bool complete) {
  return commit(parent, option, new_coverage, score(parent, option, complete), cost);
}

void Search::discard(int id) {
  hyps_.pop_back();
  coverage_.resize(static_cast<size_t>(id) * words_);
  deltas_.resize(static_cast<size_t>(id) * dims_);
  for (auto &f : features_) f->pop();
}

void Search::offer(Stack &stack, int parent, int option, const uint64_t *new_coverage, double cost, bool complete) {
  double total = score(parent, option, complete);
  if (!stack.admits(total + cost)) return;  // dropped: never stored
  int id = commit(parent, option, new_coverage, total, cost);
  if (!stack.add(id) && !keep_arcs_) discard(id);
}

// LogLinearModel.resolve: the deferred features' scores of new hypotheses, asked in batches.
void Search::resolve(const std::vector<int> &ids) {
  if (deferred_.empty() || ids.empty()) return;
  requests_.resize(deferred_.size());
  answers_.resize(deferred_.size());
  for (size_t d = 0; d < deferred_.size(); ++d) {
    auto *f = static_cast<DeferredFeature *>(features_[deferred_[d]].get());
    requests_[d].clear();
    for (int id : ids) requests_[d].push_back({f->state(hyps_[id].prev), hyps_[id].option, hyps_[id].covered == n_});
    f->answer(requests_[d], answers_[d]);
  }
  for (size_t i = 0; i < ids.size(); ++i) {
    int id = ids[i];
    double gained = 0.0;
    for (size_t d = 0; d < deferred_.size(); ++d) {
      auto *f = static_cast<DeferredFeature *>(features_[deferred_[d]].get());
      gained += f->settle(id, answers_[d][i], &deltas_[static_cast<size_t>(id) * dims_ + offsets_[deferred_[d]]]);
    }
    hyps_[id].score += gained;
    hyps_[id].future += gained;
  }
}

void Search::with_span(int hyp, int start, int end, uint64_t *out) const {
  std::copy(&coverage_[hyp * words_], &coverage_[hyp * words_] + words_, out);
  for (int p = start; p < end; ++p) out[p >> 6] |= uint64_t(1) << (p & 63);
}

// normal.py: every hypothesis of stack i expanded by every option it may take next. Without deferred
// features a new hypothesis goes to its stack at once (the same adds in the same order as normal.py's
// after the whole stack), and one the stack drops is forgotten at once: most are, and keeping them
// all cost hundreds of megabytes on long sentences.
std::vector<int> Search::normal(std::vector<Stack> &stacks) {
  const bool immediate = deferred_.empty();
  std::vector<int> built;  // with deferred features: every expansion of stack i, in the order built
  std::vector<uint64_t> coverage(words_), next(words_);
  for (int i = 0; i < n_; ++i) {
    built.clear();
    for (int id : stacks[i].finish()) {
      std::copy(&coverage_[id * words_], &coverage_[id * words_] + words_, coverage.begin());
      const Hyp h = hyps_[id];
      int gap = first_gap(coverage.data());
      for (int start = gap; start < n_; ++start) {
        if (covered_at(coverage.data(), start) || !jump_allowed(h.end, h.option >= 0, start)) continue;
        for (const Span &span : spans_[start]) {
          if (overlaps(coverage.data(), start, span.end) || !gap_reachable(gap, start, span.end)) break;
          if (!reordering_allowed(coverage.data(), gap, start, span.end)) continue;
          with_span(id, start, span.end, next.data());
          double cost = future_of(next.data());
          int covered = i + span.end - start;
          for (int64_t k = span.begin; k < span.stop; ++k) {
            if (immediate)
              offer(stacks[covered], id, options_.span_options[k], next.data(), cost, covered == n_);
            else
              built.push_back(extend(id, options_.span_options[k], next.data(), cost, covered == n_));
          }
        }
      }
    }
    resolve(built);
    for (int id : built) stacks[hyps_[id].covered].add(id);
  }
  return stacks[n_].finish();
}

// cube.py: per stack, edges (a coverage's hypotheses x a span's options) explored best first.
std::vector<int> Search::cube(std::vector<Stack> &stacks) {
  std::vector<std::vector<Edge>> todo(n_ + 1);
  std::vector<uint64_t> next(words_);
  for (int i = 0; i <= n_; ++i) {
    if (i > 0) {
      fill_stack(stacks[i], todo[i]);
      todo[i].clear();
    }
    std::vector<int> hyps = stacks[i].finish();
    if (i == n_) return hyps;
    // group by coverage, groups in order of their best hypothesis: members_[group_start_[g]:group_start_[g + 1]]
    group_of_.clear();
    size_t groups = 0;
    for (int id : hyps) {
      const uint64_t *cov = &coverage_[id * words_];
      int32_t group;
      if (words_ == 1) {  // the coverage itself is the key
        auto [known, fresh] = groups_by_word_.insert(cov[0]);
        if (fresh) *known = static_cast<int32_t>(groups++);
        group = *known;
      } else {
        auto found = groups_by_key_.emplace(std::string(reinterpret_cast<const char *>(cov), words_ * sizeof(uint64_t)),
                                            static_cast<int32_t>(groups));
        if (found.second) ++groups;
        group = found.first->second;
      }
      group_of_.push_back(group);
    }
    groups_by_word_.clear();
    groups_by_key_.clear();
    group_start_.assign(groups + 1, 0);
    for (int32_t group : group_of_) ++group_start_[static_cast<size_t>(group) + 1];
    for (size_t g = 0; g < groups; ++g) group_start_[g + 1] += group_start_[g];
    members_.resize(hyps.size());
    std::vector<int64_t> &fill = group_fill_;
    fill.assign(group_start_.begin(), group_start_.end() - 1);
    for (size_t k = 0; k < hyps.size(); ++k)
      members_[static_cast<size_t>(fill[static_cast<size_t>(group_of_[k])]++)] = hyps[k];
    for (size_t g = 0; g < groups; ++g) {
      const int *group = &members_[static_cast<size_t>(group_start_[g])];
      size_t members = static_cast<size_t>(group_start_[g + 1] - group_start_[g]);
      const uint64_t *coverage = &coverage_[group[0] * words_];
      int gap = first_gap(coverage);
      for (int start = gap; start < n_; ++start) {
        if (covered_at(coverage, start)) continue;
        int64_t first = static_cast<int64_t>(jumpers_.size());
        for (size_t m = 0; m < members; ++m)
          if (jump_allowed(hyps_[group[m]].end, hyps_[group[m]].option >= 0, start)) jumpers_.push_back(group[m]);
        int64_t jumpers = static_cast<int64_t>(jumpers_.size()) - first;
        if (!jumpers) continue;
        for (const Span &span : spans_[start]) {
          if (overlaps(coverage, start, span.end) || !gap_reachable(gap, start, span.end)) break;
          if (!reordering_allowed(coverage, gap, start, span.end)) continue;
          with_span(group[0], start, span.end, next.data());
          int covered = i + span.end - start;
          todo[covered].push_back(
              Edge{first, jumpers, span.begin, span.stop - span.begin, future_of(next.data()), covered == n_});
        }
      }
    }
  }
  return {};
}

// fill_stack in cube.py: the heap holds complete candidates; new ones are scored a round at a time.
// (Its vectors are members, kept from stack to stack.)
void Search::fill_stack(Stack &stack, std::vector<Edge> &edges) {
  std::vector<Candidate> &heap = heap_;
  std::vector<Point> &points = points_;
  std::vector<int32_t> &fresh = fresh_;  // built, not scored by the deferred features yet: indices into points
  std::vector<int> &fresh_ids = fresh_ids_;
  heap.clear();
  points.clear();
  fresh.clear();
  std::vector<uint64_t> next(words_);
  // The grid points built, a bit each: an edge's bits (num_hyps x count) are made when it is first popped.
  std::vector<int64_t> &bits_of = edge_bits_;
  bits_of.assign(edges.size(), -1);
  std::vector<uint64_t> &bits = bits_;
  bits.clear();
  auto unseen = [&](int e, int x, int y) {  // whether (x, y) of edge e is new; marks it seen
    const Edge &edge = edges[e];
    if (bits_of[e] < 0) {
      bits_of[e] = static_cast<int64_t>(bits.size());
      bits.resize(bits.size() + static_cast<size_t>((edge.num_hyps * edge.count + 63) / 64), 0);
    }
    uint64_t k = static_cast<uint64_t>(x) * static_cast<uint64_t>(edge.count) + static_cast<uint64_t>(y);
    uint64_t &word = bits[static_cast<size_t>(bits_of[e]) + (k >> 6)];
    uint64_t bit = uint64_t(1) << (k & 63);
    if (word & bit) return false;
    word |= bit;
    return true;
  };
  auto build = [&](int e, int x, int y) {
    const Edge &edge = edges[e];
    int parent = jumpers_[edge.hyps + x];
    int option = options_.span_options[edge.begin + y];
    const uint64_t *cov = &coverage_[parent * words_];
    std::copy(cov, cov + words_, next.begin());
    for (int p = options_.start[option]; p < options_.end[option]; ++p) next[p >> 6] |= uint64_t(1) << (p & 63);
    extend(parent, option, next.data(), edge.cost, edge.complete);
    fresh.push_back(static_cast<int32_t>(points.size()));
    points.push_back(Point{e, x, y});
  };
  auto hyp_of = [&](int32_t point) { return first_hyp_ + point; };  // one hypothesis per point, in order
  first_hyp_ = static_cast<int>(hyps_.size());
  int round = deferred_.empty() ? 1 : std::max(settings_.pops_per_round, 1);
  for (size_t e = 0; e < edges.size(); ++e) build(static_cast<int>(e), 0, 0);
  int pops = 0;
  while (pops < settings_.pop_limit) {
    if (!fresh.empty()) {
      fresh_ids.clear();
      for (int32_t point : fresh) fresh_ids.push_back(hyp_of(point));
      resolve(fresh_ids);
      for (int32_t point : fresh) {
        double future = hyps_[hyp_of(point)].future;
        heap.push_back(Candidate{std::isnan(future) ? kNegInf : future, hyp_of(point), point});
        std::push_heap(heap.begin(), heap.end());
      }
      fresh.clear();
    }
    if (heap.empty() || !(heap.front().future >= stack.worst())) break;
    for (int popped = 0;
         !heap.empty() && pops < settings_.pop_limit && popped < round && heap.front().future >= stack.worst();
         ++popped) {
      std::pop_heap(heap.begin(), heap.end());
      Candidate c = heap.back();
      heap.pop_back();
      stack.add(c.hyp);
      ++pops;
      Point at = points[static_cast<size_t>(c.point)];
      const Edge &edge = edges[at.edge];
      if (at.y + 1 < edge.count && unseen(at.edge, at.x, at.y + 1)) build(at.edge, at.x, at.y + 1);
      if (at.x + 1 < edge.num_hyps && unseen(at.edge, at.x + 1, at.y)) build(at.edge, at.x + 1, at.y);
    }
  }
}

NbestList search(const SentenceOptions &options, const SearchSettings &settings,
                 std::vector<std::shared_ptr<CompiledFeature>> features, const NbestRequest &request) {
  if (request.size < 1 || request.budget < static_cast<size_t>(request.size))
    throw std::invalid_argument("need 1 <= nbest size <= nbest budget");
  size_t stateful = 0;
  for (const auto &f : features) stateful += f->num_scores;
  if (request.stateful_columns.size() != stateful)
    throw std::invalid_argument("stateful_columns must name a column per stateful score");
  for (int column : request.stateful_columns)
    if (column < 0 || column >= options.dims) throw std::invalid_argument("stateful column outside the score vector");
  for (const auto &f : features) f->prepare(options);
  Search search(settings, options, std::move(features), request.size > 1);  // arcs: n-best lists only
  NbestList found = search.nbest(search.run(), request);
  found.hypotheses = search.built();
  return found;
}

}  // namespace pysmt
