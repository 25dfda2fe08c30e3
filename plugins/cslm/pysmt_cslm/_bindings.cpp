// The module pysmt_cslm._network: the CSLM's compiled forward pass (_network.hpp) and its compiled
// scorer (_scorer.hpp), as Python sees them.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "pysmt_cslm/_network.hpp"
#include "pysmt_cslm/_scorer.hpp"

namespace py = pybind11;
using pysmt_cslm::Array;
using pysmt_cslm::CompiledCslm;
using pysmt_cslm::HiddenStore;
using pysmt_cslm::Network;

PYBIND11_MODULE(_network, m) {
  m.doc() = "The CSLM's compiled forward pass and compiled scorer (see pysmt_cslm/scoring.py, features.py)";
  m.def("kernel_versions", &pysmt_cslm::kernel_versions,
        "The versions of the hidden layers' inner loops this processor runs, fastest first");
  py::class_<Network, std::shared_ptr<Network>>(m, "Network",
                                                "The CSLM's weights, as the decoder's forward pass uses them")
      .def(py::init<Array<float>, int, Array<float>, Array<float>, Array<float>, Array<float>>(), py::arg("first"),
           py::arg("width"), py::arg("w2t"), py::arg("b2"), py::arg("w3"), py::arg("b3"))
      .def(
          "hidden",
          [](const Network &net, Array<int32_t> contexts, const std::string &version) {
            if (contexts.ndim() != 2 || contexts.shape(1) != net.width())
              throw std::invalid_argument("contexts must be (n, width)");
            Array<float> out({contexts.shape(0), static_cast<py::ssize_t>(net.hidden_size())});
            net.forward(contexts.data(), static_cast<size_t>(contexts.shape(0)), out.mutable_data(), version);
            return out;
          },
          py::arg("contexts"), py::arg("version") = "",
          "h2 (float32, n x hidden) of contexts (n x width word ids), by the inner loops of `version` (one of\n"
          "kernel_versions(); empty: the fastest), which all give the same numbers")
      .def(
          "logits",
          [](const Network &net, Array<float> hidden, Array<int64_t> words) {
            if (hidden.ndim() != 2 || hidden.shape(1) != net.hidden_size() || hidden.shape(0) != words.size())
              throw std::invalid_argument("logits: hidden (n x hidden) and words (n) disagree");
            Array<double> out(words.size());
            for (py::ssize_t k = 0; k < words.size(); ++k)
              out.mutable_data()[k] = net.logit(hidden.data(k, 0), words.data()[k]);
            return out;
          },
          py::arg("hidden"), py::arg("words"), "W3[w] . h2 + b3[w] (float64) for each row of hidden and its word");

  py::class_<HiddenStore>(m, "HiddenStore", "The hidden layers of numbered contexts (a ContextTable's numbers)")
      .def(py::init<std::shared_ptr<Network>>(), py::arg("network"))
      .def(
          "compute",
          [](HiddenStore &store, Array<int64_t> ids, Array<int32_t> contexts) {
            if (contexts.ndim() != 2 || contexts.shape(0) != ids.size() || contexts.shape(1) != store.network().width())
              throw std::invalid_argument("compute: ids (n) and contexts (n, width) disagree");
            store.compute(ids.data(), contexts.data(), static_cast<size_t>(ids.size()));
          },
          py::arg("ids"), py::arg("contexts"), "Compute and keep the hidden layers of contexts (n x width) as ids")
      .def(
          "rows",
          [](const HiddenStore &store, Array<int64_t> ids) {
            const int h = store.network().hidden_size();
            Array<float> out({ids.size(), static_cast<py::ssize_t>(h)});
            for (py::ssize_t k = 0; k < ids.size(); ++k) {
              const float *row = store.at(ids.data()[k]);
              std::copy(row, row + h, out.mutable_data(k, 0));
            }
            return out;
          },
          py::arg("ids"), "The kept hidden layers of context ids (a copy)")
      .def(
          "sums",
          [](const HiddenStore &store, Array<int64_t> rows, Array<int32_t> words, Array<int64_t> owners,
             int64_t requests, Array<double> minus) {
            py::ssize_t n = rows.size();
            if (words.size() != n || owners.size() != n || (minus.size() && minus.size() != n) || requests < 0)
              throw std::invalid_argument("sums: rows, words, owners and minus disagree");
            Array<double> total(requests);
            store.sums(rows.data(), words.data(), owners.data(), static_cast<size_t>(n),
                       minus.size() ? minus.data() : nullptr, total.mutable_data(), static_cast<size_t>(requests));
            return total;
          },
          py::arg("rows"), py::arg("words"), py::arg("owners"), py::arg("requests"), py::arg("minus"),
          "Per request, its n-grams' logits minus `minus`, summed in order");

  py::class_<CompiledCslm>(m, "CompiledCslm",
                           "The CSLM as a compiled scorer for pysmt's search (self-normalized scores; see _scorer.hpp)")
      .def(py::init<std::shared_ptr<Network>, std::vector<std::string>, std::vector<int32_t>, std::vector<double>,
                    int32_t, double, int32_t, int32_t, int64_t>(),
           py::kw_only(), py::arg("network"), py::arg("words"), py::arg("ids"), py::arg("backoff"),
           py::arg("unknown_id"), py::arg("unseen"), py::arg("begin_id"), py::arg("end_id"), py::arg("cache_size"))
      .def(
          "capsule",
          [](py::object self) {
            auto *scorer = const_cast<pysmt_scorer *>(self.cast<const CompiledCslm &>().scorer());
            py::capsule capsule(scorer, PYSMT_SCORER_CAPSULE, [](PyObject *made) {
              Py_XDECREF(static_cast<PyObject *>(PyCapsule_GetContext(made)));
            });
            // the capsule keeps the scorer's Python object (and so the scorer) alive: the search holds the capsule
            if (PyCapsule_SetContext(capsule.ptr(), self.ptr()) != 0) throw py::error_already_set();
            Py_INCREF(self.ptr());
            return capsule;
          },
          "The scorer as pysmt's search takes it: a PyCapsule named pysmt.compiled_scorer")
      .def_property_readonly("requests", &CompiledCslm::requests, "Requests scored so far")
      .def_property_readonly("ngrams", &CompiledCslm::ngrams, "N-grams scored so far")
      .def_property_readonly("computed", &CompiledCslm::computed, "Contexts put through the network so far")
      .def_property_readonly("coverage", &CompiledCslm::coverage,
                             "The first sentence's option words (the first with ten or more) and how many the "
                             "shortlist has; (0, 0) until then");
}
