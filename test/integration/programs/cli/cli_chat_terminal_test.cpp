// `tinker chat` tried as a person would: the built `tinker` program (TINKER_CLI_PROGRAM) in a real
// terminal, a tmux pane, with no API key, so it starts its own tinker-local. The test types with
// `tmux send-keys`, reads the screen with `tmux capture-pane` and checks the prompt, a message over
// two lines, the reply (the same one the SDK samples with the same seed), /reset, /exit and Ctrl-C.
// tmux is a test dependency (.ci/install-deps): without it the test fails saying so.
#include "integration/sync/sync_support.hpp"
#include "programs/cli/replies.hpp"
#include "support/temp_files.hpp"

#include <tinker/renderers.hpp>
#include <tinker/sync/service_client.hpp>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <functional>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

extern char** environ;

namespace tinker::test {
namespace {

using ::testing::HasSubstr;

class ToolRun {
 public:
  int exit_code = -1;  ///< -1: could not be started (not installed) or killed by a signal
  std::string output;  ///< standard output and error together
};

// `args` (args[0] looked up in PATH) with the test's environment plus TERM, output in a file: tmux's
// server outlives the command that starts it, so a pipe would not reach its end.
ToolRun run_tool(const std::vector<std::string>& args) {
  const TempFile output;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, output.path().c_str(), O_WRONLY | O_TRUNC, 0);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  std::vector<std::string> arguments = args;
  std::vector<char*> argv;
  for (std::string& argument : arguments) argv.push_back(argument.data());
  argv.push_back(nullptr);
  std::vector<std::string> variables;
  for (char** entry = environ; *entry != nullptr; ++entry) variables.emplace_back(*entry);
  if (std::getenv("TERM") == nullptr) variables.emplace_back("TERM=xterm-256color");
  std::vector<char*> envp;
  for (std::string& variable : variables) envp.push_back(variable.data());
  envp.push_back(nullptr);
  pid_t pid = -1;
  const int failed = posix_spawnp(&pid, argv[0], &actions, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  ToolRun run;
  if (failed != 0) return run;
  int status = 0;
  waitpid(pid, &status, 0);
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  run.output = read_file(output.path());
  return run;
}

// One argument for `sh -c`, in single quotes.
std::string shell_quoted(const std::string& text) {
  std::string quoted = "'";
  for (char c : text) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

std::vector<std::string> screen_lines(const std::string& screen) {
  std::vector<std::string> lines;
  std::istringstream stream(screen);
  for (std::string line; std::getline(stream, line);) {
    while (!line.empty() && line.back() == ' ') line.pop_back();  // -J keeps a line's trailing spaces
    lines.push_back(line);
  }
  while (!lines.empty() && lines.back().empty()) lines.pop_back();
  return lines;
}

// The last non-blank line of the screen, without trailing spaces (the prompt "> " is ">").
std::string last_line(const std::string& screen) {
  const std::vector<std::string> lines = screen_lines(screen);
  return lines.empty() ? "" : lines.back();
}

std::size_t count_prompts(const std::string& screen) {
  std::size_t prompts = 0;
  for (const std::string& line : screen_lines(screen)) prompts += line == ">" || line.starts_with("> ") ? 1 : 0;
  return prompts;
}

// A tmux server of its own (its socket in a temporary directory, no user configuration) running
// `program` (a shell command) in a 120x40 pane. The shell around it prints the program's exit
// status on the screen, which stays after the exit: this sandbox does not always let tmux see its
// children end, but the shell's own wait always does. The shell ignores Ctrl-C (`trap :`) so that
// only the program reacts to it.
class TerminalSession {
 public:
  explicit TerminalSession(const std::string& program)
      : directory_("tinker-chat-terminal"), config_("set -g remain-on-exit on\nset -g status off\n", ".conf") {
    const std::string command = "trap : INT; " + program + "; echo \"[exited with status $?]\"";
    const ToolRun started =
        tmux({"-f", config_.path().string(), "new-session", "-d", "-x", "120", "-y", "40", "-s", "chat", command});
    if (started.exit_code != 0) throw std::runtime_error("tmux new-session failed: " + started.output);
  }
  ~TerminalSession() { run_tool({"tmux", "-S", socket(), "kill-server"}); }
  TerminalSession(const TerminalSession&) = delete;
  TerminalSession& operator=(const TerminalSession&) = delete;

  void type(const std::string& text) { tmux({"send-keys", "-t", "chat", "-l", text}); }
  void press(const std::string& key) { tmux({"send-keys", "-t", "chat", key}); }
  void type_line(const std::string& text) {
    type(text);
    press("Enter");
  }
  /// The pane's text, wrapped lines joined.
  std::string screen() { return tmux({"capture-pane", "-p", "-J", "-t", "chat"}).output; }

  /// The screen once `ready` holds for it; fails the test (returning the last screen) after `timeout`.
  std::string wait_for(const std::string& what, const std::function<bool(const std::string&)>& ready,
                       std::chrono::seconds timeout = std::chrono::seconds(120)) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    std::string shown = screen();
    while (!ready(shown)) {
      if (std::chrono::steady_clock::now() > deadline) {
        ADD_FAILURE() << "timed out waiting for " << what << "; the screen:\n" << shown;
        return shown;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      shown = screen();
    }
    return shown;
  }

  /// The program's exit status once it has exited; fails the test (and answers -1) after `timeout`.
  int wait_for_exit(std::chrono::seconds timeout = std::chrono::seconds(60)) {
    const std::string shown = wait_for(
        "the program to exit", [](const std::string& screen) { return exit_status(screen).has_value(); }, timeout);
    return exit_status(shown).value_or(-1);
  }

 private:
  static std::optional<int> exit_status(const std::string& screen) {
    static const std::string marker = "[exited with status ";
    const std::size_t at = screen.find(marker);
    if (at == std::string::npos) return std::nullopt;
    const std::size_t digits = at + marker.size();
    const std::size_t end = screen.find(']', digits);
    if (end == std::string::npos || end == digits) return std::nullopt;
    return std::stoi(screen.substr(digits, end - digits));
  }

  std::string socket() const { return (directory_.path() / "tmux.socket").string(); }

  // A tmux command on this server; a failed one fails the test, showing what tmux said.
  ToolRun tmux(std::vector<std::string> args) {
    const std::string what = args.front();
    args.insert(args.begin(), {"tmux", "-S", socket()});
    ToolRun run = run_tool(args);
    EXPECT_EQ(run.exit_code, 0) << "tmux " << what << ": " << run.output;
    return run;
  }

  TempDir directory_;
  TempFile config_;
};

class CliChatTerminal : public SyncService {
 protected:
  void SetUp() override {
    SyncService::SetUp();
    const ToolRun version = run_tool({"tmux", "-V"});
    ASSERT_EQ(version.exit_code, 0)
        << "tmux is not installed: install it (Debian package tmux; .ci/install-deps installs it). This test runs "
           "`tinker chat` in a real terminal and cannot be left out.";
  }

  // `tinker chat` for tiny-lm in a clean environment: no API key (so it starts its own
  // tinker-local), the tokenizer cache the other tests use, and the sanitizers' settings.
  static std::string chat_command(const std::vector<std::string>& flags) {
    std::string command = "env -i HOME=" + shell_quoted(std::filesystem::temp_directory_path().string()) +
                          " HF_HUB_CACHE=" + shell_quoted(shared_hf_hub_cache().string()) +
                          " HF_HUB_OFFLINE=1 TINKER_TELEMETRY=0";
    for (const char* name : {"ASAN_OPTIONS", "UBSAN_OPTIONS", "LSAN_OPTIONS", "TSAN_OPTIONS"}) {
      if (const char* value = std::getenv(name)) command += std::string(" ") + name + "=" + shell_quoted(value);
    }
    command += " " + shell_quoted(TINKER_CLI_PROGRAM) + " chat --model " + std::string(tiny_model);
    for (const std::string& flag : flags) command += " " + shell_quoted(flag);
    return command;
  }

  // The reply the chat should show for `messages`: the same model and seed through the SDK,
  // against this test's own tinker-local (the same frozen weights and tokenizer).
  std::string expected_reply(const std::vector<renderers::Message>& messages) {
    sync::ServiceClient service = make_sync_service();
    sync::SamplingClient sampler =
        service.create_sampling_client(SamplingSource::from_base_model(std::string(tiny_model)));
    const auto renderer = renderers::make_renderer("qwen3_instruct", sampler.get_tokenizer());
    SamplingParams params(max_tokens, 1.0);
    params.seed = seed;
    params.stop = renderer->stop_sequences();
    const SampledSequence sequence =
        sampler.sample(renderer->build_generation_prompt(messages), 1, params).get().sequences.at(0);
    std::ostringstream out;
    cli::print_reply(out, renderer->parse_response(sequence.tokens), sequence.stop_reason, cli::ReplyStyle::terminal);
    return out.str();
  }

  std::vector<std::string> sampling_flags() const {
    return {"--max-tokens", std::to_string(max_tokens), "--seed", std::to_string(seed)};
  }

  std::int64_t max_tokens = 16;
  std::uint64_t seed = 11;
};

// The runs of 4 or more printable ASCII characters of `text`: what any terminal shows as is.
std::vector<std::string> printable_runs(const std::string& text) {
  std::vector<std::string> runs;
  std::string run;
  for (char c : text + '\n') {
    if (c >= 0x20 && c < 0x7f) {
      run += c;
      continue;
    }
    if (run.size() >= 4) runs.push_back(run);
    run.clear();
  }
  return runs;
}

TEST_F(CliChatTerminal, APersonChatsResetsAndExits) {
  TerminalSession terminal(chat_command(sampling_flags()));
  terminal.wait_for("the banner and the prompt", [](const std::string& screen) {
    return screen.find("Chatting with tinker-local/tiny-lm (chat format qwen3_instruct)") != std::string::npos &&
           last_line(screen) == ">";
  });

  terminal.type_line("Hello there\\");
  terminal.wait_for("the continuation prompt", [](const std::string& screen) { return last_line(screen) == "..."; });
  terminal.type_line("how are you?");
  const std::string replied = terminal.wait_for("the reply and the next prompt", [](const std::string& screen) {
    return count_prompts(screen) == 2 && last_line(screen) == ">";
  });
  EXPECT_THAT(replied, HasSubstr("> Hello there\\\n... how are you?\n"));
  const std::string reply = expected_reply({renderers::Message("user", "Hello there\nhow are you?")});
  for (const std::string& run : printable_runs(reply)) EXPECT_THAT(replied, HasSubstr(run)) << "the reply:\n" << reply;
  // The spinner drew on the reply's first line and erased itself before the reply was printed.
  const std::vector<std::string> lines = screen_lines(replied);
  for (const std::string& line : lines) {
    EXPECT_FALSE(line == "|" || line == "/" || line == "-" || line == "\\") << "spinner left behind:\n" << replied;
  }

  terminal.type_line("/reset");
  terminal.wait_for("the reset note", [](const std::string& screen) {
    return screen.find("(conversation cleared; the system prompt stays)") != std::string::npos &&
           count_prompts(screen) == 3 && last_line(screen) == ">";
  });
  terminal.type_line("/nonsense");
  terminal.wait_for("the unknown command's error", [](const std::string& screen) {
    return screen.find("Error: unknown command /nonsense") != std::string::npos && last_line(screen) == ">";
  });
  terminal.type_line("/exit");
  EXPECT_EQ(terminal.wait_for_exit(), 0) << terminal.screen();
}

TEST_F(CliChatTerminal, CtrlDEndsTheChatAndCtrlCInterruptsIt) {
  TerminalSession ended(chat_command(sampling_flags()));
  TerminalSession interrupted(chat_command(sampling_flags()));
  for (TerminalSession* terminal : {&ended, &interrupted}) {
    terminal->wait_for("the prompt", [](const std::string& screen) { return last_line(screen) == ">"; });
  }
  ended.press("C-d");
  EXPECT_EQ(ended.wait_for_exit(), 0) << ended.screen();
  interrupted.press("C-c");
  EXPECT_EQ(interrupted.wait_for_exit(), 130) << interrupted.screen();
  EXPECT_THAT(interrupted.screen(), HasSubstr("Interrupted."));
}

}  // namespace
}  // namespace tinker::test
