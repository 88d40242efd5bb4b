// SafetensorsFile (include/tinker/safetensors.hpp): reading files written by hand byte by byte,
// through a real mapping and from memory.
#include "support/expect_error.hpp"
#include "support/temp_files.hpp"
#include "unit/weights/safetensors_bytes.hpp"

#include <tinker/safetensors.hpp>

#include <gtest/gtest.h>

namespace tinker::safetensors {
namespace {

using test::expect_tinker_error;
using test_files::f32_bytes;
using test_files::safetensors_bytes;
using test_files::write_bytes_file;

// Two tensors listed out of data order, with metadata: what torch's save_file writes, by hand.
std::string two_tensor_file() {
  const std::string header = R"({"__metadata__":{"format":"pt"},)"
                             R"("b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]},)"
                             R"("a":{"dtype":"U8","shape":[2,2],"data_offsets":[0,4]}})";
  return safetensors_bytes(header, std::string("\x01\x02\x03\x04", 4) + f32_bytes(1.5F, -2.25F));
}

TEST(SafetensorsFile, ReadsAHandWrittenFileFromMemory) {
  const auto file = SafetensorsFile::from_bytes(two_tensor_file(), "two.safetensors");
  EXPECT_EQ(file.path(), "two.safetensors");
  ASSERT_EQ(file.tensors().size(), 2U);
  EXPECT_EQ(file.tensors()[0].name, "a");  // in data order, not header order
  EXPECT_EQ(file.tensors()[1].name, "b");
  const auto& a = file.at("a");
  EXPECT_EQ(a.dtype, Dtype::u8);
  EXPECT_EQ(a.shape, (std::vector<std::int64_t>{2, 2}));
  EXPECT_EQ(a.element_count(), 4U);
  const auto a_bytes = file.data(a);
  ASSERT_EQ(a_bytes.size(), 4U);
  EXPECT_EQ(a_bytes[3], std::byte{4});
  EXPECT_EQ(file.read_f32(file.at("b")), (std::vector<float>{1.5F, -2.25F}));
  EXPECT_EQ(file.metadata(), (std::map<std::string, std::string>{{"format", "pt"}}));
  EXPECT_EQ(file.data_offset(), two_tensor_file().size() - 12);
  EXPECT_EQ(file.file_size(), two_tensor_file().size());
  EXPECT_EQ(file.find("c"), nullptr);
}

TEST(SafetensorsFile, OpensTheSameFileFromDiskThroughAMapping) {
  test::TempDir dir;
  write_bytes_file(dir / "two.safetensors", two_tensor_file());
  const auto file = SafetensorsFile::open(dir / "two.safetensors");
  EXPECT_EQ(file.path(), dir / "two.safetensors");
  EXPECT_EQ(file.read_f32(file.at("b")), (std::vector<float>{1.5F, -2.25F}));
  EXPECT_EQ(file.file_size(), two_tensor_file().size());
  file.release(file.at("b"));  // dropping the pages leaves the data readable
  EXPECT_EQ(file.read_f32(file.at("b")), (std::vector<float>{1.5F, -2.25F}));
}

TEST(SafetensorsFile, ReleasedPagesOfALargeTensorReadBackTheSameValues) {
  test::TempDir dir;
  std::vector<float> values(5000);
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i) * 0.5F;
  std::string data(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(float));
  const std::string header = R"({"small":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},)"
                             R"("big":{"dtype":"F32","shape":[5000],"data_offsets":[4,20004]}})";
  write_bytes_file(dir / "big.safetensors", safetensors_bytes(header, f32_bytes(7.0F) + data));
  const auto file = SafetensorsFile::open(dir / "big.safetensors");
  EXPECT_EQ(file.read_f32(file.at("big")), values);
  file.release(file.at("big"));
  file.release(file.at("small"));
  EXPECT_EQ(file.read_f32(file.at("big")), values);
  EXPECT_EQ(file.read_f32(file.at("small")), std::vector<float>{7.0F});
}

TEST(SafetensorsFile, MovesKeepTheTensorsValid) {
  auto first = SafetensorsFile::from_bytes(two_tensor_file(), "two.safetensors");
  const TensorInfo* b = first.find("b");
  SafetensorsFile second = std::move(first);
  EXPECT_EQ(second.find("b"), b);
  EXPECT_EQ(second.read_f32(*b), (std::vector<float>{1.5F, -2.25F}));
}

TEST(SafetensorsFile, AcceptsAnEmptyDataSectionAndZeroSizedTensors) {
  const auto file = SafetensorsFile::from_bytes(
      safetensors_bytes(R"({"empty":{"dtype":"BF16","shape":[0,4],"data_offsets":[0,0]}})"), "empty.safetensors");
  ASSERT_EQ(file.tensors().size(), 1U);
  EXPECT_EQ(file.data(file.at("empty")).size(), 0U);
  EXPECT_TRUE(file.read_f32(file.at("empty")).empty());
  EXPECT_TRUE(SafetensorsFile::from_bytes(safetensors_bytes("{}"), "none.safetensors").tensors().empty());
}

TEST(SafetensorsFile, ReadsAScalarAndEveryFloatDtype) {
  const std::string header = R"({"s":{"dtype":"F64","shape":[],"data_offsets":[0,8]},)"
                             R"("h":{"dtype":"F16","shape":[1],"data_offsets":[8,10]},)"
                             R"("b":{"dtype":"BF16","shape":[1],"data_offsets":[10,12]}})";
  const double scalar = -0.125;
  std::string data(reinterpret_cast<const char*>(&scalar), sizeof scalar);
  data += std::string("\x00\x3c", 2);  // f16 1.0
  data += std::string("\xc0\x3f", 2);  // bf16 1.5
  const auto file = SafetensorsFile::from_bytes(safetensors_bytes(header, data), "floats.safetensors");
  EXPECT_EQ(file.at("s").element_count(), 1U);
  EXPECT_EQ(file.read_f32(file.at("s")), std::vector<float>{-0.125F});
  EXPECT_EQ(file.read_f32(file.at("h")), std::vector<float>{1.0F});
  EXPECT_EQ(file.read_f32(file.at("b")), std::vector<float>{1.5F});
}

TEST(SafetensorsFile, AtNamesTheFileAndTheMissingTensor) {
  const auto file = SafetensorsFile::from_bytes(two_tensor_file(), "two.safetensors");
  expect_tinker_error(errc::invalid_argument, "two.safetensors: no tensor 'c'", [&] { (void)file.at("c"); });
}

TEST(SafetensorsFile, RefusesATensorOfAnotherFile) {
  const auto file = SafetensorsFile::from_bytes(two_tensor_file(), "two.safetensors");
  const auto other = SafetensorsFile::from_bytes(two_tensor_file(), "other.safetensors");
  expect_tinker_error(errc::invalid_argument, "two.safetensors: tensor 'b' is not one of this file's",
                      [&] { (void)file.data(other.at("b")); });
  TensorInfo made_up{"b", Dtype::f32, {2}, 4, 12};
  expect_tinker_error(errc::invalid_argument, "not one of this file's", [&] { (void)file.data(made_up); });
  file.release(made_up);  // a no-op, not a crash
}

TEST(SafetensorsFile, ReadF32RefusesIntegerTensors) {
  const auto file = SafetensorsFile::from_bytes(two_tensor_file(), "two.safetensors");
  expect_tinker_error(errc::invalid_argument, "two.safetensors: tensor 'a': U8 cannot be read as float",
                      [&] { (void)file.read_f32(file.at("a")); });
}

TEST(SafetensorsFile, OpenNamesAMissingFile) {
  test::TempDir dir;
  expect_tinker_error(errc::io_error, (dir / "absent.safetensors").string() + ": cannot open",
                      [&] { (void)SafetensorsFile::open(dir / "absent.safetensors"); });
}

TEST(SafetensorsFile, OpenRefusesADirectory) {
  test::TempDir dir;
  expect_tinker_error(errc::io_error, "not a regular file", [&] { (void)SafetensorsFile::open(dir.path()); });
}

TEST(SafetensorsFile, OpenRefusesAnEmptyFileAsInvalid) {
  test::TempDir dir;
  write_bytes_file(dir / "empty.safetensors", "");
  expect_tinker_error(errc::invalid_file, "empty.safetensors: file of 0 bytes",
                      [&] { (void)SafetensorsFile::open(dir / "empty.safetensors"); });
}

}  // namespace
}  // namespace tinker::safetensors
