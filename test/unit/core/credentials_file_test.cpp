// The credentials file (~/.tinker/credentials.json): its format, permissions, atomic replace,
// errors that name the file but never its content, and the precedence of credential sources in
// ClientOptions::from_environment.
#include "support/temp_files.hpp"

#include <tinker/config.hpp>
#include <tinker/credentials.hpp>
#include <tinker/error.hpp>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>

#include <sys/resource.h>
#include <sys/stat.h>

#include <csignal>
#include <fstream>
#include <map>
#include <string>

namespace tinker {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr const char* stored_key = "tml-stored-key-0123456789abcdef";
constexpr const char* env_key = "tml-environment-key-fedcba9876543210";

using Env = std::map<std::string, std::string>;

ClientOptions::EnvLookup lookup_in(Env env) {
  return [env = std::move(env)](std::string_view name) -> std::optional<std::string> {
    const auto it = env.find(std::string(name));
    if (it == env.end()) return std::nullopt;
    return it->second;
  };
}

void write_text(const std::filesystem::path& path, const std::string& text) {
  std::filesystem::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << text;
}

unsigned mode_of(const std::filesystem::path& path) {
  struct stat info {};
  EXPECT_EQ(::stat(path.c_str(), &info), 0) << path;
  return info.st_mode & 07777;
}

// The error `action` throws (a failure when it throws none).
tinker::error thrown_by(const std::function<void()>& action) {
  try {
    action();
  } catch (const tinker::error& e) {
    return e;
  }
  ADD_FAILURE() << "no tinker::error thrown";
  return tinker::error(errc::invalid_argument, "none");
}

CredentialStore one_key_store() {
  CredentialStore store;
  store.put(StoredCredential("manual-abc", Secret(stored_key), "laptop"), true);
  return store;
}

class CredentialsFileTest : public ::testing::Test {
 protected:
  test::TempDir home{"tinker-home"};
  std::filesystem::path path() const { return home / ".tinker" / "credentials.json"; }
  Env env() const { return {{"HOME", home.path().string()}}; }
};

TEST_F(CredentialsFileTest, DefaultPathIsUnderHome) {
  EXPECT_EQ(CredentialStore::default_path(lookup_in(env())), path());
  EXPECT_EQ(CredentialStore::default_path(lookup_in({})), std::nullopt);
  EXPECT_EQ(CredentialStore::default_path(lookup_in({{"HOME", ""}})), std::nullopt);
}

TEST_F(CredentialsFileTest, AMissingFileIsAnEmptyStore) {
  const CredentialStore store = CredentialStore::load(path());
  EXPECT_TRUE(store.keys.empty());
  EXPECT_EQ(store.default_credential(), nullptr);
}

TEST_F(CredentialsFileTest, SavesInTheSdkFormatWithPrivateModes) {
  CredentialStore store = one_key_store();
  StoredCredential second("manual-def", Secret("tml-second"), "ci");
  second.note = "for the runners";
  CredentialDetails details;
  details.org_name = "Acme";
  details.user_email = "a@example.com";
  second.details = details;
  store.put(second, false);
  store.save(path());

  EXPECT_EQ(mode_of(path()), 0600u);
  EXPECT_EQ(mode_of(path().parent_path()), 0700u);
  const boost::json::value document = boost::json::parse(test::read_file(path()));
  EXPECT_EQ(document.at("version").as_int64(), 1);
  EXPECT_EQ(document.at("default").as_string(), "manual-abc");
  const auto& keys = document.at("keys").as_object();
  ASSERT_EQ(keys.size(), 2u);
  EXPECT_EQ(keys.at("manual-abc").at("type").as_string(), "manual");
  EXPECT_EQ(keys.at("manual-abc").at("key").as_string(), stored_key);
  EXPECT_EQ(keys.at("manual-abc").at("name").as_string(), "laptop");
  EXPECT_EQ(keys.at("manual-abc").as_object().if_contains("note"), nullptr);
  EXPECT_EQ(keys.at("manual-def").at("note").as_string(), "for the runners");
  EXPECT_EQ(keys.at("manual-def").at("details").at("org_details").at("name").as_string(), "Acme");
  EXPECT_EQ(keys.at("manual-def").at("details").at("user_details").at("email").as_string(), "a@example.com");

  const CredentialStore loaded = CredentialStore::load(path());
  ASSERT_NE(loaded.default_credential(), nullptr);
  EXPECT_EQ(loaded.default_credential()->key, Secret(stored_key));
  ASSERT_NE(loaded.find("manual-def"), nullptr);
  EXPECT_EQ(loaded.find("manual-def")->details, details);
  EXPECT_EQ(loaded.find("manual-def")->note, "for the runners");
}

TEST_F(CredentialsFileTest, AnExistingDirectoryKeepsItsMode) {
  std::filesystem::create_directories(path().parent_path());
  ::chmod(path().parent_path().c_str(), 0750);
  one_key_store().save(path());
  EXPECT_EQ(mode_of(path().parent_path()), 0750u);
  EXPECT_EQ(mode_of(path()), 0600u);
}

TEST_F(CredentialsFileTest, ReplacingKeepsModeAndLeavesNoTemporaryFile) {
  one_key_store().save(path());
  CredentialStore store = CredentialStore::load(path());
  store.put(StoredCredential("manual-new", Secret("tml-new"), "new"), true);
  store.save(path());
  EXPECT_EQ(mode_of(path()), 0600u);
  EXPECT_EQ(CredentialStore::load(path()).default_id, "manual-new");
  std::size_t entries = 0;
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator(path().parent_path())) ++entries;
  EXPECT_EQ(entries, 1u);
}

// A write that fails half way (here: the file size limit, which binds root too) leaves the old
// file as it was and no temporary file behind.
TEST_F(CredentialsFileTest, AFailedWriteLeavesTheOldFileIntact) {
  one_key_store().save(path());
  const std::string before = test::read_file(path());
  CredentialStore bigger = one_key_store();
  StoredCredential large("manual-large", Secret("tml-large"), std::string(4096, 'n'));
  bigger.put(large, true);

  rlimit saved{};
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &saved), 0);
  const auto old_handler = std::signal(SIGXFSZ, SIG_IGN);  // write() then fails with EFBIG
  rlimit small = saved;
  small.rlim_cur = 1024;
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &small), 0);
  const tinker::error failure = thrown_by([&] { bigger.save(path()); });
  ::setrlimit(RLIMIT_FSIZE, &saved);
  std::signal(SIGXFSZ, old_handler);

  EXPECT_EQ(failure.code(), make_error_code(errc::io_error));
  EXPECT_THAT(failure.diag().message, HasSubstr(path().string()));
  EXPECT_EQ(test::read_file(path()), before);
  std::size_t entries = 0;
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator(path().parent_path())) ++entries;
  EXPECT_EQ(entries, 1u);
}

TEST_F(CredentialsFileTest, AnUnwritableLocationIsAnErrorNamingTheFile) {
  // The "directory" is a regular file: nothing can be created in it, whoever runs the test.
  write_text(home / "blocker", "x");
  const std::filesystem::path inside = home / "blocker" / "credentials.json";
  const tinker::error failure = thrown_by([&] { one_key_store().save(inside); });
  EXPECT_EQ(failure.code(), make_error_code(errc::io_error));
  EXPECT_THAT(failure.diag().message, HasSubstr(inside.string()));
  EXPECT_EQ(test::read_file(home / "blocker"), "x");
}

TEST_F(CredentialsFileTest, UnknownRecordTypesAndMembersSurviveARewrite) {
  write_text(path(), R"({"version": 1, "default": "manual-abc", "extra": 1,
    "keys": {"future-1": {"type": "hardware", "slot": 3, "key": "tml-hw"},
             "manual-abc": {"type": "manual", "key": "tml-stored-key-0123456789abcdef", "name": "laptop",
                            "colour": "blue", "details": {"org_details": {"name": "Acme", "id": 7}}}}})");
  CredentialStore store = CredentialStore::load(path());
  ASSERT_EQ(store.keys.size(), 2u);
  EXPECT_EQ(store.find("future-1")->type, "hardware");
  store.put(StoredCredential("manual-new", Secret("tml-new"), "new"), true);
  store.save(path());

  const boost::json::value document = boost::json::parse(test::read_file(path()));
  const auto& keys = document.at("keys").as_object();
  EXPECT_EQ(keys.at("future-1").at("type").as_string(), "hardware");
  EXPECT_EQ(keys.at("future-1").at("slot").as_int64(), 3);
  EXPECT_EQ(keys.at("future-1").at("key").as_string(), "tml-hw");
  EXPECT_EQ(keys.at("manual-abc").at("colour").as_string(), "blue");
  EXPECT_EQ(keys.at("manual-abc").at("details").at("org_details").at("id").as_int64(), 7);
  EXPECT_EQ(document.at("default").as_string(), "manual-new");
}

TEST_F(CredentialsFileTest, GeneratedRecordsAreRead) {
  write_text(path(), R"({"version": 1, "default": "gen-1", "keys": {"gen-1": {"type": "generated", "key": "tml-gen",
    "name": "browser", "details": {"org_details": {"name": "Acme"}, "user_details": {"email": "u@example.com"}}}}})");
  const CredentialStore store = CredentialStore::load(path());
  ASSERT_NE(store.default_credential(), nullptr);
  EXPECT_EQ(store.default_credential()->type, "generated");
  EXPECT_EQ(store.default_credential()->details->user_email, "u@example.com");
}

// Each damaged file: an invalid_file error naming the file and the problem, never a key.
TEST_F(CredentialsFileTest, ACorruptFileIsNamedClearlyWithoutItsContent) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {R"({"version": 1, "keys": {"k": {"type": "manual", "key": "tml-stored-key-0123456789abcdef")", "not valid JSON"},
      {R"(["tml-stored-key-0123456789abcdef"])", "not a JSON object"},
      {R"({"version": 2, "keys": {}})", "version"},
      {R"({"version": "tml-stored-key-0123456789abcdef", "keys": {}})", "version"},
      {R"({"keys": {}})", "'version' is missing"},
      {R"({"version": 1, "keys": []})", "'keys' must be an object"},
      {R"({"version": 1, "keys": {"tml-stored-key-0123456789abcdef": 5}})", "record 1 of keys is not an object"},
      {R"({"version": 1, "keys": {"a": {"key": "tml-stored-key-0123456789abcdef"}}})", "'type' must be a string"},
      {R"({"version": 1, "keys": {"a": {"type": "manual", "name": "tml-stored-key-0123456789abcdef"}}})",
       "'key' must be a string"},
      {R"({"version": 1, "default": "tml-stored-key-0123456789abcdef", "keys": {}})", "'default' names no record"},
      {R"({"version": 1, "keys": {"a": {"type": "manual", "key": "k", "details": "tml-stored-key-0123456789abcdef"}}})",
       "'details' must be an object"},
  };
  for (const auto& [text, problem] : cases) {
    write_text(path(), text);
    const tinker::error failure = thrown_by([&] { CredentialStore::load(path()); });
    EXPECT_EQ(failure.code(), make_error_code(errc::invalid_file)) << text;
    EXPECT_THAT(failure.diag().message, HasSubstr(path().string())) << text;
    EXPECT_THAT(failure.diag().message, HasSubstr(problem)) << text;
    EXPECT_THAT(failure.diag().message, Not(HasSubstr("0123456789abcdef"))) << text;
    EXPECT_THAT(std::string(failure.what()), Not(HasSubstr("0123456789abcdef"))) << text;
  }
}

TEST_F(CredentialsFileTest, AnUnreadableFileIsAnIoErrorNamingIt) {
  std::filesystem::create_directories(path());  // a directory where the file should be: cannot be read as one
  const tinker::error failure = thrown_by([&] { CredentialStore::load(path()); });
  EXPECT_THAT(failure.diag().message, HasSubstr(path().string()));
  EXPECT_TRUE(failure.code() == make_error_code(errc::io_error) ||
              failure.code() == make_error_code(errc::invalid_file))
      << failure.what();
}

TEST_F(CredentialsFileTest, RemoveClearsTheDefault) {
  CredentialStore store = one_key_store();
  store.put(StoredCredential("manual-2", Secret("tml-2"), "two"), false);
  EXPECT_TRUE(store.remove(store.default_credential()->id));  // a view into the record itself
  EXPECT_EQ(store.default_id, std::nullopt);
  EXPECT_EQ(store.keys.size(), 1u);
  EXPECT_FALSE(store.remove("manual-abc"));
}

TEST_F(CredentialsFileTest, PrecedenceIsEnvironmentThenCommandThenFile) {
  one_key_store().save(path());
  Env only_file = env();
  EXPECT_EQ(ClientOptions::from_environment(lookup_in(only_file)).api_key, Secret(stored_key));
  EXPECT_EQ(credential_source(lookup_in(only_file)), CredentialSource::file);

  Env with_command = env();
  with_command["TINKER_CREDENTIAL_CMD"] = "echo tml-from-command";
  const ClientOptions commanded = ClientOptions::from_environment(lookup_in(with_command));
  EXPECT_TRUE(commanded.api_key.empty());
  EXPECT_EQ(commanded.credential_command, "echo tml-from-command");
  EXPECT_EQ(credential_source(lookup_in(with_command)), CredentialSource::command);

  Env with_key = with_command;
  with_key["TINKER_API_KEY"] = env_key;
  EXPECT_EQ(ClientOptions::from_environment(lookup_in(with_key)).api_key, Secret(env_key));
  EXPECT_EQ(credential_source(lookup_in(with_key)), CredentialSource::environment);

  Env key_without_command = env();
  key_without_command["TINKER_API_KEY"] = env_key;
  EXPECT_EQ(ClientOptions::from_environment(lookup_in(key_without_command)).api_key, Secret(env_key));

  EXPECT_EQ(credential_source(lookup_in({})), CredentialSource::none);
  EXPECT_TRUE(ClientOptions::from_environment(lookup_in({})).api_key.empty());
}

TEST_F(CredentialsFileTest, FromEnvironmentReportsADamagedFileOnlyWhenItIsUsed) {
  write_text(path(), "{ not json tml-stored-key-0123456789abcdef");
  const tinker::error failure = thrown_by([&] { ClientOptions::from_environment(lookup_in(env())); });
  EXPECT_EQ(failure.code(), make_error_code(errc::invalid_configuration));
  EXPECT_THAT(failure.diag().message, HasSubstr(path().string()));
  EXPECT_THAT(failure.diag().message, Not(HasSubstr("0123456789abcdef")));

  Env with_key = env();
  with_key["TINKER_API_KEY"] = env_key;
  EXPECT_EQ(ClientOptions::from_environment(lookup_in(with_key)).api_key, Secret(env_key));
}

TEST_F(CredentialsFileTest, ADefaultKeyOfTheWrongFormIsRefusedWithoutQuotingIt) {
  write_text(path(), R"({"version": 1, "default": "a", "keys": {"a": {"type": "manual", "key": "sk-secret-1234",
    "name": "x"}}})");
  const tinker::error failure = thrown_by([&] { ClientOptions::from_environment(lookup_in(env())); });
  EXPECT_EQ(failure.code(), make_error_code(errc::invalid_configuration));
  EXPECT_THAT(failure.diag().message, HasSubstr("default key"));
  EXPECT_THAT(failure.diag().message, Not(HasSubstr("secret-1234")));
}

TEST_F(CredentialsFileTest, NoDefaultMeansNoKey) {
  CredentialStore store = one_key_store();
  store.default_id.reset();
  store.save(path());
  EXPECT_TRUE(ClientOptions::from_environment(lookup_in(env())).api_key.empty());
  EXPECT_EQ(credential_source(lookup_in(env())), CredentialSource::none);
}

TEST(CredentialSourceNames, AreStable) {
  EXPECT_STREQ(to_string(CredentialSource::none), "none");
  EXPECT_STREQ(to_string(CredentialSource::environment), "environment");
  EXPECT_STREQ(to_string(CredentialSource::command), "command");
  EXPECT_STREQ(to_string(CredentialSource::file), "file");
}

TEST(StoredCredentialPrinting, NeverShowsTheKey) {
  std::ostringstream out;
  out << StoredCredential("id", Secret(stored_key), "n").key;
  EXPECT_THAT(out.str(), Not(HasSubstr("0123456789abcdef")));
}

}  // namespace
}  // namespace tinker
