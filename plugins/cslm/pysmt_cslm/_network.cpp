// The CSLM's forward pass for decoding (see scoring.py): compiled because the decoder asks ~500
// times a sentence for a handful of contexts each, where numpy's per-call overhead was most of the
// feature's time.
//
// Every number is computed one context (or one n-gram) at a time by the same loop, whatever else
// is in the call, so scores do not depend on batching, buffer size, cache or request order; the
// build turns off floating-point contraction (-ffp-contract=off) so that the scalar and vector
// clones of a loop round alike. Dot products use 16 running partial sums combined in a fixed
// order, which the compiler can vectorize without reassociating anything.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <vector>

namespace py = pybind11;
template <typename T>
using Array = py::array_t<T, py::array::c_style | py::array::forcecast>;

#if defined(__GNUC__) && defined(__x86_64__) && !defined(__clang__)
#define PYSMT_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define PYSMT_CLONES
#endif

namespace {

constexpr int kLanes = 16;

PYSMT_CLONES float dot(const float *__restrict a, const float *__restrict b, int n) {
  float part[kLanes] = {};
  int i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (int l = 0; l < kLanes; ++l) part[l] += a[i + l] * b[i + l];
  for (int l = 0; i < n; ++i, ++l) part[l] += a[i] * b[i];
  float sum = 0.f;
  for (int l = 0; l < kLanes; ++l) sum += part[l];
  return sum;
}

// h1 = relu(sum of the context's first-layer rows); out = relu(b2 + sum_i h1[i] * w2t[i]).
PYSMT_CLONES void forward(const float *__restrict first, int64_t vocab, int width, int h1_size,
                          const float *__restrict w2t, const float *__restrict b2, int h2_size,
                          const int32_t *context, float *__restrict h1, float *__restrict out) {
  const float *row = first + static_cast<int64_t>(context[0]) * h1_size;
  for (int i = 0; i < h1_size; ++i) h1[i] = row[i];
  for (int p = 1; p < width; ++p) {
    row = first + (p * vocab + context[p]) * h1_size;
    for (int i = 0; i < h1_size; ++i) h1[i] += row[i];
  }
  for (int j = 0; j < h2_size; ++j) out[j] = b2[j];
  for (int i = 0; i < h1_size; ++i) {
    float a = h1[i];
    if (!(a > 0.f)) continue;  // the rectifier's zeros add nothing
    const float *w = w2t + static_cast<int64_t>(i) * h2_size;
    for (int j = 0; j < h2_size; ++j) out[j] += a * w[j];
  }
  for (int j = 0; j < h2_size; ++j) out[j] = out[j] > 0.f ? out[j] : 0.f;
}

// The network's weights, as numpy arrays it keeps alive: the first layer precomputed per (position,
// word) with b1 in position 0's rows, (width * vocab, h1); w2t (h1, h2); b2 (h2); w3 (outputs, h2); b3.
class Network {
 public:
  Network(Array<float> first, int width, Array<float> w2t, Array<float> b2, Array<float> w3, Array<float> b3)
      : first_(first), w2t_(w2t), b2_(b2), w3_(w3), b3_(b3), width_(width) {
    if (width < 1 || first.ndim() != 2 || first.shape(0) % width) throw std::invalid_argument("first: (width * vocab, h1)");
    vocab_ = first.shape(0) / width;
    h1_ = static_cast<int>(first.shape(1));
    if (w2t.ndim() != 2 || w2t.shape(0) != h1_) throw std::invalid_argument("w2t: (h1, h2)");
    h2_ = static_cast<int>(w2t.shape(1));
    if (b2.size() != h2_ || w3.ndim() != 2 || w3.shape(1) != h2_ || b3.size() != w3.shape(0))
      throw std::invalid_argument("b2 (h2), w3 (outputs, h2) and b3 (outputs) disagree");
  }
  int width() const { return width_; }
  int hidden_size() const { return h2_; }
  int64_t outputs() const { return w3_.shape(0); }

  void forward_into(const int32_t *context, std::vector<float> &h1, float *out) const {
    for (int p = 0; p < width_; ++p)
      if (context[p] < 0 || context[p] >= vocab_) throw std::out_of_range("a context word id is out of range");
    h1.resize(h1_);
    forward(first_.data(), vocab_, width_, h1_, w2t_.data(), b2_.data(), h2_, context, h1.data(), out);
  }
  double logit(const float *hidden, int64_t word) const {
    if (word < 0 || word >= outputs()) throw std::out_of_range("a word id is out of range");
    return static_cast<double>(dot(hidden, w3_.data(word, 0), h2_) + b3_.data()[word]);
  }

 private:
  Array<float> first_, w2t_, b2_, w3_, b3_;
  int width_, h1_ = 0, h2_ = 0;
  int64_t vocab_ = 0;
};

// The hidden layers of numbered contexts (a ContextTable's numbers), for the decoder feature.
class HiddenStore {
 public:
  explicit HiddenStore(std::shared_ptr<Network> net) : net_(std::move(net)) {}
  void compute(Array<int64_t> ids, Array<int32_t> contexts) {
    if (contexts.ndim() != 2 || contexts.shape(0) != ids.size() || contexts.shape(1) != net_->width())
      throw std::invalid_argument("compute: ids (n) and contexts (n, width) disagree");
    const int h = net_->hidden_size();
    for (py::ssize_t k = 0; k < ids.size(); ++k) {
      int64_t id = ids.data()[k];
      if (id < 0) throw std::out_of_range("a context id is negative");
      if (static_cast<size_t>((id + 1) * h) > values_.size())
        values_.resize(std::max<size_t>((id + 1) * h, 2 * values_.size()));
      net_->forward_into(contexts.data(k, 0), h1_, &values_[id * h]);
    }
  }
  Array<float> rows(Array<int64_t> ids) const {
    const int h = net_->hidden_size();
    Array<float> out({ids.size(), static_cast<py::ssize_t>(h)});
    for (py::ssize_t k = 0; k < ids.size(); ++k) {
      const float *row = at(ids.data()[k]);
      std::copy(row, row + h, out.mutable_data(k, 0));
    }
    return out;
  }
  // Per request, the sum (in n-gram order) of its n-grams' logits minus `minus` (per n-gram; empty: 0).
  Array<double> sums(Array<int64_t> rows, Array<int32_t> words, Array<int64_t> owners, int64_t requests,
                     Array<double> minus) const {
    py::ssize_t n = rows.size();
    if (words.size() != n || owners.size() != n || (minus.size() && minus.size() != n))
      throw std::invalid_argument("sums: rows, words, owners and minus disagree");
    Array<double> total(requests);
    std::fill(total.mutable_data(), total.mutable_data() + requests, 0.0);
    for (py::ssize_t k = 0; k < n; ++k) {
      int64_t owner = owners.data()[k];
      if (owner < 0 || owner >= requests) throw std::out_of_range("an n-gram's request is out of range");
      double score = net_->logit(at(rows.data()[k]), words.data()[k]);
      if (minus.size()) score -= minus.data()[k];
      total.mutable_data()[owner] += score;
    }
    return total;
  }

 private:
  const float *at(int64_t id) const {
    const int h = net_->hidden_size();
    if (id < 0 || static_cast<size_t>((id + 1) * h) > values_.size()) throw std::out_of_range("no hidden layer for a context id");
    return &values_[id * h];
  }
  std::shared_ptr<Network> net_;
  std::vector<float> values_;
  std::vector<float> h1_;
};

}  // namespace

PYBIND11_MODULE(_network, m) {
  m.doc() = "The CSLM's compiled forward pass (see pysmt_cslm/scoring.py)";
  py::class_<Network, std::shared_ptr<Network>>(m, "Network", "The CSLM's weights, as the decoder's forward pass uses them")
      .def(py::init<Array<float>, int, Array<float>, Array<float>, Array<float>, Array<float>>(), py::arg("first"),
           py::arg("width"), py::arg("w2t"), py::arg("b2"), py::arg("w3"), py::arg("b3"))
      .def("hidden", [](const Network &net, Array<int32_t> contexts) {
        if (contexts.ndim() != 2 || contexts.shape(1) != net.width()) throw std::invalid_argument("contexts must be (n, width)");
        Array<float> out({contexts.shape(0), static_cast<py::ssize_t>(net.hidden_size())});
        std::vector<float> h1;
        for (py::ssize_t k = 0; k < contexts.shape(0); ++k) net.forward_into(contexts.data(k, 0), h1, out.mutable_data(k, 0));
        return out;
      }, py::arg("contexts"), "h2 (float32, n x hidden) of contexts (n x width word ids)")
      .def("logits", [](const Network &net, Array<float> hidden, Array<int64_t> words) {
        if (hidden.ndim() != 2 || hidden.shape(1) != net.hidden_size() || hidden.shape(0) != words.size())
          throw std::invalid_argument("logits: hidden (n x hidden) and words (n) disagree");
        Array<double> out(words.size());
        for (py::ssize_t k = 0; k < words.size(); ++k) out.mutable_data()[k] = net.logit(hidden.data(k, 0), words.data()[k]);
        return out;
      }, py::arg("hidden"), py::arg("words"), "W3[w] . h2 + b3[w] (float64) for each row of hidden and its word");
  py::class_<HiddenStore>(m, "HiddenStore", "The hidden layers of numbered contexts (a ContextTable's numbers)")
      .def(py::init<std::shared_ptr<Network>>(), py::arg("network"))
      .def("compute", &HiddenStore::compute, py::arg("ids"), py::arg("contexts"), "Compute and keep the hidden layers of contexts (n x width) as ids")
      .def("rows", &HiddenStore::rows, py::arg("ids"), "The kept hidden layers of context ids (a copy)")
      .def("sums", &HiddenStore::sums, py::arg("rows"), py::arg("words"), py::arg("owners"), py::arg("requests"),
           py::arg("minus"), "Per request, its n-grams' logits minus `minus`, summed in order");
}
