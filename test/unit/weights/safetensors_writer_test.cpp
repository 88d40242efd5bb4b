// SafetensorsWriter, write_file, make_tensor, make_index_json and StagedDirectory
// (include/tinker/safetensors.hpp): the bytes the reference implementation writes, round trips
// through the reader, writes in any order and from two threads, and nothing complete-looking left
// behind by an unfinished writer or directory.
#include "support/expect_error.hpp"
#include "support/temp_files.hpp"
#include "unit/weights/safetensors_bytes.hpp"

#include <tinker/safetensors.hpp>

#include <gtest/gtest.h>

#include <numeric>
#include <thread>

namespace tinker::safetensors {
namespace {

using test::expect_tinker_error;
using test_files::f32_bytes;
using test_files::read_bytes_file;
using test_files::safetensors_bytes;

std::vector<std::byte> byte_pattern(std::size_t size, unsigned seed) {
  std::vector<std::byte> bytes(size);
  for (std::size_t i = 0; i < size; ++i) bytes[i] = static_cast<std::byte>((i * 7 + seed * 31) & 0xff);
  return bytes;
}

std::vector<std::byte> as_byte_vector(std::string_view text) {
  const auto bytes = std::as_bytes(std::span(text.data(), text.size()));
  return {bytes.begin(), bytes.end()};
}

TEST(SafetensorsWriter, WritesTheReferenceImplementationsBytes) {
  // What safetensors' save_file({"a": f32 [2], "b": bf16 [3]}, metadata={"format": "pt"}) writes,
  // from the format's description: compact JSON, "__metadata__" first, F32 before BF16 (the
  // reference orders by dtype, widest first, then name), padded with spaces to 8 bytes.
  test::TempDir dir;
  const std::vector<float> b_values = {1.0F, -2.0F, 0.5F};
  write_file(dir / "ref.safetensors",
             {make_tensor("a", {2}, std::vector<float>{1.0F, 2.0F}), make_tensor("b", {3}, b_values, Dtype::bf16)},
             {{"format", "pt"}});
  const std::string header = R"({"__metadata__":{"format":"pt"},"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                             R"("b":{"dtype":"BF16","shape":[3],"data_offsets":[8,14]}})";
  ASSERT_EQ(header.size(), 140U);
  const std::string expected =
      safetensors_bytes(header + std::string(4, ' '), f32_bytes(1, 2) + std::string("\x80\x3f\x00\xc0\x00\x3f", 6));
  EXPECT_EQ(read_bytes_file(dir / "ref.safetensors"), expected);
  EXPECT_EQ(read_bytes_file(dir / "ref.safetensors").substr(0, 8), std::string("\x90\x00\x00\x00\x00\x00\x00\x00", 8));
}

TEST(SafetensorsWriter, AnEmptyFileIsTheEmptyObjectPadded) {
  test::TempDir dir;
  write_file(dir / "empty.safetensors", {});
  EXPECT_EQ(read_bytes_file(dir / "empty.safetensors"), safetensors_bytes("{}      "));
  EXPECT_TRUE(SafetensorsFile::open(dir / "empty.safetensors").tensors().empty());
}

TEST(SafetensorsWriter, RoundTripsEveryDtype) {
  const std::vector<Dtype> dtypes = {
      Dtype::boolean, Dtype::u8,  Dtype::i8,   Dtype::i16, Dtype::u16, Dtype::i32,     Dtype::u32,     Dtype::i64,
      Dtype::u64,     Dtype::f16, Dtype::bf16, Dtype::f32, Dtype::f64, Dtype::f8_e4m3, Dtype::f8_e5m2, Dtype::f8_e8m0};
  std::vector<OwnedTensor> tensors;
  for (std::size_t i = 0; i < dtypes.size(); ++i) {
    tensors.push_back({"t." + std::string(to_string(dtypes[i])),
                       dtypes[i],
                       {3, 2},
                       byte_pattern(6 * dtype_size(dtypes[i]), static_cast<unsigned>(i))});
  }
  test::TempDir dir;
  write_file(dir / "all.safetensors", tensors, {{"k", "v"}});
  const auto file = SafetensorsFile::open(dir / "all.safetensors");
  ASSERT_EQ(file.tensors().size(), dtypes.size());
  EXPECT_EQ(file.metadata().at("k"), "v");
  EXPECT_EQ(file.data_offset() % 8, 0U);
  std::uint64_t expected_begin = 0;
  for (std::size_t i = 0; i < dtypes.size(); ++i) {
    const auto& info = file.tensors()[i];  // data order is declaration order, with no gaps
    EXPECT_EQ(info.name, tensors[i].name);
    EXPECT_EQ(info.dtype, dtypes[i]);
    EXPECT_EQ(info.shape, (std::vector<std::int64_t>{3, 2}));
    EXPECT_EQ(info.begin, expected_begin);
    expected_begin = info.end;
    const auto data = file.data(info);
    EXPECT_TRUE(std::equal(data.begin(), data.end(), tensors[i].bytes.begin(), tensors[i].bytes.end())) << info.name;
  }
  EXPECT_EQ(file.file_size(), file.data_offset() + expected_begin);
}

TEST(SafetensorsWriter, MakeTensorConvertsAndChecksTheCount) {
  const std::vector<float> values = {1.0F, 65520.0F};
  const auto half = make_tensor("h", {2}, values, Dtype::f16);
  EXPECT_EQ(half.bytes, as_byte_vector(std::string("\x00\x3c\x00\x7c", 4)));
  expect_tinker_error(errc::invalid_argument, "make_tensor 'h': 2 values for 3 elements",
                      [&] { (void)make_tensor("h", {3}, values); });
  expect_tinker_error(errc::invalid_argument, "I8", [&] { (void)make_tensor("h", {2}, values, Dtype::i8); });
}

TEST(SafetensorsWriter, TensorsWrittenOutOfOrderAndInPieces) {
  test::TempDir dir;
  const auto path = dir / "pieces.safetensors";
  SafetensorsWriter writer(path, {{"a", Dtype::u8, {10}}, {"b", Dtype::f32, {2, 3}}, {"c", Dtype::i16, {4}}});
  const auto a = byte_pattern(10, 1);
  const auto b = byte_pattern(24, 2);
  const auto c = byte_pattern(8, 3);
  EXPECT_EQ(writer.byte_size(1), 24U);
  writer.write(2, c);
  writer.write(1, std::span(b).subspan(12), 12);  // second half first
  writer.write(0, std::span(a).subspan(5), 5);
  writer.write(1, std::span(b).first(12));
  writer.write(0, std::span(a).first(5));
  EXPECT_FALSE(std::filesystem::exists(path));
  EXPECT_TRUE(std::filesystem::exists(dir / "pieces.safetensors.partial"));
  writer.finish();
  EXPECT_FALSE(std::filesystem::exists(dir / "pieces.safetensors.partial"));
  const auto file = SafetensorsFile::open(path);
  EXPECT_EQ(file.file_size(), writer.file_size());
  for (const auto& [name, bytes] : {std::pair{"a", a}, std::pair{"b", b}, std::pair{"c", c}}) {
    const auto data = file.data(file.at(name));
    EXPECT_TRUE(std::equal(data.begin(), data.end(), bytes.begin(), bytes.end())) << name;
  }
}

TEST(SafetensorsWriter, TwoThreadsWriteTheirOwnTensors) {
  constexpr std::size_t tensor_count = 8;
  constexpr std::size_t piece = 1024;
  std::vector<TensorDecl> declarations;
  std::vector<std::vector<std::byte>> contents;
  for (std::size_t i = 0; i < tensor_count; ++i) {
    declarations.push_back({"layer." + std::to_string(i), Dtype::bf16, {64, 64}});
    contents.push_back(byte_pattern(64 * 64 * 2, static_cast<unsigned>(i)));
  }
  test::TempDir dir;
  SafetensorsWriter writer(dir / "threads.safetensors", declarations);
  auto write_every_other = [&](std::size_t first) {
    for (std::size_t t = first; t < tensor_count; t += 2) {
      for (std::size_t offset = contents[t].size(); offset > 0; offset -= piece) {  // backwards, in pieces
        writer.write(t, std::span(contents[t]).subspan(offset - piece, piece), offset - piece);
      }
    }
  };
  std::thread other(write_every_other, 1);
  write_every_other(0);
  other.join();
  writer.finish();
  const auto file = SafetensorsFile::open(dir / "threads.safetensors");
  for (std::size_t t = 0; t < tensor_count; ++t) {
    const auto data = file.data(file.at(declarations[t].name));
    EXPECT_TRUE(std::equal(data.begin(), data.end(), contents[t].begin(), contents[t].end())) << t;
  }
}

TEST(SafetensorsWriter, FinishRefusesAnIncompleteTensorAndLeavesNoFinalFile) {
  test::TempDir dir;
  const auto path = dir / "partial.safetensors";
  SafetensorsWriter writer(path, {{"done", Dtype::u8, {2}}, {"half", Dtype::f32, {2}}});
  writer.write(0, byte_pattern(2, 0));
  writer.write(1, byte_pattern(4, 0));
  expect_tinker_error(errc::invalid_argument, path.string() + ": tensor 'half': 4 of 8 bytes written",
                      [&] { writer.finish(); });
  EXPECT_FALSE(std::filesystem::exists(path));
  writer.write(1, byte_pattern(4, 0), 4);  // the rest; finish() may be tried again
  writer.finish();
  EXPECT_TRUE(std::filesystem::exists(path));
}

TEST(SafetensorsWriter, OverlappingPiecesCountEachByteOnce) {
  test::TempDir dir;
  SafetensorsWriter writer(dir / "overlap.safetensors", {{"t", Dtype::u8, {8}}});
  writer.write(0, byte_pattern(4, 0));
  writer.write(0, byte_pattern(4, 0));  // the same half twice is still half
  expect_tinker_error(errc::invalid_argument, "tensor 't': 4 of 8 bytes written", [&] { writer.finish(); });
  writer.write(0, byte_pattern(5, 0), 2);  // [2, 7) joins [0, 4)
  expect_tinker_error(errc::invalid_argument, "tensor 't': 7 of 8 bytes written", [&] { writer.finish(); });
  writer.write(0, byte_pattern(1, 0), 7);
  writer.finish();
}

TEST(SafetensorsWriter, RefusesAPieceThatDoesNotFit) {
  test::TempDir dir;
  SafetensorsWriter writer(dir / "fit.safetensors", {{"t", Dtype::f32, {2}}});
  expect_tinker_error(errc::invalid_argument, "tensor 't': 4 bytes at offset 6 do not fit its 8",
                      [&] { writer.write(0, byte_pattern(4, 0), 6); });
  expect_tinker_error(errc::invalid_argument, "do not fit",
                      [&] { writer.write(0, byte_pattern(1, 0), std::numeric_limits<std::uint64_t>::max()); });
  expect_tinker_error(errc::invalid_argument, "no tensor number 1", [&] { writer.write(1, byte_pattern(1, 0)); });
}

TEST(SafetensorsWriter, RefusesBadDeclarations) {
  test::TempDir dir;
  const auto path = dir / "bad.safetensors";
  expect_tinker_error(errc::invalid_argument, "tensor 'a' declared twice", [&] {
    SafetensorsWriter(path, {{"a", Dtype::u8, {1}}, {"a", Dtype::u8, {1}}});
  });
  expect_tinker_error(errc::invalid_argument, "'__metadata__' cannot name a tensor", [&] {
    SafetensorsWriter(path, {{"__metadata__", Dtype::u8, {1}}});
  });
  expect_tinker_error(errc::invalid_argument, "tensor 'n': negative dimension", [&] {
    SafetensorsWriter(path, {{"n", Dtype::u8, {2, -1}}});
  });
  expect_tinker_error(errc::invalid_argument, "tensor 'big': shape too large", [&] {
    SafetensorsWriter(path, {{"big", Dtype::f32, {std::int64_t{1} << 62, 8}}});
  });
  EXPECT_TRUE(std::filesystem::is_empty(dir.path()));
}

TEST(SafetensorsWriter, AnUnfinishedWriterRemovesItsTemporaryFile) {
  test::TempDir dir;
  {
    SafetensorsWriter writer(dir / "abandoned.safetensors", {{"t", Dtype::u8, {4}}});
    writer.write(0, byte_pattern(4, 0));
    EXPECT_TRUE(std::filesystem::exists(dir / "abandoned.safetensors.partial"));
  }
  EXPECT_TRUE(std::filesystem::is_empty(dir.path()));
}

TEST(SafetensorsWriter, AMovedWriterKeepsWriting) {
  test::TempDir dir;
  SafetensorsWriter first(dir / "moved.safetensors", {{"t", Dtype::u8, {4}}});
  SafetensorsWriter second = std::move(first);
  second.write(0, byte_pattern(4, 0));
  second.finish();
  EXPECT_EQ(SafetensorsFile::open(dir / "moved.safetensors").at("t").byte_size(), 4U);
}

TEST(SafetensorsWriter, NamesTheFileItCannotCreate) {
  test::TempDir dir;
  const auto path = dir / "missing-dir" / "x.safetensors";
  expect_tinker_error(errc::io_error, path.string() + ".partial: cannot create", [&] {
    SafetensorsWriter(path, {{"t", Dtype::u8, {4}}});
  });
}

TEST(SafetensorsWriter, WriteFileRefusesBytesOfTheWrongLength) {
  test::TempDir dir;
  expect_tinker_error(errc::invalid_argument, "tensor 't': 3 bytes for 4", [&] {
    write_file(dir / "short.safetensors", {{"t", Dtype::f32, {1}, byte_pattern(3, 0)}});
  });
  EXPECT_TRUE(std::filesystem::is_empty(dir.path()));
}

TEST(SafetensorsIndexJson, IsWhatTransformersWrites) {
  // json.dumps(index, indent=2, sort_keys=True) + "\n"
  EXPECT_EQ(make_index_json(1234, {{"model.norm.weight", "model-00002-of-00002.safetensors"},
                                   {"lm_head.weight", "model-00001-of-00002.safetensors"}}),
            "{\n"
            "  \"metadata\": {\n"
            "    \"total_size\": 1234\n"
            "  },\n"
            "  \"weight_map\": {\n"
            "    \"lm_head.weight\": \"model-00001-of-00002.safetensors\",\n"
            "    \"model.norm.weight\": \"model-00002-of-00002.safetensors\"\n"
            "  }\n"
            "}\n");
  EXPECT_EQ(make_index_json(0, {}), "{\n  \"metadata\": {\n    \"total_size\": 0\n  },\n  \"weight_map\": {}\n}\n");
}

TEST(StagedDirectory, CommitRenamesTheStagingDirectoryIntoPlace) {
  test::TempDir dir;
  const auto final_path = dir / "out" / "merged";  // parents are created
  StagedDirectory staged(final_path);
  EXPECT_EQ(staged.final_path(), final_path);
  EXPECT_EQ(staged.staging_path().parent_path(), final_path.parent_path());
  const auto staging_name = staged.staging_path().filename().string();
  ASSERT_EQ(staging_name.size(), std::string("merged.partial-").size() + 16);
  EXPECT_EQ(staging_name.rfind("merged.partial-", 0), 0U);
  EXPECT_TRUE(std::filesystem::is_directory(staged.staging_path()));
  EXPECT_FALSE(std::filesystem::exists(final_path));
  test_files::write_bytes_file(staged.staging_path() / "config.json", "{}");
  staged.commit();
  EXPECT_EQ(read_bytes_file(final_path / "config.json"), "{}");
  EXPECT_FALSE(std::filesystem::exists(staged.staging_path()));
}

TEST(StagedDirectory, AnUncommittedDirectoryIsRemovedWithItsFiles) {
  test::TempDir dir;
  {
    StagedDirectory staged(dir / "merged");
    std::filesystem::create_directories(staged.staging_path() / "sub");
    test_files::write_bytes_file(staged.staging_path() / "sub" / "model.safetensors", "partial");
  }
  EXPECT_TRUE(std::filesystem::is_empty(dir.path()));
}

TEST(StagedDirectory, RefusesAnExistingFinalPath) {
  test::TempDir dir;
  std::filesystem::create_directory(dir / "taken");
  expect_tinker_error(errc::invalid_argument, (dir / "taken").string() + ": already exists",
                      [&] { StagedDirectory staged(dir / "taken"); });
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir.path()), {}), 1);
}

TEST(StagedDirectory, CommitRefusesAFinalPathThatAppearedMeanwhile) {
  test::TempDir dir;
  {
    StagedDirectory staged(dir / "merged");
    std::filesystem::create_directory(dir / "merged");  // empty: a plain rename() would replace it
    expect_tinker_error(errc::invalid_argument, (dir / "merged").string() + ": already exists",
                        [&] { staged.commit(); });
  }
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir.path()), {}), 1);  // only "merged"
  EXPECT_TRUE(std::filesystem::is_empty(dir / "merged"));
}

TEST(StagedDirectory, MovingHandsTheDirectoryOver) {
  test::TempDir dir;
  StagedDirectory first(dir / "a");
  const auto staging = first.staging_path();
  {
    StagedDirectory second = std::move(first);
    EXPECT_EQ(second.staging_path(), staging);
    EXPECT_TRUE(std::filesystem::exists(staging));  // the moved-from object removed nothing
    StagedDirectory third(dir / "b");
    const auto third_staging = third.staging_path();
    third = std::move(second);  // drops b's staging directory
    EXPECT_FALSE(std::filesystem::exists(third_staging));
    EXPECT_TRUE(std::filesystem::exists(staging));
  }
  EXPECT_TRUE(std::filesystem::is_empty(dir.path()));
}

}  // namespace
}  // namespace tinker::safetensors
