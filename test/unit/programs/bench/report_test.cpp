// A scenario's result written as JSON (numbers our own way), CSV (flattened) and a table
// (src/programs/bench/report.hpp).
#include "programs/bench/report.hpp"

#include <gtest/gtest.h>

#include <boost/json/parse.hpp>

#include <sstream>

namespace tinker::bench {
namespace {

namespace json = boost::json;

Report sample_report() {
  Report report("sample");
  json::object params;
  params["requests"] = 12;
  report.set("params", std::move(params));
  report.set("samples_per_s", 0.7);
  report.set_distribution("submit_ms", Percentiles(std::vector<double>{1, 2, 3, 4}));
  report.set_text("first_error", "a, \"quoted\" error");
  json::array ratios;
  ratios.emplace_back(1.5);
  ratios.emplace_back(2.0);
  report.set("ratios", std::move(ratios));
  report.set_null("server_cpu_s");
  return report;
}

TEST(FormatNumber, IntegersAsIntegersOthersWithSixDigits) {
  EXPECT_EQ(format_number(3.0), "3");
  EXPECT_EQ(format_number(0.7), "0.7");
  EXPECT_EQ(format_number(1234.56789), "1234.57");
  EXPECT_EQ(format_number(0.000123456789), "0.000123457");
  EXPECT_EQ(format_number(-2.5), "-2.5");
}

TEST(Report, JsonLineKeepsTheFieldsInOrderAndParses) {
  std::ostringstream out;
  write_json_line(out, sample_report().fields());
  const std::string line = out.str();
  ASSERT_EQ(line.back(), '\n');
  EXPECT_EQ(line.find('\n'), line.size() - 1) << "one line";
  EXPECT_NE(line.find(R"("samples_per_s":0.7,)"), std::string::npos) << line;  // not 7E-1
  const json::object parsed = json::parse(line).as_object();
  EXPECT_EQ(parsed.begin()->key(), "schema");
  EXPECT_EQ(parsed.at("schema"), json::value(result_schema));
  EXPECT_EQ(parsed.at("submit_ms").at("p50"), json::value(2));
  EXPECT_TRUE(parsed.at("server_cpu_s").is_null());
}

TEST(Report, CsvFlattensObjectsJoinsArraysAndQuotes) {
  std::ostringstream out;
  write_csv(out, sample_report().fields());
  std::istringstream lines(out.str());
  std::string header;
  std::string row;
  std::getline(lines, header);
  std::getline(lines, row);
  EXPECT_EQ(header,
            "schema,scenario,params.requests,samples_per_s,submit_ms.count,submit_ms.p50,submit_ms.p90,submit_ms.p99,"
            "submit_ms.max,submit_ms.mean,first_error,ratios,server_cpu_s");
  EXPECT_EQ(row, std::string(result_schema) + R"(,sample,12,0.7,4,2,4,4,4,2.5,"a, ""quoted"" error",1.5;2,)");
}

TEST(Report, TableHasTheParametersInItsHeadingAndAPercentileRow) {
  std::ostringstream out;
  write_table(out, sample_report().fields());
  const std::string table = out.str();
  EXPECT_EQ(table.rfind("== sample  requests=12\n", 0), 0u) << table;
  EXPECT_NE(table.find("submit_ms"), std::string::npos);
  EXPECT_NE(table.find("p99 4"), std::string::npos) << table;
}

}  // namespace
}  // namespace tinker::bench
