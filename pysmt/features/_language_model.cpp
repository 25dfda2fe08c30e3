// The compiled twin of the KenLM feature (see _language_model.hpp).
#include "pysmt/features/_language_model.hpp"

#include <algorithm>

#include "util/murmur_hash.hh"

namespace pysmt {

void LanguageModelEstimates::score(const PairView &pair, double *, double *estimates) {
  const LanguageModel &model = ids_.model();
  lm::ngram::State state = model.null_context(), out;
  float total = 0;
  for (int k = 0; k < pair.length; ++k) {
    total += model.base(state, ids_(pair.target[k], *pair.vocabulary), out);
    state = out;
  }
  estimates[0] = static_cast<double>(total) * kLog10ToLn;
}

void KenLMTwin::prepare(const SentenceOptions &options) {
  size_t count = options.size();
  ids_.resize(options.target_ids.size());
  for (size_t w = 0; w < ids_.size(); ++w) ids_[w] = lm_ids_(options.target_ids[w], *options.vocabulary);
  offsets_.assign(options.target_offsets.begin(), options.target_offsets.end());
  // Number the distinct LM-id sequences: the first option with one represents it.
  phrase_of_option_.assign(count, -1);
  FlatMap<std::vector<int32_t>> by_hash(2 * count);
  phrases_ = 0;
  for (size_t k = 0; k < count; ++k) {
    const uint32_t *words = ids_.data() + offsets_[k];
    size_t length = static_cast<size_t>(offsets_[k + 1] - offsets_[k]);
    std::vector<int32_t> &same_hash =
        *by_hash.insert(util::MurmurHashNative(words, length * sizeof(uint32_t), length)).first;
    for (int32_t other : same_hash)
      if (static_cast<size_t>(offsets_[other + 1] - offsets_[other]) == length &&
          std::equal(words, words + length, ids_.data() + offsets_[other])) {
        phrase_of_option_[k] = phrase_of_option_[other];
        break;
      }
    if (phrase_of_option_[k] < 0) {
      phrase_of_option_[k] = phrases_++;
      same_hash.push_back(static_cast<int32_t>(k));
    }
  }
}

void KenLMTwin::clear() {
  states_.clear();
  rows_.clear();
  row_parent_.clear();
  scored_.clear();
  row_of_hyp_.clear();
}

int32_t KenLMTwin::row_of(int parent) {
  const lm::ngram::State &state = states_[parent];
  if ((row_parent_.size() + 1) * static_cast<size_t>(phrases_) > kMaxCells) {  // too many states this sentence
    rows_.clear();
    row_parent_.clear();
    scored_.clear();
    std::fill(row_of_hyp_.begin(), row_of_hyp_.end(), kNoRowYet);
  }
  auto [row, fresh] = rows_.insert(lm::ngram::hash_value(state));
  if (fresh) {
    *row = static_cast<int32_t>(row_parent_.size());
    row_parent_.push_back(parent);
    if (cells_.size() < row_parent_.size()) cells_.emplace_back();
    cells_[static_cast<size_t>(*row)].assign(static_cast<size_t>(phrases_), -1);
    return *row;
  }
  return states_[row_parent_[*row]] == state ? *row : -1;
}

double KenLMTwin::extend(int parent, int option, int, int, bool complete, double *delta) {
  int32_t row = row_of_hyp_[static_cast<size_t>(parent)];
  if (row == kNoRowYet) {
    row = row_of(parent);
    row_of_hyp_[static_cast<size_t>(parent)] = row;
  }
  int32_t phrase = phrase_of_option_[option];
  int32_t *cell = row < 0 ? nullptr : &cells_[static_cast<size_t>(row)][static_cast<size_t>(phrase)];
  words_ += static_cast<uint64_t>(offsets_[option + 1] - offsets_[option]);
  if (cell && *cell >= 0) return finish(scored_[*cell], complete, delta);
  lm::ngram::State state = states_[parent], out;
  double total = 0.0;
  for (int64_t k = offsets_[option]; k < offsets_[option + 1]; ++k) {
    total += model_->base(state, ids_[k], out);
    state = out;
  }
  queries_ += static_cast<uint64_t>(offsets_[option + 1] - offsets_[option]);
  Scored scored{total, state};
  if (cell) {
    *cell = static_cast<int32_t>(scored_.size());
    scored_.push_back(scored);
  }
  return finish(scored, complete, delta);
}

double KenLMTwin::finish(const Scored &scored, bool complete, double *delta) {
  delta[0] = scored.total * kLog10ToLn;
  if (complete) {
    lm::ngram::State out;
    delta[0] += static_cast<double>(model_->base(scored.after, model_->end(), out)) * kLog10ToLn;
    ++queries_;
    ++words_;
  }
  pending_ = scored.after;
  return weigh(delta);
}

}  // namespace pysmt
