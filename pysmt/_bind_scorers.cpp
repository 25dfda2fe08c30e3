// The bindings of context-free features' compiled scores in isolation (features/_isolation.hpp, _penalties.hpp):
// what features/base.py's CompiledScores hand the option builder.

#include <stdexcept>

#include "pysmt/_bindings.hpp"
#include "pysmt/features/_isolation.hpp"
#include "pysmt/features/_language_model.hpp"
#include "pysmt/features/_penalties.hpp"

namespace pysmt::bindings {

using namespace pybind11::literals;

void bind_scorers(py::module_ &m) {
  py::class_<pysmt::IsolationScores, std::shared_ptr<pysmt::IsolationScores>>(
      m, "IsolationScores", "A context-free feature's scores in isolation, computed by the compiled option builder")
      .def_readonly("num_scores", &pysmt::IsolationScores::num_scores);
  py::class_<pysmt::WordPenaltyScores, pysmt::IsolationScores, std::shared_ptr<pysmt::WordPenaltyScores>>(
      m, "WordPenaltyScores", "Minus the number of target words")
      .def(py::init<>());
  py::class_<pysmt::PhrasePenaltyScores, pysmt::IsolationScores, std::shared_ptr<pysmt::PhrasePenaltyScores>>(
      m, "PhrasePenaltyScores", "1 per phrase pair")
      .def(py::init<>());
  py::class_<pysmt::UnknownWordScores, pysmt::IsolationScores, std::shared_ptr<pysmt::UnknownWordScores>>(
      m, "UnknownWordScores", "`value` for an unknown word passed through, 0 for a phrase pair")
      .def(py::init<double>(), "value"_a);
  py::class_<pysmt::WordScores, pysmt::IsolationScores, std::shared_ptr<pysmt::WordScores>>(
      m, "WordScores",
      "A score, or with estimate=True an estimate, that sums a value per target word (`fallback` for words not "
      "listed), in word order from 0: a plugin's per-word feature computed by the option builder")
      .def(py::init([](const py::sequence &words, std::vector<double> values, double fallback, bool estimate) {
             std::vector<std::string> listed = utf8_all(words);
             if (listed.size() != values.size()) throw std::invalid_argument("a value per word");
             return std::make_shared<pysmt::WordScores>(listed, values, fallback, estimate);
           }),
           py::kw_only(), "words"_a, "values"_a, "fallback"_a, "estimate"_a);
  py::class_<pysmt::LanguageModelEstimates, pysmt::IsolationScores, std::shared_ptr<pysmt::LanguageModelEstimates>>(
      m, "LanguageModelEstimates", "The KenLM feature's estimate of a phrase: its log probability without left context")
      .def(py::init<std::shared_ptr<pysmt::LanguageModel>>(), "model"_a);
}

}  // namespace pysmt::bindings
