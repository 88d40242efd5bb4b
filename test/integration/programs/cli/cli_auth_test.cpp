// `tinker auth login|status|logout` and `tinker model list` against tinker-local, with HOME in a
// temporary directory: the key is read from piped input, verified with one request, stored in
// ~/.tinker/credentials.json, used by later commands, and never printed.
#include "integration/programs/cli/cli_support.hpp"
#include "support/temp_files.hpp"

#include <tinker/credentials.hpp>

#include <gmock/gmock.h>

#include <sys/stat.h>

#include <chrono>
#include <filesystem>

namespace tinker::test {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// Accepted by the server; its distinctive tail is what the output checks look for.
constexpr std::string_view good_key = "tml-auth-good-key-5f3e9a17c2d4";
constexpr std::string_view refused_key = "tml-auth-refused-key-8b1c4d2e6f70";
constexpr std::string_view good_tail = "5f3e9a17c2d4";
constexpr std::string_view refused_tail = "8b1c4d2e6f70";

class AuthCliTest : public CliTest {
 protected:
  local::ServerOptions server_options() const override {
    local::ServerOptions options = CliTest::server_options();
    options.api_keys = {std::string(test_api_key), std::string(good_key)};
    return options;
  }

  std::filesystem::path credentials() const { return home.path() / ".tinker" / "credentials.json"; }

  // The environment of a user without TINKER_API_KEY: HOME decides the credentials file.
  std::map<std::string, std::string> logged_out_variables() const {
    std::map<std::string, std::string> variables = this->variables();
    variables.erase("TINKER_API_KEY");
    variables["HOME"] = home.path().string();
    return variables;
  }

  CliResult auth(std::vector<std::string> args, const std::string& input = "",
                 std::map<std::string, std::string> extra = {}) {
    std::map<std::string, std::string> variables = logged_out_variables();
    for (auto& [name, value] : extra) variables[name] = value;
    CliResult result = run_cli(std::move(args), input, std::move(variables));
    // Whatever happened, no key (nor its distinctive part) was printed.
    EXPECT_THAT(result.out + result.err, Not(HasSubstr(std::string(good_tail))));
    EXPECT_THAT(result.out + result.err, Not(HasSubstr(std::string(refused_tail))));
    return result;
  }

  CliResult login(std::string_view key) { return auth({"auth", "login", "--api-key"}, std::string(key) + "\n"); }

  TempDir home{"tinker-cli-home"};
};

unsigned file_mode(const std::filesystem::path& path) {
  struct stat info {};
  EXPECT_EQ(::stat(path.c_str(), &info), 0) << path;
  return info.st_mode & 07777;
}

TEST_F(CliTest, ModelListShowsTheServersModelsFilteredCaseInsensitively) {
  const CliResult table = cli({"model", "list"});
  ASSERT_EQ(table.code, cli::exit_ok) << table.err;
  EXPECT_EQ(cells(table.lines().at(0)), (std::vector<std::string>{"Model", "Context Length"}));
  bool tiny = false;
  for (const std::string& line : table.lines()) {
    tiny = tiny || cells(line) == std::vector<std::string>{"tinker-local/tiny-lm", "2048"};
  }
  EXPECT_TRUE(tiny) << table.out;

  const CliResult filtered = cli({"model", "list", "qWEN"});
  ASSERT_EQ(filtered.code, cli::exit_ok) << filtered.err;
  ASSERT_EQ(filtered.lines().size(), 2u) << filtered.out;
  EXPECT_EQ(cells(filtered.lines().at(1)), (std::vector<std::string>{"Qwen/Qwen3-8B", "32768"}));

  const CliResult json = cli({"-f", "json", "model", "list", "TINY-LM"});
  ASSERT_EQ(json.code, cli::exit_ok) << json.err;
  const boost::json::value document = json.json();
  const auto& models = document.at("models").as_array();
  ASSERT_EQ(models.size(), 2u) << json.out;  // tiny-lm and tiny-lm-sp
  EXPECT_EQ(models.at(0).at("model_name").as_string(), "tinker-local/tiny-lm");
  EXPECT_EQ(models.at(0).at("max_context_length").as_int64(), 2048);

  const CliResult none = cli({"model", "list", "no-such-model"});
  ASSERT_EQ(none.code, cli::exit_ok) << none.err;
  EXPECT_THAT(none.out, HasSubstr("No model matches 'no-such-model'"));
}

TEST_F(AuthCliTest, LoginStoresAVerifiedKeyThatLaterCommandsUse) {
  const CliResult before = auth({"auth", "status"});
  EXPECT_EQ(before.code, cli::exit_failure);
  EXPECT_THAT(before.out, HasSubstr("none"));
  EXPECT_THAT(before.err, HasSubstr("not logged in"));
  const CliResult no_key = auth({"model", "list"});
  EXPECT_NE(no_key.code, cli::exit_ok);

  const CliResult login_result = login(good_key);
  ASSERT_EQ(login_result.code, cli::exit_ok) << login_result.err;
  EXPECT_THAT(login_result.out, HasSubstr("Logged in"));
  EXPECT_THAT(login_result.out, HasSubstr(credentials().string()));
  EXPECT_EQ(file_mode(credentials()), 0600u);
  EXPECT_EQ(file_mode(credentials().parent_path()), 0700u);
  const CredentialStore store = CredentialStore::load(credentials());
  ASSERT_NE(store.default_credential(), nullptr);
  EXPECT_EQ(store.default_credential()->key, Secret(std::string(good_key)));
  EXPECT_EQ(store.default_credential()->type, "manual");
  EXPECT_THAT(store.default_credential()->id, ::testing::StartsWith("manual-"));

  const CliResult status = auth({"-f", "json", "auth", "status"});
  ASSERT_EQ(status.code, cli::exit_ok) << status.err;
  const boost::json::value report = status.json();
  EXPECT_EQ(report.at("source").as_string(), "file");
  EXPECT_EQ(report.at("reachable").as_bool(), true);
  EXPECT_EQ(report.at("key_id").as_string(), store.default_credential()->id);
  const CliResult status_table = auth({"auth", "status"});
  ASSERT_EQ(status_table.code, cli::exit_ok) << status_table.err;
  EXPECT_THAT(status_table.out, HasSubstr("Reachable"));
  EXPECT_THAT(status_table.out, HasSubstr("yes"));

  const CliResult models = auth({"model", "list", "tiny-lm"});  // authenticated by the stored key alone
  ASSERT_EQ(models.code, cli::exit_ok) << models.err;
  EXPECT_THAT(models.out, HasSubstr("tinker-local/tiny-lm"));

  // The same key again replaces its record instead of adding one.
  ASSERT_EQ(login(good_key).code, cli::exit_ok);
  EXPECT_EQ(CredentialStore::load(credentials()).keys.size(), 1u);

  const CliResult logout = auth({"auth", "logout"});
  ASSERT_EQ(logout.code, cli::exit_ok) << logout.err;
  EXPECT_THAT(logout.out, HasSubstr("Logged out"));
  EXPECT_EQ(CredentialStore::load(credentials()).default_credential(), nullptr);
  EXPECT_EQ(file_mode(credentials()), 0600u);
  const CliResult after = auth({"auth", "status"});
  EXPECT_EQ(after.code, cli::exit_failure);
  const CliResult again = auth({"auth", "logout"});
  EXPECT_EQ(again.code, cli::exit_ok);
  EXPECT_THAT(again.out, HasSubstr("Not logged in"));
}

TEST_F(AuthCliTest, ARefusedKeyIsReportedAndNotStored) {
  const CliResult result = login(refused_key);
  EXPECT_EQ(result.code, cli::exit_failure);
  EXPECT_THAT(result.err, HasSubstr("refused the key (HTTP 401)"));
  EXPECT_THAT(result.err, HasSubstr("nothing was stored"));
  EXPECT_FALSE(std::filesystem::exists(credentials()));
}

TEST_F(AuthCliTest, ABillingHoldIsReportedAtOnceWithOneRequest) {
  local::FaultRule hold("get_server_capabilities", local::FaultKind::status);
  hold.status = 402;
  hold.probability = 1.0;  // every call
  server->set_faults({hold});
  const std::size_t before = server->audit().requests.size();
  const auto started = std::chrono::steady_clock::now();
  const CliResult result = login(good_key);
  const auto took = std::chrono::steady_clock::now() - started;
  EXPECT_EQ(result.code, cli::exit_failure);
  EXPECT_THAT(result.err, HasSubstr("billing hold (HTTP 402)"));
  EXPECT_LT(took, std::chrono::seconds(5));  // not waited out (an ordinary call pauses up to an hour)
  EXPECT_FALSE(std::filesystem::exists(credentials()));
  int capability_requests = 0;
  const auto requests = server->audit().requests;
  for (std::size_t i = before; i < requests.size(); ++i) {
    if (requests[i].path.ends_with("get_server_capabilities")) ++capability_requests;
  }
  EXPECT_EQ(capability_requests, 1);
}

TEST_F(AuthCliTest, WithoutApiKeyFlagTheBrowserFlowIsExplainedAndThePromptUsed) {
  const CliResult result = auth({"auth", "login"}, std::string(good_key) + "\n");
  ASSERT_EQ(result.code, cli::exit_ok) << result.err;
  EXPECT_THAT(result.err, HasSubstr("browser login"));
  EXPECT_THAT(result.err, HasSubstr("API key: "));
  EXPECT_TRUE(std::filesystem::exists(credentials()));
}

TEST_F(AuthCliTest, InputThatIsNotAKeyIsRefused) {
  const CliResult empty = auth({"auth", "login", "--api-key"}, "");
  EXPECT_EQ(empty.code, cli::exit_failure);
  EXPECT_THAT(empty.err, HasSubstr("no API key entered"));
  const CliResult wrong = auth({"auth", "login", "--api-key"}, "sk-5f3e9a17c2d4\n");
  EXPECT_EQ(wrong.code, cli::exit_failure);
  EXPECT_THAT(wrong.err, HasSubstr("not an API key"));
  EXPECT_FALSE(std::filesystem::exists(credentials()));
}

TEST_F(AuthCliTest, TheEnvironmentKeyWinsOverTheStoredOne) {
  ASSERT_EQ(login(good_key).code, cli::exit_ok);
  const CliResult status = auth({"-f", "json", "auth", "status"}, "", {{"TINKER_API_KEY", std::string(refused_key)}});
  EXPECT_EQ(status.code, cli::exit_failure);
  const boost::json::value report = status.json();
  EXPECT_EQ(report.at("source").as_string(), "environment");
  EXPECT_EQ(report.at("reachable").as_bool(), false);
  EXPECT_THAT(std::string(report.at("problem").as_string()), HasSubstr("401"));
  const CliResult login_again = run_cli({"auth", "login", "--api-key"}, std::string(good_key) + "\n", [&] {
    auto variables = logged_out_variables();
    variables["TINKER_API_KEY"] = std::string(refused_key);
    return variables;
  }());
  ASSERT_EQ(login_again.code, cli::exit_ok) << login_again.err;
  EXPECT_THAT(login_again.err, HasSubstr("TINKER_API_KEY is set and is used before the stored key"));
  EXPECT_THAT(login_again.out + login_again.err, Not(HasSubstr(std::string(good_tail))));
}

TEST_F(AuthCliTest, ACorruptFileIsNamedAndNotOverwritten) {
  std::filesystem::create_directories(credentials().parent_path());
  const std::string damaged = R"({"version": 1, "keys": {"a": {"type": "manual", "key": "tml-x-5f3e9a17c2d4")";
  std::ofstream(credentials()) << damaged;
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"auth", "status"}, std::vector<std::string>{"auth", "logout"},
        std::vector<std::string>{"model", "list"}}) {
    const CliResult result = auth(args);
    EXPECT_EQ(result.code, cli::exit_failure) << args.front();
    EXPECT_THAT(result.err, HasSubstr(credentials().string())) << args.front();
  }
  const CliResult login_result = login(good_key);
  EXPECT_EQ(login_result.code, cli::exit_failure);
  EXPECT_EQ(read_file(credentials()), damaged);
}

}  // namespace
}  // namespace tinker::test
