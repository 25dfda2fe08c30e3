// The compiled option builder: a sentence's translation options from the phrase tables' typed arrays,
// as pysmt/search/options.py's OptionBuilder (the specification) builds them. Every span of at most
// `max_phrase_length` words is looked up in each table; a source phrase's pairs are scored in
// isolation (the built-in features' compiled scores, and the columns Python features give), ranked
// by weighted score plus estimate, cut to the table limit and kept across sentences; a word no
// table translates alone becomes an unknown-word option. Scores are added in the order
// plugin_results.weighted_rows adds them, and ties keep the tables' order, so both builders give the
// same options with the same numbers.
//
// A sentence's markup (--xml-input; pysmt/search/markup_options.py is the specification) adds its options to
// their spans (kMarkupTable, numbered in the line's order), takes table options away as its policy says and
// passes through the words it leaves without an option; set before the sentence's lookup(), its only.
//
// Python features are called from Python, between the two steps of a sentence: lookup() lists the
// pairs of source phrases not seen before (pending()), and finish() takes the context-free Python
// features' scores of those pairs, ranks them and lays the options out. Per-sentence features
// (add_contextual) and future costs (future_costs) come after.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "pysmt/_phrases.hpp"
#include "pysmt/features/_isolation.hpp"
#include "pysmt/models/_phrase_table.hpp"

namespace pysmt {

// The cache key of an unknown word's pass-through pair: this, then the word (no source phrase has a NUL).
inline constexpr std::string_view kUnknownPrefix("\0unk\0", 5);

class OptionBuilder {
 public:
  // A pair that Python features have to score: an entry of table `table`, or (table -1) the unknown
  // word `source` passed through.
  struct Pending {
    int32_t table;
    int64_t entry;
    std::string source;
  };

  // How markup options meet the tables' (Moses' -xml-input with options).
  enum class MarkupPolicy { exclusive, inclusive, constraint };
  // A markup translation of the source words [start, end); `value` fills each column of the first table.
  struct MarkupOption {
    int start, end;
    std::vector<std::string> target;
    double value;
  };

  OptionBuilder(int dims, int max_phrase_length) : dims_(dims), max_phrase_length_(max_phrase_length) {}

  // A phrase table supplying candidates; its scores are the model's columns [column, column + num_scores).
  void add_table(std::shared_ptr<const PhraseTableView> table, int column, int limit);
  // A context-free feature's compiled scores, the model's columns [column, column + num_scores).
  void add_scores(std::shared_ptr<IsolationScores> scores, int column);
  // Scores stored with table `table` that are its own columns [column, column + count) (a per-sentence
  // feature's StoredColumns): `values` holds `count` floats for each of the table's `entries` (kept alive
  // by the caller); an entry with a NaN among them has none (its columns stay 0).
  void add_stored(int table, int column, const float *values, int64_t entries, int count);
  // The model's columns that context-free Python features score (finish() receives them).
  void set_python_columns(std::vector<int> columns);
  // New weights: the ranked pairs are forgotten (their ranks change).
  void set_weights(std::vector<double> weights);
  // Forget the ranked pairs.
  void clear();

  // The next sentence's markup options (in the line's order), under `policy`.
  void set_markup(MarkupPolicy policy, const std::vector<MarkupOption> &options);

  // Step 1: the sentence's spans looked up; the pairs of source phrases not ranked yet are pending.
  std::shared_ptr<SentenceOptions> lookup(const std::vector<std::string> &words);
  const std::vector<Pending> &pending() const { return pending_; }
  // Step 2: rank the pending pairs, with the Python features' scores and estimates of them (rows of
  // the model's width, pending() order; nullptr when there are no Python columns), and lay out the
  // sentence's options.
  void finish(SentenceOptions &options, const double *python_scores, const double *python_estimates);

  const TargetVocabulary &vocabulary() const { return vocabulary_; }
  // The word alignment inside a pair (an unknown word's: "0-0").
  std::string_view alignment(int32_t table, int64_t entry) const {
    if (table == kUnknownTable) return "0-0";
    if (table == kMarkupTable) return "";  // Moses' markup translations have none
    return tables_[static_cast<size_t>(table)].view->alignment(entry);
  }
  // Pairs kept across sentences (for tests and benchmarks).
  size_t kept() const { return ranked_.size(); }

 private:
  // A pair as the cache keeps it: where it is from, its weighted scores, and its Python columns.
  struct Ranked {
    int32_t table;  // -1: an unknown word
    int64_t entry;  // its table entry, or (unknown) its word's number
    double isolation, future;
    int64_t python;  // its Python columns: python_scores_[python * python_columns_.size() ...], or -1
  };
  // A source phrase's pairs: ranked_[first:first + count], best first; while `pending` (new this
  // sentence), pending_[first:first + count], in table order.
  struct Source {
    std::string text;
    int64_t first = 0, count = 0;
    bool pending = true;
  };
  struct Table {
    std::shared_ptr<const PhraseTableView> view;
    int column, limit;
    std::vector<int32_t> words;  // the table's word ids as TargetVocabulary numbers (-1: not yet)
  };
  struct Scorer {
    std::shared_ptr<IsolationScores> scores;
    int column;
  };
  struct Stored {
    int table, column, count;
    const float *values;
  };
  // A pair's target words, as TargetVocabulary numbers, into `out`.
  void target_words(int32_t table, int64_t entry, std::vector<int32_t> &out);
  // Its unweighted scores and estimates in isolation, but for the Python columns; leaves its target
  // words in words_buffer_.
  void score(int32_t table, int64_t entry, double *scores, double *estimates);
  // The index in sources_ of the source phrase `text` (new, and pending, if not known); an unknown
  // word's is kUnknownPrefix + the word, with its word's number.
  int64_t source_of(const std::string &text, int32_t unknown_word);
  void rank(const double *python_scores, const double *python_estimates);
  // markup_options.py's SentenceMarkup: wants_unknown, keeps (of a ranked pair), the options of exactly a span.
  bool wants_unknown(int position, bool translated) const;
  bool keeps(int start, int end, const Ranked &pair);
  bool violates(int start, int end, const std::vector<int32_t> &target) const;
  std::vector<int> markup_at(int start, int end) const;
  // A markup option laid out as option `k` of `options` (scored as rank() scores a pair), from its pending row.
  void add_markup_option(SentenceOptions &options, int m, const double *python_scores, const double *python_estimates);
  double weighted(const double *row) const;

  int dims_, max_phrase_length_;
  std::vector<Table> tables_;
  std::vector<Scorer> scorers_;
  std::vector<Stored> stored_;
  std::vector<int> python_columns_;
  std::vector<double> weights_;
  TargetVocabulary vocabulary_;
  std::unordered_map<std::string, int64_t> source_by_text_;
  std::vector<Source> sources_;
  std::vector<Ranked> ranked_;
  std::vector<double> python_scores_;
  // the sentence being built: its spans' source phrases, the new source phrases and their pairs
  std::vector<int64_t> span_sources_;
  std::vector<int64_t> new_sources_;
  std::vector<Pending> pending_;
  std::vector<int32_t> words_buffer_;
  std::vector<double> estimates_buffer_;
  // the sentence's markup: its options (target words as TargetVocabulary numbers), the words they cover, and
  // where their pending pairs start
  struct Markup {
    int start, end;
    std::vector<int32_t> target;
    double value;
  };
  MarkupPolicy policy_ = MarkupPolicy::inclusive;
  std::vector<Markup> markup_;
  bool markup_set_ = false;  // set_markup() came since the last lookup()
  std::vector<char> covered_;
  size_t markup_pending_ = 0;
  std::vector<int32_t> target_buffer_;
};

// Per-sentence features' scores of a sentence's options (options x dims, zeros outside their columns),
// with their weighted scores and estimates: added to the options' (as evaluate_options adds them), then
// each span's options sorted again best first.
void add_contextual(SentenceOptions &options, const double *scores, const double *isolation, const double *future);

// The future-cost table of the options (pysmt/search/future_cost.py): the best future of each span,
// completed over split points; (n + 1) x (n + 1), row start, column end.
std::vector<double> future_costs(const SentenceOptions &options);

}  // namespace pysmt
