// The GGUF writer: a file checked byte for byte against the format written out by hand, files read
// back by Hugging Face's @huggingface/gguf parser (every value type, F32/F16/BF16 tensors,
// alignment), and refusals that leave nothing behind.
#include "weights/gguf_writer.hpp"

#include "support/expect_error.hpp"
#include "support/temp_files.hpp"
#include "unit/weights/gguf_reference.hpp"
#include "unit/weights/safetensors_bytes.hpp"

#include <tinker/safetensors.hpp>

#include <gtest/gtest.h>
#include <boost/json/serialize.hpp>

#include <filesystem>
#include <string>
#include <vector>

// A named namespace, not an anonymous one: unity builds compile several test files together.
namespace tinker::weights::detail::gguf_writer_tests {

namespace fs = std::filesystem;
using namespace std::string_literals;
using safetensors::test_files::f32_bytes;
using safetensors::test_files::read_bytes_file;
using test::TempDir;

std::vector<std::byte> as_bytes(const std::string& text) {
  const auto* data = reinterpret_cast<const std::byte*>(text.data());
  return {data, data + text.size()};
}

std::vector<std::byte> encoded(safetensors::Dtype dtype, const std::vector<float>& values) {
  std::vector<std::byte> bytes(values.size() * safetensors::dtype_size(dtype));
  safetensors::from_f32(dtype, values, bytes);
  return bytes;
}

std::size_t entries_in(const fs::path& dir) {
  return static_cast<std::size_t>(std::distance(fs::directory_iterator(dir), fs::directory_iterator()));
}

TEST(GgufWriter, FileMatchesTheFormatByteForByte) {
  const TempDir dir("gguf-writer");
  const fs::path file = dir / "a.gguf";
  GgufWriter writer(file);
  writer.add("general.architecture", "llama"s);
  writer.add("adapter.lora.alpha", 16.0F);
  const std::vector<std::int64_t> shape{2, 3};  // row-major: 2 rows of 3
  writer.add_tensor("t", shape, GgmlType::f32);
  writer.write(0, as_bytes(f32_bytes(1, 2, 3, 4, 5, 6)));
  writer.finish();

  const std::string expected =
      "GGUF"                                // magic
      "\x03\x00\x00\x00"                    // version 3
      "\x01\x00\x00\x00\x00\x00\x00\x00"    // 1 tensor
      "\x02\x00\x00\x00\x00\x00\x00\x00"    // 2 key-value pairs
      "\x14\x00\x00\x00\x00\x00\x00\x00"    // key length 20
      "general.architecture"                //
      "\x08\x00\x00\x00"                    // type 8: string
      "\x05\x00\x00\x00\x00\x00\x00\x00"    // length 5
      "llama"                               // (offset 69)
      "\x12\x00\x00\x00\x00\x00\x00\x00"    // key length 18
      "adapter.lora.alpha"                  //
      "\x06\x00\x00\x00"                    // type 6: float32
      "\x00\x00\x80\x41"                    // 16.0f (offset 103)
      "\x01\x00\x00\x00\x00\x00\x00\x00"    // name length 1
      "t"                                   //
      "\x02\x00\x00\x00"                    // 2 dimensions
      "\x03\x00\x00\x00\x00\x00\x00\x00"    // ne[0] = 3: the contiguous dimension first
      "\x02\x00\x00\x00\x00\x00\x00\x00"    // ne[1] = 2
      "\x00\x00\x00\x00"                    // type 0: F32
      "\x00\x00\x00\x00\x00\x00\x00\x00"    // offset 0 in the data section (offset 144)
      "\x00\x00\x00\x00\x00\x00\x00\x00"    //
      "\x00\x00\x00\x00\x00\x00\x00\x00"s;  // padding to 160, a multiple of 32
  ASSERT_EQ(expected.size(), 160U);
  EXPECT_EQ(writer.header_bytes(), expected);
  const std::string data = f32_bytes(1, 2, 3, 4, 5, 6) + std::string(8, '\0');  // 24 bytes padded to 32
  EXPECT_EQ(read_bytes_file(file), expected + data);
  EXPECT_EQ(writer.file_size(), 192U);
  EXPECT_EQ(entries_in(dir.path()), 1U) << "the temporary file is gone";
}

TEST(GgufWriter, HuggingFaceParserReadsEveryValueTypeAndTensor) {
  const TempDir dir("gguf-writer");
  const fs::path file = dir / "all.gguf";
  GgufWriter writer(file);
  writer.add("test.u32", std::uint32_t{7});
  writer.add("test.i32", std::int32_t{-5});
  writer.add("test.u64", std::uint64_t{1} << 40);
  writer.add("test.f32", 0.5F);
  writer.add("test.bool", true);
  writer.add("test.string", "h\xc3\xa9llo"s);
  writer.add("test.u32s", std::vector<std::uint32_t>{1, 2, 3});
  writer.add("test.i32s", std::vector<std::int32_t>{-1, 2});
  writer.add("test.f32s", std::vector<float>{0.25F, -1.5F});
  writer.add("test.strings", std::vector<std::string>{"a", "bc"});

  const std::vector<float> a{1, 2, 3, 4, 5, 6};
  const std::vector<float> b{0.5F, -2, 1024, 0x1p-10F, 65504};
  const std::vector<float> c{1.5F, -3, 256, 0.0078125F};
  writer.add_tensor("a", std::vector<std::int64_t>{2, 3}, GgmlType::f32);
  writer.add_tensor("b", std::vector<std::int64_t>{5}, GgmlType::f16);
  writer.add_tensor("c", std::vector<std::int64_t>{2, 1, 2}, GgmlType::bf16);
  writer.write(0, encoded(safetensors::Dtype::f32, a));
  const std::vector<std::byte> b_bytes = encoded(safetensors::Dtype::f16, b);
  writer.write(1, std::span(b_bytes).first(4));  // a tensor may come in pieces
  writer.write(1, std::span(b_bytes).subspan(4));
  writer.write(2, encoded(safetensors::Dtype::bf16, c));
  writer.finish();
  EXPECT_EQ(fs::file_size(file), writer.file_size());

  const boost::json::value reading = test::read_gguf_with_reference(file);
  EXPECT_EQ(reading.at("version").to_number<int>(), 3);
  EXPECT_EQ(reading.at("tensor_count").to_number<int>(), 3);
  EXPECT_EQ(reading.at("kv_count").to_number<int>(), 10);
  const boost::json::object& metadata = reading.at("metadata").as_object();
  const auto type_of = [&](const char* key) { return metadata.at(key).at("type").to_number<int>(); };
  EXPECT_EQ(type_of("test.u32"), 4);
  EXPECT_EQ(metadata.at("test.u32").at("value").to_number<int>(), 7);
  EXPECT_EQ(type_of("test.i32"), 5);
  EXPECT_EQ(metadata.at("test.i32").at("value").to_number<int>(), -5);
  EXPECT_EQ(type_of("test.u64"), 10);
  EXPECT_EQ(metadata.at("test.u64").at("value").to_number<double>(), 1099511627776.0);
  EXPECT_EQ(type_of("test.f32"), 6);
  EXPECT_EQ(metadata.at("test.f32").at("value").to_number<double>(), 0.5);
  EXPECT_EQ(type_of("test.bool"), 7);
  EXPECT_TRUE(metadata.at("test.bool").at("value").as_bool());
  EXPECT_EQ(type_of("test.string"), 8);
  EXPECT_EQ(metadata.at("test.string").at("value").as_string(), "h\xc3\xa9llo");
  EXPECT_EQ(type_of("test.u32s"), 9);
  EXPECT_EQ(metadata.at("test.u32s").at("sub_type").to_number<int>(), 4);
  EXPECT_EQ(test::json_ints(metadata.at("test.u32s").at("value")), (std::vector<std::int64_t>{1, 2, 3}));
  EXPECT_EQ(metadata.at("test.i32s").at("sub_type").to_number<int>(), 5);
  EXPECT_EQ(test::json_ints(metadata.at("test.i32s").at("value")), (std::vector<std::int64_t>{-1, 2}));
  EXPECT_EQ(metadata.at("test.f32s").at("sub_type").to_number<int>(), 6);
  EXPECT_EQ(test::json_floats(metadata.at("test.f32s").at("value")), (std::vector<float>{0.25F, -1.5F}));
  EXPECT_EQ(metadata.at("test.strings").at("sub_type").to_number<int>(), 8);
  EXPECT_EQ(boost::json::serialize(metadata.at("test.strings").at("value")), R"(["a","bc"])");

  const auto* ta = test::find_gguf_tensor(reading, "a");
  const auto* tb = test::find_gguf_tensor(reading, "b");
  const auto* tc = test::find_gguf_tensor(reading, "c");
  ASSERT_TRUE(ta && tb && tc);
  EXPECT_EQ(test::json_ints(ta->at("shape")), (std::vector<std::int64_t>{3, 2}));
  EXPECT_EQ(test::json_ints(tb->at("shape")), (std::vector<std::int64_t>{5}));
  EXPECT_EQ(test::json_ints(tc->at("shape")), (std::vector<std::int64_t>{2, 1, 2}));
  EXPECT_EQ(ta->at("dtype").to_number<int>(), 0);
  EXPECT_EQ(tb->at("dtype").to_number<int>(), 1);
  EXPECT_EQ(tc->at("dtype").to_number<int>(), 30);
  EXPECT_EQ(ta->at("offset").to_number<int>(), 0);
  EXPECT_EQ(tb->at("offset").to_number<int>(), 32);  // 24 bytes padded to 32
  EXPECT_EQ(tc->at("offset").to_number<int>(), 64);  // 10 bytes padded to 32
  EXPECT_EQ(test::json_floats(ta->at("values")), a);
  EXPECT_EQ(test::json_floats(tb->at("values")), b);
  EXPECT_EQ(test::json_floats(tc->at("values")), c);
  EXPECT_EQ(reading.at("tensor_data_offset").to_number<std::uint64_t>(), writer.header_bytes().size());
}

TEST(GgufWriter, CustomAlignmentIsWrittenAndFollowed) {
  const TempDir dir("gguf-writer");
  const fs::path file = dir / "aligned.gguf";
  GgufWriter writer(file, 64);
  writer.add_tensor("x", std::vector<std::int64_t>{3}, GgmlType::f32);
  writer.add_tensor("y", std::vector<std::int64_t>{1}, GgmlType::f32);
  writer.write(0, as_bytes(f32_bytes(1, 2, 3)));
  writer.write(1, as_bytes(f32_bytes(4)));
  writer.finish();

  const boost::json::value reading = test::read_gguf_with_reference(file);
  EXPECT_EQ(reading.at("metadata").at("general.alignment").at("value").to_number<int>(), 64);
  EXPECT_EQ(reading.at("tensor_data_offset").to_number<int>() % 64, 0);
  EXPECT_EQ(test::find_gguf_tensor(reading, "y")->at("offset").to_number<int>(), 64);
  EXPECT_EQ(test::json_floats(test::find_gguf_tensor(reading, "y")->at("values")), (std::vector<float>{4}));
}

TEST(GgufWriter, RefusesBadDeclarations) {
  const TempDir dir("gguf-writer");
  GgufWriter writer(dir / "bad.gguf");
  writer.add("k", 1.0F);
  test::expect_tinker_error(errc::invalid_argument, "'k' added twice", [&] { writer.add("k", 2.0F); });
  test::expect_tinker_error(errc::invalid_argument, "key is empty", [&] { writer.add("", 2.0F); });
  const std::vector<std::int64_t> shape{2};
  writer.add_tensor("t", shape, GgmlType::f32);
  test::expect_tinker_error(errc::invalid_argument, "'t' declared twice",
                            [&] { writer.add_tensor("t", shape, GgmlType::f16); });
  test::expect_tinker_error(errc::invalid_argument, "longer than 63 bytes",
                            [&] { writer.add_tensor(std::string(64, 'n'), shape, GgmlType::f32); });
  test::expect_tinker_error(errc::invalid_argument, "5 dimensions", [&] {
    writer.add_tensor("u", std::vector<std::int64_t>{1, 1, 1, 1, 1}, GgmlType::f32);
  });
  test::expect_tinker_error(errc::invalid_argument, "negative dimension", [&] {
    writer.add_tensor("u", std::vector<std::int64_t>{2, -1}, GgmlType::f32);
  });
  test::expect_tinker_error(errc::invalid_argument, "not a power of two",
                            [&] { GgufWriter odd(dir / "odd.gguf", 48); });
  EXPECT_EQ(entries_in(dir.path()), 0U);
}

TEST(GgufWriter, RefusesMisorderedOrIncompleteDataAndLeavesNothing) {
  const TempDir dir("gguf-writer");
  const fs::path file = dir / "partial.gguf";
  {
    GgufWriter writer(file);
    writer.add_tensor("first", std::vector<std::int64_t>{2}, GgmlType::f32);
    writer.add_tensor("second", std::vector<std::int64_t>{1}, GgmlType::f32);
    test::expect_tinker_error(errc::invalid_argument, "written out of order",
                              [&] { writer.write(1, as_bytes(f32_bytes(1))); });
    test::expect_tinker_error(errc::invalid_argument, "do not fit",
                              [&] { writer.write(0, as_bytes(f32_bytes(1, 2, 3))); });
    writer.write(0, as_bytes(f32_bytes(1, 2)));
    test::expect_tinker_error(errc::invalid_argument, "after tensor data",
                              [&] { writer.add("late", std::uint32_t{1}); });
    test::expect_tinker_error(errc::invalid_argument, "'second' was not completely written", [&] { writer.finish(); });
    EXPECT_EQ(entries_in(dir.path()), 1U) << "only the temporary file";
  }
  EXPECT_FALSE(fs::exists(file));
  EXPECT_EQ(entries_in(dir.path()), 0U) << "the unfinished writer removed its temporary file";
}

TEST(GgufWriter, NeverReplacesAnExistingFile) {
  const TempDir dir("gguf-writer");
  const fs::path file = dir / "taken.gguf";
  safetensors::test_files::write_bytes_file(file, "keep");
  test::expect_tinker_error(errc::invalid_argument, "already exists", [&] { GgufWriter writer(file); });

  const fs::path later = dir / "later.gguf";
  {
    GgufWriter writer(later);
    writer.add_tensor("t", std::vector<std::int64_t>{1}, GgmlType::f32);
    writer.write(0, as_bytes(f32_bytes(1)));
    safetensors::test_files::write_bytes_file(later, "someone else's");
    test::expect_tinker_error(errc::invalid_argument, "already exists", [&] { writer.finish(); });
  }
  EXPECT_EQ(read_bytes_file(file), "keep");
  EXPECT_EQ(read_bytes_file(later), "someone else's");
  EXPECT_EQ(entries_in(dir.path()), 2U);
}

}  // namespace tinker::weights::detail::gguf_writer_tests
