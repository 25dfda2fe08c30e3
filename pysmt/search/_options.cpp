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
  if (table < 0) {  // an unknown word: its own number
    out.push_back(static_cast<int32_t>(entry));
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
  }
  target_words(table, entry, words_buffer_);
  PairView pair{words_buffer_.data(), static_cast<int>(words_buffer_.size()), table < 0, &vocabulary_};
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

std::shared_ptr<SentenceOptions> OptionBuilder::lookup(const std::vector<std::string> &words) {
  if (ranked_.size() > kMaxKept) clear();
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
  // options.py's prepare: words no table translates alone pass through (their pairs pending after the tables')
  size_t span = 0;  // the first span of each start: its one word
  for (int start = 0; start < n; span += static_cast<size_t>(std::min(n - start, max_phrase_length_)), ++start) {
    if (sources_[static_cast<size_t>(span_sources_[span])].count == 0) {
      const std::string &word = words[static_cast<size_t>(start)];
      span_sources_[span] = source_of(std::string(kUnknownPrefix) + word, vocabulary_.id(word));
    }
  }
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
  for (int start = 0; start < n; ++start) {
    for (int end = start + 1; end <= std::min(n, start + max_phrase_length_); ++end, ++span) {
      const Source &source = sources_[static_cast<size_t>(span_sources_[static_cast<size_t>(span)])];
      if (source.count == 0) continue;
      options.span_start.push_back(start);
      options.span_end.push_back(end);
      for (int64_t r = source.first; r < source.first + source.count; ++r) {
        const Ranked &pair = ranked_[static_cast<size_t>(r)];
        int32_t k = static_cast<int32_t>(options.size());
        options.span_options.push_back(k);
        options.start.push_back(start);
        options.end.push_back(end);
        options.isolation.push_back(pair.isolation);
        options.future.push_back(pair.future);
        options.table.push_back(pair.table);
        options.entry.push_back(pair.table < 0 ? -1 : pair.entry);
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
      options.span_offsets.push_back(static_cast<int64_t>(options.span_options.size()));
    }
  }
  pending_.clear();
  new_sources_.clear();
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
