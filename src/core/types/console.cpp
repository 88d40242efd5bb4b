// Console URL builders (include/tinker/console.hpp): the pages the Python SDK links to, with
// urllib.parse.quote's percent-encoding.
#include <tinker/console.hpp>
#include <tinker/types/checkpoint.hpp>

namespace tinker::console {
namespace {

bool url_always_safe(unsigned char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '.' ||
         c == '-' || c == '~';
}

std::string console_page(std::string_view path) {
  std::string url(base_url);
  url += path;
  return url;
}

}  // namespace

std::string url_quote(std::string_view text, std::string_view safe) {
  static constexpr char hex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(text.size());
  for (const char ch : text) {
    const auto byte = static_cast<unsigned char>(ch);
    if (url_always_safe(byte) || safe.find(ch) != std::string_view::npos) {
      out += ch;
    } else {
      out += '%';
      out += hex[byte >> 4];
      out += hex[byte & 0x0F];
    }
  }
  return out;
}

std::string sessions_url() {
  return console_page("/sessions");
}

std::string session_url(std::string_view session_id) {
  return console_page("/sessions/" + std::string(session_id));
}

std::string training_run_url(std::string_view training_run_id) {
  return console_page("/training_runs/" + std::string(training_run_id));
}

std::string checkpoint_url(std::string_view training_run_id, std::string_view checkpoint_id) {
  return console_page("/checkpoints/" + url_quote(training_run_id, "") + "/" + url_quote(checkpoint_id, ""));
}

std::string sampler_checkpoints_url(std::string_view training_run_id) {
  return console_page("/checkpoints/" + url_quote(training_run_id, "") + "/sampler_weights");
}

std::string playground_url(std::string_view tinker_path) {
  return console_page("/playground?mode=checkpoint&checkpoint=" + url_quote(tinker_path, ""));
}

std::string console_url(std::string_view tinker_path) {
  const TinkerPath parsed = TinkerPath::parse(tinker_path);
  return checkpoint_url(parsed.training_run_id, parsed.checkpoint_id());
}

}  // namespace tinker::console
