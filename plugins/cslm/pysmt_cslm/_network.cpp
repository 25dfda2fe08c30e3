// The CSLM's forward pass, compiled (see _network.hpp).
#include "pysmt_cslm/_network.hpp"

#include <algorithm>
#include <stdexcept>

// Products are fused multiply-adds, written as such (the single rounding of C's fmaf): the processor's
// FMA instructions in the AVX2 and AVX-512 clones (half the instructions of a multiply and an add), the
// C library's exact fmaf in the default one, so every clone gives the same numbers.
#if defined(__GNUC__) && defined(__x86_64__) && !defined(__clang__)
#define PYSMT_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define PYSMT_CLONES
#endif

namespace pysmt_cslm {

namespace {

constexpr int kLanes = 16;
// Contexts whose second layer is computed together, each row of w2t read once for all of them (a row
// serves every context of the group from the processor's cache; each context's sums are the same).
constexpr size_t kGroup = 8;

PYSMT_CLONES float dot(const float *__restrict a, const float *__restrict b, int n) {
  float part[kLanes] = {};
  int i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (int l = 0; l < kLanes; ++l) part[l] = __builtin_fmaf(a[i + l], b[i + l], part[l]);
  for (int l = 0; i < n; ++i, ++l) part[l] = __builtin_fmaf(a[i], b[i], part[l]);
  float sum = 0.f;
  for (int l = 0; l < kLanes; ++l) sum += part[l];
  return sum;
}

// For each of `count` (<= kGroup) contexts: h1 = relu(sum of the context's first-layer rows);
// out = relu(b2 + sum_i h1[i] * w2t[i]), the sum over i in order for each context.
PYSMT_CLONES void forward_group(const float *__restrict first, int64_t vocab, int width, int h1_size,
                                const float *__restrict w2t, const float *__restrict b2, int h2_size,
                                const int32_t *contexts, size_t count, float *__restrict h1, float *__restrict out) {
  for (size_t c = 0; c < count; ++c) {
    const int32_t *context = contexts + c * static_cast<size_t>(width);
    float *h = h1 + c * static_cast<size_t>(h1_size);
    const float *row = first + static_cast<int64_t>(context[0]) * h1_size;
    for (int i = 0; i < h1_size; ++i) h[i] = row[i];
    for (int p = 1; p < width; ++p) {
      row = first + (p * vocab + context[p]) * h1_size;
      for (int i = 0; i < h1_size; ++i) h[i] += row[i];
    }
    float *o = out + c * static_cast<size_t>(h2_size);
    for (int j = 0; j < h2_size; ++j) o[j] = b2[j];
  }
  for (int i = 0; i < h1_size; ++i) {
    const float *w = w2t + static_cast<int64_t>(i) * h2_size;
    for (size_t c = 0; c < count; ++c) {
      float a = h1[c * static_cast<size_t>(h1_size) + static_cast<size_t>(i)];
      if (!(a > 0.f)) continue;  // the rectifier's zeros add nothing
      float *o = out + c * static_cast<size_t>(h2_size);
      for (int j = 0; j < h2_size; ++j) o[j] = __builtin_fmaf(a, w[j], o[j]);
    }
  }
  for (size_t c = 0; c < count * static_cast<size_t>(h2_size); ++c) out[c] = out[c] > 0.f ? out[c] : 0.f;
}

}  // namespace

Network::Network(Array<float> first, int width, Array<float> w2t, Array<float> b2, Array<float> w3, Array<float> b3)
    : first_(first), w2t_(w2t), b2_(b2), w3_(w3), b3_(b3), width_(width) {
  if (width < 1 || first.ndim() != 2 || first.shape(0) % width) throw std::invalid_argument("first: (width * vocab, h1)");
  vocab_ = first.shape(0) / width;
  h1_ = static_cast<int>(first.shape(1));
  if (w2t.ndim() != 2 || w2t.shape(0) != h1_) throw std::invalid_argument("w2t: (h1, h2)");
  h2_ = static_cast<int>(w2t.shape(1));
  if (b2.size() != h2_ || w3.ndim() != 2 || w3.shape(1) != h2_ || b3.size() != w3.shape(0))
    throw std::invalid_argument("b2 (h2), w3 (outputs, h2) and b3 (outputs) disagree");
  outputs_ = w3.shape(0);
}

void Network::forward(const int32_t *contexts, size_t count, float *out) const {
  for (size_t k = 0; k < count * static_cast<size_t>(width_); ++k)
    if (contexts[k] < 0 || contexts[k] >= vocab_) throw std::out_of_range("a context word id is out of range");
  std::vector<float> h1(kGroup * static_cast<size_t>(h1_));
  for (size_t first = 0; first < count; first += kGroup)
    forward_group(first_.data(), vocab_, width_, h1_, w2t_.data(), b2_.data(), h2_,
                  contexts + first * static_cast<size_t>(width_), std::min(kGroup, count - first), h1.data(),
                  out + first * static_cast<size_t>(h2_));
}

double Network::logit(const float *hidden, int64_t word) const {
  if (word < 0 || word >= outputs_) throw std::out_of_range("a word id is out of range");
  return static_cast<double>(dot(hidden, w3_.data(word, 0), h2_) + b3_.data()[word]);
}

void HiddenStore::compute(const int64_t *ids, const int32_t *contexts, size_t count) {
  const size_t h = static_cast<size_t>(net_->hidden_size());
  std::vector<float> out(count * h);
  net_->forward(contexts, count, out.data());
  for (size_t k = 0; k < count; ++k) {
    if (ids[k] < 0) throw std::out_of_range("a context id is negative");
    size_t at = static_cast<size_t>(ids[k]) * h;
    if (at + h > values_.size()) values_.resize(std::max(at + h, 2 * values_.size()));
    std::copy(out.begin() + static_cast<std::ptrdiff_t>(k * h), out.begin() + static_cast<std::ptrdiff_t>((k + 1) * h),
              values_.begin() + static_cast<std::ptrdiff_t>(at));
  }
}

const float *HiddenStore::at(int64_t id) const {
  const size_t h = static_cast<size_t>(net_->hidden_size());
  if (id < 0 || (static_cast<size_t>(id) + 1) * h > values_.size()) throw std::out_of_range("no hidden layer for a context id");
  return &values_[static_cast<size_t>(id) * h];
}

void HiddenStore::sums(const int64_t *rows, const int32_t *words, const int64_t *owners, size_t count,
                       const double *minus, double *total, size_t requests) const {
  std::fill(total, total + requests, 0.0);
  for (size_t k = 0; k < count; ++k) {
    int64_t owner = owners[k];
    if (owner < 0 || static_cast<size_t>(owner) >= requests) throw std::out_of_range("an n-gram's request is out of range");
    double score = net_->logit(at(rows[k]), words[k]);
    if (minus) score -= minus[k];
    total[owner] += score;
  }
}

}  // namespace pysmt_cslm
