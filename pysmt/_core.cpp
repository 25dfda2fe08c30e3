// pysmt's compiled core as Python sees it: the bindings, and nothing else. Each concern's algorithm
// lives beside the Python it serves (models/_kenlm, features/_*, search/_*) and knows no Python;
// here numpy arrays become the plain views those take, and every name, argument and enum is
// declared once for Python (the typed stub pysmt/_core.pyi is generated from this module, and a
// test checks that it matches). The module imports nothing from pysmt, so every layer may use it.
#include <pybind11/functional.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "pysmt/features/_distortion.hpp"
#include "pysmt/features/_language_model.hpp"
#include "pysmt/features/_lexical_reordering.hpp"
#include "pysmt/models/_kenlm.hpp"
#include "pysmt/search/_deferred.hpp"
#include "pysmt/search/_search.hpp"

namespace py = pybind11;
using namespace pybind11::literals;

namespace {

template <typename T>
using Array = py::array_t<T, py::array::c_style | py::array::forcecast>;

template <typename T>
Array<T> to_array(const std::vector<T> &values) {
  return Array<T>(static_cast<py::ssize_t>(values.size()), values.data());
}

// One sentence's options as numpy arrays, kept alive while the search reads them.
struct OptionArrays {
  int length;
  Array<int32_t> start, end;
  Array<double> isolation;
  Array<int32_t> span_start, span_end;
  Array<int64_t> span_offsets;
  Array<int32_t> span_options;
  Array<double> future_table;

  pysmt::SentenceOptions view() const {
    py::ssize_t n = length, options = start.size(), spans = span_start.size();
    if (n < 0 || future_table.size() != (n + 1) * (n + 1))
      throw std::invalid_argument("future_table must have (length + 1) * (length + 1) entries");
    if (end.size() != options || isolation.size() != options)
      throw std::invalid_argument("start, end and isolation must have an entry per option");
    if (span_end.size() != spans || span_offsets.size() != spans + 1)
      throw std::invalid_argument("span_start, span_end and span_offsets (one more) disagree");
    if (spans > 0 && span_offsets.at(spans) != span_options.size())
      throw std::invalid_argument("span_offsets must end at the number of span_options");
    for (py::ssize_t s = 0; s < spans; ++s)
      if (span_start.at(s) < 0 || span_start.at(s) >= n) throw std::invalid_argument("a span starts outside the sentence");
    for (py::ssize_t k = 0; k < span_options.size(); ++k)
      if (span_options.at(k) < 0 || span_options.at(k) >= options) throw std::invalid_argument("no such option");
    pysmt::SentenceOptions view;
    view.length = length;
    view.num_options = static_cast<int>(options);
    view.start = start.data();
    view.end = end.data();
    view.isolation = isolation.data();
    view.num_spans = static_cast<int>(spans);
    view.span_start = span_start.data();
    view.span_end = span_end.data();
    view.span_offsets = span_offsets.data();
    view.span_options = span_options.data();
    view.future_table = future_table.data();
    return view;
  }
};

// What the n-best list needs, as numpy arrays.
struct NbestArrays {
  int size;
  int64_t budget;
  bool distinct;
  Array<double> option_scores;
  std::vector<int> stateful_columns;
  Array<int64_t> target_offsets;
  Array<int32_t> target_ids;

  pysmt::NbestRequest view(const OptionArrays &options) const {
    if (size < 1 || budget < size) throw std::invalid_argument("need 1 <= size <= budget");
    if (option_scores.ndim() != 2 || option_scores.shape(0) != options.start.size())
      throw std::invalid_argument("option_scores must have a row per option");
    if (distinct && target_offsets.size() != options.start.size() + 1)
      throw std::invalid_argument("a distinct n-best list needs every option's target word ids");
    pysmt::NbestRequest view;
    view.size = size;
    view.budget = static_cast<size_t>(budget);
    view.distinct = distinct;
    view.option_scores = option_scores.data();
    view.model_dims = static_cast<int>(option_scores.shape(1));
    view.stateful_columns = stateful_columns;
    view.target_offsets = target_offsets.data();
    view.target_ids = target_ids.data();
    return view;
  }
};

// The n-best derivations as numpy arrays (see pysmt::NbestList).
struct Derivations {
  Array<double> score;
  Array<int64_t> offsets;
  Array<int32_t> options;
  Array<double> scores;
};

// A Python feature's array interface as the deferred feature calls it: score_batch(states, options,
// ends) on its StatefulCalls (pysmt/search/plugin_results.py), which checks what the feature returns,
// so what arrives here has the right shapes, dtypes and values. The search runs without the GIL.
pysmt::DeferredFeature::Ask ask_python(py::object calls, int num_scores) {
  return [calls, num_scores](const std::vector<pysmt::DeferredFeature::Request> &requests, std::vector<double> &scores,
                             std::vector<int64_t> &states) {
    py::gil_scoped_acquire gil;
    py::ssize_t k = static_cast<py::ssize_t>(requests.size());
    Array<int64_t> state_ids(k);
    Array<int32_t> options(k);
    py::array_t<bool> ends(k);
    for (py::ssize_t i = 0; i < k; ++i) {
      state_ids.mutable_data()[i] = requests[i].state;
      options.mutable_data()[i] = requests[i].option;
      ends.mutable_data()[i] = requests[i].end;
    }
    py::tuple result = calls.attr("score_batch")(state_ids, options, ends);
    auto got_scores = result[0].cast<Array<double>>();
    auto got_states = result[1].cast<Array<int64_t>>();
    if (got_scores.size() != k * num_scores || got_states.size() != k)
      throw std::logic_error("StatefulCalls.score_batch returned arrays of the wrong shape");
    scores.assign(got_scores.data(), got_scores.data() + got_scores.size());
    states.assign(got_states.data(), got_states.data() + got_states.size());
  };
}

}  // namespace

PYBIND11_MODULE(_core, m) {
  m.doc() = "pysmt's compiled core: KenLM queries, the built-in stateful features' twins, and the search";

  // -- models: KenLM
  py::class_<pysmt::LanguageModel, std::shared_ptr<pysmt::LanguageModel>>(
      m, "LanguageModel", "A KenLM model (ARPA or binary), loaded once and shared by both search engines")
      .def(py::init<const std::string &>(), "path"_a)
      .def_property_readonly("order", &pysmt::LanguageModel::order)
      .def("ids", [](const pysmt::LanguageModel &lm, const std::vector<std::string> &words) {
        Array<uint32_t> out(static_cast<py::ssize_t>(words.size()));
        for (size_t k = 0; k < words.size(); ++k) out.mutable_data()[k] = lm.index(words[k]);
        return out;
      }, "words"_a, "The words' ids in the model's vocabulary")
      .def("estimate", &pysmt::LanguageModel::estimate, "words"_a,
           "log p of a phrase without left context (natural log; KenLM's float accumulation)")
      .def("begin_state", [](const pysmt::LanguageModel &lm) { return py::bytes(pysmt::state_bytes(lm.begin())); },
           "The sentence-start state")
      .def("extend", [](const pysmt::LanguageModel &lm, const py::bytes &state, const std::vector<std::string> &words) {
        auto [score, after] = lm.extend(pysmt::state_from_bytes(std::string(state)), words);
        return py::make_tuple(score, py::bytes(pysmt::state_bytes(after)));
      }, "state"_a, "words"_a, "(log p of the words after the state (natural log), the state after them)")
      .def("final", [](const pysmt::LanguageModel &lm, const py::bytes &state) {
        return lm.final(pysmt::state_from_bytes(std::string(state)));
      }, "state"_a, "log p of </s> after the state (natural log)");

  // -- features: the twins of the built-in stateful features
  py::enum_<pysmt::ReorderingModel>(m, "ReorderingModel", "The orientation classes of a lexicalized reordering model")
      .value("msd", pysmt::ReorderingModel::msd)
      .value("mslr", pysmt::ReorderingModel::mslr)
      .value("monotonicity", pysmt::ReorderingModel::monotonicity)
      .value("leftright", pysmt::ReorderingModel::leftright);
  py::enum_<pysmt::Orientation>(m, "Orientation", "Moses' ReorderingType values: a table row's column of each orientation")
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
      .def("set_weights", [](pysmt::CompiledFeature &f, const std::vector<double> &weights) {
        if (static_cast<int>(weights.size()) != f.num_scores) throw std::invalid_argument("wrong number of weights");
        f.weights = weights;
      }, "weights"_a);
  py::class_<pysmt::KenLMTwin, pysmt::CompiledFeature, std::shared_ptr<pysmt::KenLMTwin>>(
      m, "KenLMTwin", "The KenLM feature's compiled twin")
      .def(py::init<std::shared_ptr<pysmt::LanguageModel>>(), "model"_a)
      .def("set_options", [](pysmt::KenLMTwin &twin, Array<uint32_t> ids, Array<int64_t> offsets) {
        twin.set_options(ids.data(), static_cast<size_t>(ids.size()), offsets.data(), static_cast<size_t>(offsets.size()));
      }, "ids"_a, "offsets"_a, "Per sentence: option k's target words as LM ids are ids[offsets[k]:offsets[k + 1]]");
  py::class_<pysmt::DistortionTwin, pysmt::CompiledFeature, std::shared_ptr<pysmt::DistortionTwin>>(
      m, "DistortionTwin", "The distortion feature's compiled twin")
      .def(py::init<>());
  py::class_<pysmt::LexicalReorderingTwin, pysmt::CompiledFeature, std::shared_ptr<pysmt::LexicalReorderingTwin>>(
      m, "LexicalReorderingTwin", "The lexicalized reordering feature's compiled twin")
      .def(py::init<int, pysmt::ReorderingModel, bool, bool, std::vector<int>, std::vector<int>, int>(),
           "num_scores"_a, "model"_a, "backward"_a, "forward"_a, "backward_slots"_a, "forward_slots"_a,
           "forward_table_offset"_a)
      .def("set_options", [](pysmt::LexicalReorderingTwin &twin, Array<int32_t> row_of_option, Array<double> rows) {
        if (rows.ndim() != 2) throw std::invalid_argument("rows must be (rows, width)");
        twin.set_options(row_of_option.data(), static_cast<size_t>(row_of_option.size()), rows.data(),
                         static_cast<size_t>(rows.shape(0)), static_cast<int>(rows.shape(1)));
      }, "row_of_option"_a, "rows"_a, "Per sentence: each option's row of logged table scores (-1: none)");

  // -- search
  py::class_<pysmt::DeferredFeature, pysmt::CompiledFeature, std::shared_ptr<pysmt::DeferredFeature>>(
      m, "DeferredFeature", "A Python stateful feature, asked through its array interface a batch at a time")
      .def(py::init([](py::object calls, int num_scores, int buffer_size) {
             return std::make_shared<pysmt::DeferredFeature>(ask_python(std::move(calls), num_scores), num_scores,
                                                            buffer_size);
           }),
           "calls"_a, "num_scores"_a, "buffer_size"_a)
      .def("set_initial", &pysmt::DeferredFeature::set_initial, "state"_a, "Per sentence: the empty hypothesis' state id");

  py::enum_<pysmt::Algorithm>(m, "Algorithm", "The search algorithms")
      .value("normal", pysmt::Algorithm::normal)
      .value("cube", pysmt::Algorithm::cube);
  py::class_<pysmt::SearchSettings>(m, "SearchSettings", "The [search] settings the core uses")
      .def(py::init([](pysmt::Algorithm algorithm, int stack_size, double beam_threshold, int pop_limit,
                       int distortion_limit, int pops_per_round) {
             return pysmt::SearchSettings{algorithm, stack_size, beam_threshold, pop_limit, distortion_limit,
                                          pops_per_round};
           }),
           py::kw_only(), "algorithm"_a, "stack_size"_a, "beam_threshold"_a, "pop_limit"_a, "distortion_limit"_a,
           "pops_per_round"_a)
      .def_readonly("algorithm", &pysmt::SearchSettings::algorithm)
      .def_readonly("stack_size", &pysmt::SearchSettings::stack_size)
      .def_readonly("beam_threshold", &pysmt::SearchSettings::beam_threshold)
      .def_readonly("pop_limit", &pysmt::SearchSettings::pop_limit)
      .def_readonly("distortion_limit", &pysmt::SearchSettings::distortion_limit)
      .def_readonly("pops_per_round", &pysmt::SearchSettings::pops_per_round);
  py::class_<OptionArrays>(m, "OptionArrays",
                           "One sentence's options: spans sorted by (start, end), each span's options best first")
      .def(py::init<int, Array<int32_t>, Array<int32_t>, Array<double>, Array<int32_t>, Array<int32_t>, Array<int64_t>,
                    Array<int32_t>, Array<double>>(),
           py::kw_only(), "length"_a, "start"_a, "end"_a, "isolation"_a, "span_start"_a, "span_end"_a,
           "span_offsets"_a, "span_options"_a, "future_table"_a);
  py::class_<NbestArrays>(m, "NbestRequest", "What the n-best list needs: its size and every option's scores")
      .def(py::init<int, int64_t, bool, Array<double>, std::vector<int>, Array<int64_t>, Array<int32_t>>(),
           py::kw_only(), "size"_a, "budget"_a, "distinct"_a, "option_scores"_a, "stateful_columns"_a,
           "target_offsets"_a, "target_ids"_a);
  py::class_<Derivations>(m, "Derivations",
                          "The n-best derivations: derivation i applies options[offsets[i]:offsets[i + 1]], first to "
                          "last, with model score score[i] and unweighted scores scores[i]")
      .def_readonly("score", &Derivations::score)
      .def_readonly("offsets", &Derivations::offsets)
      .def_readonly("options", &Derivations::options)
      .def_readonly("scores", &Derivations::scores);

  m.def("search", [](const OptionArrays &options, const pysmt::SearchSettings &settings,
                     std::vector<std::shared_ptr<pysmt::CompiledFeature>> features, const NbestArrays &nbest) {
    pysmt::SentenceOptions view = options.view();
    pysmt::NbestRequest request = nbest.view(options);
    pysmt::NbestList found;
    {
      py::gil_scoped_release release;
      found = pysmt::search(view, settings, std::move(features), request);
    }
    Array<double> scores({static_cast<py::ssize_t>(found.score.size()), static_cast<py::ssize_t>(found.dims)},
                         found.scores.data());
    return Derivations{to_array(found.score), to_array(found.offsets), to_array(found.options), scores};
  }, "options"_a, "settings"_a, "features"_a, "nbest"_a,
     "Run normal search or cube pruning over one sentence's options; return its n-best derivations");
}
