#include "core/wire/json_reader.hpp"

#include "core/wire/field_path.hpp"
#include "core/wire/json_writer.hpp"

#include <tinker/error.hpp>

#include <boost/json/basic_parser_impl.hpp>
#include <boost/json/value_stack.hpp>

#include <charconv>
#include <string>

namespace tinker::wire {
namespace {

namespace json = boost::json;

// Builds the DOM like Boost.JSON's own handler, except that doubles are re-parsed from their
// literal text with std::from_chars (correctly rounded).
class ExactNumberHandler {
 public:
  static constexpr std::size_t max_object_size = json::object::max_size();
  static constexpr std::size_t max_array_size = json::array::max_size();
  static constexpr std::size_t max_key_size = json::string::max_size();
  static constexpr std::size_t max_string_size = json::string::max_size();

  explicit ExactNumberHandler(json::storage_ptr sp) : stack(std::move(sp)) {}

  json::value_stack stack;

  bool on_document_begin(json::error_code&) { return true; }
  bool on_document_end(json::error_code&) { return true; }
  bool on_object_begin(json::error_code&) { return true; }
  bool on_object_end(std::size_t n, json::error_code&) {
    stack.push_object(n);
    return true;
  }
  bool on_array_begin(json::error_code&) { return true; }
  bool on_array_end(std::size_t n, json::error_code&) {
    stack.push_array(n);
    return true;
  }
  bool on_key_part(json::string_view s, std::size_t, json::error_code&) {
    stack.push_chars(s);
    return true;
  }
  bool on_key(json::string_view s, std::size_t, json::error_code&) {
    stack.push_key(s);
    return true;
  }
  bool on_string_part(json::string_view s, std::size_t, json::error_code&) {
    stack.push_chars(s);
    return true;
  }
  bool on_string(json::string_view s, std::size_t, json::error_code&) {
    stack.push_string(s);
    return true;
  }
  bool on_number_part(json::string_view s, json::error_code&) {
    number_text_.append(s.data(), s.size());
    return true;
  }
  bool on_int64(std::int64_t i, json::string_view, json::error_code&) {
    number_text_.clear();
    stack.push_int64(i);
    return true;
  }
  bool on_uint64(std::uint64_t u, json::string_view, json::error_code&) {
    number_text_.clear();
    stack.push_uint64(u);
    return true;
  }
  bool on_double(double d, json::string_view s, json::error_code&) {
    number_text_.append(s.data(), s.size());
    double exact = d;
    const char* first = number_text_.data();
    const auto result = std::from_chars(first, first + number_text_.size(), exact);
    // from_chars reports out-of-range for huge literals; keep Boost's value (inf) then, which
    // the typed decoders reject as "out of range".
    if (result.ec != std::errc{}) exact = d;
    number_text_.clear();
    stack.push_double(exact);
    return true;
  }
  bool on_bool(bool b, json::error_code&) {
    stack.push_bool(b);
    return true;
  }
  bool on_null(json::error_code&) {
    stack.push_null();
    return true;
  }
  bool on_comment_part(json::string_view, json::error_code&) { return true; }
  bool on_comment(json::string_view, json::error_code&) { return true; }

 private:
  std::string number_text_;
};

json::parse_options strict_options() {
  json::parse_options options;
  options.max_depth = 64;
  options.allow_comments = false;
  options.allow_trailing_commas = false;
  options.allow_invalid_utf8 = false;
  return options;
}

}  // namespace

json::value parse_json(std::string_view text, json::storage_ptr storage) {
  json::basic_parser<ExactNumberHandler> parser(strict_options(), storage);
  parser.handler().stack.reset(storage);
  json::error_code ec;
  const std::size_t consumed = parser.write_some(false, text.data(), text.size(), ec);
  if (!ec && consumed < text.size()) ec = json::error::extra_data;
  if (ec) {
    throw error(errc::decode_error, "invalid JSON at byte " + std::to_string(consumed) + " of " +
                                        std::to_string(text.size()) + ": " + ec.message());
  }
  return parser.handler().stack.release();
}

void Path::append_to(std::string& out) const {
  if (parent_ == nullptr) return;
  parent_->append_to(out);
  if (is_index_) {
    append_path_step(out, {}, static_cast<std::int64_t>(index_));
  } else {
    append_path_step(out, key_);
  }
}

std::string Path::str() const {
  std::string out;
  append_to(out);
  return out;
}

void fail_at(const Path& path, std::string_view what) {
  std::string where = path.str();
  std::string message = where.empty() ? std::string("document") : where;
  message += ": ";
  message += what;
  throw error(errc::decode_error, std::move(message));
}

void fail_type(const Path& path, std::string_view expected, const json::value& got) {
  std::string what = "expected ";
  what += expected;
  what += ", got ";
  what += json_kind(got);
  fail_at(path, what);
}

const char* json_kind(const json::value& value) noexcept {
  switch (value.kind()) {
    case json::kind::string: return "string";
    case json::kind::int64:
    case json::kind::uint64: return "integer";
    case json::kind::double_: return "number";
    case json::kind::object: return "object";
    case json::kind::array: return "array";
    case json::kind::bool_: return "boolean";
    case json::kind::null: return "null";
  }
  return "value";
}

void write_value(const json::value& value, std::string& out) {
  JsonWriter writer(out);
  struct Recurse {
    JsonWriter& w;
    void operator()(const json::value& v) const {
      switch (v.kind()) {
        case json::kind::null: w.null(); break;
        case json::kind::bool_: w.boolean(v.get_bool()); break;
        case json::kind::int64: w.integer(v.get_int64()); break;
        case json::kind::uint64: w.unsigned_integer(v.get_uint64()); break;
        case json::kind::double_:
          // Non-finite values cannot come out of the parser; write null defensively.
          if (!w.number(v.get_double())) w.null();
          break;
        case json::kind::string: (void)w.string(v.get_string()); break;  // validated by the parser
        case json::kind::array:
          w.begin_array();
          for (const auto& item : v.get_array()) (*this)(item);
          w.end_array();
          break;
        case json::kind::object:
          w.begin_object();
          for (const auto& entry : v.get_object()) {
            w.key(entry.key());
            (*this)(entry.value());
          }
          w.end_object();
          break;
      }
    }
  };
  Recurse{writer}(value);
}

}  // namespace tinker::wire
