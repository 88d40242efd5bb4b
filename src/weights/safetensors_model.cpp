// SafetensorsModel: the weights of a Hugging Face model directory. The index
// (model.safetensors.index.json) comes with downloaded models, so its shard names are checked
// before they become paths: a name is a file of the directory, never a path out of it.
#include "weights/safetensors_header.hpp"

#include <tinker/error.hpp>
#include <tinker/safetensors.hpp>

#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>

#include <algorithm>
#include <fstream>
#include <functional>
#include <iterator>
#include <set>
#include <system_error>

namespace tinker::safetensors {

namespace {

constexpr const char* index_file_name = "model.safetensors.index.json";
constexpr const char* single_file_name = "model.safetensors";

[[noreturn]] void fail_index(const std::filesystem::path& index, const std::string& problem) {
  throw error(errc::invalid_file, index.string() + ": " + problem);
}

std::string read_index_text(const std::filesystem::path& index) {
  // An index of the largest models is a few MB; the header limit bounds a hostile one.
  constexpr std::uintmax_t max_index_bytes = detail::max_header_bytes;
  std::error_code ec;
  const auto size = std::filesystem::file_size(index, ec);
  if (ec) throw error(errc::io_error, index.string() + ": cannot read: " + ec.message());
  if (size > max_index_bytes) fail_index(index, "larger than " + std::to_string(max_index_bytes) + " bytes");
  std::ifstream in(index, std::ios::binary);
  if (!in) throw error(errc::io_error, index.string() + ": cannot open");
  std::string text(static_cast<std::size_t>(size), '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  if (in.bad()) throw error(errc::io_error, index.string() + ": cannot read");
  text.resize(static_cast<std::size_t>(in.gcount()));
  return text;
}

// A shard name from the index: one file of the directory.
bool is_plain_file_name(std::string_view name) noexcept {
  return !name.empty() && name.find('/') == std::string_view::npos && name.find('\0') == std::string_view::npos &&
         name.find("..") == std::string_view::npos && name != ".";
}

// tensor -> shard file name, from the index's "weight_map".
std::map<std::string, std::string> read_weight_map(const std::filesystem::path& index) {
  boost::json::parse_options options;
  options.max_depth = 16;
  boost::system::error_code ec;
  const auto value = boost::json::parse(read_index_text(index), ec, {}, options);
  if (ec) fail_index(index, "not valid JSON (" + ec.message() + ")");
  const auto* root = value.if_object();
  const auto* weight_map = root == nullptr ? nullptr : root->if_contains("weight_map");
  if (weight_map == nullptr || !weight_map->is_object()) fail_index(index, "no \"weight_map\" object");
  std::map<std::string, std::string> files;
  for (const auto& [tensor, file] : weight_map->as_object()) {
    const auto* name = file.if_string();
    if (name == nullptr) fail_index(index, "tensor '" + std::string(tensor) + "': the shard name is not a string");
    if (!is_plain_file_name(*name)) {
      fail_index(index, "tensor '" + std::string(tensor) + "': shard name '" + std::string(*name) +
                            "' is not a file name of the directory");
    }
    files.emplace(std::string(tensor), std::string(*name));
  }
  return files;
}

std::vector<std::filesystem::path> safetensors_files_of(const std::filesystem::path& dir) {
  std::vector<std::filesystem::path> files;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    std::error_code type_ec;
    if (entry.path().extension() == ".safetensors" && entry.is_regular_file(type_ec)) files.push_back(entry.path());
  }
  if (ec) throw error(errc::io_error, dir.string() + ": cannot list the directory: " + ec.message());
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace

struct SafetensorsModel::Impl {
  std::filesystem::path directory;
  std::vector<SafetensorsFile> shards;
  bool has_index = false;
  // tensor name -> (shard number, tensor); the TensorInfo lives in the shard's heap Impl, so it
  // stays put when `shards` grows or the model moves.
  std::map<std::string, std::pair<std::size_t, const TensorInfo*>, std::less<>> where;

  // Records every tensor of shard `number`, refusing one another shard already holds.
  void add_shard_tensors(std::size_t number) {
    const SafetensorsFile& shard = shards[number];
    for (const auto& tensor : shard.tensors()) {
      const auto [slot, added] = where.emplace(tensor.name, std::pair{number, &tensor});
      if (!added) {
        throw error(errc::invalid_file, directory.string() + ": tensor '" + tensor.name + "' is in both " +
                                            shards[slot->second.first].path().filename().string() + " and " +
                                            shard.path().filename().string());
      }
    }
  }

  // Opens the shards the index names (sorted by name, each once) and checks each tensor is where
  // the index says.
  void open_indexed(const std::filesystem::path& index) {
    const auto weight_map = read_weight_map(index);
    std::map<std::string, std::size_t> shard_numbers;
    for (const auto& [tensor, file] : weight_map) shard_numbers.emplace(file, 0);
    for (auto& shard : shard_numbers) {
      const std::string& file = shard.first;
      const auto path = directory / file;
      std::error_code ec;
      if (!std::filesystem::is_regular_file(path, ec)) {
        const auto user =
            std::find_if(weight_map.begin(), weight_map.end(), [&](const auto& e) { return e.second == file; });
        fail_index(index, "shard '" + file + "' (of tensor '" + user->first + "') does not exist");
      }
      shard.second = shards.size();
      shards.push_back(SafetensorsFile::open(path));
      add_shard_tensors(shard.second);
    }
    for (const auto& [tensor, file] : weight_map) {
      const auto found = where.find(tensor);
      if (found == where.end() || found->second.first != shard_numbers.at(file)) {
        fail_index(index, "tensor '" + tensor + "' is mapped to " + file + ", which does not hold it");
      }
    }
  }
};

SafetensorsModel::SafetensorsModel(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
SafetensorsModel::SafetensorsModel(SafetensorsModel&&) noexcept = default;
SafetensorsModel& SafetensorsModel::operator=(SafetensorsModel&&) noexcept = default;
SafetensorsModel::~SafetensorsModel() = default;

SafetensorsModel SafetensorsModel::open(const std::filesystem::path& dir) {
  auto impl = std::make_unique<Impl>();
  impl->directory = dir;
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) throw error(errc::invalid_argument, dir.string() + ": not a directory");
  const auto index = dir / index_file_name;
  if (std::filesystem::exists(index, ec)) {
    impl->has_index = true;
    impl->open_indexed(index);
    return SafetensorsModel(std::move(impl));
  }
  std::vector<std::filesystem::path> files;
  if (std::filesystem::is_regular_file(dir / single_file_name, ec)) {
    files.push_back(dir / single_file_name);
  } else {
    files = safetensors_files_of(dir);
  }
  if (files.empty()) {
    throw error(errc::invalid_argument, dir.string() + ": no safetensors weights (looked for " + index_file_name +
                                            ", " + single_file_name + ", *.safetensors)");
  }
  for (const auto& file : files) {
    impl->shards.push_back(SafetensorsFile::open(file));
    impl->add_shard_tensors(impl->shards.size() - 1);
  }
  return SafetensorsModel(std::move(impl));
}

const std::filesystem::path& SafetensorsModel::directory() const noexcept {
  return impl_->directory;
}
const std::vector<SafetensorsFile>& SafetensorsModel::shards() const noexcept {
  return impl_->shards;
}
bool SafetensorsModel::has_index() const noexcept {
  return impl_->has_index;
}

SafetensorsModel::Location SafetensorsModel::find(std::string_view name) const noexcept {
  const auto found = impl_->where.find(name);
  if (found == impl_->where.end()) return {};
  return {&impl_->shards[found->second.first], found->second.second};
}

std::vector<std::string> SafetensorsModel::tensor_names() const {
  std::vector<std::string> names;
  names.reserve(impl_->where.size());
  for (const auto& entry : impl_->where) names.push_back(entry.first);
  return names;
}

std::uint64_t SafetensorsModel::total_bytes() const noexcept {
  std::uint64_t total = 0;
  for (const auto& shard : impl_->shards) {
    for (const auto& tensor : shard.tensors()) total += tensor.byte_size();
  }
  return total;
}

}  // namespace tinker::safetensors
