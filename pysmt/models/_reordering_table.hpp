// A lexicalized reordering table as the compiled core reads it: the keys and logged scores
// pysmt/models/reordering_table.py keeps (a text table's, made at load, or a binary table's,
// memory-mapped), owned by the Python side. It trusts them (scores has a row per key); a binary table's
// are checked once when it is loaded (pysmt/models/binary_checks.py).
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>

#include "pysmt/_strings.hpp"

namespace pysmt {

// A lexicalized reordering table: a row of logged scores per key ("src ||| tgt", or "src").
class ReorderingTableView {
 public:
  ReorderingTableView(std::shared_ptr<const StringIndex> keys, const double *scores, int num_scores)
      : keys_(std::move(keys)), scores_(scores), num_scores_(num_scores) {}
  // The row of a key, or -1.
  int64_t find(std::string_view key) const { return keys_->find(key); }
  const double *scores(int64_t row) const { return scores_ + row * num_scores_; }
  int num_scores() const { return num_scores_; }

 private:
  std::shared_ptr<const StringIndex> keys_;
  const double *scores_;
  int num_scores_;
};

}  // namespace pysmt
