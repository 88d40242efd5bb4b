// Safetensors files parsed back independently, and tar archives read by the system `tar`.
#include "programs/local/tokenizer/archive_writer.hpp"

#include "unit/programs/local/tokenizer/tokenizer_test_support.hpp"

#include <tinker/error.hpp>

#include <gtest/gtest.h>
#include <boost/json.hpp>

#include <bit>
#include <cstdio>
#include <cstring>

namespace tinker::local {
namespace {

namespace fs = std::filesystem;
using test::read_bytes;
using test::TempDir;
using test::write_bytes;

SafetensorsTensor tensor(std::string name, std::vector<std::int64_t> shape, std::vector<float> values) {
  SafetensorsTensor t;
  t.name = std::move(name);
  t.shape = std::move(shape);
  t.values = std::move(values);
  return t;
}

TarEntry entry(std::string name, std::string data) {
  TarEntry e;
  e.name = std::move(name);
  e.data = std::move(data);
  return e;
}

std::uint64_t read_le64(std::string_view bytes) {
  std::uint64_t value = 0;
  for (int i = 7; i >= 0; --i) value = (value << 8) | static_cast<unsigned char>(bytes[static_cast<std::size_t>(i)]);
  return value;
}

float read_le_f32(std::string_view bytes) {
  std::uint32_t bits = 0;
  for (int i = 3; i >= 0; --i) bits = (bits << 8) | static_cast<unsigned char>(bytes[static_cast<std::size_t>(i)]);
  return std::bit_cast<float>(bits);
}

template <typename Call>
void expect_invalid_argument(const Call& call, const std::string& mention) {
  try {
    call();
    ADD_FAILURE() << "no error; expected one mentioning " << mention;
  } catch (const tinker::error& e) {
    EXPECT_EQ(e.code(), make_error_code(errc::invalid_argument)) << e.what();
    EXPECT_NE(std::string(e.what()).find(mention), std::string::npos) << e.what();
  }
}

TEST(WriteSafetensors, ParsesBackWithSortedNamesOffsetsAndExactValues) {
  const std::vector<SafetensorsTensor> tensors{
      tensor("layers.1.lora_B.weight", {2, 3}, {0.5f, -1.25f, 3.0e-8f, 1e30f, -0.0f, 7.0f}),
      tensor("layers.0.lora_A.weight", {3}, {1.0f, 2.0f, 0.1f}),
      tensor("scalar", {}, {42.0f}),
      tensor("empty", {0, 4}, {}),
      tensor("we\"ird\\name\n", {1}, {-3.5f}),
  };
  const std::string file = write_safetensors(tensors);

  ASSERT_GE(file.size(), 8u);
  const std::uint64_t header_size = read_le64(file);
  EXPECT_EQ(header_size % 8, 0u);
  ASSERT_LE(8 + header_size, file.size());
  const std::string header = file.substr(8, header_size);
  EXPECT_EQ(header.find_last_not_of(' ') + 1, header.find_last_of('}') + 1);  // only spaces after the JSON

  const auto json = boost::json::parse(header).as_object();
  EXPECT_EQ(json.at("__metadata__").at("format").as_string(), "pt");
  EXPECT_EQ(json.size(), tensors.size() + 1);

  std::vector<std::pair<std::string, const SafetensorsTensor*>> sorted;
  for (const auto& t : tensors) sorted.emplace_back(t.name, &t);
  std::sort(sorted.begin(), sorted.end());
  const std::string_view data = std::string_view(file).substr(8 + header_size);
  std::uint64_t expected_begin = 0;
  std::size_t previous_position = 0;
  for (const auto& [name, t] : sorted) {
    SCOPED_TRACE(name);
    const auto& info = json.at(name).as_object();
    EXPECT_EQ(info.at("dtype").as_string(), "F32");
    std::vector<std::int64_t> shape;
    for (const auto& dim : info.at("shape").as_array()) shape.push_back(dim.as_int64());
    EXPECT_EQ(shape, t->shape);
    const auto& offsets = info.at("data_offsets").as_array();
    const auto begin = static_cast<std::uint64_t>(offsets.at(0).as_int64());
    const auto end = static_cast<std::uint64_t>(offsets.at(1).as_int64());
    EXPECT_EQ(begin, expected_begin);  // laid out in name order, back to back
    ASSERT_EQ(end - begin, t->values.size() * 4);
    ASSERT_LE(end, data.size());
    for (std::size_t i = 0; i < t->values.size(); ++i) {
      EXPECT_EQ(std::bit_cast<std::uint32_t>(read_le_f32(data.substr(begin + 4 * i, 4))),
                std::bit_cast<std::uint32_t>(t->values[i]));
    }
    expected_begin = end;
    // Names appear in the header in sorted order too.
    const std::size_t position = header.find(boost::json::serialize(boost::json::value(name)));
    EXPECT_GE(position, previous_position);
    previous_position = position;
  }
  EXPECT_EQ(expected_begin, data.size());
}

TEST(WriteSafetensors, EmptyListIsAValidFile) {
  const std::string file = write_safetensors({});
  const std::uint64_t header_size = read_le64(file);
  EXPECT_EQ(file.size(), 8 + header_size);
  EXPECT_EQ(boost::json::parse(file.substr(8)).as_object().size(), 1u);
}

TEST(WriteSafetensors, RefusesInconsistentTensors) {
  expect_invalid_argument([] { write_safetensors({tensor("a", {2, 2}, {1, 2, 3})}); }, "'a'");
  expect_invalid_argument([] { write_safetensors({tensor("a", {-1}, {})}); }, "negative");
  expect_invalid_argument([] { write_safetensors({tensor("", {1}, {1})}); }, "empty");
  expect_invalid_argument([] { write_safetensors({tensor("a", {1}, {1}), tensor("a", {1}, {2})}); }, "twice");
  expect_invalid_argument([] { write_safetensors({tensor("__metadata__", {1}, {1})}); }, "reserved");
}

// Runs a shell command, returning its standard output; fails the test on a non-zero exit.
std::string run(const std::string& command) {
  std::string output;
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) {
    ADD_FAILURE() << "popen failed: " << command;
    return output;
  }
  char buffer[4096];
  std::size_t n = 0;
  while ((n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0) output.append(buffer, n);
  EXPECT_EQ(::pclose(pipe), 0) << command;
  return output;
}

std::vector<TarEntry> sample_entries() {
  std::string binary;
  for (int i = 0; i < 1000; ++i) binary += static_cast<char>(i % 256);  // includes NULs
  return {
      entry("adapter_model.safetensors", binary),
      entry("adapter_config.json", R"({"r": 8, "lora_alpha": 32})"),
      entry("empty.txt", ""),
      entry("exactly-one-block.bin", std::string(512, 'x')),
      entry(std::string(100, 'n'), "longest name"),
  };
}

TEST(WriteTar, HasUstarHeadersWithValidChecksumsAndTheEndMarker) {
  const std::string archive = write_tar(sample_entries());
  ASSERT_EQ(archive.size() % 512, 0u);
  EXPECT_EQ(archive.substr(archive.size() - 1024), std::string(1024, '\0'));
  // First header, checked independently of the writer.
  const std::string_view header = std::string_view(archive).substr(0, 512);
  EXPECT_EQ(header.substr(257, 6), std::string_view("ustar\0", 6));
  EXPECT_EQ(header.substr(263, 2), "00");
  EXPECT_EQ(header.substr(100, 8), std::string_view("0000644\0", 8));
  EXPECT_EQ(header[156], '0');
  unsigned sum = 0;
  for (std::size_t i = 0; i < 512; ++i) sum += (i >= 148 && i < 156) ? ' ' : static_cast<unsigned char>(header[i]);
  EXPECT_EQ(std::stoul(std::string(header.substr(148, 6)), nullptr, 8), sum);
  EXPECT_EQ(write_tar(sample_entries()), archive);  // deterministic
}

TEST(WriteTar, SystemTarListsAndExtractsIdenticalFiles) {
  TempDir dir;
  const auto entries = sample_entries();
  write_bytes(dir.path() / "archive.tar", write_tar(entries));
  fs::create_directories(dir.path() / "out");

  const std::string listing = run("tar -tf '" + (dir.path() / "archive.tar").string() + "'");
  std::string expected_listing;
  for (const auto& e : entries) expected_listing += e.name + "\n";
  EXPECT_EQ(listing, expected_listing);
  const std::string verbose = run("tar -tvf '" + (dir.path() / "archive.tar").string() + "'");
  EXPECT_EQ(verbose.find("-rw-r--r--"), 0u) << verbose;

  run("tar -xf '" + (dir.path() / "archive.tar").string() + "' -C '" + (dir.path() / "out").string() + "'");
  std::size_t extracted = 0;
  for (const auto& file : fs::directory_iterator(dir.path() / "out")) {
    (void)file;
    ++extracted;
  }
  EXPECT_EQ(extracted, entries.size());
  for (const auto& e : entries) {
    EXPECT_TRUE(read_bytes(dir.path() / "out" / e.name) == e.data) << e.name;
  }
}

TEST(WriteTar, RefusesNamesUstarCannotHoldOrThatAreNotPlainFileNames) {
  expect_invalid_argument([] { write_tar({entry("", "x")}); }, "empty");
  expect_invalid_argument([] { write_tar({entry(std::string(101, 'n'), "x")}); }, "longer than 100");
  expect_invalid_argument([] { write_tar({entry("dir/file", "x")}); }, "'/'");
  expect_invalid_argument([] { write_tar({entry("..", "x")}); }, "not a file name");
  expect_invalid_argument([] { write_tar({entry("a", "x"), entry("a", "y")}); }, "twice");
  expect_invalid_argument([] { write_tar({entry(std::string("a\0b", 3), "x")}); }, "NUL");
}

TEST(WriteTar, EmptyArchiveIsJustTheEndMarker) {
  EXPECT_EQ(write_tar({}), std::string(1024, '\0'));
}

}  // namespace
}  // namespace tinker::local
