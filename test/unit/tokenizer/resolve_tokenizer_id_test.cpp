// Which Hugging Face repo id (and revision) a model's tokenizer is, from its name and tokenizer id
// (doc/tokenizers.md#where-a-tokenizer-comes-from).
#include <tinker/error.hpp>
#include <tinker/tokenizer.hpp>

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <type_traits>

namespace {

using tinker::resolve_tokenizer_id;
using tinker::TokenizerRef;

static_assert(!std::is_aggregate_v<TokenizerRef>);

std::string id_for(std::string_view model_name, std::optional<std::string_view> tokenizer_id = std::nullopt) {
  return resolve_tokenizer_id(model_name, tokenizer_id).id;
}

// Runs the resolution expecting an invalid_argument error; returns its message.
std::string resolution_error(std::string_view model_name, std::optional<std::string_view> tokenizer_id) {
  try {
    const auto ref = resolve_tokenizer_id(model_name, tokenizer_id);
    ADD_FAILURE() << "resolved to \"" << ref.id << "\" instead of failing";
  } catch (const tinker::error& e) {
    EXPECT_EQ(e.code(), tinker::errc::invalid_argument);
    return e.what();
  }
  return {};
}

TEST(TokenizerResolve, GivenIdIsUsedAsIs) {
  const auto ref = resolve_tokenizer_id("Qwen/Qwen3-8B", "tinker-local/tiny-sp-1k");
  EXPECT_EQ(ref, TokenizerRef("tinker-local/tiny-sp-1k"));
  EXPECT_FALSE(ref.revision);
  EXPECT_FALSE(ref.private_package);
}

TEST(TokenizerResolve, GivenIdIsTruncatedAtTheFirstColon) {
  EXPECT_EQ(id_for("Qwen/Qwen3-8B", "org/tok:v2:extra"), "org/tok");
}

TEST(TokenizerResolve, GivenIdWinsOverTheLlama3Rule) {
  EXPECT_EQ(id_for("meta-llama/Llama-3.1-8B", "org/tok"), "org/tok");
}

TEST(TokenizerResolve, EmptyGivenIdCountsAsNull) {
  EXPECT_EQ(id_for("Qwen/Qwen3-8B/instruct", ""), "Qwen/Qwen3-8B");
  EXPECT_EQ(id_for("Qwen/Qwen3-8B/instruct", ":suffix"), "Qwen/Qwen3-8B");
}

TEST(TokenizerResolve, Llama3ModelsUseTheUngatedMirror) {
  const std::string mirror = "thinkingmachineslabinc/meta-llama-3-instruct-tokenizer";
  EXPECT_EQ(id_for("meta-llama/Llama-3.1-8B"), mirror);
  EXPECT_EQ(id_for("meta-llama/Llama-3.3-70B-Instruct:peft:123"), mirror);
  EXPECT_EQ(id_for("meta-llama/Llama-3"), mirror);
  EXPECT_EQ(id_for("meta-llama/Llama-3.1-8B/variant"), mirror);  // the Llama rule comes before the variant rule
}

TEST(TokenizerResolve, OtherLlamaModelsAreNotRedirected) {
  EXPECT_EQ(id_for("meta-llama/Llama-2-7b-hf"), "meta-llama/Llama-2-7b-hf");
  EXPECT_EQ(id_for("Meta-Llama/Llama-3.1-8B"), "Meta-Llama/Llama-3.1-8B");  // case-sensitive prefix
}

TEST(TokenizerResolve, ThreePartModelNameDropsTheVariant) {
  EXPECT_EQ(id_for("Qwen/Qwen3-8B/base"), "Qwen/Qwen3-8B");
  EXPECT_EQ(id_for("org/model/variant:tinker://run/weights/x"), "org/model");
}

TEST(TokenizerResolve, OtherModelNamesAreTheTokenizerId) {
  EXPECT_EQ(id_for("Qwen/Qwen3-8B"), "Qwen/Qwen3-8B");
  EXPECT_EQ(id_for("Qwen/Qwen3-8B:run-7"), "Qwen/Qwen3-8B");
  EXPECT_EQ(id_for("gpt2"), "gpt2");
}

TEST(TokenizerResolve, KimiTokenizersArePinned) {
  EXPECT_EQ(resolve_tokenizer_id("moonshotai/Kimi-K2-Thinking", std::nullopt),
            TokenizerRef("moonshotai/Kimi-K2-Thinking", "612681931a8c906ddb349f8ad0f582cb552189cd"));
  EXPECT_EQ(resolve_tokenizer_id("moonshotai/Kimi-K2.5-Text-Only", std::nullopt),
            TokenizerRef("moonshotai/Kimi-K2.5", "4d01dfe0332d63057c186e0b262165819efb6611"));
  EXPECT_EQ(resolve_tokenizer_id("x/y", "moonshotai/Kimi-K2.5"),
            TokenizerRef("moonshotai/Kimi-K2.5", "4d01dfe0332d63057c186e0b262165819efb6611"));
  EXPECT_EQ(resolve_tokenizer_id("moonshotai/Kimi-K2.6:peft", std::nullopt),
            TokenizerRef("moonshotai/Kimi-K2.6", "b5aabbfb20227ed42becbf5541dbffd213942c58"));
}

TEST(TokenizerResolve, OnlyExactKimiIdsArePinned) {
  EXPECT_EQ(resolve_tokenizer_id("moonshotai/Kimi-K2-Instruct", std::nullopt),
            TokenizerRef("moonshotai/Kimi-K2-Instruct"));
  EXPECT_EQ(resolve_tokenizer_id("moonshotai/Kimi-K2.6-Preview", std::nullopt),
            TokenizerRef("moonshotai/Kimi-K2.6-Preview"));
}

TEST(TokenizerResolve, PrivatePackageIdsAreMarked) {
  EXPECT_TRUE(resolve_tokenizer_id("x/y", "TML/some-tokenizer").private_package);
  EXPECT_TRUE(resolve_tokenizer_id("thinkingmachines/Inkling", std::nullopt).private_package);
  EXPECT_FALSE(resolve_tokenizer_id("thinkingmachineslabinc/other", std::nullopt).private_package);
  EXPECT_FALSE(resolve_tokenizer_id("tml/lowercase", std::nullopt).private_package);
}

TEST(TokenizerResolve, EmptyModelNameIsRejected) {
  EXPECT_NE(resolution_error("", "org/tok").find("model_name"), std::string::npos);
  EXPECT_NE(resolution_error(":suffix", std::nullopt).find("model_name"), std::string::npos);
}

TEST(TokenizerResolve, UnsafeIdsAreRejectedNamingTheirSource) {
  const auto parent = resolution_error("Qwen/Qwen3-8B", "../etc");
  EXPECT_NE(parent.find("\"../etc\""), std::string::npos) << parent;
  EXPECT_NE(parent.find("tokenizer_id"), std::string::npos) << parent;
  EXPECT_NE(resolution_error("Qwen/Qwen3-8B", "org/..").find("'..'"), std::string::npos);
  EXPECT_NE(resolution_error("Qwen/Qwen3-8B", "a/b/c").find("more than one '/'"), std::string::npos);
  EXPECT_NE(resolution_error("Qwen/Qwen3-8B", "org name").find("may only contain"), std::string::npos);
  EXPECT_NE(resolution_error("Qwen/Qwen3-8B", "/abs").find("empty part"), std::string::npos);
  const auto four_parts = resolution_error("a/b/c/d", std::nullopt);
  EXPECT_NE(four_parts.find("model_name \"a/b/c/d\""), std::string::npos) << four_parts;
}

}  // namespace
