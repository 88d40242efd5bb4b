// The pipeline of merge_stream.hpp. Everything is decided before the threads start: the list of
// jobs (one per base tensor, in file order) and of chunks (byte ranges of a tensor, or ranges of
// experts of a quantized weight). The threads then only pass chunk numbers along, under one mutex:
// a chunk is several megabytes of work, so the lock is never contended for long.
#include "weights/merge_stream.hpp"

#include "weights/merge_apply.hpp"
#include "weights/merge_kernels.hpp"
#include "weights/quantized.hpp"

#include <tinker/error.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <exception>
#include <future>
#include <map>
#include <mutex>
#include <span>
#include <thread>

namespace tinker::weights::detail {
namespace merge_stream_impl {

namespace st = tinker::safetensors;

enum class JobKind {
  copy,                // bytes through unchanged
  merge,               // a float tensor that receives deltas
  quantized,           // the first part (in file order) of a quantized weight that receives deltas
  written_with_group,  // another part of such a weight: written by the first part's chunks
};

struct PartLocation {
  std::size_t shard = 0;
  std::size_t index = 0;
};

// One base tensor, in stream order (shard by shard, each in data order).
struct TensorJob {
  std::size_t shard = 0;
  std::size_t index = 0;
  JobKind kind = JobKind::copy;
  const std::vector<MergeOp>* ops = nullptr;   // merge, quantized
  const QuantizedWeight* quantized = nullptr;  // quantized
  std::string quantized_name;
  std::vector<PartLocation> parts;  // quantized: where each part is
  std::int64_t rows_per_index = 0;  // quantized: target rows per index of the logical first axis
  std::uint64_t bytes = 0;          // base bytes this job accounts for
  std::size_t last_chunk = 0;
};

struct ChunkJob {
  std::size_t tensor = 0;
  std::uint64_t offset = 0;  // copy, merge: a byte range of the tensor
  std::uint64_t size = 0;
  std::int64_t first = 0;  // quantized: a range of the logical first axis
  std::int64_t last = 0;
};

struct Plan {
  std::vector<TensorJob> tensors;
  std::vector<ChunkJob> chunks;
  std::vector<std::size_t> shard_chunk_end;  // chunks of shard s end before this number
};

std::string shard_tensor(const st::SafetensorsFile& file, const st::TensorInfo& tensor) {
  return file.path().string() + ": tensor '" + tensor.name + "'";
}

std::int64_t product_of(std::span<const std::int64_t> dims) {
  std::int64_t product = 1;
  for (const auto dim : dims) product *= dim;
  return product;
}

class StreamPlanner {
 public:
  explicit StreamPlanner(const MergeStreamInput& input) : input_(input) {
    const auto& shards = input.model->shards();
    for (std::size_t s = 0; s < shards.size(); ++s) shard_of_[&shards[s]] = s;
    locate_quantized_groups();
  }

  Plan make() {
    const auto& shards = input_.model->shards();
    for (std::size_t s = 0; s < shards.size(); ++s) {
      const auto& tensors = shards[s].tensors();
      for (std::size_t i = 0; i < tensors.size(); ++i) add_job(s, i, tensors[i]);
      plan_.shard_chunk_end.push_back(plan_.chunks.size());
    }
    return std::move(plan_);
  }

 private:
  PartLocation locate(const std::string& name) const {
    const auto found = input_.model->find(name);
    if (found.file == nullptr) {
      throw error(errc::invalid_file,
                  input_.model->directory().string() + ": tensor '" + name + "' is not in any shard");
    }
    return {shard_of_.at(found.file), static_cast<std::size_t>(found.tensor - found.file->tensors().data())};
  }

  static bool before(const PartLocation& x, const PartLocation& y) {
    return x.shard != y.shard ? x.shard < y.shard : x.index < y.index;
  }

  // A quantized weight is merged when the stream meets the first of its parts; the others are then
  // written from those chunks (or kept for their shard's writer when they are in a later shard).
  void locate_quantized_groups() {
    for (const auto& [name, ops] : input_.plan->ops) {
      if (ops.empty() || input_.model->find(name).tensor != nullptr) continue;
      const auto weight = input_.layout->quantized.find(name);
      if (weight == input_.layout->quantized.end()) continue;
      TensorJob group;
      group.kind = JobKind::quantized;
      group.ops = &ops;
      group.quantized = &weight->second;
      group.quantized_name = name;
      for (const auto& part : weight->second.parts) group.parts.push_back(locate(part));
      const auto anchor = *std::min_element(group.parts.begin(), group.parts.end(), before);
      for (const auto& part : group.parts) {
        const auto key = std::pair(part.shard, part.index);
        if (!part_owner_.emplace(key, name).second) {
          throw error(errc::invalid_argument,
                      "base tensor '" + weight->second.parts.front() + "' belongs to two quantized weights");
        }
        const auto& file = input_.model->shards()[part.shard];
        group.bytes += file.tensors()[part.index].byte_size();
      }
      groups_.emplace(std::pair(anchor.shard, anchor.index), std::move(group));
    }
  }

  void add_job(std::size_t shard, std::size_t index, const st::TensorInfo& tensor) {
    TensorJob job;
    const auto key = std::pair(shard, index);
    if (const auto group = groups_.find(key); group != groups_.end()) {
      job = std::move(group->second);
    } else if (part_owner_.contains(key)) {
      job.kind = JobKind::written_with_group;
    } else if (const auto ops = input_.plan->ops.find(tensor.name);
               ops != input_.plan->ops.end() && !ops->second.empty()) {
      job.kind = JobKind::merge;
      job.ops = &ops->second;
      job.bytes = tensor.byte_size();
    } else {
      job.bytes = tensor.byte_size();
    }
    job.shard = shard;
    job.index = index;
    const std::size_t number = plan_.tensors.size();
    switch (job.kind) {
      case JobKind::copy: add_byte_chunks(number, tensor.byte_size(), input_.chunk_bytes); break;
      case JobKind::merge: {
        const auto row_bytes =
            static_cast<std::uint64_t>(tensor.shape.empty() ? 1 : tensor.shape.back()) * st::dtype_size(tensor.dtype);
        const std::uint64_t rows = row_bytes == 0 ? 1 : std::max<std::uint64_t>(1, input_.chunk_bytes / row_bytes);
        add_byte_chunks(number, tensor.byte_size(), rows * std::max<std::uint64_t>(row_bytes, 1));
        break;
      }
      case JobKind::quantized: add_quantized_chunks(number, job); break;
      case JobKind::written_with_group: plan_.chunks.push_back({number, 0, 0, 0, 0}); break;
    }
    job.last_chunk = plan_.chunks.size() - 1;
    plan_.tensors.push_back(std::move(job));
  }

  void add_byte_chunks(std::size_t job, std::uint64_t bytes, std::uint64_t step) {
    std::uint64_t offset = 0;
    do {
      const std::uint64_t size = std::min(step, bytes - offset);
      plan_.chunks.push_back({job, offset, size, 0, 0});
      offset += size;
    } while (offset < bytes);
  }

  // Ranges of the first logical axis (experts, or rows of a 2-D INT4 weight) of about two
  // chunk_bytes of f32 each; a 2-D MXFP4 weight (first axis = in) decodes only whole.
  void add_quantized_chunks(std::size_t job_number, TensorJob& job) {
    const auto& shape = job.quantized->logical.shape;
    if (shape.size() < 2) {
      throw error(errc::invalid_argument,
                  "quantized weight '" + job.quantized_name + "' is not 2-D or 3-D and cannot receive a LoRA delta");
    }
    const std::int64_t count = shape.front();
    const std::int64_t per_index = product_of(std::span(shape).subspan(1));
    job.rows_per_index = product_of(std::span(shape).subspan(1, shape.size() - 2));
    std::int64_t step = std::max<std::int64_t>(
        1, static_cast<std::int64_t>(input_.chunk_bytes / 2) / std::max<std::int64_t>(per_index, 1));
    if (job.quantized->kind == QuantizedKind::mxfp4 && shape.size() == 2) step = count;
    std::int64_t first = 0;
    do {
      const std::int64_t last = std::min(count, first + step);
      plan_.chunks.push_back({job_number, 0, 0, first, last});
      first = last;
    } while (first < count);
  }

  const MergeStreamInput& input_;
  std::map<const st::SafetensorsFile*, std::size_t> shard_of_;
  std::map<std::pair<std::size_t, std::size_t>, TensorJob> groups_;  // by first part
  std::map<std::pair<std::size_t, std::size_t>, std::string> part_owner_;
  Plan plan_;
};

// Reads exactly buffer.size() bytes at `offset`, or throws io_error naming the file.
void read_exactly(int fd, std::span<std::byte> buffer, std::uint64_t offset, const st::SafetensorsFile& file,
                  const st::TensorInfo& tensor) {
  std::size_t done = 0;
  while (done < buffer.size()) {
    const ssize_t got = ::pread(fd, buffer.data() + done, buffer.size() - done, static_cast<off_t>(offset + done));
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) throw error(errc::io_error, shard_tensor(file, tensor) + ": cannot read: " + std::strerror(errno));
    if (got == 0) {
      throw error(errc::io_error, shard_tensor(file, tensor) + ": the file ends at byte " +
                                      std::to_string(offset + done) + " (truncated while being read?)");
    }
    done += static_cast<std::size_t>(got);
  }
}

class ShardFile {
 public:
  ShardFile() = default;
  ShardFile(const ShardFile&) = delete;
  ShardFile& operator=(const ShardFile&) = delete;
  ~ShardFile() { close(); }

  int open(const st::SafetensorsFile& file) {
    if (file_ == &file) return fd_;
    close();
    fd_ = ::open(file.path().c_str(), O_RDONLY | O_CLOEXEC);
    if (fd_ < 0) throw error(errc::io_error, file.path().string() + ": cannot open: " + std::strerror(errno));
    file_ = &file;
    ::posix_fadvise(fd_, 0, 0, POSIX_FADV_SEQUENTIAL);  // a hint: larger read-ahead
    return fd_;
  }

 private:
  void close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
    file_ = nullptr;
  }
  int fd_ = -1;
  const st::SafetensorsFile* file_ = nullptr;
};

// Bytes of a part of a quantized weight waiting for its shard's writer.
struct PendingPiece {
  std::size_t index = 0;
  std::uint64_t offset = 0;
  std::vector<std::byte> bytes;
};

class Pipeline {
 public:
  Pipeline(const MergeStreamInput& input, Plan plan)
      : input_(input),
        plan_(std::move(plan)),
        shards_(input.model->shards()),
        merges_(plan_.tensors.size()),
        buffers_(input.threads + 3),
        slot_of_(plan_.chunks.size()),
        computed_(plan_.chunks.size(), 0),
        pieces_(plan_.chunks.size()) {
    for (std::size_t slot = 0; slot < buffers_.size(); ++slot) free_slots_.push_back(slot);
  }

  MergeStreamTotals run() {
    {
      std::vector<std::jthread> threads;
      try {
        threads.emplace_back([this] { guarded([this] { read_all(); }); });
        for (unsigned i = 0; i < input_.threads; ++i) {
          threads.emplace_back([this] { guarded([this] { compute_all(); }); });
        }
      } catch (...) {
        stop();  // the threads already started must not wait forever to be joined
        throw;
      }
      guarded([this] { write_all(); });
      stop();  // done or failed: the reader and the workers leave their waits and are joined
    }
    if (failure_) std::rethrow_exception(failure_);
    return totals_;
  }

 private:
  template <class Body>
  void guarded(Body body) {
    try {
      body();
    } catch (...) {
      const std::lock_guard lock(mutex_);
      if (!failure_) failure_ = std::current_exception();
      stopping_ = true;
      changed_.notify_all();
    }
  }

  void stop() {
    const std::lock_guard lock(mutex_);
    stopping_ = true;
    changed_.notify_all();
  }

  // Waits until `ready` holds; false when the pipeline is stopping instead.
  template <class Ready>
  bool wait_for(std::unique_lock<std::mutex>& lock, Ready ready) {
    changed_.wait(lock, [&] { return stopping_ || ready(); });
    return !stopping_;
  }

  const st::SafetensorsFile& file_of(const TensorJob& job) const { return shards_[job.shard]; }
  const st::TensorInfo& tensor_of(const TensorJob& job) const { return shards_[job.shard].tensors()[job.index]; }

  std::shared_ptr<const TargetMerge> make_merge(const TensorJob& job) const {
    if (job.kind == JobKind::quantized) {
      return std::make_shared<TargetMerge>(job.quantized_name, job.quantized->logical.shape, *job.ops);
    }
    return std::make_shared<TargetMerge>(tensor_of(job).name, tensor_of(job).shape, *job.ops);
  }

  void read_all() {
    ShardFile shard_file;
    for (std::size_t number = 0; number < plan_.chunks.size(); ++number) {
      const ChunkJob& chunk = plan_.chunks[number];
      const TensorJob& job = plan_.tensors[chunk.tensor];
      std::size_t slot = 0;
      {
        std::unique_lock lock(mutex_);
        if (!wait_for(lock, [&] { return !free_slots_.empty(); })) return;
        slot = free_slots_.back();
        free_slots_.pop_back();
      }
      const bool first_of_job = number == 0 || plan_.chunks[number - 1].tensor != chunk.tensor;
      if (first_of_job && (job.kind == JobKind::merge || job.kind == JobKind::quantized)) {
        merges_[chunk.tensor] = make_merge(job);
      }
      if ((job.kind == JobKind::copy || job.kind == JobKind::merge) && chunk.size > 0) {
        auto& buffer = buffers_[slot];
        buffer.resize(chunk.size);
        const auto& file = file_of(job);
        const auto& tensor = tensor_of(job);
        read_exactly(shard_file.open(file), buffer, file.data_offset() + tensor.begin + chunk.offset, file, tensor);
      }
      const std::lock_guard lock(mutex_);
      slot_of_[number] = slot;
      if (job.kind == JobKind::merge || job.kind == JobKind::quantized) {
        to_compute_.push_back(number);
      } else {
        computed_[number] = 1;
      }
      changed_.notify_all();
    }
  }

  void compute_all() {
    MergeScratch scratch;
    std::vector<float> values;
    for (;;) {
      std::size_t number = 0;
      {
        std::unique_lock lock(mutex_);
        if (!wait_for(lock, [&] { return !to_compute_.empty(); })) return;
        number = to_compute_.front();
        to_compute_.pop_front();
      }
      const ChunkJob& chunk = plan_.chunks[number];
      const TensorJob& job = plan_.tensors[chunk.tensor];
      const TargetMerge& merge = *merges_[chunk.tensor];
      if (job.kind == JobKind::merge) {
        merge_chunk(chunk, tensor_of(job), merge, buffers_[slot_of_[number]], values, scratch);
      } else {
        pieces_[number] = merge_quantized_chunk(chunk, job, merge, values, scratch);
      }
      const std::lock_guard lock(mutex_);
      computed_[number] = 1;
      changed_.notify_all();
    }
  }

  // A few rows at a time: converted to f32, the deltas added, rounded back in place.
  static void merge_chunk(const ChunkJob& chunk, const st::TensorInfo& tensor, const TargetMerge& merge,
                          std::vector<std::byte>& buffer, std::vector<float>& values, MergeScratch& scratch) {
    const auto row_length = static_cast<std::size_t>(merge.row_length());
    if (row_length == 0 || chunk.size == 0) return;
    const std::size_t row_bytes = row_length * st::dtype_size(tensor.dtype);
    const std::size_t rows = chunk.size / row_bytes;
    const auto first_row = static_cast<std::int64_t>(chunk.offset / row_bytes);
    // About 256 KiB of f32 per tile: the rows stay in cache between the three passes.
    const std::size_t tile = std::max<std::size_t>(kernels::rows_per_call, (std::size_t{64} << 10) / row_length);
    values.resize(std::min(tile, rows) * row_length);
    for (std::size_t row = 0; row < rows; row += tile) {
      const std::size_t count = std::min(tile, rows - row);
      const std::span<float> floats(values.data(), count * row_length);
      const std::span<std::byte> bytes(buffer.data() + row * row_bytes, count * row_bytes);
      if (tensor.dtype == st::Dtype::bf16) {
        kernels::bf16_to_f32(bytes.data(), floats.data(), floats.size());
      } else {
        st::to_f32(tensor.dtype, bytes, floats);
      }
      merge.add_to_rows(floats, first_row + static_cast<std::int64_t>(row), scratch);
      if (tensor.dtype == st::Dtype::bf16) {
        kernels::f32_to_bf16(floats.data(), bytes.data(), floats.size());
      } else {
        st::from_f32(tensor.dtype, floats, bytes);
      }
    }
  }

  std::vector<EncodedPart> merge_quantized_chunk(const ChunkJob& chunk, const TensorJob& job, const TargetMerge& merge,
                                                 std::vector<float>& values, MergeScratch& scratch) const {
    std::vector<std::span<const std::byte>> parts;
    for (const auto& part : job.parts) {
      const auto& file = shards_[part.shard];
      parts.push_back(file.data(file.tensors()[part.index]));
    }
    const auto& shape = job.quantized->logical.shape;
    values.resize(static_cast<std::size_t>((chunk.last - chunk.first) * product_of(std::span(shape).subspan(1))));
    dequantize(*job.quantized, parts, *input_.layout, values, chunk.first, chunk.last);
    merge.add_to_rows(values, chunk.first * job.rows_per_index, scratch);
    return encode(*job.quantized, values, *input_.layout, chunk.first, chunk.last);
  }

  // finish() flushes a shard to the disk (fsync) before renaming it: a second thread does that
  // while this one goes on with the next shard, one shard at a time, so the disk keeps writing
  // while the next shard is read and merged, and no more than two shards' pages are dirty.
  void write_all() {
    std::size_t number = 0;
    std::future<void> finishing;
    for (std::size_t shard = 0; shard < shards_.size(); ++shard) {
      const auto& file = shards_[shard];
      std::vector<st::TensorDecl> declarations;
      for (const auto& tensor : file.tensors()) declarations.push_back({tensor.name, tensor.dtype, tensor.shape});
      st::SafetensorsWriter writer(input_.output_dir / file.path().filename(), std::move(declarations),
                                   file.metadata());
      for (auto& piece : pending_[shard]) writer.write(piece.index, piece.bytes, piece.offset);
      pending_.erase(shard);
      for (; number < plan_.shard_chunk_end[shard]; ++number) {
        {
          std::unique_lock lock(mutex_);
          if (!wait_for(lock, [&] { return computed_[number] != 0; })) return;
        }
        write_chunk(number, shard, writer);
      }
      totals_.bytes_written += writer.file_size();
      if (finishing.valid()) finishing.get();
      finishing = std::async(std::launch::async, [done = std::move(writer)]() mutable { done.finish(); });
    }
    if (finishing.valid()) finishing.get();
  }

  void write_chunk(std::size_t number, std::size_t shard, st::SafetensorsWriter& writer) {
    const ChunkJob& chunk = plan_.chunks[number];
    const TensorJob& job = plan_.tensors[chunk.tensor];
    if (job.kind == JobKind::quantized) {
      for (auto& piece : pieces_[number]) {
        const PartLocation& where = job.parts.at(piece.part);
        if (where.shard == shard) {
          writer.write(where.index, piece.bytes, piece.offset);
        } else {
          pending_[where.shard].push_back({where.index, piece.offset, std::move(piece.bytes)});
        }
      }
      pieces_[number] = {};
      if (number == job.last_chunk) copy_kept_parts(job, shard, writer);
    } else if (chunk.size > 0) {
      writer.write(job.index, std::span(buffers_[slot_of_[number]]).first(chunk.size), chunk.offset);
    }
    {
      const std::lock_guard lock(mutex_);
      free_slots_.push_back(slot_of_[number]);
      changed_.notify_all();
    }
    if (number == job.last_chunk) finish_job(job, chunk.tensor);
  }

  // The parts encode() leaves alone (INT4's weight_shape) are copied as they are, once the
  // weight's last chunk is written (before finish_job releases their pages).
  void copy_kept_parts(const TensorJob& job, std::size_t shard, st::SafetensorsWriter& writer) {
    for (std::size_t part = 0; part < job.parts.size(); ++part) {
      if (encode_rewrites_part(*job.quantized, part)) continue;
      const PartLocation& where = job.parts[part];
      const auto& file = shards_[where.shard];
      const auto bytes = file.data(file.tensors()[where.index]);
      if (where.shard == shard) {
        writer.write(where.index, bytes, 0);
      } else {
        pending_[where.shard].push_back({where.index, 0, std::vector<std::byte>(bytes.begin(), bytes.end())});
      }
    }
  }

  void finish_job(const TensorJob& job, std::size_t job_number) {
    merges_[job_number].reset();  // every chunk of it is computed: its prepared deltas can go
    if (job.kind == JobKind::quantized) {
      for (const auto& part : job.parts) shards_[part.shard].release(shards_[part.shard].tensors()[part.index]);
    }
    if (job.kind != JobKind::written_with_group) totals_.bytes_read += job.bytes;
    if (job.kind == JobKind::merge || job.kind == JobKind::quantized) ++totals_.tensors_changed;
    ++totals_.tensors_written;
    bytes_done_ += job.bytes;
    if (input_.progress != nullptr && *input_.progress) {
      (*input_.progress)(ExportProgress{"merging", bytes_done_, input_.model->total_bytes(), totals_.tensors_written,
                                        plan_.tensors.size()});
    }
  }

  const MergeStreamInput& input_;
  Plan plan_;
  const std::vector<st::SafetensorsFile>& shards_;
  std::vector<std::shared_ptr<const TargetMerge>> merges_;    // per job: set by the reader, reset once written
  std::vector<std::vector<std::byte>> buffers_;               // each owned by whoever holds its slot
  std::map<std::size_t, std::vector<PendingPiece>> pending_;  // writer thread only
  MergeStreamTotals totals_;                                  // writer thread only
  std::uint64_t bytes_done_ = 0;                              // writer thread only

  std::mutex mutex_;  // guards what follows
  std::condition_variable changed_;
  std::vector<std::size_t> free_slots_;
  std::deque<std::size_t> to_compute_;
  std::vector<std::size_t> slot_of_;
  std::vector<char> computed_;
  std::vector<std::vector<EncodedPart>> pieces_;
  std::exception_ptr failure_;
  bool stopping_ = false;
};

}  // namespace merge_stream_impl

MergeStreamTotals stream_merged_shards(const MergeStreamInput& input) {
  MergeStreamInput checked = input;
  checked.threads = std::max(1U, input.threads);
  // threads + 3 buffers of at most 128 MiB together, however many threads: smaller chunks for more.
  constexpr std::size_t buffer_budget = std::size_t{128} << 20;
  const std::size_t budget_chunk = std::max<std::size_t>(std::size_t{1} << 20, buffer_budget / (checked.threads + 3));
  checked.chunk_bytes = std::clamp<std::size_t>(input.chunk_bytes, 1, budget_chunk);
  merge_stream_impl::Plan plan = merge_stream_impl::StreamPlanner(checked).make();
  return merge_stream_impl::Pipeline(checked, std::move(plan)).run();
}

}  // namespace tinker::weights::detail
