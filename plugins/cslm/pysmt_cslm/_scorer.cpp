// The CSLM as a compiled scorer (see _scorer.hpp).
#include "pysmt_cslm/_scorer.hpp"

#include <exception>
#include <stdexcept>

namespace pysmt_cslm {

CompiledCslm::CompiledCslm(std::shared_ptr<Network> network, std::vector<std::string> words, std::vector<int32_t> ids,
                           std::vector<double> backoff, int32_t unknown_id, double unseen, int32_t begin_id,
                           int32_t end_id, int64_t cache_size)
    : network_(network), hidden_(network), table_(network->width()), unknown_{unknown_id, unseen}, begin_id_(begin_id),
      end_id_(end_id), cache_size_(cache_size) {
  if (words.size() != ids.size() || words.size() != backoff.size())
    throw std::invalid_argument("words, ids and backoff need an entry each");
  for (size_t k = 0; k < words.size(); ++k) by_word_[words[k]] = Terms{ids[k], backoff[k]};
  scorer_.version = PYSMT_SCORER_VERSION;
  scorer_.num_scores = 1;
  scorer_.self = this;
  scorer_.start = [](void *self, const pysmt_options *options, int64_t *initial) {
    return static_cast<CompiledCslm *>(self)->start(options, initial);
  };
  scorer_.score = [](void *self, size_t count, const int64_t *states, const int32_t *options, const uint8_t *ends,
                     double *scores, int64_t *new_states) {
    return static_cast<CompiledCslm *>(self)->score(count, states, options, ends, scores, new_states);
  };
  scorer_.error = [](void *self) { return static_cast<CompiledCslm *>(self)->error_.c_str(); };
}

const CompiledCslm::Terms &CompiledCslm::terms(const pysmt_options *options, int32_t number) {
  if (number < 0) throw std::out_of_range("a negative word number");
  if (options->vocabulary != vocabulary_) {  // another decoder's numbers
    by_number_.clear();
    vocabulary_ = options->vocabulary;
  }
  if (static_cast<size_t>(number) >= by_number_.size())
    by_number_.resize(static_cast<size_t>(number) + 1, Terms{-1, 0.0});
  Terms &known = by_number_[static_cast<size_t>(number)];
  if (known.id < 0) {
    size_t length = 0;
    const char *bytes = options->word(options->vocabulary, number, &length);
    auto found = by_word_.find(std::string(bytes, length));
    known = found == by_word_.end() ? unknown_ : found->second;
  }
  return known;
}

// CslmFeature.start: each option's input ids and back-off term (summed word by word, as phrase() sums),
// the cache emptied when too big (ContextCache.new_sentence), the start state (width x <s>).
int CompiledCslm::start(const pysmt_options *options, int64_t *initial) {
  try {
    option_ids_.clear();
    option_offsets_.assign(1, 0);
    option_backoff_.clear();
    int64_t words = 0, known = 0;
    for (int32_t k = 0; k < options->count; ++k) {
      double backoff = 0.0;
      for (int64_t w = options->offsets[k]; w < options->offsets[k + 1]; ++w) {
        const Terms &t = terms(options, options->words[w]);
        option_ids_.push_back(t.id);
        backoff += t.backoff;
        ++words;
        known += t.id != unknown_.id;
      }
      option_offsets_.push_back(static_cast<int64_t>(option_ids_.size()));
      option_backoff_.push_back(backoff);
    }
    if (coverage_words_ == 0 && words >= 10) {
      coverage_words_ = words;
      coverage_known_ = known;
    }
    if (table_.size() > cache_size_) table_.clear();
    std::vector<int32_t> begin(static_cast<size_t>(table_.width()), begin_id_);
    *initial = table_.intern(begin.data());
    return 0;
  } catch (const std::exception &err) {
    error_ = err.what();
    return -1;
  }
}

// CslmFeature.score_batch (self-normalized): the requests' n-grams, new contexts' hidden layers, the
// logits summed per request in n-gram order, plus the option's back-off term.
int CompiledCslm::score(size_t count, const int64_t *states, const int32_t *options, const uint8_t *ends,
                        double *scores, int64_t *new_states) {
  try {
    ngrams_batch_.clear();
    for (size_t r = 0; r < count; ++r) {
      int32_t option = options[r];
      if (option < 0 || static_cast<size_t>(option) + 1 >= option_offsets_.size())
        throw std::out_of_range("no such option");
      const int32_t *words = option_ids_.data() + option_offsets_[static_cast<size_t>(option)];
      int64_t length = option_offsets_[static_cast<size_t>(option) + 1] - option_offsets_[static_cast<size_t>(option)];
      new_states[r] = pysmt::extend(table_, states[r], words, length, ends[r] != 0, end_id_, static_cast<int64_t>(r),
                                    ngrams_batch_, sequence_);
    }
    const std::vector<int64_t> &fresh = ngrams_batch_.fresh;
    fresh_contexts_.clear();
    for (int64_t id : fresh) {
      const int32_t *context = table_.context(id);
      fresh_contexts_.insert(fresh_contexts_.end(), context, context + table_.width());
    }
    hidden_.compute(fresh.data(), fresh_contexts_.data(), fresh.size());
    hidden_.sums(ngrams_batch_.contexts.data(), ngrams_batch_.words.data(), ngrams_batch_.owners.data(),
                 ngrams_batch_.contexts.size(), nullptr, scores, count);
    for (size_t r = 0; r < count; ++r) scores[r] += option_backoff_[static_cast<size_t>(options[r])];
    requests_ += static_cast<int64_t>(count);
    ngrams_ += static_cast<int64_t>(ngrams_batch_.contexts.size());
    computed_ += static_cast<int64_t>(fresh.size());
    return 0;
  } catch (const std::exception &err) {
    error_ = err.what();
    return -1;
  }
}

}  // namespace pysmt_cslm
