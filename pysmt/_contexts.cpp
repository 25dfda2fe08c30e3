// A utility for n-gram features written as plugins (the CSLM is one), offered by pysmt.plugin as
// ContextTable: the states of such a feature are its contexts, the last `width` target word ids,
// numbered in order of arrival. A state id is its context's number, so the feature keeps per-context
// results (a network's hidden layer) in arrays indexed by state. The per-request work of such a
// feature -- its n-grams' contexts and the new states -- is hashing short word sequences, which costs
// microseconds per request in Python and is done here. The table also says which contexts an n-gram
// uses for the first time (since the last clear), so the feature computes each context's results
// once, with no lookup of its own. docs/writing-a-feature.md shows how to use it.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <vector>

namespace py = pybind11;
using namespace pybind11::literals;

namespace {

template <typename T>
using Array = py::array_t<T, py::array::c_style | py::array::forcecast>;

class ContextTable {
 public:
  explicit ContextTable(int width) : width_(width) {
    if (width < 1) throw std::invalid_argument("a context holds at least one word");
  }
  int width() const { return width_; }
  int64_t size() const { return static_cast<int64_t>(words_.size() / width_); }
  void clear() {
    std::fill(slots_.begin(), slots_.end(), kEmpty);
    words_.clear();
    used_.clear();
  }
  int64_t intern(const int32_t *context) {
    // open addressing, linear probing, at most half full: a lookup touches one slot and one context
    if (2 * (size() + 1) > static_cast<int64_t>(slots_.size())) rehash(std::max<size_t>(1024, 2 * slots_.size()));
    size_t slot = find(context);
    if (slots_[slot] != kEmpty) return slots_[slot];
    int64_t id = size();
    slots_[slot] = id;
    words_.insert(words_.end(), context, context + width_);
    used_.push_back(false);
    return id;
  }
  // Whether this is the first n-gram to use context `id` (and remember that it is not any more).
  bool first_use(int64_t id) {
    bool first = !used_[static_cast<size_t>(id)];
    used_[static_cast<size_t>(id)] = true;
    return first;
  }
  const int32_t *context(int64_t id) const {
    if (id < 0 || id >= size()) throw std::out_of_range("no such context id");
    return &words_[static_cast<size_t>(id) * width_];
  }

 private:
  static constexpr int64_t kEmpty = -1;
  // Where a context's slot search starts (any mix of the words does: ids do not depend on it).
  size_t hash(const int32_t *context) const {
    uint64_t h = 0x9e3779b97f4a7c15ULL;
    for (int k = 0; k < width_; ++k) {
      h ^= static_cast<uint32_t>(context[k]);
      h *= 0xbf58476d1ce4e5b9ULL;
      h ^= h >> 31;
    }
    return static_cast<size_t>(h);
  }
  // The slot holding `context`, or the empty slot where it belongs.
  size_t find(const int32_t *context) const {
    size_t mask = slots_.size() - 1, slot = hash(context) & mask;
    while (slots_[slot] != kEmpty &&
           std::memcmp(&words_[static_cast<size_t>(slots_[slot]) * width_], context, width_ * sizeof(int32_t)))
      slot = (slot + 1) & mask;
    return slot;
  }
  void rehash(size_t count) {  // count: a power of two
    slots_.assign(count, kEmpty);
    for (int64_t id = 0; id < size(); ++id) slots_[find(&words_[static_cast<size_t>(id) * width_])] = id;
  }

  int width_;
  std::vector<int64_t> slots_;  // context ids; kEmpty where none
  std::vector<int32_t> words_;
  std::vector<bool> used_;
};

// Request r appends words[r, :lengths[r]] to state states[r] (and ends the sentence after them when
// ends[r]): its n-grams in order, as (context id, word, r), its new state, and the contexts used first.
py::tuple extend(ContextTable &t, Array<int64_t> states, Array<int32_t> words, Array<int64_t> lengths,
                 Array<bool> ends, int32_t end_word) {
  py::ssize_t k = states.size(), w = words.ndim() == 2 ? words.shape(1) : -1;
  if (w < 0 || words.shape(0) != k || lengths.size() != k || ends.size() != k)
    throw std::invalid_argument("extend: states, words (k x width), lengths and ends disagree");
  std::vector<int64_t> rows, owners, fresh;
  std::vector<int32_t> targets;
  Array<int64_t> next(k);
  std::vector<int32_t> sequence;
  const int c = t.width();
  for (py::ssize_t r = 0; r < k; ++r) {
    int64_t n = lengths.data()[r];
    if (n < 0 || n > w) throw std::invalid_argument("extend: a length is out of range");
    const int32_t *start = t.context(states.data()[r]);
    sequence.assign(start, start + c);
    sequence.insert(sequence.end(), words.data(r, 0), words.data(r, 0) + n);
    auto ngram = [&](int64_t context, int32_t word) {
      rows.push_back(context);
      targets.push_back(word);
      owners.push_back(r);
      if (t.first_use(context)) fresh.push_back(context);
    };
    for (int64_t j = 0; j < n; ++j) ngram(j == 0 ? states.data()[r] : t.intern(&sequence[j]), sequence[c + j]);
    int64_t after = t.intern(&sequence[n]);
    next.mutable_data()[r] = after;
    if (ends.data()[r]) ngram(after, end_word);
  }
  return py::make_tuple(Array<int64_t>(rows.size(), rows.data()), Array<int32_t>(targets.size(), targets.data()),
                        Array<int64_t>(owners.size(), owners.data()), next, Array<int64_t>(fresh.size(), fresh.data()));
}

}  // namespace

PYBIND11_MODULE(_contexts, m) {
  m.doc() = "Numbered n-gram contexts: the states of an n-gram feature written as a plugin (pysmt.plugin.ContextTable)";

  py::class_<ContextTable>(m, "ContextTable", "Every distinct context of `width` word ids, numbered in order of arrival")
      .def(py::init<int>(), "width"_a)
      .def_property_readonly("width", &ContextTable::width)
      .def("__len__", &ContextTable::size)
      .def("clear", &ContextTable::clear, "Forget every context")
      .def("intern", [](ContextTable &t, Array<int32_t> contexts) {
        if (contexts.ndim() != 2 || contexts.shape(1) != t.width()) throw std::invalid_argument("contexts must be (n, width)");
        Array<int64_t> ids(contexts.shape(0));
        for (py::ssize_t k = 0; k < contexts.shape(0); ++k) ids.mutable_data()[k] = t.intern(contexts.data(k, 0));
        return ids;
      }, "contexts"_a, "The ids of contexts (n x width word ids), numbering new ones")
      .def("contexts", [](const ContextTable &t, Array<int64_t> ids) {
        Array<int32_t> out({ids.size(), static_cast<py::ssize_t>(t.width())});
        for (py::ssize_t k = 0; k < ids.size(); ++k)
          std::copy(t.context(ids.data()[k]), t.context(ids.data()[k]) + t.width(), out.mutable_data(k, 0));
        return out;
      }, "ids"_a, "The word ids of contexts (n x width)")
      .def("extend", &extend, "states"_a, "words"_a, "lengths"_a, "ends"_a, "end_word"_a,
           "(context ids, words, request of each n-gram) of the requests' n-grams, their new states, and the "
           "contexts used for the first time");
}
