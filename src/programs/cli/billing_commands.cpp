// `tinker billing usage STARTING_ON ENDING_BEFORE [--csv PATH] [--sessions-csv PATH]` (doc/cli.md):
// usage events per hour bucket, as a table, JSON or CSV.
#include "programs/cli/context.hpp"
#include "programs/cli/output.hpp"

#include <tinker/async.hpp>
#include <tinker/types/telemetry.hpp>

#include <CLI/CLI.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/string_view.hpp>

#include <charconv>
#include <fstream>
#include <memory>
#include <ostream>
#include <variant>

namespace tinker::cli {
namespace {
namespace asio = boost::asio;

class UsageOptions {
 public:
  UsageOptions() = default;
  std::string starting_on_text;
  std::string ending_before_text;
  Timestamp starting_on{};
  Timestamp ending_before{};
  std::string csv;           // "-": standard output instead of the table/JSON
  std::string sessions_csv;  // "-": standard output
};

// The columns an event type fills: cached, token_count, count, gigabyte_hours.
class EventCells {
 public:
  std::string type, cached, token_count, count, gigabyte_hours;
};

EventCells cells_of(const billing::EventInfo& info) {
  EventCells c;
  if (const auto* e = std::get_if<billing::Training>(&info)) {
    c.type = "training";
    c.token_count = std::to_string(e->token_count);
  } else if (const auto* p = std::get_if<billing::SamplingPrefill>(&info)) {
    c.type = "sampling_prefill";
    c.cached = p->cached ? "true" : "false";
    c.token_count = std::to_string(p->token_count);
  } else if (const auto* s = std::get_if<billing::SamplingSample>(&info)) {
    c.type = "sampling_sample";
    c.token_count = std::to_string(s->token_count);
  } else if (const auto* k = std::get_if<billing::CheckpointEvent>(&info)) {
    c.type = "checkpoint";
    c.count = std::to_string(k->count);
  } else if (const auto* g = std::get_if<billing::Storage>(&info)) {
    c.type = "storage";
    char buf[32];
    const auto written = std::to_chars(buf, buf + sizeof buf, g->gigabyte_hours);  // shortest round trip
    c.gigabyte_hours.assign(buf, written.ptr);
  }
  return c;
}

std::string csv_field(const std::string& value) {
  if (value.find_first_of(",\"\n\r") == std::string::npos) return value;
  std::string quoted = "\"";
  for (char ch : value) {
    if (ch == '"') quoted += '"';
    quoted += ch;
  }
  return quoted + "\"";
}

void write_csv_row(std::ostream& out, const std::vector<std::string>& fields) {
  for (std::size_t i = 0; i < fields.size(); ++i) out << (i == 0 ? "" : ",") << csv_field(fields[i]);
  out << "\r\n";
}

void write_events_csv(std::ostream& out, const BillingUsageResponse& usage) {
  write_csv_row(out, {"bucket_start", "bucket_end", "type", "base_model", "user_id", "user_name", "session_id",
                      "project_id", "cached", "token_count", "count", "gigabyte_hours"});
  for (const BillingUsageEntry& e : usage.data) {
    const EventCells c = cells_of(e.event_info);
    write_csv_row(
        out, {format_timestamp(e.bucket_start), format_timestamp(e.bucket_end), c.type, e.base_model.value_or(""),
              e.user_id.value_or(""), e.user_name.value_or(""), e.session_id.value_or(""), e.project_id.value_or(""),
              c.cached, c.token_count, c.count, c.gigabyte_hours});
  }
}

// `{"key":value,...}` from the metadata's JSON values.
std::string metadata_json(const JsonObject& metadata) {
  std::string text = "{";
  for (const auto& [key, value] : metadata) {
    if (text.size() > 1) text += ',';
    text += boost::json::serialize(boost::json::string_view(key)) + ":" + value.text();
  }
  return text + "}";
}

void write_sessions_csv(std::ostream& out, const BillingUsageResponse& usage) {
  write_csv_row(out, {"session_id", "user_metadata"});
  for (const auto& [id, info] : usage.sessions) {
    write_csv_row(out, {id, info.user_metadata ? metadata_json(*info.user_metadata) : ""});
  }
}

// Writes to `path`, or to standard output for "-".
template <class Write>
void write_to(Context& context, const std::string& path, Write write) {
  if (path == "-") {
    write(context.out);
    return;
  }
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  if (!file) throw CliError("cannot write " + path);
  write(file);
  file.close();
  if (!file) throw CliError("cannot write " + path);
}

Table usage_table(const BillingUsageResponse& usage) {
  Table table({"Bucket Start", "Type", "Base Model", "Session", "Amount"});
  for (const BillingUsageEntry& e : usage.data) {
    const EventCells c = cells_of(e.event_info);
    std::string amount = !c.token_count.empty() ? c.token_count + " tokens"
                         : !c.count.empty()     ? c.count + " checkpoints"
                                                : c.gigabyte_hours + " GB-h";
    if (c.cached == "true") amount += " (cached)";
    table.add_row({display_time(e.bucket_start), c.type, e.base_model.value_or("-"), e.session_id.value_or("-"),
                   std::move(amount)});
  }
  return table;
}

asio::awaitable<void> billing_usage(Context& context, UsageOptions options) {
  const BillingUsageResponse usage =
      co_await context.rest().async_get_billing_usage(options.starting_on, options.ending_before, use_awaitable);
  const bool csv_to_stdout = options.csv == "-" || options.sessions_csv == "-";
  if (!options.csv.empty()) write_to(context, options.csv, [&](std::ostream& o) { write_events_csv(o, usage); });
  if (!options.sessions_csv.empty()) {
    write_to(context, options.sessions_csv, [&](std::ostream& o) { write_sessions_csv(o, usage); });
  }
  if (csv_to_stdout) co_return;
  if (context.json()) {
    print_json(context.out, json_of(usage));
  } else {
    print_listing(context, usage_table(usage), "No usage in this window");
  }
}

}  // namespace

void add_billing_commands(CLI::App& app, Action& action) {
  CLI::App& group = add_group(app, "billing", "Billing");
  auto options = std::make_shared<UsageOptions>();
  CLI::App& usage = add_command(group, "usage", "Usage events per hour (window of at most 14 days)", action, options,
                                billing_usage, [](UsageOptions& o) {
                                  o.starting_on = parse_cli_time(o.starting_on_text, "STARTING_ON");
                                  o.ending_before = parse_cli_time(o.ending_before_text, "ENDING_BEFORE");
                                  if (!(o.starting_on < o.ending_before)) {
                                    throw UsageError("STARTING_ON must be before ENDING_BEFORE");
                                  }
                                });
  usage.add_option("STARTING_ON", options->starting_on_text, "Start (ISO-8601, UTC if no zone; whole hours)")
      ->required();
  usage.add_option("ENDING_BEFORE", options->ending_before_text, "End, exclusive (ISO-8601, UTC if no zone)")
      ->required();
  usage.add_option("--csv", options->csv, "Also write the events as CSV to PATH ('-': standard output only)");
  usage.add_option("--sessions-csv", options->sessions_csv,
                   "Write the sessions' metadata as CSV to PATH ('-': stdout)");
  add_billing_storage_command(group, action);
}

}  // namespace tinker::cli
