// The bindings of a plugin's stateful feature (search/_deferred.*), asked a batch at a time: through its array
// interface in Python, or through the compiled scorer it offers (include/pysmt/compiled_scorer.h).
#include <stdexcept>

#include "pysmt/_bindings.hpp"
#include "pysmt/compiled_scorer.h"
#include "pysmt/search/_deferred.hpp"

namespace pysmt::bindings {

using namespace pybind11::literals;

namespace {

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

void bind_deferred(py::module_ &m) {
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
}

}  // namespace pysmt::bindings
