// Output of the `tinker` CLI: aligned text tables, indented JSON built from the SDK's own wire
// codecs, and the display forms of times, sizes and flags.
#pragma once

#include <tinker/codec.hpp>
#include <tinker/types/checkpoint.hpp>
#include <tinker/types/common.hpp>

#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tinker::cli {

/// Columns separated by two spaces, each as wide as its widest cell, under a header row.
class Table {
 public:
  explicit Table(std::vector<std::string> header);

  void add_row(std::vector<std::string> row);
  bool empty() const noexcept { return rows_.empty(); }
  std::size_t size() const noexcept { return rows_.size(); }
  void print(std::ostream& out) const;

 private:
  std::vector<std::string> header_;
  std::vector<std::vector<std::string>> rows_;
};

class Context;

/// A listing: `table`, or the line `nothing` when it has no rows. When the server counts `total`
/// items, more than the table shows, the error stream says how many are left out.
void print_listing(Context& context, const Table& table, std::string_view nothing,
                   std::optional<std::int64_t> total = std::nullopt);

/// A two-column "Property / Value" table, for the `info` commands.
using Properties = std::vector<std::pair<std::string, std::string>>;
void print_properties(std::ostream& out, const Properties& properties);

/// The wire JSON of any SDK type, as a Boost.JSON value (to combine into a larger document).
template <class T>
boost::json::value json_of(const T& value) {
  return boost::json::parse(to_json(value));
}

/// Writes `value` indented by two spaces per level, then a newline. Numbers are written in
/// their shortest round-trip form (Boost.JSON 1.81 would write 0.7 as 7E-1).
void print_json(std::ostream& out, const boost::json::value& value);

/// "2026-08-08 12:00:00 UTC" (seconds, no fraction).
std::string display_time(Timestamp t);
/// "N/A" when unknown, else "512 B", "1.5 KiB", "2.0 GiB", ...
std::string display_size(std::optional<std::int64_t> bytes);
std::string yes_no(bool value);
/// "Rank 32", "Yes" (LoRA, rank unknown) or "No".
std::string display_lora(bool is_lora, std::optional<std::int64_t> rank);

/// An ISO-8601 date or date-time given on the command line: `2026-08-08`, `2026-08-08T12:30`,
/// `2026-08-08T12:30:15[.fff]`, each optionally followed by `Z` or `+hh:mm`/`-hh:mm`; no zone
/// means UTC. A space may replace the `T`. Throws UsageError naming `option`.
Timestamp parse_cli_time(std::string_view text, std::string_view option);

}  // namespace tinker::cli
