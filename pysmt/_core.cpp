// pysmt's compiled core as Python sees it: the module, made of each concern's bindings (pysmt/_bind_*.cpp,
// declared in pysmt/_bindings.hpp). Each concern's algorithm lives beside the Python it serves
// (models/_kenlm, features/_*, search/_*) and knows no Python; its bindings turn numpy arrays into the plain
// views it takes, and declare every name, argument, enum and constant once for Python (the typed stub
// pysmt/_core.pyi is generated from this module, and a test checks that it matches). The module imports
// nothing from pysmt, so every layer may use it.
#include <pybind11/pybind11.h>

#include "pysmt/_bindings.hpp"

PYBIND11_MODULE(_core, m) {
  m.doc() = "pysmt's compiled core: tables, KenLM queries, option building, the built-in features' twins, the search";
  using namespace pysmt::bindings;
  // in this order: a class is bound before a signature names it
  bind_tables(m);
  bind_models(m);
  bind_twins(m);
  bind_scorers(m);
  bind_deferred(m);
  bind_built(m);
  bind_options(m);
  bind_search(m);
}
