// pysmt's compiled core as Python sees it: the bindings, and nothing else. Each concern's algorithm
// lives beside the Python it serves (models/_kenlm, features/_*, search/_*) and knows no Python;
// here numpy arrays become the plain views those take, and every name, argument and enum is
// declared once for Python (the typed stub pysmt/_core.pyi is generated from this module, and a
// test checks that it matches). The module imports nothing from pysmt, so every layer may use it.
#include <pybind11/functional.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "pysmt/_phrases.hpp"
#include "pysmt/_strings.hpp"
#include "pysmt/compiled_scorer.h"
#include "pysmt/features/_distortion.hpp"
#include "pysmt/features/_isolation.hpp"
#include "pysmt/features/_language_model.hpp"
#include "pysmt/features/_lexical_reordering.hpp"
#include "pysmt/features/_penalties.hpp"
#include "pysmt/models/_kenlm.hpp"
#include "pysmt/models/_phrase_table.hpp"
#include "pysmt/models/_reordering_table.hpp"
#include "pysmt/search/_deferred.hpp"
#include "pysmt/search/_options.hpp"
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

// A str as UTF-8 bytes: lone surrogates pass through (Python's "surrogatepass"), so any str can be
// looked up (and is simply not found) and an unknown word comes back as it went in.
std::string utf8(py::handle text) {
  if (!PyUnicode_Check(text.ptr())) throw py::type_error("expected a str");
  Py_ssize_t size = 0;
  if (const char *data = PyUnicode_AsUTF8AndSize(text.ptr(), &size))
    return std::string(data, static_cast<size_t>(size));
  PyErr_Clear();
  py::object bytes = py::reinterpret_steal<py::object>(PyUnicode_AsEncodedString(text.ptr(), "utf-8", "surrogatepass"));
  if (!bytes) throw py::error_already_set();
  return std::string(PyBytes_AS_STRING(bytes.ptr()), static_cast<size_t>(PyBytes_GET_SIZE(bytes.ptr())));
}

py::str text_of(std::string_view bytes) {
  PyObject *text = PyUnicode_DecodeUTF8(bytes.data(), static_cast<Py_ssize_t>(bytes.size()), "surrogatepass");
  if (!text) throw py::error_already_set();
  return py::reinterpret_steal<py::str>(text);
}

std::vector<std::string> utf8_all(const py::sequence &texts) {
  std::vector<std::string> out;
  out.reserve(texts.size());
  for (py::handle text : texts) out.push_back(utf8(text));
  return out;
}

// A StringIndex as Python holds it: built here (a text table's strings), or a view of stored
// arrays (a binary table's, memory-mapped), which it keeps alive.
struct Strings {
  std::shared_ptr<pysmt::StringIndex> index;
  std::vector<py::object> keep;  // the arrays a view reads

  py::str at(py::ssize_t k) const {
    py::ssize_t n = static_cast<py::ssize_t>(index->size());
    if (k < 0) k += n;
    if (k < 0 || k >= n) throw py::index_error("string index out of range");
    return text_of((*index)[static_cast<size_t>(k)]);
  }
};

Strings stored_strings(Array<uint8_t> blob, Array<int64_t> offsets, Array<uint32_t> slots) {
  if (offsets.size() < 1 || offsets.at(0) != 0 || offsets.at(offsets.size() - 1) != blob.size())
    throw std::invalid_argument("offsets must run from 0 to the blob's size");
  auto index = std::make_shared<pysmt::StringIndex>(reinterpret_cast<const char *>(blob.data()), offsets.data(),
                                                    static_cast<size_t>(offsets.size() - 1), slots.data(),
                                                    static_cast<size_t>(slots.size()));
  return Strings{index, {blob, offsets, slots}};
}

// A phrase or reordering table's view with the arrays it reads kept alive.
template <typename View>
struct Table {
  std::shared_ptr<const View> view;
  std::vector<py::object> keep;
};
using PhraseTable = Table<pysmt::PhraseTableView>;
using ReorderingTable = Table<pysmt::ReorderingTableView>;

// One sentence's options as the compiled builder made them, with the builder (for the tables'
// alignments and words).
struct BuiltOptions {
  std::shared_ptr<pysmt::SentenceOptions> options;
  std::shared_ptr<pysmt::OptionBuilder> builder;

  void check(py::ssize_t k) const {
    if (k < 0 || static_cast<size_t>(k) >= options->size()) throw py::index_error("no such option");
  }
};

template <typename T>
Array<T> matrix(const std::vector<T> &values, size_t rows, size_t columns) {
  return Array<T>({static_cast<py::ssize_t>(rows), static_cast<py::ssize_t>(columns)}, values.data());
}

// The n-best derivations as numpy arrays (see pysmt::NbestList).
struct Derivations {
  Array<double> score;
  Array<int64_t> offsets;
  Array<int32_t> options;
  Array<double> scores;
  int64_t hypotheses;
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
  m.doc() = "pysmt's compiled core: tables, KenLM queries, option building, the built-in features' twins, the search";

  // -- strings and tables
  py::class_<Strings>(m, "StringIndex",
                      "Strings in one UTF-8 blob with a hash index (a table's sources, keys, words): built here by "
                      "add(), or a view of a binary table's arrays")
      .def(py::init([]() { return Strings{std::make_shared<pysmt::StringIndex>(), {}}; }))
      .def(py::init(&stored_strings), py::kw_only(), "blob"_a, "offsets"_a, "slots"_a,
           "A view of stored strings: `slots` is their hash index (binary_table.py's format), or empty when they "
           "are sorted by their bytes")
      .def(
          "add", [](Strings &s, const py::str &text) { return s.index->add(utf8(text)); }, "text"_a,
          "The index of `text`, added if new")
      .def(
          "add_all",
          [](Strings &s, const py::sequence &texts) {
            std::vector<int64_t> out;
            out.reserve(texts.size());
            for (py::handle text : texts) out.push_back(s.index->add(utf8(text)));
            return out;
          },
          "texts"_a, "The indices of `texts`, each added if new")
      .def(
          "find", [](const Strings &s, const py::str &text) { return s.index->find(utf8(text)); }, "text"_a,
          "The index of `text`, or -1")
      .def(
          "get",
          [](const Strings &s, const py::str &text, py::object fallback) -> py::object {
            int64_t k = s.index->find(utf8(text));
            return k < 0 ? fallback : py::int_(k);
          },
          "text"_a, "default"_a = py::none(), "The index of `text`, or `default` (a dict's get)")
      .def(
          "__contains__",
          [](const Strings &s, const py::object &text) {
            return PyUnicode_Check(text.ptr()) && s.index->find(utf8(text)) >= 0;
          },
          "text"_a)
      .def(
          "first_not_utf8", [](const Strings &s) { return s.index->first_not_utf8(); },
          "The index of the first string that is not UTF-8 (encoded surrogates allowed, as they are read), or -1")
      .def("__len__", [](const Strings &s) { return s.index->size(); })
      .def("__getitem__", &Strings::at, "index"_a)
      .def("__iter__",
           [](const Strings &s) {
             py::list all;
             for (size_t k = 0; k < s.index->size(); ++k) all.append(text_of((*s.index)[k]));
             return py::iter(all);
           })
      .def_property_readonly(
          "memory", [](const Strings &s) { return s.index->memory(); },
          "Bytes held by strings built here (0 for a view)");

  py::class_<PhraseTable>(m, "PhraseTableView", "A phrase table's arrays as the compiled option builder reads them")
      .def(py::init([](const Strings &sources, const Strings &vocabulary, const Strings &alignments,
                       Array<int64_t> block_start, Array<int64_t> target_start, Array<int32_t> target_len,
                       Array<int32_t> target_ids, Array<float> scores, Array<int32_t> alignment_id) {
             size_t entries = static_cast<size_t>(target_start.size());
             if (scores.ndim() != 2 || static_cast<size_t>(scores.shape(0)) != entries ||
                 static_cast<size_t>(target_len.size()) != entries ||
                 static_cast<size_t>(alignment_id.size()) != entries)
               throw std::invalid_argument("target_start, target_len, alignment_id and scores need a row per entry");
             if (static_cast<size_t>(block_start.size()) != sources.index->size() + 1)
               throw std::invalid_argument("block_start needs an entry per source, and one more");
             pysmt::PhraseTableArrays arrays{
                 block_start.data(), target_start.data(), target_len.data(), target_ids.data(),
                 scores.data(),      alignment_id.data(), entries,           static_cast<int>(scores.shape(1))};
             auto view = std::make_shared<const pysmt::PhraseTableView>(sources.index, vocabulary.index,
                                                                        alignments.index, arrays);
             std::vector<py::object> keep{block_start, target_start, target_len, target_ids, scores, alignment_id};
             for (const Strings *s : {&sources, &vocabulary, &alignments})
               keep.insert(keep.end(), s->keep.begin(), s->keep.end());
             return PhraseTable{view, keep};
           }),
           py::kw_only(), "sources"_a, "vocabulary"_a, "alignments"_a, "block_start"_a, "target_start"_a,
           "target_len"_a, "target_ids"_a, "scores"_a, "alignment_id"_a);
  py::class_<ReorderingTable>(m, "ReorderingTableView",
                              "A reordering table's keys and logged scores, as the twin reads them")
      .def(py::init([](const Strings &keys, Array<double> scores) {
             if (scores.ndim() != 2 || static_cast<size_t>(scores.shape(0)) != keys.index->size())
               throw std::invalid_argument("scores needs a row per key");
             auto view = std::make_shared<const pysmt::ReorderingTableView>(keys.index, scores.data(),
                                                                            static_cast<int>(scores.shape(1)));
             std::vector<py::object> keep{scores};
             keep.insert(keep.end(), keys.keep.begin(), keys.keep.end());
             return ReorderingTable{view, keep};
           }),
           py::kw_only(), "keys"_a, "scores"_a);

  // -- models: KenLM
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

  // -- features: the twins of the built-in stateful features
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

  // -- features: the context-free features' scores in isolation
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

  // -- search
  py::register_exception<pysmt::FeatureFault>(m, "FeatureFault", PyExc_RuntimeError);
  py::class_<pysmt::DeferredFeature, pysmt::CompiledFeature, std::shared_ptr<pysmt::DeferredFeature>>(
      m, "DeferredFeature",
      "A plugin's stateful feature, asked a batch at a time: through its array interface in Python, or through the "
      "compiled scorer it offers (include/pysmt/compiled_scorer.h), whose faults are FeatureFaults naming it")
      .def(py::init([](py::object calls, int num_scores, int buffer_size) {
             return std::make_shared<pysmt::DeferredFeature>(ask_python(std::move(calls), num_scores), num_scores,
                                                             buffer_size);
           }),
           "calls"_a, "num_scores"_a, "buffer_size"_a)
      .def(py::init([](py::capsule scorer, const std::string &name, int buffer_size) {
             if (std::string(scorer.name() ? scorer.name() : "") != PYSMT_SCORER_CAPSULE)
               throw std::invalid_argument("feature " + name + ": compiled_scorer() must give a PyCapsule named " +
                                           PYSMT_SCORER_CAPSULE);
             const auto *given = scorer.get_pointer<pysmt_scorer>();
             if (!given || given->version != PYSMT_SCORER_VERSION || given->num_scores < 1 || !given->start ||
                 !given->score)
               throw std::invalid_argument("feature " + name +
                                           ": its compiled scorer is not of this pysmt's version (" +
                                           std::to_string(PYSMT_SCORER_VERSION) + ") or lacks a function");
             auto calls = std::make_shared<pysmt::ScorerCalls>(given, name);
             // the capsule (and the feature behind it) lives as long as the callbacks that use it
             auto keep = std::make_shared<py::object>(std::move(scorer));
             return std::make_shared<pysmt::DeferredFeature>(
                 [calls, keep](const auto &requests, auto &scores, auto &states) {
                   calls->score(requests, scores, states);
                 },
                 given->num_scores, buffer_size,
                 [calls](const pysmt::SentenceOptions &options) { return calls->start(options); });
           }),
           py::kw_only(), "scorer"_a, "name"_a, "buffer_size"_a)
      .def("set_initial", &pysmt::DeferredFeature::set_initial, "state"_a,
           "Per sentence: the empty hypothesis' state id");

  py::enum_<pysmt::Algorithm>(m, "Algorithm", "The search algorithms")
      .value("normal", pysmt::Algorithm::normal)
      .value("cube", pysmt::Algorithm::cube);
  py::class_<pysmt::SearchSettings>(m, "SearchSettings", "The [search] settings the core uses")
      .def(py::init([](pysmt::Algorithm algorithm, int stack_size, double beam_threshold, int pop_limit,
                       int distortion_limit, int pops_per_round) {
             return pysmt::SearchSettings{algorithm, stack_size,       beam_threshold,
                                          pop_limit, distortion_limit, pops_per_round};
           }),
           py::kw_only(), "algorithm"_a, "stack_size"_a, "beam_threshold"_a, "pop_limit"_a, "distortion_limit"_a,
           "pops_per_round"_a)
      .def_readonly("algorithm", &pysmt::SearchSettings::algorithm)
      .def_readonly("stack_size", &pysmt::SearchSettings::stack_size)
      .def_readonly("beam_threshold", &pysmt::SearchSettings::beam_threshold)
      .def_readonly("pop_limit", &pysmt::SearchSettings::pop_limit)
      .def_readonly("distortion_limit", &pysmt::SearchSettings::distortion_limit)
      .def_readonly("pops_per_round", &pysmt::SearchSettings::pops_per_round);
  // -- search: the options
  py::class_<BuiltOptions>(
      m, "BuiltOptions",
      "One sentence's translation options as the compiled option builder made them (see "
      "pysmt/phrases.py's SentenceOptions): spans by start then end, each span's options best first")
      .def("__len__", [](const BuiltOptions &b) { return b.options->size(); })
      .def_property_readonly(
          "length", [](const BuiltOptions &b) { return b.options->length(); }, "Source words")
      .def_property_readonly("start", [](const BuiltOptions &b) { return to_array(b.options->start); })
      .def_property_readonly("end", [](const BuiltOptions &b) { return to_array(b.options->end); })
      .def_property_readonly("isolation", [](const BuiltOptions &b) { return to_array(b.options->isolation); })
      .def_property_readonly("future", [](const BuiltOptions &b) { return to_array(b.options->future); })
      .def_property_readonly(
          "scores",
          [](const BuiltOptions &b) {
            return matrix(b.options->scores, b.options->size(), static_cast<size_t>(b.options->dims));
          },
          "options x the model's scores: each option's unweighted scores in isolation")
      .def_property_readonly(
          "table", [](const BuiltOptions &b) { return to_array(b.options->table); },
          "The phrase table (the builder's number) of each option's pair; -1: an unknown word")
      .def_property_readonly(
          "entry", [](const BuiltOptions &b) { return to_array(b.options->entry); },
          "The entry of each option's pair in its table (-1: an unknown word)")
      .def_property_readonly("span_start", [](const BuiltOptions &b) { return to_array(b.options->span_start); })
      .def_property_readonly("span_end", [](const BuiltOptions &b) { return to_array(b.options->span_end); })
      .def_property_readonly("span_offsets", [](const BuiltOptions &b) { return to_array(b.options->span_offsets); })
      .def_property_readonly(
          "span_options", [](const BuiltOptions &b) { return to_array(b.options->span_options); },
          "Each span's options, best first: span_options[span_offsets[s]:span_offsets[s + 1]]")
      .def(
          "target",
          [](const BuiltOptions &b, py::ssize_t k) {
            b.check(k);
            const pysmt::SentenceOptions &o = *b.options;
            py::list words;
            for (int64_t w = o.target_offsets[k]; w < o.target_offsets[k + 1]; ++w)
              words.append(text_of(o.vocabulary->word(o.target_ids[static_cast<size_t>(w)])));
            return words;
          },
          "option"_a, "An option's target words")
      .def(
          "alignment",
          [](const BuiltOptions &b, py::ssize_t k) {
            b.check(k);
            return text_of(b.builder->alignment(b.options->table[k], b.options->entry[k]));
          },
          "option"_a, "The word alignment inside an option's pair (Moses' i-j pairs)")
      .def(
          "set_reordering",
          [](BuiltOptions &b, std::vector<bool> walls, std::vector<int32_t> local_walls,
             std::vector<int32_t> zone_first, std::vector<int32_t> zone_last) {
            int n = b.options->length();
            if (walls.size() != static_cast<size_t>(n) || local_walls.size() != walls.size() ||
                zone_first.size() != zone_last.size())
              throw std::invalid_argument("a wall and a local wall per word, a first and a last word per zone");
            for (size_t z = 0; z < zone_first.size(); ++z)
              if (zone_first[z] < 0 || zone_first[z] > zone_last[z] || zone_last[z] >= n)
                throw std::invalid_argument("a zone outside the sentence");
            b.options->walls.assign(walls.begin(), walls.end());
            b.options->local_walls = std::move(local_walls);
            b.options->zone_first = std::move(zone_first);
            b.options->zone_last = std::move(zone_last);
          },
          py::kw_only(), "walls"_a, "local_walls"_a, "zone_first"_a, "zone_last"_a,
          "The markup's reordering constraints (pysmt/search/reordering_constraint.py): a wall after each word, the "
          "zone whose local wall each word is (-1: none), each zone's first and last word")
      .def(
          "add_contextual",
          [](BuiltOptions &b, Array<double> scores, Array<double> isolation, Array<double> future) {
            size_t n = b.options->size();
            if (scores.ndim() != 2 || static_cast<size_t>(scores.shape(0)) != n || scores.shape(1) != b.options->dims ||
                static_cast<size_t>(isolation.size()) != n || static_cast<size_t>(future.size()) != n)
              throw std::invalid_argument("a row of scores (the model's width), an isolation and a future per option");
            pysmt::add_contextual(*b.options, scores.data(), isolation.data(), future.data());
          },
          "scores"_a, "isolation"_a, "future"_a,
          "Add per-sentence features' scores (options x the model's width) and their weighted sums, then sort each "
          "span's options best first again");

  py::class_<pysmt::OptionBuilder, std::shared_ptr<pysmt::OptionBuilder>>(
      m, "OptionBuilder",
      "Builds sentences' translation options from phrase tables (pysmt/search/options.py's OptionBuilder is the "
      "specification), keeping each source phrase's ranked pairs across sentences")
      .def(py::init<int, int>(), py::kw_only(), "dims"_a, "max_phrase_length"_a)
      .def(
          "add_table",
          [](pysmt::OptionBuilder &b, const PhraseTable &table, int column, int limit) {
            b.add_table(table.view, column, limit);
          },
          py::kw_only(), "table"_a, "column"_a, "limit"_a,
          "A phrase table supplying candidates; its scores are the model's columns from `column`")
      .def("add_scores", &pysmt::OptionBuilder::add_scores, py::kw_only(), "scores"_a, "column"_a,
           "A context-free feature's compiled scores, the model's columns from `column`")
      .def(
          "add_stored",
          [](pysmt::OptionBuilder &b, int table, int column, const py::array_t<float, py::array::c_style> &values) {
            if (values.ndim() != 2) throw std::invalid_argument("stored columns: the table's entries x scores");
            b.add_stored(table, column, values.data(), values.shape(0), static_cast<int>(values.shape(1)));
          },
          py::kw_only(), "table"_a, "column"_a, "values"_a.noconvert(), py::keep_alive<1, 4>(),
          "Scores stored with table `table` (its number) that count as its own columns from `column`: float32, its "
          "entries x scores, NaN where an entry has none (a per-sentence feature's StoredColumns)")
      .def("set_python_columns", &pysmt::OptionBuilder::set_python_columns, "columns"_a,
           "The model's columns context-free Python features score (finish() is given them)")
      .def("set_weights", &pysmt::OptionBuilder::set_weights, "weights"_a,
           "New weights; the ranked pairs are forgotten")
      .def("clear", &pysmt::OptionBuilder::clear, "Forget the ranked pairs")
      .def_property_readonly("kept", &pysmt::OptionBuilder::kept, "Ranked pairs kept across sentences")
      .def(
          "set_markup",
          [](pysmt::OptionBuilder &b, const std::string &policy, std::vector<int> starts, std::vector<int> ends,
             const std::vector<py::sequence> &targets, std::vector<double> values) {
            using Policy = pysmt::OptionBuilder::MarkupPolicy;
            const std::map<std::string, Policy> policies = {
                {"exclusive", Policy::exclusive}, {"inclusive", Policy::inclusive}, {"constraint", Policy::constraint}};
            auto found = policies.find(policy);
            if (found == policies.end()) throw std::invalid_argument("policy: exclusive, inclusive or constraint");
            size_t count = starts.size();
            if (ends.size() != count || targets.size() != count || values.size() != count)
              throw std::invalid_argument("a start, an end, a target and a value per markup option");
            std::vector<pysmt::OptionBuilder::MarkupOption> options;
            for (size_t m = 0; m < count; ++m) {
              if (starts[m] < 0 || starts[m] >= ends[m]) throw std::invalid_argument("a markup span of no words");
              options.push_back({starts[m], ends[m], utf8_all(targets[m]), values[m]});
            }
            b.set_markup(found->second, options);
          },
          py::kw_only(), "policy"_a, "starts"_a, "ends"_a, "targets"_a, "values"_a,
          "The next sentence's markup options (pysmt/search/markup_options.py): spans [start, end), target words, and "
          "the value of each of the first table's columns; `policy`: exclusive, inclusive or constraint")
      .def(
          "lookup",
          [](std::shared_ptr<pysmt::OptionBuilder> b, const py::sequence &words) {
            return BuiltOptions{b->lookup(utf8_all(words)), b};
          },
          "words"_a, "Step 1 of a sentence: look its spans up; the pairs of new source phrases wait in pending()")
      .def(
          "pending",
          [](const pysmt::OptionBuilder &b) {
            py::list out;
            for (const auto &p : b.pending()) out.append(py::make_tuple(p.table, p.entry, text_of(p.source)));
            return out;
          },
          "The pairs Python features must score: (table, entry, source phrase), or (-1, word number, word)")
      .def(
          "finish",
          [](pysmt::OptionBuilder &b, BuiltOptions &options, std::optional<Array<double>> scores,
             std::optional<Array<double>> estimates) {
            size_t rows = b.pending().size();
            for (const auto *given : {&scores, &estimates})
              if (*given && ((*given)->ndim() != 2 || static_cast<size_t>((*given)->shape(0)) != rows ||
                             (*given)->shape(1) != options.options->dims))
                throw std::invalid_argument("a row of the model's width per pending pair");
            if (scores.has_value() != estimates.has_value())
              throw std::invalid_argument("scores and estimates go together");
            b.finish(*options.options, scores ? scores->data() : nullptr, estimates ? estimates->data() : nullptr);
          },
          "options"_a, "scores"_a = py::none(), "estimates"_a = py::none(),
          "Step 2: rank the pending pairs (with the Python features' scores and estimates of them: pending() x the "
          "model's width) and lay the sentence's options out");

  py::class_<pysmt::NbestRequest>(m, "NbestRequest", "What the n-best list needs besides the search graph")
      .def(py::init([](int size, int64_t budget, bool distinct, std::vector<int> stateful_columns) {
             if (size < 1 || budget < size) throw std::invalid_argument("need 1 <= size <= budget");
             return pysmt::NbestRequest{size, static_cast<size_t>(budget), distinct, std::move(stateful_columns)};
           }),
           py::kw_only(), "size"_a, "budget"_a, "distinct"_a, "stateful_columns"_a);
  py::class_<Derivations>(m, "Derivations",
                          "The n-best derivations: derivation i applies options[offsets[i]:offsets[i + 1]], first to "
                          "last, with model score score[i] and unweighted scores scores[i]; `hypotheses`: how many "
                          "the search built")
      .def_readonly("score", &Derivations::score)
      .def_readonly("offsets", &Derivations::offsets)
      .def_readonly("options", &Derivations::options)
      .def_readonly("scores", &Derivations::scores)
      .def_readonly("hypotheses", &Derivations::hypotheses);

  m.def(
      "search",
      [](const BuiltOptions &options, const pysmt::SearchSettings &settings,
         std::vector<std::shared_ptr<pysmt::CompiledFeature>> features, const pysmt::NbestRequest &nbest) {
        pysmt::NbestList found;
        {
          py::gil_scoped_release release;
          found = pysmt::search(*options.options, settings, std::move(features), nbest);
        }
        return Derivations{to_array(found.score), to_array(found.offsets), to_array(found.options),
                           matrix(found.scores, found.score.size(), found.dims), found.hypotheses};
      },
      "options"_a, "settings"_a, "features"_a, "nbest"_a,
      "Run normal search or cube pruning over one sentence's options; return its n-best derivations");
}
