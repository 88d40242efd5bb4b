#include "programs/bench/report.hpp"

#include <boost/json/serialize.hpp>

#include <charconv>
#include <cmath>
#include <iomanip>
#include <ostream>
#include <sstream>
#include <utility>
#include <vector>

namespace tinker::bench {
namespace json = boost::json;

Report::Report(std::string_view scenario) {
  fields_["schema"] = result_schema;
  fields_["scenario"] = scenario;
}

void Report::set(std::string_view key, json::value value) {
  fields_[key] = std::move(value);
}

void Report::set_distribution(std::string_view key, const Percentiles& values) {
  json::object distribution;
  distribution["count"] = values.count;
  distribution["p50"] = values.p50;
  distribution["p90"] = values.p90;
  distribution["p99"] = values.p99;
  distribution["max"] = values.max;
  distribution["mean"] = values.mean;
  fields_[key] = std::move(distribution);
}

void Report::set_text(std::string_view key, std::string_view text) {
  fields_[key] = json::string(text.data(), text.size());
}

void Report::set_null(std::string_view key) {
  fields_[key] = nullptr;
}

std::string format_number(double value) {
  if (!std::isfinite(value)) return "null";
  if (value == std::trunc(value) && std::fabs(value) < 1e15) {
    return std::to_string(static_cast<long long>(value));
  }
  char buffer[32];
  const auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, value, std::chars_format::general, 6);
  (void)ec;
  return std::string(buffer, end);
}

namespace {

// Boost.JSON writes doubles as 7E-1 (doc/architecture.md, GCC 12 + Boost 1.81 rule 6): scalars are written here.
void write_value(std::ostream& out, const json::value& value);

void write_object(std::ostream& out, const json::object& object) {
  out << '{';
  bool first = true;
  for (const auto& [key, value] : object) {
    if (!first) out << ',';
    first = false;
    out << json::serialize(json::string(key)) << ':';
    write_value(out, value);
  }
  out << '}';
}

void write_value(std::ostream& out, const json::value& value) {
  switch (value.kind()) {
    case json::kind::double_: out << format_number(value.get_double()); break;
    case json::kind::object: write_object(out, value.get_object()); break;
    case json::kind::array: {
      out << '[';
      bool first = true;
      for (const json::value& element : value.get_array()) {
        if (!first) out << ',';
        first = false;
        write_value(out, element);
      }
      out << ']';
      break;
    }
    default: out << json::serialize(value);
  }
}

// One CSV cell: a scalar as JSON writes it, a string unquoted unless it needs quoting, an array joined with ';'.
std::string csv_cell(const json::value& value) {
  if (value.is_string()) {
    const std::string text(value.get_string());
    if (text.find_first_of(",\"\n") == std::string::npos) return text;
    std::string quoted = "\"";
    for (char c : text) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
    return quoted + "\"";
  }
  if (value.is_null()) return "";
  if (value.is_array()) {
    std::string joined;
    for (const json::value& element : value.get_array()) {
      if (!joined.empty()) joined += ';';
      joined += csv_cell(element);
    }
    return joined;
  }
  std::ostringstream text;
  write_value(text, value);
  return text.str();
}

void flatten(const json::object& object, const std::string& prefix,
             std::vector<std::pair<std::string, std::string>>& out) {
  for (const auto& [key, value] : object) {
    const std::string name = prefix + std::string(key);
    if (value.is_object()) {
      flatten(value.get_object(), name + ".", out);
    } else {
      out.emplace_back(name, csv_cell(value));
    }
  }
}

bool is_distribution(const json::value& value) {
  return value.is_object() && value.get_object().contains("p50");
}

std::string text_of(const json::value& value) {
  if (value.is_string()) return std::string(value.get_string());
  std::ostringstream text;
  write_value(text, value);
  return text.str();
}

void write_distribution_row(std::ostream& out, std::string_view name, const json::object& distribution) {
  out << "  " << std::left << std::setw(30) << name;
  for (const char* key : {"p50", "p90", "p99", "max"}) {
    out << ' ' << key << ' ' << std::setw(10) << text_of(distribution.at(key));
  }
  out << " (n=" << text_of(distribution.at("count")) << ")\n";
}

void write_rows(std::ostream& out, const json::object& fields, const std::string& prefix) {
  for (const auto& [key, value] : fields) {
    const std::string name = prefix + std::string(key);
    if (key == "schema" || key == "scenario" || key == "params") continue;
    if (is_distribution(value)) {
      write_distribution_row(out, name, value.get_object());
    } else if (value.is_object()) {
      write_rows(out, value.get_object(), name + ".");
    } else {
      out << "  " << std::left << std::setw(30) << name << ' ' << text_of(value) << '\n';
    }
  }
}

}  // namespace

void write_json_line(std::ostream& out, const json::object& fields) {
  write_object(out, fields);
  out << '\n';
}

void write_csv(std::ostream& out, const json::object& fields) {
  std::vector<std::pair<std::string, std::string>> cells;
  flatten(fields, "", cells);
  for (std::size_t i = 0; i < cells.size(); ++i) out << (i == 0 ? "" : ",") << cells[i].first;
  out << '\n';
  for (std::size_t i = 0; i < cells.size(); ++i) out << (i == 0 ? "" : ",") << cells[i].second;
  out << '\n';
}

void write_table(std::ostream& out, const json::object& fields) {
  out << "== " << text_of(fields.at("scenario"));
  if (const auto* params = fields.if_contains("params"); params != nullptr && params->is_object()) {
    for (const auto& [key, value] : params->get_object()) out << "  " << std::string(key) << '=' << text_of(value);
  }
  out << '\n';
  write_rows(out, fields, "");
  out << std::flush;
}

}  // namespace tinker::bench
