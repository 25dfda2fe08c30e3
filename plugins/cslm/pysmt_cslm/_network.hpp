// The CSLM's forward pass for decoding (see scoring.py), compiled: the decoder asks ~500 times a
// sentence for a handful of contexts each, where numpy's per-call overhead was most of the feature's
// time. _network.cpp computes, _scorer.cpp is the compiled scorer the search calls, _bindings.cpp
// makes the module pysmt_cslm._network.
//
// Every number is computed one context (or one n-gram) at a time by the same loops, whatever else
// is in the call, so scores do not depend on batching, buffer size, cache or request order. Products
// are explicit fused multiply-adds and the build turns off any other contraction (-ffp-contract=off),
// so that the scalar and vector clones of a loop round alike. Dot products use 16 running partial sums
// combined in a fixed order, which the compiler can vectorize without reassociating anything.
#pragma once

#include <pybind11/numpy.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace pysmt_cslm {

// The versions of the hidden layers' inner loops this processor runs, fastest first ("avx512", "avx2",
// "portable").
std::vector<std::string> kernel_versions();

template <typename T>
using Array = pybind11::array_t<T, pybind11::array::c_style | pybind11::array::forcecast>;

// The network's weights, as numpy arrays it keeps alive: the first layer precomputed per (position,
// word) with b1 in position 0's rows, (width * vocab, h1); w2t (h1, h2); b2 (h2); w3 (outputs, h2); b3.
class Network {
 public:
  Network(Array<float> first, int width, Array<float> w2t, Array<float> b2, Array<float> w3, Array<float> b3);
  int width() const { return width_; }
  int hidden_size() const { return h2_; }
  int64_t outputs() const { return outputs_; }
  int64_t vocabulary() const { return vocab_; }
  // h2 of contexts[k * width ...] into out[k * hidden_size ...], k < count, each context alone, by the
  // inner loops of `version` (kernel_versions(); empty: the fastest), which all give the same numbers.
  void forward(const int32_t *contexts, size_t count, float *out, const std::string &version = "") const;
  // W3[word] . hidden + b3[word], as a double.
  double logit(const float *hidden, int64_t word) const;
  const float *output_row(int64_t word) const { return w3_.data() + word * h2_; }

 private:
  Array<float> first_, w2t_, b2_, w3_, b3_;
  int width_, h1_ = 0, h2_ = 0;
  int64_t vocab_ = 0, outputs_ = 0;
};

// The hidden layers of numbered contexts (a ContextTable's numbers), for the decoder feature.
class HiddenStore {
 public:
  explicit HiddenStore(std::shared_ptr<Network> net) : net_(std::move(net)) {}
  // Compute and keep the hidden layers of contexts (count x width word ids) as ids.
  void compute(const int64_t *ids, const int32_t *contexts, size_t count);
  // The kept hidden layer of a context id.
  const float *at(int64_t id) const;
  // Per request, the sum (in n-gram order) of its n-grams' logits minus `minus` (per n-gram; null: 0),
  // into total (requests, zeroed first).
  void sums(const int64_t *rows, const int32_t *words, const int64_t *owners, size_t count, const double *minus,
            double *total, size_t requests) const;
  const Network &network() const { return *net_; }

 private:
  std::shared_ptr<Network> net_;
  std::vector<float> values_;
};

}  // namespace pysmt_cslm
