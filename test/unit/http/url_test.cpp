// parse_absolute_url: the signed URLs of downloads and the absolute storage paths of requests.
#include "http/url.hpp"

#include <tinker/error.hpp>

#include <gtest/gtest.h>

namespace tinker::http {
namespace {

TEST(AbsoluteUrl, SplitsEndpointPathAndKeepsTheQueryOutOfTheDisplay) {
  const AbsoluteUrl url = parse_absolute_url("https://storage.example:8443/b/ckpt.tar?X-Sig=abc", "url");
  EXPECT_EQ(url.endpoint, Endpoint("storage.example", 8443, true));
  EXPECT_EQ(url.origin_key, "https://storage.example:8443");
  EXPECT_EQ(url.path, "/b/ckpt.tar?X-Sig=abc");
  EXPECT_EQ(url.display, "https://storage.example:8443/b/ckpt.tar");
  EXPECT_EQ(parse_absolute_url("http://h", "url").path, "/");
  EXPECT_EQ(parse_absolute_url("http://h:/x", "url").endpoint.port, 80);  // an empty port is the default
}

// Fuzzing found "https://[::F]:-43/a" accepted with port 0 and the request target "-43/a", which would
// break the request line (test/fuzz/regressions/urls/).
TEST(AbsoluteUrl, RefusesABadPortInsteadOfReadingItAsAPath) {
  for (const char* text : {"https://[::F]:-43/a", "https://host:8x/a", "http://host:0/a"}) {
    EXPECT_THROW((void)parse_absolute_url(text, "url"), error) << text;
  }
}

TEST(AbsoluteUrl, RefusesWhatIsNotAnAbsoluteHttpUrl) {
  for (const char* text : {"", "/relative", "ftp://host/a", "https:///a", "not a url"}) {
    EXPECT_THROW((void)parse_absolute_url(text, "url"), error) << text;
  }
}

}  // namespace
}  // namespace tinker::http
