// SafetensorsModel (include/tinker/safetensors.hpp): the three layouts of a model directory, and
// indexes that lie about their shards.
#include "support/expect_error.hpp"
#include "support/temp_files.hpp"
#include "unit/weights/safetensors_bytes.hpp"

#include <tinker/safetensors.hpp>

#include <gtest/gtest.h>

namespace tinker::safetensors {
namespace {

using test::expect_tinker_error;
using test_files::write_bytes_file;

// A shard holding f32 tensors of one element each, named `names`, valued 1, 2, ...
void write_shard(const std::filesystem::path& path, const std::vector<std::string>& names) {
  std::vector<OwnedTensor> tensors;
  float value = 1;
  for (const auto& name : names) {
    const std::vector<float> values = {value++};
    tensors.push_back(make_tensor(name, {1}, values));
  }
  write_file(path, tensors);
}

// A directory of two shards and an index mapping a, b to the first and c to the second.
void write_sharded_model(const std::filesystem::path& dir) {
  write_shard(dir / "model-00001-of-00002.safetensors", {"a", "b"});
  write_shard(dir / "model-00002-of-00002.safetensors", {"c"});
  write_bytes_file(dir / "model.safetensors.index.json",
                   make_index_json(12, {{"a", "model-00001-of-00002.safetensors"},
                                        {"b", "model-00001-of-00002.safetensors"},
                                        {"c", "model-00002-of-00002.safetensors"}}));
}

TEST(SafetensorsModel, OpensAShardedModelThroughItsIndex) {
  test::TempDir dir;
  write_sharded_model(dir.path());
  write_shard(dir / "stray.safetensors", {"z"});  // not in the index: not a shard
  const auto model = SafetensorsModel::open(dir.path());
  EXPECT_TRUE(model.has_index());
  EXPECT_EQ(model.directory(), dir.path());
  ASSERT_EQ(model.shards().size(), 2U);
  EXPECT_EQ(model.shards()[0].path().filename(), "model-00001-of-00002.safetensors");
  EXPECT_EQ(model.tensor_names(), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(model.total_bytes(), 12U);
  const auto c = model.find("c");
  ASSERT_NE(c.file, nullptr);
  EXPECT_EQ(c.file, &model.shards()[1]);
  EXPECT_EQ(c.file->read_f32(*c.tensor), std::vector<float>{1.0F});
  EXPECT_EQ(model.find("b").file->read_f32(*model.find("b").tensor), std::vector<float>{2.0F});
  EXPECT_EQ(model.find("z").file, nullptr);
  EXPECT_EQ(model.find("z").tensor, nullptr);
}

TEST(SafetensorsModel, FindStaysValidAfterAMove) {
  test::TempDir dir;
  write_sharded_model(dir.path());
  auto first = SafetensorsModel::open(dir.path());
  const SafetensorsModel model = std::move(first);
  EXPECT_EQ(model.find("a").file->read_f32(*model.find("a").tensor), std::vector<float>{1.0F});
}

TEST(SafetensorsModel, OpensASingleModelFile) {
  test::TempDir dir;
  write_shard(dir / "model.safetensors", {"w"});
  write_shard(dir / "other.safetensors", {"w"});  // model.safetensors wins; no duplicate
  const auto model = SafetensorsModel::open(dir.path());
  EXPECT_FALSE(model.has_index());
  ASSERT_EQ(model.shards().size(), 1U);
  EXPECT_EQ(model.tensor_names(), std::vector<std::string>{"w"});
}

TEST(SafetensorsModel, OpensEverySafetensorsFileInNameOrderWithoutAnIndex) {
  test::TempDir dir;
  write_shard(dir / "b.safetensors", {"y"});
  write_shard(dir / "a.safetensors", {"x"});
  write_bytes_file(dir / "notes.txt", "not weights");
  const auto model = SafetensorsModel::open(dir.path());
  ASSERT_EQ(model.shards().size(), 2U);
  EXPECT_EQ(model.shards()[0].path().filename(), "a.safetensors");
  EXPECT_EQ(model.find("y").file, &model.shards()[1]);
}

TEST(SafetensorsModel, RefusesADirectoryWithoutWeights) {
  test::TempDir dir;
  write_bytes_file(dir / "config.json", "{}");
  expect_tinker_error(errc::invalid_argument,
                      dir.path().string() +
                          ": no safetensors weights (looked for model.safetensors.index.json, model.safetensors, "
                          "*.safetensors)",
                      [&] { (void)SafetensorsModel::open(dir.path()); });
}

TEST(SafetensorsModel, RefusesAPathThatIsNoDirectory) {
  test::TempDir dir;
  expect_tinker_error(errc::invalid_argument, (dir / "absent").string() + ": not a directory",
                      [&] { (void)SafetensorsModel::open(dir / "absent"); });
}

TEST(SafetensorsModel, RefusesATensorInTwoFiles) {
  test::TempDir dir;
  write_shard(dir / "a.safetensors", {"x", "shared"});
  write_shard(dir / "b.safetensors", {"shared"});
  expect_tinker_error(errc::invalid_file, "tensor 'shared' is in both a.safetensors and b.safetensors",
                      [&] { (void)SafetensorsModel::open(dir.path()); });
}

TEST(SafetensorsModel, RefusesATensorInTwoShardsOfTheIndex) {
  test::TempDir dir;
  write_shard(dir / "model-00001-of-00002.safetensors", {"a"});
  write_shard(dir / "model-00002-of-00002.safetensors", {"a", "c"});
  write_bytes_file(
      dir / "model.safetensors.index.json",
      make_index_json(8, {{"a", "model-00001-of-00002.safetensors"}, {"c", "model-00002-of-00002.safetensors"}}));
  expect_tinker_error(errc::invalid_file, "tensor 'a' is in both model-00001-of-00002.safetensors and",
                      [&] { (void)SafetensorsModel::open(dir.path()); });
}

TEST(SafetensorsModel, IndexNamingAMissingShard) {
  test::TempDir dir;
  write_sharded_model(dir.path());
  std::filesystem::remove(dir / "model-00002-of-00002.safetensors");
  expect_tinker_error(errc::invalid_file,
                      (dir / "model.safetensors.index.json").string() +
                          ": shard 'model-00002-of-00002.safetensors' (of tensor 'c') does not exist",
                      [&] { (void)SafetensorsModel::open(dir.path()); });
}

TEST(SafetensorsModel, IndexMappingATensorToAShardThatLacksIt) {
  test::TempDir dir;
  write_sharded_model(dir.path());
  write_bytes_file(dir / "model.safetensors.index.json",
                   make_index_json(12, {{"a", "model-00001-of-00002.safetensors"},
                                        {"b", "model-00002-of-00002.safetensors"},
                                        {"c", "model-00002-of-00002.safetensors"}}));
  expect_tinker_error(errc::invalid_file,
                      "tensor 'b' is mapped to model-00002-of-00002.safetensors, which does not hold it",
                      [&] { (void)SafetensorsModel::open(dir.path()); });
}

TEST(SafetensorsModel, IndexMappingATensorNoShardHolds) {
  test::TempDir dir;
  write_sharded_model(dir.path());
  write_bytes_file(
      dir / "model.safetensors.index.json",
      make_index_json(12, {{"a", "model-00001-of-00002.safetensors"}, {"ghost", "model-00002-of-00002.safetensors"}}));
  expect_tinker_error(errc::invalid_file, "tensor 'ghost' is mapped to model-00002-of-00002.safetensors",
                      [&] { (void)SafetensorsModel::open(dir.path()); });
}

TEST(SafetensorsModel, IndexShardNamesMustStayInTheDirectory) {
  for (const std::string name : {"../model.safetensors", "sub/model.safetensors", "..", ".", ""}) {
    test::TempDir dir;
    write_bytes_file(dir / "model.safetensors.index.json", make_index_json(4, {{"a", name}}));
    expect_tinker_error(errc::invalid_file, "tensor 'a': shard name '" + name + "' is not a file name of the directory",
                        [&] { (void)SafetensorsModel::open(dir.path()); });
  }
}

TEST(SafetensorsModel, IndexThatIsNotJsonOrHasNoWeightMap) {
  test::TempDir dir;
  const auto index = dir / "model.safetensors.index.json";
  write_bytes_file(index, "{\"weight_map\": ");
  expect_tinker_error(errc::invalid_file, index.string() + ": not valid JSON",
                      [&] { (void)SafetensorsModel::open(dir.path()); });
  write_bytes_file(index, R"({"metadata": {"total_size": 4}})");
  expect_tinker_error(errc::invalid_file, index.string() + ": no \"weight_map\" object",
                      [&] { (void)SafetensorsModel::open(dir.path()); });
  write_bytes_file(index, R"({"weight_map": {"a": 3}})");
  expect_tinker_error(errc::invalid_file, index.string() + ": tensor 'a': the shard name is not a string",
                      [&] { (void)SafetensorsModel::open(dir.path()); });
}

TEST(SafetensorsModel, AMalformedShardIsNamed) {
  test::TempDir dir;
  write_sharded_model(dir.path());
  write_bytes_file(dir / "model-00002-of-00002.safetensors", test_files::safetensors_bytes("[]"));
  expect_tinker_error(errc::invalid_file,
                      (dir / "model-00002-of-00002.safetensors").string() + ": header is not a JSON object",
                      [&] { (void)SafetensorsModel::open(dir.path()); });
}

}  // namespace
}  // namespace tinker::safetensors
