// The bindings of the built-in stateful features' twins (features/_language_model, _distortion,
// _lexical_reordering) and the reordering models' enums, as features/ builds them.

#include <stdexcept>

#include "pysmt/_bindings.hpp"
#include "pysmt/features/_distortion.hpp"
#include "pysmt/features/_language_model.hpp"
#include "pysmt/features/_lexical_reordering.hpp"

namespace pysmt::bindings {

using namespace pybind11::literals;

void bind_twins(py::module_ &m) {
  py::enum_<pysmt::ReorderingModel>(m, "ReorderingModel", "The orientation classes of a lexicalized reordering model")
      .value("msd", pysmt::ReorderingModel::msd)
      .value("mslr", pysmt::ReorderingModel::mslr)
      .value("monotonicity", pysmt::ReorderingModel::monotonicity)
      .value("leftright", pysmt::ReorderingModel::leftright);
  py::enum_<pysmt::Orientation>(m, "Orientation",
                                "Moses' ReorderingType values: a table row's column of each orientation")
      .value("M", pysmt::Orientation::M)
      .value("S", pysmt::Orientation::S)
      .value("D", pysmt::Orientation::D)
      .value("DL", pysmt::Orientation::DL)
      .value("DR", pysmt::Orientation::DR)
      .value("NM", pysmt::Orientation::NM)
      .value("R", pysmt::Orientation::R)
      .value("L", pysmt::Orientation::L);
  m.def("orientation_count", &pysmt::orientation_count, "model"_a, "How many orientations (columns per direction)");
  m.def("first_orientation", &pysmt::first_orientation, "model"_a, "start"_a,
        "The orientation of a first phrase starting at `start` (the twin's; the Python feature's is the spec)");
  m.def("orientation", &pysmt::orientation, "model"_a, "prev_start"_a, "prev_end"_a, "start"_a, "end"_a,
        "The orientation of [start, end) after [prev_start, prev_end) (the twin's; the Python feature's is the spec)");

  py::class_<pysmt::CompiledFeature, std::shared_ptr<pysmt::CompiledFeature>>(
      m, "CompiledFeature", "A stateful feature as the compiled search sees it")
      .def_readonly("num_scores", &pysmt::CompiledFeature::num_scores)
      .def(
          "set_weights",
          [](pysmt::CompiledFeature &f, const std::vector<double> &weights) {
            if (static_cast<int>(weights.size()) != f.num_scores)
              throw std::invalid_argument("wrong number of weights");
            f.weights = weights;
          },
          "weights"_a);
  py::class_<pysmt::KenLMTwin, pysmt::CompiledFeature, std::shared_ptr<pysmt::KenLMTwin>>(
      m, "KenLMTwin", "The KenLM feature's compiled twin")
      .def(py::init<std::shared_ptr<pysmt::LanguageModel>>(), "model"_a)
      .def_property_readonly("queries", &pysmt::KenLMTwin::queries, "Words asked of KenLM so far")
      .def_property_readonly("words", &pysmt::KenLMTwin::words,
                             "Words scored so far: asked of KenLM, or taken from the sentence's (state, phrase) cache");
  py::class_<pysmt::DistortionTwin, pysmt::CompiledFeature, std::shared_ptr<pysmt::DistortionTwin>>(
      m, "DistortionTwin", "The distortion feature's compiled twin")
      .def(py::init<>());
  py::class_<pysmt::LexicalReorderingTwin, pysmt::CompiledFeature, std::shared_ptr<pysmt::LexicalReorderingTwin>>(
      m, "LexicalReorderingTwin", "The lexicalized reordering feature's compiled twin")
      .def(py::init([](int num_scores, pysmt::ReorderingModel model, bool backward, bool forward,
                       std::vector<int> backward_slots, std::vector<int> forward_slots, int forward_table_offset,
                       const ReorderingTable &table, bool source_only, std::vector<double> default_scores) {
             if (!default_scores.empty() && static_cast<int>(default_scores.size()) != table.view->num_scores())
               throw std::invalid_argument("default_scores needs a score per table column");
             return std::make_shared<pysmt::LexicalReorderingTwin>(
                 num_scores, model, backward, forward, std::move(backward_slots), std::move(forward_slots),
                 forward_table_offset, table.view, source_only, std::move(default_scores));
           }),
           "num_scores"_a, "model"_a, "backward"_a, "forward"_a, "backward_slots"_a, "forward_slots"_a,
           "forward_table_offset"_a, "table"_a, "source_only"_a, "default_scores"_a);
}

}  // namespace pysmt::bindings
