// The bindings of the compiled option builder (search/_options.*): tables, compiled scores and weights in, a
// sentence's markup, its lookup, the pairs Python features must score, and the options laid out.

#include <optional>
#include <stdexcept>

#include "pysmt/_bindings.hpp"

namespace pysmt::bindings {

using namespace pybind11::literals;

void bind_options(py::module_ &m) {
  using Policy = pysmt::OptionBuilder::MarkupPolicy;
  py::enum_<Policy>(m, "MarkupPolicy",
                    "How a sentence's markup options meet the tables' options of the spans they overlap (--xml-input; "
                    "pysmt/search/markup_options.py)")
      .value("exclusive", Policy::exclusive)
      .value("inclusive", Policy::inclusive)
      .value("constraint", Policy::constraint);
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
          [](pysmt::OptionBuilder &b, pysmt::OptionBuilder::MarkupPolicy policy, std::vector<int> starts,
             std::vector<int> ends, const std::vector<py::sequence> &targets, std::vector<double> values) {
            size_t count = starts.size();
            if (ends.size() != count || targets.size() != count || values.size() != count)
              throw std::invalid_argument("a start, an end, a target and a value per markup option");
            std::vector<pysmt::OptionBuilder::MarkupOption> options;
            for (size_t m = 0; m < count; ++m) {
              if (starts[m] < 0 || starts[m] >= ends[m]) throw std::invalid_argument("a markup span of no words");
              options.push_back({starts[m], ends[m], utf8_all(targets[m]), values[m]});
            }
            b.set_markup(policy, options);
          },
          py::kw_only(), "policy"_a, "starts"_a, "ends"_a, "targets"_a, "values"_a,
          "The next sentence's markup options (pysmt/search/markup_options.py): spans [start, end), target words, and "
          "the value of each of the first table's columns, placed as `policy` says")
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
}

}  // namespace pysmt::bindings
