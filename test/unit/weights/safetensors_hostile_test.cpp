// Safetensors headers built to mislead (include/tinker/safetensors.hpp): one test per rule of the
// header check. Each is errc::invalid_file naming the file and, when there is one, the tensor.
#include "support/expect_error.hpp"
#include "support/temp_files.hpp"
#include "unit/weights/safetensors_bytes.hpp"

#include <tinker/safetensors.hpp>

#include <gtest/gtest.h>

#include <fcntl.h>
#include <unistd.h>
#include <cstring>

namespace tinker::safetensors {
namespace {

using test::expect_tinker_error;
using test_files::f32_bytes;
using test_files::safetensors_bytes;

constexpr const char* hostile_label = "hostile.safetensors";

// Checks that `bytes` is refused as invalid_file with a message "hostile.safetensors: <text>...".
void expect_refused(const std::string& bytes, const std::string& text) {
  expect_tinker_error(errc::invalid_file, std::string(hostile_label) + ": " + text,
                      [&] { (void)SafetensorsFile::from_bytes(bytes, hostile_label); });
}

// A file whose only tensor "x" has the given JSON body and `data`.
std::string one_tensor(const std::string& body, const std::string& data = {}) {
  return safetensors_bytes(R"({"x":)" + body + "}", data);
}

TEST(SafetensorsHostile, FileShorterThanTheLengthPrefix) {
  expect_refused(std::string("\x02\x00\x00\x00\x00", 5), "file of 5 bytes is shorter than the 8-byte header length");
}

TEST(SafetensorsHostile, HeaderLengthPastTheFileSize) {
  std::string bytes = safetensors_bytes("{}");
  const std::uint64_t length = 123456789012;
  std::memcpy(bytes.data(), &length, sizeof length);
  expect_refused(bytes, "header length 123456789012 exceeds the file size (10 bytes)");
}

TEST(SafetensorsHostile, HeaderLengthOfAllOnesDoesNotOverflow) {
  std::string bytes = safetensors_bytes("{}");
  std::memset(bytes.data(), 0xff, 8);
  expect_refused(bytes, "header length 18446744073709551615 exceeds the file size");
}

TEST(SafetensorsHostile, HeaderLengthOverTheLimitInAFileLargeEnoughToHoldIt) {
  // A sparse file of 100 MB + 16 bytes: large enough for the announced header, nothing on disk.
  test::TempDir dir;
  const auto path = dir / "huge-header.safetensors";
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  ASSERT_GE(fd, 0);
  const std::uint64_t length = 100'000'001;
  ASSERT_EQ(::pwrite(fd, &length, sizeof length, 0), 8);
  ASSERT_EQ(::ftruncate(fd, 100'000'016), 0);
  ::close(fd);
  expect_tinker_error(errc::invalid_file, path.string() + ": header length 100000001 exceeds the limit of 100000000",
                      [&] { (void)SafetensorsFile::open(path); });
}

TEST(SafetensorsHostile, HeaderNotJson) {
  expect_refused(safetensors_bytes(R"({"x":)"), "header is not valid JSON");
}

TEST(SafetensorsHostile, HeaderNotUtf8) {
  expect_refused(safetensors_bytes("{\"\xff\":{}}"), "header is not valid JSON");
}

TEST(SafetensorsHostile, HeaderNestedDeeperThanTheLimit) {
  expect_refused(safetensors_bytes(R"({"__metadata__":)" + std::string(10000, '[') + std::string(10000, ']') + "}"),
                 "header is not valid JSON");
}

TEST(SafetensorsHostile, HeaderNotAnObject) {
  expect_refused(safetensors_bytes("[]"), "header is not a JSON object");
}

TEST(SafetensorsHostile, TrailingBytesAfterTheHeaderObject) {
  expect_refused(safetensors_bytes("{} {}"), "header is not valid JSON");
}

TEST(SafetensorsHostile, MetadataNotAnObject) {
  expect_refused(safetensors_bytes(R"({"__metadata__":"pt"})"), "__metadata__ is not an object");
}

TEST(SafetensorsHostile, MetadataValueNotAString) {
  expect_refused(safetensors_bytes(R"({"__metadata__":{"step":3}})"), "__metadata__ 'step' is not a string");
}

TEST(SafetensorsHostile, TensorNotAnObject) {
  expect_refused(one_tensor("[1,2]"), "tensor 'x': not an object");
}

TEST(SafetensorsHostile, TensorWithoutDtype) {
  expect_refused(one_tensor(R"({"shape":[1],"data_offsets":[0,4]})"), "tensor 'x': no \"dtype\"");
}

TEST(SafetensorsHostile, TensorWithoutShape) {
  expect_refused(one_tensor(R"({"dtype":"F32","data_offsets":[0,4]})", f32_bytes(1)), "tensor 'x': no \"shape\"");
}

TEST(SafetensorsHostile, TensorWithoutOffsets) {
  expect_refused(one_tensor(R"({"dtype":"F32","shape":[1]})", f32_bytes(1)), "tensor 'x': no \"data_offsets\"");
}

TEST(SafetensorsHostile, TensorWithAnUnexpectedKey) {
  expect_refused(one_tensor(R"({"dtype":"F32","shape":[1],"data_offsets":[0,4],"stride":[1]})", f32_bytes(1)),
                 "tensor 'x': unexpected key 'stride'");
}

TEST(SafetensorsHostile, DtypeNotAString) {
  expect_refused(one_tensor(R"({"dtype":4,"shape":[1],"data_offsets":[0,4]})", f32_bytes(1)),
                 "tensor 'x': dtype is not a string");
}

TEST(SafetensorsHostile, UnknownDtype) {
  expect_refused(one_tensor(R"({"dtype":"F4","shape":[2],"data_offsets":[0,1]})", "\x11"),
                 "tensor 'x': unknown dtype 'F4'");
}

TEST(SafetensorsHostile, ShapeNotAnArray) {
  expect_refused(one_tensor(R"({"dtype":"F32","shape":1,"data_offsets":[0,4]})", f32_bytes(1)),
                 "tensor 'x': shape is not an array");
}

TEST(SafetensorsHostile, NegativeDimension) {
  expect_refused(one_tensor(R"({"dtype":"F32","shape":[-1],"data_offsets":[0,0]})"),
                 "tensor 'x': shape is not an array of non-negative integers");
}

TEST(SafetensorsHostile, FractionalDimension) {
  expect_refused(one_tensor(R"({"dtype":"F32","shape":[1.0],"data_offsets":[0,4]})", f32_bytes(1)),
                 "tensor 'x': shape is not an array of non-negative integers");
}

TEST(SafetensorsHostile, DimensionPastInt64) {
  expect_refused(one_tensor(R"({"dtype":"U8","shape":[9223372036854775808],"data_offsets":[0,0]})"),
                 "tensor 'x': shape is not an array of non-negative integers");
}

TEST(SafetensorsHostile, ShapeWhoseByteCountOverflows) {
  // 2^32 x 2^32 x 4 bytes = 2^66: would wrap to 0 and match the empty range without the check.
  expect_refused(one_tensor(R"({"dtype":"F32","shape":[4294967296,4294967296],"data_offsets":[0,0]})"),
                 "tensor 'x': shape [4294967296, 4294967296] is too large");
}

TEST(SafetensorsHostile, HugeShapeWithAZeroDimensionIsEmpty) {
  const auto file = SafetensorsFile::from_bytes(
      one_tensor(R"({"dtype":"F32","shape":[4294967296,4294967296,0],"data_offsets":[0,0]})"), hostile_label);
  EXPECT_EQ(file.at("x").element_count(), 0U);
}

TEST(SafetensorsHostile, OffsetsNotAPair) {
  expect_refused(one_tensor(R"({"dtype":"F32","shape":[1],"data_offsets":[0]})", f32_bytes(1)),
                 "tensor 'x': data_offsets is not [begin, end] of non-negative integers");
}

TEST(SafetensorsHostile, NegativeOffset) {
  expect_refused(one_tensor(R"({"dtype":"F32","shape":[1],"data_offsets":[-4,0]})", f32_bytes(1)),
                 "tensor 'x': data_offsets is not [begin, end] of non-negative integers");
}

TEST(SafetensorsHostile, OffsetsEndingBeforeTheyBegin) {
  expect_refused(one_tensor(R"({"dtype":"F32","shape":[1],"data_offsets":[4,0]})", f32_bytes(1, 2)),
                 "tensor 'x': data_offsets [4, 0] end before they begin");
}

TEST(SafetensorsHostile, OffsetsPastTheDataSection) {
  expect_refused(one_tensor(R"({"dtype":"U8","shape":[10],"data_offsets":[10,20]})", std::string(16, 'd')),
                 "tensor 'x': data_offsets [10, 20] exceed the data section (16 bytes)");
}

TEST(SafetensorsHostile, OffsetsNearTheTopOfUint64) {
  expect_refused(
      one_tensor(R"({"dtype":"U8","shape":[1],"data_offsets":[18446744073709551615,18446744073709551615]})"),
      "tensor 'x': data_offsets [18446744073709551615, 18446744073709551615] exceed the data section (0 bytes)");
}

TEST(SafetensorsHostile, ByteLengthNotDtypeTimesShape) {
  expect_refused(one_tensor(R"({"dtype":"F32","shape":[3],"data_offsets":[0,8]})", f32_bytes(1, 2)),
                 "tensor 'x': data_offsets [0, 8] hold 8 bytes, but F32 [3] needs 12");
}

TEST(SafetensorsHostile, OverlappingTensors) {
  const std::string header = R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                             R"("b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})";
  expect_refused(safetensors_bytes(header, f32_bytes(1, 2, 3)),
                 "tensor 'b': data_offsets [4, 12] overlap tensor 'a' [0, 8]");
}

TEST(SafetensorsHostile, TensorInsideALongerOne) {
  const std::string header = R"({"a":{"dtype":"U8","shape":[16],"data_offsets":[0,16]},)"
                             R"("b":{"dtype":"U8","shape":[2],"data_offsets":[2,4]}})";
  expect_refused(safetensors_bytes(header, std::string(16, 'd')),
                 "tensor 'b': data_offsets [2, 4] overlap tensor 'a' [0, 16]");
}

TEST(SafetensorsHostile, TwoTensorsOnTheSameBytes) {
  const std::string header = R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},)"
                             R"("b":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})";
  expect_refused(safetensors_bytes(header, f32_bytes(1)), "tensor 'b': data_offsets [0, 4] overlap tensor 'a' [0, 4]");
}

TEST(SafetensorsHostile, ZeroSizedTensorsMayLieAnywhereAndGapsAreAllowed) {
  // Not hostile: an empty range shares no byte, and a gap only wastes space.
  const std::string header = R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                             R"("inside":{"dtype":"F32","shape":[0],"data_offsets":[4,4]},)"
                             R"("after_gap":{"dtype":"F32","shape":[1],"data_offsets":[12,16]}})";
  const auto file = SafetensorsFile::from_bytes(safetensors_bytes(header, f32_bytes(1, 2, 9, 3)), hostile_label);
  EXPECT_EQ(file.read_f32(file.at("after_gap")), std::vector<float>{3.0F});
  EXPECT_EQ(file.tensors().size(), 3U);
}

TEST(SafetensorsHostile, OpenNamesTheFilePath) {
  test::TempDir dir;
  const auto path = dir / "lying.safetensors";
  test_files::write_bytes_file(
      path, one_tensor(R"({"dtype":"U8","shape":[10],"data_offsets":[10,20]})", std::string(16, 'd')));
  expect_tinker_error(errc::invalid_file,
                      path.string() + ": tensor 'x': data_offsets [10, 20] exceed the data section (16 bytes)",
                      [&] { (void)SafetensorsFile::open(path); });
}

}  // namespace
}  // namespace tinker::safetensors
