// The compiled option builder (see _options.hpp).
#include "pysmt/search/_options.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace pysmt {

namespace {

// Pairs kept across sentences at most (about 40 bytes each); past this they are all forgotten.
constexpr size_t kMaxKept = size_t(1) << 20;
constexpr double kInf = std::numeric_limits<double>::infinity();

// Best first by future, as Python's sort on -future (ties keep their order: a stable sort). A nan
// future (scores that overflowed) ranks as -inf, where Python's sort would leave it anywhere.
bool better(double a, double b) { return (std::isnan(b) ? -kInf : b) < (std::isnan(a) ? -kInf : a); }

}  // namespace

void OptionBuilder::add_table(std::shared_ptr<const PhraseTableView> table, int column, int limit) {
  std::vector<int32_t> words(table->vocabulary_size(), -1);
  tables_.push_back(Table{std::move(table), column, limit, std::move(words)});
  clear();
}

void OptionBuilder::add_scores(std::shared_ptr<IsolationScores> scores, int column) {
  scorers_.push_back(Scorer{std::move(scores), column});
  clear();
}

void OptionBuilder::add_stored(int table, int column, const float *values, int64_t entries, int count) {
  if (table < 0 || static_cast<size_t>(table) >= tables_.size() ||
      static_cast<size_t>(entries) != tables_[static_cast<size_t>(table)].view->size())
    throw std::invalid_argument("stored columns need a row for each of a known table's entries");
  if (column < 0 || count < 0 || column + count > dims_)
    throw std::invalid_argument("stored columns outside the model's width");
  stored_.push_back(Stored{table, column, count, values});
  clear();
}

void OptionBuilder::set_python_columns(std::vector<int> columns) {
  python_columns_ = std::move(columns);
  clear();
}

void OptionBuilder::set_weights(std::vector<double> weights) {
  weights_ = std::move(weights);
  clear();
}

void OptionBuilder::clear() {
  source_by_text_.clear();
  sources_.clear();
  ranked_.clear();
  python_scores_.clear();
}

void OptionBuilder::target_words(int32_t table, int64_t entry, std::vector<int32_t> &out) {
  out.clear();
  if (table == kUnknownTable) {  // an unknown word: its own number
    out.push_back(static_cast<int32_t>(entry));
    return;
  }
  if (table == kMarkupTable) {
    const std::vector<int32_t> &target = markup_[static_cast<size_t>(entry)].target;
    out.assign(target.begin(), target.end());
    return;
  }
  Table &t = tables_[static_cast<size_t>(table)];
  const int32_t *ids = t.view->target(entry);
  for (int k = 0, n = t.view->target_length(entry); k < n; ++k) {
    int32_t &word = t.words[static_cast<size_t>(ids[k])];
    if (word < 0) word = vocabulary_.id(t.view->word(ids[k]));
    out.push_back(word);
  }
}

void OptionBuilder::score(int32_t table, int64_t entry, double *scores, double *estimates) {
  std::fill(scores, scores + dims_, 0.0);
  std::fill(estimates, estimates + dims_, 0.0);
  if (table >= 0) {  // phrase_table.py: the pair's table scores its own columns
    const Table &t = tables_[static_cast<size_t>(table)];
    const float *values = t.view->scores(entry);
    for (int k = 0; k < t.view->num_scores(); ++k) scores[t.column + k] = static_cast<double>(values[k]);
    for (const Stored &s : stored_) {  // model.py's evaluate_pairs: stored columns, where the row has no NaN
      if (s.table != table) continue;
      const float *row = s.values + entry * s.count;
      if (std::none_of(row, row + s.count, [](float v) { return std::isnan(v); }))
        for (int k = 0; k < s.count; ++k) scores[s.column + k] = static_cast<double>(row[k]);
    }
  } else if (table == kMarkupTable && !tables_.empty()) {  // markup_options.py: the first table's columns
    const Table &t = tables_.front();
    for (int k = 0; k < t.view->num_scores(); ++k) scores[t.column + k] = markup_[static_cast<size_t>(entry)].value;
  }
  target_words(table, entry, words_buffer_);
  PairView pair{words_buffer_.data(), static_cast<int>(words_buffer_.size()), table == kUnknownTable, &vocabulary_};
  for (const Scorer &s : scorers_) s.scores->score(pair, scores + s.column, estimates + s.column);
}

// plugin_results.weighted_columns: each column's product added from the left, from 0.
double OptionBuilder::weighted(const double *row) const {
  double total = 0.0;
  for (int c = 0; c < dims_; ++c) total += row[c] * weights_[static_cast<size_t>(c)];
  return total;
}

int64_t OptionBuilder::source_of(const std::string &text, int32_t unknown_word) {
  auto found = source_by_text_.find(text);
  if (found != source_by_text_.end()) return found->second;
  int64_t index = static_cast<int64_t>(sources_.size());
  source_by_text_.emplace(text, index);
  Source source{text, static_cast<int64_t>(pending_.size()), 0, true};
  if (unknown_word >= 0) {
    pending_.push_back(Pending{-1, unknown_word, text.substr(kUnknownPrefix.size())});
  } else {
    for (size_t t = 0; t < tables_.size(); ++t) {
      auto [first, last] = tables_[t].view->entries(text);
      for (int64_t e = first; e < last; ++e) pending_.push_back(Pending{static_cast<int32_t>(t), e, text});
    }
  }
  source.count = static_cast<int64_t>(pending_.size()) - source.first;
  sources_.push_back(std::move(source));
  new_sources_.push_back(index);
  return index;
}

void OptionBuilder::set_markup(MarkupPolicy policy, const std::vector<MarkupOption> &options) {
  policy_ = policy;
  markup_set_ = true;
  markup_.clear();
  for (const MarkupOption &option : options) {
    Markup markup{option.start, option.end, {}, option.value};
    for (const std::string &word : option.target) markup.target.push_back(vocabulary_.id(word));
    markup_.push_back(std::move(markup));
  }
}

bool OptionBuilder::wants_unknown(int position, bool translated) const {
  if (!markup_at(position, position + 1).empty()) return false;
  return !translated || (policy_ != MarkupPolicy::inclusive && covered_[static_cast<size_t>(position)]);
}

std::vector<int> OptionBuilder::markup_at(int start, int end) const {
  std::vector<int> found;
  for (size_t m = 0; m < markup_.size(); ++m)
    if (markup_[m].start == start && markup_[m].end == end) found.push_back(static_cast<int>(m));
  return found;
}

bool OptionBuilder::keeps(int start, int end, const Ranked &pair) {
  if (markup_.empty() || pair.table < 0 || policy_ == MarkupPolicy::inclusive) return true;
  if (policy_ == MarkupPolicy::exclusive)
    return std::none_of(covered_.begin() + start, covered_.begin() + end, [](char c) { return c != 0; });
  target_words(pair.table, pair.entry, target_buffer_);
  return !violates(start, end, target_buffer_);
}

// markup_options.py's violates (Moses' ViolatesXmlOptionsConstraint): the first markup option that decides does.
bool OptionBuilder::violates(int start, int end, const std::vector<int32_t> &target) const {
  for (const Markup &m : markup_) {
    if (m.start <= start && m.end >= end && (m.start < start || m.end > end)) return true;
    if ((m.start < start && start < m.end && m.end < end) || (start < m.start && m.start < end && end < m.end))
      return true;
    if (m.start >= start && m.end <= end) {
      size_t length = m.target.size();
      for (size_t k = 0; k + length <= target.size(); ++k)
        if (std::equal(m.target.begin(), m.target.end(), target.begin() + static_cast<std::ptrdiff_t>(k))) return false;
      return true;
    }
  }
  return false;
}

std::shared_ptr<SentenceOptions> OptionBuilder::lookup(const std::vector<std::string> &words) {
  if (ranked_.size() > kMaxKept) clear();
  if (!new_sources_.empty()) {  // a sentence whose finish() never came (a feature failed): its new sources go
    for (int64_t index : new_sources_) source_by_text_.erase(sources_[static_cast<size_t>(index)].text);
    sources_.resize(static_cast<size_t>(new_sources_.front()));
  }
  if (!markup_set_) markup_.clear();  // and its markup, unless this sentence's is set
  markup_set_ = false;
  pending_.clear();
  new_sources_.clear();
  span_sources_.clear();
  auto options = std::make_shared<SentenceOptions>();
  options->words = words;
  options->dims = dims_;
  options->vocabulary = &vocabulary_;
  int n = static_cast<int>(words.size());
  std::string text;
  for (int start = 0; start < n; ++start) {
    text.clear();
    for (int end = start + 1; end <= std::min(n, start + max_phrase_length_); ++end) {
      if (end > start + 1) text.push_back(' ');
      text += words[static_cast<size_t>(end - 1)];
      span_sources_.push_back(source_of(text, -1));
    }
  }
  // options.py's prepare: words no table translates alone (or the markup leaves without an option) pass through
  // (their pairs pending after the tables'), then the markup's pairs
  covered_.assign(static_cast<size_t>(n), 0);
  for (const Markup &m : markup_) std::fill(covered_.begin() + m.start, covered_.begin() + m.end, 1);
  size_t span = 0;  // the first span of each start: its one word
  for (int start = 0; start < n; span += static_cast<size_t>(std::min(n - start, max_phrase_length_)), ++start) {
    if (wants_unknown(start, sources_[static_cast<size_t>(span_sources_[span])].count > 0)) {
      const std::string &word = words[static_cast<size_t>(start)];
      span_sources_[span] = source_of(std::string(kUnknownPrefix) + word, vocabulary_.id(word));
    }
  }
  markup_pending_ = pending_.size();
  for (size_t m = 0; m < markup_.size(); ++m)
    pending_.push_back(
        Pending{kMarkupTable, static_cast<int64_t>(m), options->source(markup_[m].start, markup_[m].end)});
  return options;
}

// options.py's prepare: each new source phrase's pairs ranked per table, cut to its limit, merged.
void OptionBuilder::rank(const double *python_scores, const double *python_estimates) {
  std::vector<double> scores(static_cast<size_t>(dims_)), estimates(static_cast<size_t>(dims_));
  std::vector<Ranked> candidates, kept;
  std::vector<size_t> order;
  for (int64_t index : new_sources_) {
    Source &source = sources_[static_cast<size_t>(index)];
    kept.clear();
    int64_t p = source.first, stop = source.first + source.count;
    while (p < stop) {  // the pairs of one table, then the next
      int32_t table = pending_[static_cast<size_t>(p)].table;
      candidates.clear();
      for (; p < stop && pending_[static_cast<size_t>(p)].table == table; ++p) {
        const Pending &pair = pending_[static_cast<size_t>(p)];
        score(pair.table, pair.entry, scores.data(), estimates.data());
        for (int c : python_columns_) {
          scores[static_cast<size_t>(c)] = python_scores[p * dims_ + c];
          estimates[static_cast<size_t>(c)] = python_estimates[p * dims_ + c];
        }
        double isolation = weighted(scores.data());
        double future = isolation + weighted(estimates.data());
        if (std::find(scores.begin(), scores.end(), -kInf) != scores.end()) isolation = future = -kInf;  // forbidden
        candidates.push_back(Ranked{pair.table, pair.entry, isolation, future, p});
      }
      std::stable_sort(candidates.begin(), candidates.end(),
                       [](const Ranked &a, const Ranked &b) { return better(a.future, b.future); });
      int limit = table < 0 ? 0 : tables_[static_cast<size_t>(table)].limit;
      size_t keep = limit > 0 ? std::min(candidates.size(), static_cast<size_t>(limit)) : candidates.size();
      kept.insert(kept.end(), candidates.begin(), candidates.begin() + static_cast<std::ptrdiff_t>(keep));
    }
    if (tables_.size() > 1)
      std::stable_sort(kept.begin(), kept.end(),
                       [](const Ranked &a, const Ranked &b) { return better(a.future, b.future); });
    source.first = static_cast<int64_t>(ranked_.size());
    source.count = static_cast<int64_t>(kept.size());
    source.pending = false;
    for (Ranked &r : kept) {
      int64_t row = r.python;
      r.python = -1;
      if (!python_columns_.empty()) {
        r.python = static_cast<int64_t>(python_scores_.size() / python_columns_.size());
        for (int c : python_columns_) python_scores_.push_back(python_scores[row * dims_ + c]);
      }
      ranked_.push_back(r);
    }
  }
}

void OptionBuilder::finish(SentenceOptions &options, const double *python_scores, const double *python_estimates) {
  rank(python_scores, python_estimates);
  int n = options.length(), span = 0;
  std::vector<int64_t> kept;
  for (int start = 0; start < n; ++start) {
    for (int end = start + 1; end <= std::min(n, start + max_phrase_length_); ++end, ++span) {
      const Source &source = sources_[static_cast<size_t>(span_sources_[static_cast<size_t>(span)])];
      kept.clear();
      for (int64_t r = source.first; r < source.first + source.count; ++r)
        if (keeps(start, end, ranked_[static_cast<size_t>(r)])) kept.push_back(r);
      std::vector<int> given = markup_.empty() ? std::vector<int>() : markup_at(start, end);
      if (kept.empty() && given.empty()) continue;
      options.span_start.push_back(start);
      options.span_end.push_back(end);
      for (int64_t r : kept) {
        const Ranked &pair = ranked_[static_cast<size_t>(r)];
        int32_t k = static_cast<int32_t>(options.size());
        options.span_options.push_back(k);
        options.start.push_back(start);
        options.end.push_back(end);
        options.isolation.push_back(pair.isolation);
        options.future.push_back(pair.future);
        options.table.push_back(pair.table);
        options.entry.push_back(pair.table == kUnknownTable ? -1 : pair.entry);
        size_t row = options.scores.size();
        options.scores.resize(row + static_cast<size_t>(dims_));
        estimates_buffer_.resize(static_cast<size_t>(dims_));
        score(pair.table, pair.entry, options.scores.data() + row, estimates_buffer_.data());
        for (size_t c = 0; c < python_columns_.size(); ++c)
          options.scores[row + static_cast<size_t>(python_columns_[c])] =
              python_scores_[static_cast<size_t>(pair.python) * python_columns_.size() + c];
        options.target_ids.insert(options.target_ids.end(), words_buffer_.begin(), words_buffer_.end());
        options.target_offsets.push_back(static_cast<int64_t>(options.target_ids.size()));
      }
      for (int m : given) add_markup_option(options, m, python_scores, python_estimates);
      int64_t first = options.span_offsets.back();
      if (!given.empty())  // best first, as the tables' are (options.py sorts the span's list)
        std::stable_sort(
            options.span_options.begin() + first, options.span_options.end(), [&options](int32_t a, int32_t b) {
              return better(options.future[static_cast<size_t>(a)], options.future[static_cast<size_t>(b)]);
            });
      options.span_offsets.push_back(static_cast<int64_t>(options.span_options.size()));
    }
  }
  pending_.clear();
  new_sources_.clear();
  markup_.clear();
}

void OptionBuilder::add_markup_option(SentenceOptions &options, int m, const double *python_scores,
                                      const double *python_estimates) {
  const Markup &markup = markup_[static_cast<size_t>(m)];
  options.span_options.push_back(static_cast<int32_t>(options.size()));
  options.start.push_back(markup.start);
  options.end.push_back(markup.end);
  options.table.push_back(kMarkupTable);
  options.entry.push_back(m);
  size_t row = options.scores.size();
  options.scores.resize(row + static_cast<size_t>(dims_));
  estimates_buffer_.resize(static_cast<size_t>(dims_));
  double *scores = options.scores.data() + row;
  score(kMarkupTable, m, scores, estimates_buffer_.data());
  size_t p = markup_pending_ + static_cast<size_t>(m);  // rank()'s scoring of a pending pair
  for (int c : python_columns_) {
    scores[c] = python_scores[p * static_cast<size_t>(dims_) + static_cast<size_t>(c)];
    estimates_buffer_[static_cast<size_t>(c)] =
        python_estimates[p * static_cast<size_t>(dims_) + static_cast<size_t>(c)];
  }
  double isolation = weighted(scores);
  double future = isolation + weighted(estimates_buffer_.data());
  if (std::find(scores, scores + dims_, -kInf) != scores + dims_) isolation = future = -kInf;  // forbidden
  options.isolation.push_back(isolation);
  options.future.push_back(future);
  options.target_ids.insert(options.target_ids.end(), markup.target.begin(), markup.target.end());
  options.target_offsets.push_back(static_cast<int64_t>(options.target_ids.size()));
}

void add_contextual(SentenceOptions &options, const double *scores, const double *isolation, const double *future) {
  size_t dims = static_cast<size_t>(options.dims);
  for (size_t k = 0; k < options.size(); ++k) {
    for (size_t c = 0; c < dims; ++c) options.scores[k * dims + c] += scores[k * dims + c];
    options.isolation[k] += isolation[k];
    options.future[k] += future[k];
  }
  for (size_t s = 0; s + 1 < options.span_offsets.size(); ++s)
    std::stable_sort(options.span_options.begin() + options.span_offsets[s],
                     options.span_options.begin() + options.span_offsets[s + 1], [&options](int32_t a, int32_t b) {
                       return better(options.future[static_cast<size_t>(a)], options.future[static_cast<size_t>(b)]);
                     });
}

std::vector<double> future_costs(const SentenceOptions &options) {
  size_t n = static_cast<size_t>(options.length()), width = n + 1;
  std::vector<double> table(width * width, -kInf);
  for (size_t s = 0; s + 1 < options.span_offsets.size(); ++s) {  // the best option of each span (Python's max)
    double best = -kInf;
    for (int64_t k = options.span_offsets[s]; k < options.span_offsets[s + 1]; ++k) {
      double future = options.future[static_cast<size_t>(options.span_options[static_cast<size_t>(k)])];
      if (k == options.span_offsets[s] || future > best) best = future;
    }
    table[static_cast<size_t>(options.span_start[s]) * width + static_cast<size_t>(options.span_end[s])] = best;
  }
  for (size_t length = 2; length <= n; ++length) {
    for (size_t start = 0; start + length <= n; ++start) {
      size_t end = start + length;
      double joined = -kInf;  // numpy's max over the split points: nan if any is nan
      bool nan = false;
      for (size_t middle = start + 1; middle < end; ++middle) {
        double value = table[start * width + middle] + table[middle * width + end];
        if (std::isnan(value)) nan = true;
        if (middle == start + 1 || value > joined) joined = value;
      }
      if (nan) joined = std::numeric_limits<double>::quiet_NaN();
      double &cell = table[start * width + end];
      if (joined > cell) cell = joined;  // Python's max(cell, joined): the first unless the second is larger
    }
  }
  return table;
}

}  // namespace pysmt
