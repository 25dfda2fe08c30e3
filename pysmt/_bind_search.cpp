// The bindings of the search (search/_search.*, _nbest.cpp): its request types in, the n-best derivations out, the
// GIL released while it runs.

#include <stdexcept>

#include "pysmt/_bindings.hpp"
#include "pysmt/search/_search.hpp"

namespace pysmt::bindings {

using namespace pybind11::literals;

namespace {

// The n-best derivations as numpy arrays (see pysmt::NbestList).
struct Derivations {
  Array<double> score;
  Array<int64_t> offsets;
  Array<int32_t> options;
  Array<double> scores;
  int64_t hypotheses;
};

}  // namespace

void bind_search(py::module_ &m) {
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

}  // namespace pysmt::bindings
