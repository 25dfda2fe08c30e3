// The bindings of one sentence's built options (search/_options.hpp's SentenceOptions as the builder made them):
// numpy arrays out, the markup's reordering constraints and per-sentence features' scores in.

#include <stdexcept>

#include "pysmt/_bindings.hpp"

namespace pysmt::bindings {

using namespace pybind11::literals;

void bind_built(py::module_ &m) {
  // BuiltOptions.table's values for options that come from no phrase table (pysmt/_phrases.hpp)
  m.attr("UNKNOWN_TABLE") = pysmt::kUnknownTable;
  m.attr("MARKUP_TABLE") = pysmt::kMarkupTable;
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
          "The phrase table (the builder's number) of each option's pair; UNKNOWN_TABLE: an unknown word, "
          "MARKUP_TABLE: a markup translation")
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
}

}  // namespace pysmt::bindings
