// A utility for n-gram features written as plugins (the CSLM is one), offered by pysmt.plugin as
// ContextTable: the bindings of include/pysmt/context_table.hpp (the table itself, which a plugin's
// compiled scorer includes too). The states of such a feature are its contexts, the last `width`
// target word ids, numbered in order of arrival; the per-request work of such a feature -- its
// n-grams' contexts and the new states -- is hashing short word sequences, which costs microseconds
// per request in Python and is done here. docs/writing-a-feature.md shows how to use it.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <cstdint>
#include <stdexcept>
#include <type_traits>
#include <vector>

#include "pysmt/context_table.hpp"

namespace py = pybind11;
using namespace pybind11::literals;

namespace {

template <typename T>
using Array = py::array_t<T, py::array::c_style | py::array::forcecast>;

using pysmt::ContextTable;

// Request r appends words[r, :lengths[r]] to state states[r] (and ends the sentence after them when
// ends[r]): its n-grams in order, as (context id, word, r), its new state, and the contexts used first.
py::tuple extend(ContextTable &t, Array<int64_t> states, Array<int32_t> words, Array<int64_t> lengths, Array<bool> ends,
                 int32_t end_word) {
  py::ssize_t k = states.size(), w = words.ndim() == 2 ? words.shape(1) : -1;
  if (w < 0 || words.shape(0) != k || lengths.size() != k || ends.size() != k)
    throw std::invalid_argument("extend: states, words (k x width), lengths and ends disagree");
  pysmt::Ngrams ngrams;
  std::vector<int32_t> sequence;
  Array<int64_t> next(k);
  for (py::ssize_t r = 0; r < k; ++r) {
    int64_t n = lengths.data()[r];
    if (n < 0 || n > w) throw std::invalid_argument("extend: a length is out of range");
    next.mutable_data()[r] =
        pysmt::extend(t, states.data()[r], words.data(r, 0), n, ends.data()[r], end_word, r, ngrams, sequence);
  }
  auto array = [](const auto &values) {
    using T = typename std::decay_t<decltype(values)>::value_type;
    return Array<T>(static_cast<py::ssize_t>(values.size()), values.data());
  };
  return py::make_tuple(array(ngrams.contexts), array(ngrams.words), array(ngrams.owners), next, array(ngrams.fresh));
}

}  // namespace

PYBIND11_MODULE(_contexts, m) {
  m.doc() = "Numbered n-gram contexts: the states of an n-gram feature written as a plugin (pysmt.plugin.ContextTable)";

  py::class_<ContextTable>(m, "ContextTable",
                           "Every distinct context of `width` word ids, numbered in order of arrival")
      .def(py::init<int>(), "width"_a)
      .def_property_readonly("width", &ContextTable::width)
      .def("__len__", &ContextTable::size)
      .def("clear", &ContextTable::clear, "Forget every context")
      .def(
          "intern",
          [](ContextTable &t, Array<int32_t> contexts) {
            if (contexts.ndim() != 2 || contexts.shape(1) != t.width())
              throw std::invalid_argument("contexts must be (n, width)");
            Array<int64_t> ids(contexts.shape(0));
            for (py::ssize_t k = 0; k < contexts.shape(0); ++k) ids.mutable_data()[k] = t.intern(contexts.data(k, 0));
            return ids;
          },
          "contexts"_a, "The ids of contexts (n x width word ids), numbering new ones")
      .def(
          "contexts",
          [](const ContextTable &t, Array<int64_t> ids) {
            Array<int32_t> out({ids.size(), static_cast<py::ssize_t>(t.width())});
            for (py::ssize_t k = 0; k < ids.size(); ++k)
              std::copy(t.context(ids.data()[k]), t.context(ids.data()[k]) + t.width(), out.mutable_data(k, 0));
            return out;
          },
          "ids"_a, "The word ids of contexts (n x width)")
      .def("extend", &extend, "states"_a, "words"_a, "lengths"_a, "ends"_a, "end_word"_a,
           "(context ids, words, request of each n-gram) of the requests' n-grams, their new states, and the "
           "contexts used for the first time");
}
