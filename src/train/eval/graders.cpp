// The built-in graders of the sampling evaluator (include/tinker/train/evaluators.hpp).
#include <tinker/error.hpp>
#include <tinker/train/evaluators.hpp>

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <string>

namespace tinker::train {
namespace {

bool is_digit_char(char c) {
  return std::isdigit(static_cast<unsigned char>(c)) != 0;
}

std::string_view trim_ascii_space(std::string_view text) {
  const auto is_space = [](char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; };
  while (!text.empty() && is_space(text.front())) text.remove_prefix(1);
  while (!text.empty() && is_space(text.back())) text.remove_suffix(1);
  return text;
}

std::string without_commas(std::string_view text) {
  std::string out;
  for (const char c : text) {
    if (c != ',') out += c;
  }
  return out;
}

// The end of the match of the cookbook's pattern -?\d+[,\d]*\.?\d* starting at `begin` (which is
// a digit, or a '-' before one).
std::size_t number_match_end(std::string_view text, std::size_t begin) {
  std::size_t i = begin;
  if (text[i] == '-') ++i;
  while (i < text.size() && (is_digit_char(text[i]) || text[i] == ',')) ++i;
  if (i < text.size() && text[i] == '.') ++i;
  while (i < text.size() && is_digit_char(text[i])) ++i;
  return i;
}

// The text of the last match, commas dropped (findall's last element, as the cookbook keeps it).
std::optional<std::string> last_number_text(std::string_view text) {
  std::optional<std::string> found;
  std::size_t i = 0;
  while (i < text.size()) {
    const bool starts = is_digit_char(text[i]) || (text[i] == '-' && i + 1 < text.size() && is_digit_char(text[i + 1]));
    if (!starts) {
      ++i;
      continue;
    }
    const std::size_t end = number_match_end(text, i);
    found = without_commas(text.substr(i, end - i));
    i = end;
  }
  return found;
}

// The whole of `text` (trimmed, commas dropped) as a finite number, or nothing.
std::optional<double> parse_whole_number(std::string_view text) {
  const std::string cleaned = without_commas(trim_ascii_space(text));
  if (cleaned.empty()) return std::nullopt;
  char* end = nullptr;
  const double value = std::strtod(cleaned.c_str(), &end);
  if (end != cleaned.c_str() + cleaned.size() || !std::isfinite(value)) return std::nullopt;
  return value;
}

}  // namespace

std::optional<double> last_number(std::string_view text) {
  const std::optional<std::string> match = last_number_text(text);
  if (!match) return std::nullopt;
  return std::strtod(match->c_str(), nullptr);
}

Grader exact_match_grader() {
  return [](const renderers::Message& reply, const std::string& reference) {
    const std::string text = reply.text();
    return Grade(trim_ascii_space(text) == trim_ascii_space(reference));
  };
}

Grader numeric_answer_grader(double tolerance) {
  if (!(tolerance >= 0.0) || !std::isfinite(tolerance)) {
    throw tinker::error(errc::invalid_argument,
                        "numeric_answer_grader: tolerance must be finite and >= 0, got " + std::to_string(tolerance));
  }
  return [tolerance](const renderers::Message& reply, const std::string& reference) {
    const std::optional<std::string> answer = last_number_text(reply.text());
    if (!answer) return Grade(false);
    const std::optional<double> expected = parse_whole_number(reference);
    if (!expected) return Grade(*answer == without_commas(trim_ascii_space(reference)));
    const double value = std::strtod(answer->c_str(), nullptr);
    return Grade(std::abs(value - *expected) <= tolerance);
  };
}

}  // namespace tinker::train
