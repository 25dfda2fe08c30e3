// The bindings of strings and tables: a table's strings (built here, or a binary table's stored arrays) and the
// typed arrays of phrase and reordering tables, as models/ hands them to the core.
#include <stdexcept>

#include "pysmt/_bindings.hpp"

namespace pysmt::bindings {

using namespace pybind11::literals;

namespace {

Strings stored_strings(Array<uint8_t> blob, Array<int64_t> offsets, Array<uint32_t> slots) {
  if (offsets.size() < 1 || offsets.at(0) != 0 || offsets.at(offsets.size() - 1) != blob.size())
    throw std::invalid_argument("offsets must run from 0 to the blob's size");
  auto index = std::make_shared<pysmt::StringIndex>(reinterpret_cast<const char *>(blob.data()), offsets.data(),
                                                    static_cast<size_t>(offsets.size() - 1), slots.data(),
                                                    static_cast<size_t>(slots.size()));
  return Strings{index, {blob, offsets, slots}};
}

}  // namespace

void bind_tables(py::module_ &m) {
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
}

}  // namespace pysmt::bindings
