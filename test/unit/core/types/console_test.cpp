// Console URL builders (include/tinker/console.hpp): the pages and percent-encoding the Python SDK
// uses.
#include <tinker/console.hpp>
#include <tinker/error.hpp>

#include <gtest/gtest.h>

namespace tinker::console {
namespace {

TEST(ConsoleUrls, QuoteEncodesLikeUrllibParseQuote) {
  EXPECT_EQ(url_quote("abc-_.~XYZ019"), "abc-_.~XYZ019");
  EXPECT_EQ(url_quote("a/b c:d"), "a/b%20c%3Ad");                  // safe="/" by default
  EXPECT_EQ(url_quote("a/b c:d", ""), "a%2Fb%20c%3Ad");            // nothing kept
  EXPECT_EQ(url_quote("\xC3\xA9?&=#%"), "%C3%A9%3F%26%3D%23%25");  // bytes, upper-case hex
  EXPECT_EQ(url_quote("a:b", ":"), "a:b");
}

TEST(ConsoleUrls, EachPageHasItsPath) {
  EXPECT_EQ(sessions_url(), "https://tinker.thinkingmachines.ai/sessions");
  EXPECT_EQ(session_url("s-1"), "https://tinker.thinkingmachines.ai/sessions/s-1");
  EXPECT_EQ(training_run_url("abc:train:0"), "https://tinker.thinkingmachines.ai/training_runs/abc:train:0");
  EXPECT_EQ(checkpoint_url("abc:train:0", "weights/step-1"),
            "https://tinker.thinkingmachines.ai/checkpoints/abc%3Atrain%3A0/weights%2Fstep-1");
  EXPECT_EQ(sampler_checkpoints_url("abc:train:0"),
            "https://tinker.thinkingmachines.ai/checkpoints/abc%3Atrain%3A0/sampler_weights");
  EXPECT_EQ(playground_url("tinker://abc:train:0/sampler_weights/final"),
            "https://tinker.thinkingmachines.ai/playground?mode=checkpoint&checkpoint="
            "tinker%3A%2F%2Fabc%3Atrain%3A0%2Fsampler_weights%2Ffinal");
}

TEST(ConsoleUrls, ATinkerPathLeadsToItsCheckpointPage) {
  EXPECT_EQ(console_url("tinker://abc:train:0/sampler_weights/final"),
            "https://tinker.thinkingmachines.ai/checkpoints/abc%3Atrain%3A0/sampler_weights%2Ffinal");
  EXPECT_EQ(console_url("tinker://abc:train:0/external_weights/hf"),
            checkpoint_url("abc:train:0", "external_weights/hf"));
  EXPECT_THROW((void)console_url("https://example.com/x"), error);
  EXPECT_THROW((void)console_url("tinker://abc:train:0/other/x"), error);
}

}  // namespace
}  // namespace tinker::console
