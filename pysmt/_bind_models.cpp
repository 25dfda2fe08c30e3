// The bindings of KenLM: a model loaded once, shared by both search engines (models/language_model.py).

#include "pysmt/_bindings.hpp"
#include "pysmt/models/_kenlm.hpp"

namespace pysmt::bindings {

using namespace pybind11::literals;

void bind_models(py::module_ &m) {
  py::class_<pysmt::LanguageModel, std::shared_ptr<pysmt::LanguageModel>>(
      m, "LanguageModel", "A KenLM model (ARPA or binary), loaded once and shared by both search engines")
      .def(py::init<const std::string &>(), "path"_a)
      .def_property_readonly("order", &pysmt::LanguageModel::order)
      .def("estimate", &pysmt::LanguageModel::estimate, "words"_a,
           "log p of a phrase without left context (natural log; KenLM's float accumulation)")
      .def(
          "begin_state", [](const pysmt::LanguageModel &lm) { return py::bytes(pysmt::state_bytes(lm.begin())); },
          "The sentence-start state")
      .def(
          "extend",
          [](const pysmt::LanguageModel &lm, const py::bytes &state, const std::vector<std::string> &words) {
            auto [score, after] = lm.extend(pysmt::state_from_bytes(std::string(state)), words);
            return py::make_tuple(score, py::bytes(pysmt::state_bytes(after)));
          },
          "state"_a, "words"_a, "(log p of the words after the state (natural log), the state after them)")
      .def(
          "final",
          [](const pysmt::LanguageModel &lm, const py::bytes &state) {
            return lm.final(pysmt::state_from_bytes(std::string(state)));
          },
          "state"_a, "log p of </s> after the state (natural log)");
}

}  // namespace pysmt::bindings
