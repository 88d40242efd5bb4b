// One scenario's result (doc/bench.md#results): an ordered JSON object with the fields doc/bench.md lists, written as
// one JSON line (--json), as a CSV header and row (--csv), or as a table for people.
#pragma once

#include "programs/bench/measure.hpp"

#include <boost/json/object.hpp>

#include <iosfwd>
#include <string>
#include <string_view>

namespace tinker::bench {

/// The version of the field set; it changes only when a documented field changes meaning or goes away.
inline constexpr const char* result_schema = "tinker-bench/1";

class Report {
 public:
  explicit Report(std::string_view scenario);

  /// Sets `key` (keeps its first position when set again).
  void set(std::string_view key, boost::json::value value);
  /// `key`: {"count", "p50", "p90", "p99", "max", "mean"} of `values`.
  void set_distribution(std::string_view key, const Percentiles& values);
  /// Sets `key` to the string `text`.
  void set_text(std::string_view key, std::string_view text);
  /// Sets `key` to null.
  void set_null(std::string_view key);

  const boost::json::object& fields() const noexcept { return fields_; }
  boost::json::object& fields() noexcept { return fields_; }

 private:
  boost::json::object fields_;
};

/// The result as one line of JSON; numbers with at most 6 significant digits.
void write_json_line(std::ostream& out, const boost::json::object& fields);
/// The result as a CSV header line and one row; nested objects flattened to "outer.inner" columns, arrays joined
/// with ';' in one cell.
void write_csv(std::ostream& out, const boost::json::object& fields);
/// The result for people: a heading, the parameters, then one line per figure.
void write_table(std::ostream& out, const boost::json::object& fields);

/// A number as the outputs write it: integers as integers, others with 6 significant digits.
std::string format_number(double value);

}  // namespace tinker::bench
