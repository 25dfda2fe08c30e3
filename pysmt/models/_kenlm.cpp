// KenLM through its C++ API (see _kenlm.hpp).
#include "pysmt/models/_kenlm.hpp"

#include <cstring>
#include <stdexcept>

namespace pysmt {

LanguageModel::LanguageModel(const std::string &path) {
  lm::ngram::Config config;
  model_.reset(lm::ngram::LoadVirtual(path.c_str(), config));
  if (model_->StateSize() != sizeof(lm::ngram::State))
    throw std::runtime_error(path + ": unsupported KenLM model type");
  end_ = model_->BaseVocabulary().EndSentence();
}

lm::ngram::State LanguageModel::begin() const {
  lm::ngram::State state;
  std::memset(&state, 0, sizeof(state));
  model_->BeginSentenceWrite(&state);
  return state;
}

double LanguageModel::estimate(const std::vector<std::string> &words) const {
  lm::ngram::State state, out;
  model_->NullContextWrite(&state);
  float total = 0;
  for (const auto &word : words) {
    total += model_->BaseScore(&state, index(word), &out);
    state = out;
  }
  return static_cast<double>(total) * kLog10ToLn;
}

std::pair<double, lm::ngram::State> LanguageModel::extend(const lm::ngram::State &in,
                                                          const std::vector<std::string> &words) const {
  lm::ngram::State state = in, out;
  std::memset(&out, 0, sizeof(out));
  double total = 0.0;
  for (const auto &word : words) {
    total += base(state, index(word), out);
    state = out;
  }
  return {total * kLog10ToLn, state};
}

double LanguageModel::final(const lm::ngram::State &state) const {
  lm::ngram::State out;
  return static_cast<double>(base(state, end_, out)) * kLog10ToLn;
}

std::string state_bytes(const lm::ngram::State &state) {
  std::string out(1 + state.length * (sizeof(lm::WordIndex) + sizeof(float)), '\0');
  out[0] = static_cast<char>(state.length);
  std::memcpy(&out[1], state.words, state.length * sizeof(lm::WordIndex));
  std::memcpy(&out[1 + state.length * sizeof(lm::WordIndex)], state.backoff, state.length * sizeof(float));
  return out;
}

lm::ngram::State state_from_bytes(const std::string &in) {
  lm::ngram::State state;
  std::memset(&state, 0, sizeof(state));
  state.length = static_cast<unsigned char>(in.at(0));
  if (state.length > KENLM_MAX_ORDER - 1 || in.size() != 1 + state.length * (sizeof(lm::WordIndex) + sizeof(float)))
    throw std::invalid_argument("not a KenLM state of this build");
  std::memcpy(state.words, &in[1], state.length * sizeof(lm::WordIndex));
  std::memcpy(state.backoff, &in[1 + state.length * sizeof(lm::WordIndex)], state.length * sizeof(float));
  return state;
}

}  // namespace pysmt
