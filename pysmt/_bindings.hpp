// The bindings of pysmt's compiled core, one file per concern (pysmt/_bind_*.cpp), and what they share:
// numpy arrays as the plain views the algorithms take, str as UTF-8, and the Python-side holders of
// the views (which keep the arrays they read alive). PYBIND11_MODULE in pysmt/_core.cpp calls each
// concern's bind_* in order: a class is bound before a signature names it, so the stub names it too.
// Every binding file includes this header, so all see the same type casters (STL containers,
// std::function): pybind11 requires that of the files of one module.
#pragma once

#include <pybind11/functional.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "pysmt/_phrases.hpp"
#include "pysmt/_strings.hpp"
#include "pysmt/models/_phrase_table.hpp"
#include "pysmt/models/_reordering_table.hpp"
#include "pysmt/search/_options.hpp"

namespace pysmt::bindings {

namespace py = pybind11;

template <typename T>
using Array = py::array_t<T, py::array::c_style | py::array::forcecast>;

template <typename T>
Array<T> to_array(const std::vector<T> &values) {
  return Array<T>(static_cast<py::ssize_t>(values.size()), values.data());
}

template <typename T>
Array<T> matrix(const std::vector<T> &values, size_t rows, size_t columns) {
  return Array<T>({static_cast<py::ssize_t>(rows), static_cast<py::ssize_t>(columns)}, values.data());
}

// A str as UTF-8 bytes: lone surrogates pass through (Python's "surrogatepass"), so any str can be
// looked up (and is simply not found) and an unknown word comes back as it went in.
std::string utf8(py::handle text);
std::vector<std::string> utf8_all(const py::sequence &texts);
py::str text_of(std::string_view bytes);

// A StringIndex as Python holds it: built here (a text table's strings), or a view of stored
// arrays (a binary table's, memory-mapped), which it keeps alive.
struct Strings {
  std::shared_ptr<StringIndex> index;
  std::vector<py::object> keep;  // the arrays a view reads

  py::str at(py::ssize_t k) const {
    py::ssize_t n = static_cast<py::ssize_t>(index->size());
    if (k < 0) k += n;
    if (k < 0 || k >= n) throw py::index_error("string index out of range");
    return text_of((*index)[static_cast<size_t>(k)]);
  }
};

// A phrase or reordering table's view with the arrays it reads kept alive.
template <typename View>
struct Table {
  std::shared_ptr<const View> view;
  std::vector<py::object> keep;
};
using PhraseTable = Table<PhraseTableView>;
using ReorderingTable = Table<ReorderingTableView>;

// One sentence's options as the compiled builder made them, with the builder (for the tables'
// alignments and words).
struct BuiltOptions {
  std::shared_ptr<SentenceOptions> options;
  std::shared_ptr<OptionBuilder> builder;

  void check(py::ssize_t k) const {
    if (k < 0 || static_cast<size_t>(k) >= options->size()) throw py::index_error("no such option");
  }
};

// Each concern's classes, enums and functions, bound into the module (in this order: see above).
void bind_tables(py::module_ &m);    // _bind_tables.cpp: StringIndex, PhraseTableView, ReorderingTableView
void bind_models(py::module_ &m);    // _bind_models.cpp: LanguageModel (KenLM)
void bind_twins(py::module_ &m);     // _bind_twins.cpp: the built-in stateful features' twins, their enums
void bind_scorers(py::module_ &m);   // _bind_scorers.cpp: context-free features' scores in isolation
void bind_deferred(py::module_ &m);  // _bind_deferred.cpp: a plugin's stateful feature, FeatureFault
void bind_built(py::module_ &m);     // _bind_built.cpp: BuiltOptions, the table constants
void bind_options(py::module_ &m);   // _bind_options.cpp: OptionBuilder, MarkupPolicy
void bind_search(py::module_ &m);    // _bind_search.cpp: the request types, Derivations, search()

}  // namespace pysmt::bindings
