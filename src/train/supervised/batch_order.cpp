// The seeded order of supervised batches: a pure function of (seed, step).
#include <tinker/error.hpp>
#include <tinker/train/supervised.hpp>

#include <numeric>
#include <string>
#include <utility>

namespace tinker::train {
namespace {

// splitmix64: a tiny generator with a fixed definition, so the order is the same on every
// platform and standard library (std::shuffle and the std distributions are not).
class OrderGenerator {
 public:
  explicit OrderGenerator(std::uint64_t seed) : state_(seed) {}
  std::uint64_t next() {
    std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }

 private:
  std::uint64_t state_;
};

}  // namespace

BatchOrder::BatchOrder(std::size_t dataset_size, std::size_t batch_size, std::uint64_t seed, bool shuffle)
    : dataset_size_(dataset_size), batch_size_(batch_size), seed_(seed), shuffle_(shuffle) {
  if (batch_size < 1) throw tinker::error(errc::invalid_argument, "SupervisedOptions::batch_size must be >= 1, got 0");
  if (dataset_size < batch_size) {
    throw tinker::error(errc::invalid_argument, "SupervisedOptions::batch_size (" + std::to_string(batch_size) +
                                                    ") is larger than the dataset (" + std::to_string(dataset_size) +
                                                    " examples)");
  }
}

std::int64_t BatchOrder::batches_per_epoch() const noexcept {
  return static_cast<std::int64_t>(dataset_size_ / batch_size_);
}

std::int64_t BatchOrder::epoch_of(std::int64_t step) const {
  if (step < 0) throw tinker::error(errc::invalid_argument, "BatchOrder: step must be >= 0");
  return step / batches_per_epoch();
}

std::vector<std::size_t> BatchOrder::epoch_order(std::int64_t epoch) const {
  std::vector<std::size_t> order(dataset_size_);
  std::iota(order.begin(), order.end(), std::size_t{0});
  if (!shuffle_) return order;
  // Each epoch's generator is seeded from (seed, epoch) alone: no state carries between epochs.
  OrderGenerator generator(OrderGenerator(seed_).next() ^ (static_cast<std::uint64_t>(epoch) * 0xd1b54a32d192ed03ULL));
  for (std::size_t i = order.size(); i > 1; --i) {
    const std::size_t j = static_cast<std::size_t>(generator.next() % i);
    std::swap(order[i - 1], order[j]);
  }
  return order;
}

std::vector<std::size_t> BatchOrder::batch(std::int64_t step) const {
  const std::vector<std::size_t> order = epoch_order(epoch_of(step));
  const auto first = static_cast<std::size_t>(step % batches_per_epoch()) * batch_size_;
  return std::vector<std::size_t>(order.begin() + static_cast<std::ptrdiff_t>(first),
                                  order.begin() + static_cast<std::ptrdiff_t>(first + batch_size_));
}

}  // namespace tinker::train
