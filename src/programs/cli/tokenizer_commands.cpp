// `tinker tokenizer encode|decode --tokenizer <model name | file | directory>`: text to token ids and
// back with the SDK's tokenizers, on standard input and output.
//
// Input is JSON Lines when its first non-empty line is a JSON object: encode reads {"text": ...} and
// writes {"ids": [...]}, decode reads {"ids": [...]} and writes {"text": ...}, one output line per input
// line (blank lines are skipped). Anything else is plain text: encode takes the whole input as one text,
// without the one final line break that `echo` and here-documents add (JSON Lines carry any text
// exactly), and prints the ids on one line separated by spaces; decode reads ids separated by any
// whitespace and prints the text followed by a line break.
#include "programs/cli/context.hpp"

#include <tinker/error.hpp>
#include <tinker/tokenizer.hpp>

#include <CLI/CLI.hpp>
#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>

#include <charconv>
#include <cstdint>
#include <filesystem>
#include <istream>
#include <iterator>
#include <limits>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <system_error>
#include <vector>

namespace tinker::cli {
namespace {
namespace asio = boost::asio;
namespace fs = std::filesystem;

// The format of a tokenizer file, from its name as the tokenizer search decides it.
TokenizerFormat format_of(const fs::path& file) {
  if (file.extension() == ".json") return TokenizerFormat::tokenizer_json;
  if (file.filename() == "tiktoken.model") return TokenizerFormat::tiktoken;
  return TokenizerFormat::sentencepiece;
}

// The tokenizer file in `dir`, tried in the order the tokenizer search uses.
fs::path file_in_directory(const fs::path& dir) {
  std::string tried;
  for (const char* name : {"tokenizer.json", "tokenizer.model", "tiktoken.model"}) {
    const fs::path candidate = dir / name;
    if (fs::is_regular_file(candidate)) return candidate;
    tried += (tried.empty() ? "" : ", ") + candidate.string();
  }
  throw CliError("no tokenizer file in the directory " + dir.string() + " (looked for " + tried + ")");
}

// --tokenizer: an existing file or directory is loaded directly; anything else is a model name,
// resolved and found (or downloaded) as the SDK's get_tokenizer does.
std::shared_ptr<const Tokenizer> find_cli_tokenizer(const Context& context, const std::string& spec) {
  std::error_code ec;
  const fs::file_status status = fs::status(spec, ec);
  if (fs::is_directory(status) || fs::is_regular_file(status)) {
    TokenizerFile file;
    file.path = fs::is_directory(status) ? file_in_directory(spec) : fs::path(spec);
    file.format = format_of(file.path);
    file.searched = {file.path};
    return load_tokenizer(file, file.path.string());
  }
  const EnvLookup no_variables = [](std::string_view) { return std::optional<std::string>(); };
  return get_tokenizer_for(spec, std::nullopt, context.env.lookup ? context.env.lookup : no_variables);
}

}  // namespace

// The SDK's errors say what went wrong in loading; the generic API-error wording of run() (e.g.
// "cannot reach the server (TINKER_BASE_URL)" for a failed download) would mislead here.
std::shared_ptr<const Tokenizer> load_cli_tokenizer(const Context& context, const std::string& spec) {
  try {
    return find_cli_tokenizer(context, spec);
  } catch (const error& e) {
    throw CliError("cannot load the tokenizer '" + spec + "': " + e.what());
  }
}

namespace {

class TokenizerOptions {
 public:
  TokenizerOptions() = default;
  std::string tokenizer;  // a model name, a tokenizer file or a directory holding one
  bool add_special_tokens = false;
  bool skip_special_tokens = false;
};

// Standard input, read line by line; remembers what it read so plain text can be taken whole.
class Input {
 public:
  explicit Input(std::istream* stream) : stream_(stream) {}

  // The next line without its '\n' (and a '\r' before it); false at the end of the input.
  bool next_line(std::string& line) {
    if (stream_ == nullptr || !std::getline(*stream_, line)) return false;
    ++line_number_;
    consumed_ += line;
    if (!stream_->eof()) consumed_ += '\n';
    if (!line.empty() && line.back() == '\r') line.pop_back();
    return true;
  }
  // Everything read so far and the rest of the input, exactly as it came.
  std::string whole() {
    std::string text = std::move(consumed_);
    if (stream_ != nullptr) text.append(std::istreambuf_iterator<char>(*stream_), std::istreambuf_iterator<char>());
    return text;
  }
  int line_number() const noexcept { return line_number_; }

 private:
  std::istream* stream_;
  std::string consumed_;
  int line_number_ = 0;
};

bool is_blank(const std::string& line) {
  return line.find_first_not_of(" \t\r\f\v") == std::string::npos;
}

std::optional<boost::json::object> parse_object(const std::string& line) {
  boost::system::error_code ec;
  boost::json::value value = boost::json::parse(line, ec);
  if (ec || !value.is_object()) return std::nullopt;
  return std::move(value.get_object());
}

[[noreturn]] void fail_at(int line_number, const std::string& message) {
  throw CliError("standard input line " + std::to_string(line_number) + ": " + message);
}

// Runs `step`; a tinker::error it throws (invalid UTF-8, an id outside the vocabulary) is reported
// with the input line it came from.
template <class Step>
auto at_line(int line_number, Step step) {
  try {
    return step();
  } catch (const error& e) {
    fail_at(line_number, e.what());
  }
}

TokenId checked_id(std::int64_t value, int line_number) {
  if (value < 0 || value > std::numeric_limits<TokenId>::max()) {
    fail_at(line_number, "token id " + std::to_string(value) + " is out of range");
  }
  return static_cast<TokenId>(value);
}

std::vector<TokenId> ids_of(const boost::json::object& object, int line_number) {
  const boost::json::value* ids = object.if_contains("ids");
  if (ids == nullptr || !ids->is_array()) fail_at(line_number, "expected {\"ids\": [...]}");
  std::vector<TokenId> result;
  for (const boost::json::value& id : ids->get_array()) {
    if (!id.is_int64() && !id.is_uint64()) fail_at(line_number, "\"ids\" must hold integers only");
    if (id.is_uint64() && id.get_uint64() > static_cast<std::uint64_t>(std::numeric_limits<TokenId>::max())) {
      fail_at(line_number, "token id " + std::to_string(id.get_uint64()) + " is out of range");
    }
    result.push_back(
        checked_id(id.is_int64() ? id.get_int64() : static_cast<std::int64_t>(id.get_uint64()), line_number));
  }
  return result;
}

std::string text_of(const boost::json::object& object, int line_number) {
  const boost::json::value* text = object.if_contains("text");
  if (text == nullptr || !text->is_string()) fail_at(line_number, "expected {\"text\": \"...\"}");
  return std::string(text->get_string());
}

// One JSON Lines record: parse, convert, print. `convert(object, line_number)` makes the output object.
template <class Convert>
void json_line(Context& context, const std::string& line, int line_number, Convert convert) {
  std::optional<boost::json::object> object = parse_object(line);
  if (!object) fail_at(line_number, "not a JSON object (the input is JSON Lines, as its first line is)");
  context.out << boost::json::serialize(convert(*object, line_number)) << '\n';
}

// Reads up to the first non-empty line: JSON Lines if it is a JSON object (processed with `json`, like
// every later line), else the plain-text path `plain` gets the whole input.
template <class Json, class Plain>
void run_io(Context& context, Json json, Plain plain) {
  Input input(context.env.input);
  std::string line;
  bool json_lines = false;
  while (input.next_line(line)) {
    if (is_blank(line)) continue;
    json_lines = parse_object(line).has_value();
    break;
  }
  if (!json_lines) {
    plain(input.whole());
    return;
  }
  do {
    if (!is_blank(line)) json_line(context, line, input.line_number(), json);
  } while (!context.interrupted() && input.next_line(line));
}

boost::json::array json_ids(const std::vector<TokenId>& ids) {
  boost::json::array array;
  array.reserve(ids.size());
  for (TokenId id : ids) array.emplace_back(id);
  return array;
}

// The plain text to encode: the input without one final line break.
std::string without_final_line_break(std::string text) {
  if (!text.empty() && text.back() == '\n') text.pop_back();
  if (!text.empty() && text.back() == '\r') text.pop_back();
  return text;
}

asio::awaitable<void> encode_command(Context& context, TokenizerOptions options) {
  const auto tokenizer = load_cli_tokenizer(context, options.tokenizer);
  const auto encode = [&](const std::string& text, int line_number) {
    return at_line(line_number, [&] { return tokenizer->encode(text, options.add_special_tokens); });
  };
  const auto json = [&](const boost::json::object& object, int line_number) {
    return boost::json::object{{"ids", json_ids(encode(text_of(object, line_number), line_number))}};
  };
  const auto plain = [&](const std::string& input) {
    const std::vector<TokenId> ids = encode(without_final_line_break(input), 1);
    for (std::size_t i = 0; i < ids.size(); ++i) context.out << (i == 0 ? "" : " ") << ids[i];
    context.out << '\n';
  };
  run_io(context, json, plain);
  co_return;
}

// Plain-text ids: integers separated by whitespace; errors name the line of the bad one.
std::vector<TokenId> parse_plain_ids(const std::string& input) {
  std::vector<TokenId> ids;
  int line_number = 1;
  std::size_t pos = 0;
  while (pos < input.size()) {
    const char ch = input[pos];
    if (ch == '\n') ++line_number;
    if (ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r' || ch == '\f' || ch == '\v') {
      ++pos;
      continue;
    }
    std::size_t end = input.find_first_of(" \t\n\r\f\v", pos);
    if (end == std::string::npos) end = input.size();
    const std::string word = input.substr(pos, end - pos);
    std::int64_t value = 0;
    const auto [ptr, ec] = std::from_chars(word.data(), word.data() + word.size(), value);
    if (ec != std::errc() || ptr != word.data() + word.size()) {
      fail_at(line_number, "\"" + word.substr(0, 40) +
                               "\" is not a token id (plain input is ids separated by "
                               "whitespace; JSON Lines input starts with a JSON object)");
    }
    ids.push_back(checked_id(value, line_number));
    pos = end;
  }
  return ids;
}

asio::awaitable<void> decode_command(Context& context, TokenizerOptions options) {
  const auto tokenizer = load_cli_tokenizer(context, options.tokenizer);
  const auto decode = [&](const std::vector<TokenId>& ids, int line_number) {
    return at_line(line_number, [&] { return tokenizer->decode(ids, options.skip_special_tokens); });
  };
  const auto json = [&](const boost::json::object& object, int line_number) {
    return boost::json::object{{"text", decode(ids_of(object, line_number), line_number)}};
  };
  const auto plain = [&](const std::string& input) { context.out << decode(parse_plain_ids(input), 1) << '\n'; };
  run_io(context, json, plain);
  co_return;
}

}  // namespace

void add_tokenizer_commands(CLI::App& app, Action& action) {
  CLI::App& group = add_group(app, "tokenizer", "Turn text into token ids and back (standard input to output)");
  auto options = std::make_shared<TokenizerOptions>();
  const std::string tokenizer_help =
      "Model name (resolved and found or downloaded as the SDK does), tokenizer file (*.json: tokenizer.json, "
      "tiktoken.model, else SentencePiece) or a directory holding one";
  CLI::App& encode = add_command(group, "encode",
                                 "Encode text: JSON Lines {\"text\": ...} in, {\"ids\": [...]} out; or plain text "
                                 "(the whole input, less one final line break) in, ids separated by spaces out",
                                 action, options, encode_command);
  encode.add_option("--tokenizer", options->tokenizer, tokenizer_help)->required();
  encode.add_flag("--add-special-tokens", options->add_special_tokens,
                  "Add what the tokenizer adds around a text (e.g. BOS)");
  CLI::App& decode = add_command(group, "decode",
                                 "Decode ids: JSON Lines {\"ids\": [...]} in, {\"text\": ...} out; or plain "
                                 "whitespace-separated ids in, text out",
                                 action, options, decode_command);
  decode.add_option("--tokenizer", options->tokenizer, tokenizer_help)->required();
  decode.add_flag("--skip-special-tokens", options->skip_special_tokens, "Leave special tokens out of the text");
}

}  // namespace tinker::cli
