#include "programs/cli/output.hpp"

#include "programs/cli/context.hpp"

#include <tinker/error.hpp>

#include <boost/json/serialize.hpp>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <ostream>

namespace tinker::cli {

Table::Table(std::vector<std::string> header) : header_(std::move(header)) {}

void Table::add_row(std::vector<std::string> row) {
  row.resize(header_.size());
  rows_.push_back(std::move(row));
}

void Table::print(std::ostream& out) const {
  std::vector<std::size_t> widths(header_.size());
  for (std::size_t c = 0; c < header_.size(); ++c) widths[c] = header_[c].size();
  for (const auto& row : rows_) {
    for (std::size_t c = 0; c < row.size(); ++c) widths[c] = std::max(widths[c], row[c].size());
  }
  auto print_row = [&](const std::vector<std::string>& row) {
    std::string line;
    for (std::size_t c = 0; c < row.size(); ++c) {
      line += row[c];
      if (c + 1 < row.size()) line.append(widths[c] - row[c].size() + 2, ' ');
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out << line << '\n';
  };
  print_row(header_);
  for (const auto& row : rows_) print_row(row);
}

void print_listing(Context& context, const Table& table, std::string_view nothing, std::optional<std::int64_t> total) {
  if (table.empty()) {
    context.out << nothing << '\n';
    return;
  }
  table.print(context.out);
  const auto shown = static_cast<std::int64_t>(table.size());
  if (total && *total > shown) context.err << (*total - shown) << " more not shown; use --limit 0 to see all\n";
}

void print_properties(std::ostream& out, const Properties& properties) {
  Table table({"Property", "Value"});
  for (const auto& [name, value] : properties) table.add_row({name, value});
  table.print(out);
}

namespace {

void write_indent(std::ostream& out, int level) {
  for (int i = 0; i < level; ++i) out << "  ";
}

void write_json(std::ostream& out, const boost::json::value& value, int level) {
  switch (value.kind()) {
    case boost::json::kind::object: {
      const auto& object = value.get_object();
      if (object.empty()) {
        out << "{}";
        return;
      }
      out << "{\n";
      bool first = true;
      for (const auto& member : object) {
        if (!first) out << ",\n";
        first = false;
        write_indent(out, level + 1);
        out << boost::json::serialize(boost::json::string_view(member.key())) << ": ";
        write_json(out, member.value(), level + 1);
      }
      out << '\n';
      write_indent(out, level);
      out << '}';
      return;
    }
    case boost::json::kind::array: {
      const auto& array = value.get_array();
      if (array.empty()) {
        out << "[]";
        return;
      }
      out << "[\n";
      for (std::size_t i = 0; i < array.size(); ++i) {
        if (i != 0) out << ",\n";
        write_indent(out, level + 1);
        write_json(out, array[i], level + 1);
      }
      out << '\n';
      write_indent(out, level);
      out << ']';
      return;
    }
    case boost::json::kind::double_: {
      char buf[64];
      const auto result = std::to_chars(buf, buf + sizeof buf, value.get_double());
      out << std::string_view(buf, static_cast<std::size_t>(result.ptr - buf));
      return;
    }
    default: out << boost::json::serialize(value); return;
  }
}

}  // namespace

void print_json(std::ostream& out, const boost::json::value& value) {
  write_json(out, value, 0);
  out << '\n';
}

std::string display_time(Timestamp t) {
  std::string text = format_timestamp(std::chrono::floor<std::chrono::seconds>(t));  // "YYYY-MM-DDTHH:MM:SSZ"
  text[10] = ' ';
  text.pop_back();
  return text + " UTC";
}

std::string display_size(std::optional<std::int64_t> bytes) {
  if (!bytes) return "N/A";
  if (*bytes < 1024) return std::to_string(*bytes) + " B";
  static const char* const units[] = {"KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(*bytes);
  int unit = -1;
  while (value >= 1024.0 && unit < 3) {
    value /= 1024.0;
    ++unit;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f %s", value, units[unit]);
  return buf;
}

std::string yes_no(bool value) {
  return value ? "Yes" : "No";
}

std::string display_lora(bool is_lora, std::optional<std::int64_t> rank) {
  if (!is_lora) return "No";
  return rank ? "Rank " + std::to_string(*rank) : "Yes";
}

Timestamp parse_cli_time(std::string_view text, std::string_view option) {
  // Completes the forms parse_timestamp (RFC 3339) does not take: a bare date, and HH:MM.
  std::string full(text);
  if (full.size() == 10) {
    full += "T00:00:00";
  } else if (full.size() >= 16 && (full.size() == 16 || full[16] != ':')) {
    full.insert(16, ":00");
  }
  try {
    return parse_timestamp(full);
  } catch (const error&) {
    throw UsageError(std::string(option) + ": '" + std::string(text) +
                     "' is not an ISO-8601 date or date-time (e.g. 2026-08-08 or 2026-08-08T12:30:00Z)");
  }
}

}  // namespace tinker::cli
