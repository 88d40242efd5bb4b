// See post_processors.hpp.
#include "text/hf/post_processors.hpp"

#include <utility>

namespace tinker::tokenizer_detail::hf {
namespace {

class TemplateProcessor final : public PostProcessor {
 public:
  explicit TemplateProcessor(std::vector<TemplateItem> items) : items_(std::move(items)) {}
  void add_special_tokens(std::vector<TokenId>& ids) const override {
    std::vector<TokenId> out;
    for (const auto& item : items_) {
      if (item.sequence) {
        out.insert(out.end(), ids.begin(), ids.end());
      } else {
        out.insert(out.end(), item.ids.begin(), item.ids.end());
      }
    }
    ids = std::move(out);
  }

 private:
  std::vector<TemplateItem> items_;
};

class NoOpProcessor final : public PostProcessor {
 public:
  void add_special_tokens(std::vector<TokenId>&) const override {}
};

class SequenceProcessor final : public PostProcessor {
 public:
  explicit SequenceProcessor(std::vector<std::unique_ptr<PostProcessor>> steps) : steps_(std::move(steps)) {}
  void add_special_tokens(std::vector<TokenId>& ids) const override {
    for (const auto& step : steps_) step->add_special_tokens(ids);
  }

 private:
  std::vector<std::unique_ptr<PostProcessor>> steps_;
};

}  // namespace

std::unique_ptr<PostProcessor> make_template_processor(std::vector<TemplateItem> items) {
  return std::make_unique<TemplateProcessor>(std::move(items));
}
std::unique_ptr<PostProcessor> make_no_op_processor() {
  return std::make_unique<NoOpProcessor>();
}
std::unique_ptr<PostProcessor> make_sequence_processor(std::vector<std::unique_ptr<PostProcessor>> steps) {
  return std::make_unique<SequenceProcessor>(std::move(steps));
}

}  // namespace tinker::tokenizer_detail::hf
