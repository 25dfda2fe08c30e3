// The CSLM's forward pass, compiled (see _network.hpp).
#include "pysmt_cslm/_network.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

#if defined(__GNUC__) && defined(__x86_64__)
#include <immintrin.h>
#endif

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

// The numbers (from `first`) of the positive units of h1, in order, into active; their count.
int positive_units_scalar(const float *h1, int size, int32_t *active, int first = 0) {
  int count = 0;
  for (int i = 0; i < size; ++i) {  // without a branch: a unit's number is written, kept if positive
    active[count] = first + i;
    count += h1[i] > 0.f;
  }
  return count;
}

#if defined(__GNUC__) && defined(__x86_64__)
// 16 units at a time: their signs as a mask, the numbers under it stored side by side
__attribute__((target("avx512f,popcnt"))) int positive_units_avx512(const float *h1, int size, int32_t *active) {
  int count = 0, i = 0;
  __m512i numbers = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  for (; i + 16 <= size; i += 16, numbers = _mm512_add_epi32(numbers, _mm512_set1_epi32(16))) {
    __mmask16 positive = _mm512_cmp_ps_mask(_mm512_loadu_ps(h1 + i), _mm512_set1_ps(0.f), _CMP_GT_OQ);
    _mm512_mask_compressstoreu_epi32(active + count, positive, numbers);
    count += __builtin_popcount(positive);
  }
  return count + positive_units_scalar(h1 + i, size - i, active + count, i);
}
#endif

// h1 = the sum of the context's first-layer rows (rows[0] + rows[1] + ... in that order, unit by unit,
// 16 units at a time).
PYSMT_CLONES void first_layer(const float *const *rows, int width, int h1_size, float *__restrict h1) {
  // 16 floats as one value (a vector register, or two or four in the narrower clones); unaligned
  typedef float Floats __attribute__((vector_size(kLanes * sizeof(float)), aligned(4), may_alias));
  int i = 0;
  for (; i + kLanes <= h1_size; i += kLanes) {
    Floats sum = *reinterpret_cast<const Floats *>(rows[0] + i);
    for (int p = 1; p < width; ++p) sum += *reinterpret_cast<const Floats *>(rows[p] + i);
    *reinterpret_cast<Floats *>(h1 + i) = sum;
  }
  for (; i < h1_size; ++i) {
    float sum = rows[0][i];
    for (int p = 1; p < width; ++p) sum += rows[p][i];
    h1[i] = sum;
  }
}

// out[j] = relu(b2[j] + sum over the active units i, in order, of h1[i] * w2t[i][j]), each product a
// fused multiply-add. The x86 versions keep a block of out in vector registers while the active rows
// of w2t stream past (no load and store of out per row); every version adds the same products in
// the same order, so all give the same numbers. (Two contexts at once, over the rows either uses,
// measured slower: 1,386 against 964 ns a context.)
PYSMT_CLONES void second_layer_scalar(const float *w2t, const float *b2, int h2_size, const float *h1,
                                      const int32_t *active, int count, float *out, int from = 0) {
  for (int j = from; j < h2_size; ++j) out[j] = b2[j];
  for (int k = 0; k < count; ++k) {
    const float a = h1[active[k]], *w = w2t + static_cast<int64_t>(active[k]) * h2_size;
    for (int j = from; j < h2_size; ++j) out[j] = __builtin_fmaf(a, w[j], out[j]);
  }
  for (int j = from; j < h2_size; ++j) out[j] = out[j] > 0.f ? out[j] : 0.f;
}

#if defined(__GNUC__) && defined(__x86_64__)
#define PYSMT_VECTOR_LAYER 1
// GCC 12 warns of the `undefined` vector inside its own _mm512_max_ps
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

// Columns [base, base + B * LANES) of the second layer, B vectors in registers (a macro: each instruction
// set's function must contain its own loops; VEC, LOAD, FMA, SPLAT, MAX and STORE are its intrinsics).
// max(x, +0) is +0 for either zero and for NaN, as `x > 0 ? x : 0`.
#define PYSMT_BLOCK(B, LANES, VEC, LOAD, FMA, SPLAT, MAX, STORE)                                                 \
  {                                                                                                              \
    VEC acc[B];                                                                                                  \
    _Pragma("GCC unroll 16") for (int q = 0; q < B; ++q) acc[q] = LOAD(b2 + base + q * LANES);                   \
    for (int k = 0; k < count; ++k) {                                                                            \
      const float *w = w2t + static_cast<int64_t>(active[k]) * h2_size + base;                                   \
      const VEC a = SPLAT(h1[active[k]]);                                                                        \
      _Pragma("GCC unroll 16") for (int q = 0; q < B; ++q) acc[q] = FMA(a, LOAD(w + q * LANES), acc[q]);         \
    }                                                                                                            \
    _Pragma("GCC unroll 16") for (int q = 0; q < B; ++q) STORE(out + base + q * LANES, MAX(acc[q], SPLAT(0.f))); \
  }

// The second layer in blocks of BLOCK vectors of LANES floats, then one vector at a time, then the rest
// as the scalar version.
#define PYSMT_SECOND_LAYER(NAME, TARGET, BLOCK, ...)                                                         \
  __attribute__((target(TARGET))) void NAME(const float *w2t, const float *b2, int h2_size, const float *h1, \
                                            const int32_t *active, int count, float *out) {                  \
    constexpr int lanes = sizeof(PYSMT_FIRST(__VA_ARGS__)) / sizeof(float);                                  \
    int base = 0;                                                                                            \
    for (; base + BLOCK * lanes <= h2_size; base += BLOCK * lanes) PYSMT_BLOCK(BLOCK, lanes, __VA_ARGS__)    \
    for (; base + lanes <= h2_size; base += lanes) PYSMT_BLOCK(1, lanes, __VA_ARGS__)                        \
    second_layer_scalar(w2t, b2, h2_size, h1, active, count, out, base);                                     \
  }
#define PYSMT_FIRST(first, ...) first

// 16 of the 32 registers; 12 of the 16
PYSMT_SECOND_LAYER(second_layer_avx512, "avx512f", 16, __m512, _mm512_loadu_ps, _mm512_fmadd_ps, _mm512_set1_ps,
                   _mm512_max_ps, _mm512_storeu_ps)
PYSMT_SECOND_LAYER(second_layer_avx2, "avx2,fma", 12, __m256, _mm256_loadu_ps, _mm256_fmadd_ps, _mm256_set1_ps,
                   _mm256_max_ps, _mm256_storeu_ps)
#undef PYSMT_FIRST
#undef PYSMT_SECOND_LAYER
#undef PYSMT_BLOCK
#endif

using PositiveUnits = int (*)(const float *, int, int32_t *);
using SecondLayer = void (*)(const float *, const float *, int, const float *, const int32_t *, int, float *);

// One version of the hidden layers' inner loops: all give the same numbers.
struct Kernel {
  std::string name;
  PositiveUnits positive_units;
  SecondLayer second_layer;
};

// The versions this processor runs, fastest first; "portable" last.
const std::vector<Kernel> &kernels() {
  static const std::vector<Kernel> found = [] {
    std::vector<Kernel> k;
#ifdef PYSMT_VECTOR_LAYER
    __builtin_cpu_init();
    PositiveUnits scalar_units = [](const float *h1, int size, int32_t *active) {
      return positive_units_scalar(h1, size, active);
    };
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("popcnt"))
      k.push_back({"avx512", positive_units_avx512, second_layer_avx512});
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
      k.push_back({"avx2", scalar_units, second_layer_avx2});
#endif
    k.push_back({"portable",
                 [](const float *h1, int size, int32_t *active) { return positive_units_scalar(h1, size, active); },
                 [](const float *w2t, const float *b2, int h2_size, const float *h1, const int32_t *active, int count,
                    float *out) { second_layer_scalar(w2t, b2, h2_size, h1, active, count, out); }});
    return k;
  }();
  return found;
}

const Kernel &kernel(const std::string &version) {
  if (version.empty()) return kernels().front();
  for (const Kernel &k : kernels())
    if (k.name == version) return k;
  throw std::invalid_argument("no kernel version '" + version + "' on this processor");
}

}  // namespace

Network::Network(Array<float> first, int width, Array<float> w2t, Array<float> b2, Array<float> w3, Array<float> b3)
    : first_(first), w2t_(w2t), b2_(b2), w3_(w3), b3_(b3), width_(width) {
  if (width < 1 || first.ndim() != 2 || first.shape(0) % width)
    throw std::invalid_argument("first: (width * vocab, h1)");
  vocab_ = first.shape(0) / width;
  h1_ = static_cast<int>(first.shape(1));
  if (w2t.ndim() != 2 || w2t.shape(0) != h1_) throw std::invalid_argument("w2t: (h1, h2)");
  h2_ = static_cast<int>(w2t.shape(1));
  if (b2.size() != h2_ || w3.ndim() != 2 || w3.shape(1) != h2_ || b3.size() != w3.shape(0))
    throw std::invalid_argument("b2 (h2), w3 (outputs, h2) and b3 (outputs) disagree");
  outputs_ = w3.shape(0);
}

std::vector<std::string> kernel_versions() {
  std::vector<std::string> names;
  for (const Kernel &k : kernels()) names.push_back(k.name);
  return names;
}

void Network::forward(const int32_t *contexts, size_t count, float *out, const std::string &version) const {
  const Kernel &use = kernel(version);
  for (size_t k = 0; k < count * static_cast<size_t>(width_); ++k)
    if (contexts[k] < 0 || contexts[k] >= vocab_) throw std::out_of_range("a context word id is out of range");
  const size_t width = static_cast<size_t>(width_), row_bytes = static_cast<size_t>(h1_) * sizeof(float);
  std::vector<float> h1(static_cast<size_t>(h1_));
  std::vector<int32_t> active(static_cast<size_t>(h1_));
  std::vector<const float *> rows(width);
  for (size_t c = 0; c < count; ++c) {
    for (size_t p = 0; p < width; ++p) rows[p] = first_.data() + (p * vocab_ + contexts[c * width + p]) * h1_;
    if (c + 1 < count) {  // the next context's first-layer rows (random rows of a large table) on their way
      for (size_t p = 0; p < width; ++p) {
        const char *row =
            reinterpret_cast<const char *>(first_.data() + (p * vocab_ + contexts[(c + 1) * width + p]) * h1_);
        for (size_t b = 0; b < row_bytes; b += 64) __builtin_prefetch(row + b);
      }
    }
    first_layer(rows.data(), width_, h1_, h1.data());
    int n = use.positive_units(h1.data(), h1_, active.data());  // the rectifier's zeros add nothing after
    use.second_layer(w2t_.data(), b2_.data(), h2_, h1.data(), active.data(), n, out + c * static_cast<size_t>(h2_));
  }
}

double Network::logit(const float *hidden, int64_t word) const {
  if (word < 0 || word >= outputs_) throw std::out_of_range("a word id is out of range");
  return static_cast<double>(dot(hidden, w3_.data(word, 0), h2_) + b3_.data()[word]);
}

void HiddenStore::compute(const int64_t *ids, const int32_t *contexts, size_t count) {
  const size_t h = static_cast<size_t>(net_->hidden_size()), width = static_cast<size_t>(net_->width());
  int64_t top = -1;
  for (size_t k = 0; k < count; ++k) {
    if (ids[k] < 0) throw std::out_of_range("a context id is negative");
    top = std::max(top, ids[k]);
  }
  size_t needed = static_cast<size_t>(top + 1) * h;
  if (needed > values_.size()) values_.resize(std::max(needed, 2 * values_.size()));
  // straight into place, a run of consecutive ids at a time (a batch's new contexts are mostly one run)
  for (size_t k = 0, end; k < count; k = end) {
    for (end = k + 1; end < count && ids[end] == ids[end - 1] + 1;) ++end;
    net_->forward(contexts + k * width, end - k, &values_[static_cast<size_t>(ids[k]) * h]);
  }
}

const float *HiddenStore::at(int64_t id) const {
  const size_t h = static_cast<size_t>(net_->hidden_size());
  if (id < 0 || (static_cast<size_t>(id) + 1) * h > values_.size())
    throw std::out_of_range("no hidden layer for a context id");
  return &values_[static_cast<size_t>(id) * h];
}

void HiddenStore::sums(const int64_t *rows, const int32_t *words, const int64_t *owners, size_t count,
                       const double *minus, double *total, size_t requests) const {
  std::fill(total, total + requests, 0.0);
  const size_t row_bytes = static_cast<size_t>(net_->hidden_size()) * sizeof(float);
  for (size_t k = 0; k < count; ++k) {
    if (k + 2 < count && words[k + 2] >= 0 && words[k + 2] < net_->outputs()) {
      // two n-grams ahead, the output row (random rows of a large matrix) on its way
      const char *row = reinterpret_cast<const char *>(net_->output_row(words[k + 2]));
      for (size_t b = 0; b < row_bytes; b += 64) __builtin_prefetch(row + b);
    }
    int64_t owner = owners[k];
    if (owner < 0 || static_cast<size_t>(owner) >= requests)
      throw std::out_of_range("an n-gram's request is out of range");
    double score = net_->logit(at(rows[k]), words[k]);
    if (minus) score -= minus[k];
    total[owner] += score;
  }
}

}  // namespace pysmt_cslm
