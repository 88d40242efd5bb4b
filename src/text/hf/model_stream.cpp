// See model_stream.hpp. A Boost.JSON basic_parser handler: events outside the streamed parts go to
// a value_stack (what Boost's own parser does to build a document); events inside them go to the
// model.
#include "text/hf/model_stream.hpp"

#include "text/hf/json_reader.hpp"

#include <boost/json/basic_parser_impl.hpp>

#include <optional>

namespace tinker::tokenizer_detail::hf {
namespace {

using boost::system::error_code;
using string_view = boost::json::string_view;

constexpr std::uint64_t max_token_id = (1U << 24) - 1;

class StreamHandler {
 public:
  static constexpr std::size_t max_object_size = std::size_t(-1);
  static constexpr std::size_t max_array_size = std::size_t(-1);
  static constexpr std::size_t max_key_size = std::size_t(-1);
  static constexpr std::size_t max_string_size = std::size_t(-1);

  StreamHandler(boost::json::storage_ptr storage, StreamedModel& model, StreamProblem& problem)
      : storage_(std::move(storage)), model_(model), problem_(problem) {}

  boost::json::value release() { return stack_.release(); }

  bool on_document_begin(error_code&) {
    stack_.reset(storage_);
    return true;
  }
  bool on_document_end(error_code&) { return true; }

  bool on_object_begin(error_code& ec) {
    if (stream_ != Stream::none) return fail_value(ec, "an object");
    if (depth_ == 0) root_is_object_ = true;
    ++depth_;
    if (pending_ == Stream::vocab && depth_ == 3) {
      stream_ = Stream::vocab;
      model_.vocab_streamed = true;
    }
    pending_ = Stream::none;
    return true;
  }
  bool on_object_end(std::size_t n, error_code&) {
    --depth_;
    if (stream_ == Stream::vocab) {
      stream_ = Stream::none;
      n = 0;
    }
    stack_.push_object(n);
    return true;
  }
  bool on_array_begin(error_code& ec) {
    if (stream_ == Stream::merges && depth_ == 3) {
      ++depth_;
      pair_.clear();
      pair_length_ = 0;
      pair_count_ = 0;
      return true;
    }
    if (stream_ != Stream::none) return fail_value(ec, "an array");
    ++depth_;
    if (pending_ == Stream::merges && depth_ == 3) {
      stream_ = Stream::merges;
      model_.merges_streamed = true;
    }
    pending_ = Stream::none;
    return true;
  }
  bool on_array_end(std::size_t n, error_code& ec) {
    --depth_;
    if (stream_ == Stream::merges && depth_ == 3) {  // the end of a ["left", "right"] pair
      if (pair_count_ != 2) return fail_value(ec, "an array of " + std::to_string(pair_count_) + " strings");
      pair_count_ = 0;
      add_merge(pair_length_, ec);
      return true;
    }
    if (stream_ == Stream::merges) {
      stream_ = Stream::none;
      n = 0;
    }
    stack_.push_array(n);
    return true;
  }

  bool on_key_part(string_view text, std::size_t, error_code&) {
    key_.append(text.data(), text.size());
    return true;
  }
  bool on_key(string_view text, std::size_t, error_code&) {
    key_.append(text.data(), text.size());
    if (stream_ == Stream::vocab) return true;  // the value will use it
    if (depth_ == 1 && root_is_object_) model_key_ = key_ == "model";
    pending_ = Stream::none;
    if (depth_ == 2 && model_key_ && key_ == "vocab") pending_ = Stream::vocab;
    if (depth_ == 2 && model_key_ && key_ == "merges") pending_ = Stream::merges;
    stack_.push_key(key_);
    key_.clear();
    return true;
  }

  bool on_string_part(string_view text, std::size_t, error_code&) {
    string_.append(text.data(), text.size());
    return true;
  }
  bool on_string(string_view text, std::size_t, error_code& ec) {
    if (stream_ == Stream::none) {
      pending_ = Stream::none;
      if (string_.empty()) {
        stack_.push_string(text);
      } else {
        string_.append(text.data(), text.size());
        stack_.push_string(string_);
        string_.clear();
      }
      return true;
    }
    string_.append(text.data(), text.size());
    if (stream_ == Stream::vocab) {
      string_.clear();
      return fail_value(ec, "a string");
    }
    const bool ok = depth_ == 4 ? add_pair_part(ec) : add_merge_line(ec);
    string_.clear();
    return ok;
  }

  bool on_number_part(string_view, error_code&) { return true; }
  bool on_int64(std::int64_t value, string_view, error_code& ec) {
    if (stream_ == Stream::vocab && value >= 0) return add_token(static_cast<std::uint64_t>(value), ec);
    if (stream_ != Stream::none) return fail_value(ec, "a negative number");
    pending_ = Stream::none;
    stack_.push_int64(value);
    return true;
  }
  bool on_uint64(std::uint64_t value, string_view, error_code& ec) {
    if (stream_ == Stream::vocab) return add_token(value, ec);
    if (stream_ != Stream::none) return fail_value(ec, "a number");
    pending_ = Stream::none;
    stack_.push_uint64(value);
    return true;
  }
  bool on_double(double value, string_view, error_code& ec) {
    if (stream_ != Stream::none) return fail_value(ec, "a fractional number");
    pending_ = Stream::none;
    stack_.push_double(value);
    return true;
  }
  bool on_bool(bool value, error_code& ec) {
    if (stream_ != Stream::none) return fail_value(ec, "a boolean");
    pending_ = Stream::none;
    stack_.push_bool(value);
    return true;
  }
  bool on_null(error_code& ec) {
    if (stream_ != Stream::none) return fail_value(ec, "null");
    pending_ = Stream::none;
    stack_.push_null();
    return true;
  }
  bool on_comment_part(string_view, error_code&) { return true; }
  bool on_comment(string_view, error_code&) { return true; }

 private:
  enum class Stream { none, vocab, merges };

  std::string current_path() const {
    if (stream_ == Stream::vocab) return json_path("model.vocab", key_);
    return json_path("model.merges", merge_index_);
  }

  bool fail(error_code& ec, std::string message) {
    problem_.path = current_path();
    problem_.message = std::move(message);
    ec = boost::json::error::syntax;
    return false;
  }
  bool fail_value(error_code& ec, const std::string& found) {
    if (stream_ == Stream::vocab) return fail(ec, "expected a non-negative integer, found " + found);
    return fail(ec, "expected \"left right\" or [\"left\", \"right\"], found " + found);
  }

  bool add_token(std::uint64_t id, error_code& ec) {
    if (id > max_token_id) {
      return fail(ec, std::to_string(id) + " is too large (at most " + std::to_string(max_token_id) + ")");
    }
    model_.builder.add_token(key_, static_cast<TokenId>(id));
    key_.clear();
    return true;
  }

  bool add_pair_part(error_code& ec) {
    if (pair_count_ >= 2) return fail_value(ec, "an array of more than 2 strings");
    if (pair_count_ == 0) pair_length_ = static_cast<std::uint32_t>(string_.size());
    pair_ += string_;
    ++pair_count_;
    return true;
  }

  // "left right": exactly one space. "#version" lines (old merges.txt headers) are skipped.
  bool add_merge_line(error_code& ec) {
    if (string_.starts_with("#version")) {
      ++merge_index_;
      return true;
    }
    const std::size_t space = string_.find(' ');
    if (space == std::string::npos || string_.find(' ', space + 1) != std::string::npos) {
      return fail(ec, "expected two tokens separated by one space, found \"" + string_ + "\"");
    }
    pair_.assign(string_, 0, space);
    pair_.append(string_, space + 1);
    return add_merge(static_cast<std::uint32_t>(space), ec);
  }

  bool add_merge(std::uint32_t left_length, error_code&) {
    model_.merges.push_back(StreamedModel::Merge{static_cast<std::uint32_t>(model_.merge_text.size()), left_length,
                                                 static_cast<std::uint32_t>(pair_.size() - left_length),
                                                 static_cast<std::uint32_t>(merge_index_)});
    model_.merge_text += pair_;
    pair_.clear();
    ++merge_index_;
    return true;
  }

  boost::json::storage_ptr storage_;
  boost::json::value_stack stack_;
  StreamedModel& model_;
  StreamProblem& problem_;
  std::size_t depth_ = 0;  // containers open
  bool root_is_object_ = false;
  bool model_key_ = false;  // the open depth-1 key is "model"
  Stream pending_ = Stream::none;
  Stream stream_ = Stream::none;
  std::string key_;
  std::string string_;
  std::string pair_;  // a merge's left then right
  std::uint32_t pair_length_ = 0;
  std::size_t pair_count_ = 0;
  std::size_t merge_index_ = 0;
};

}  // namespace

boost::json::value parse_streaming_model(std::string_view text, boost::json::storage_ptr storage, StreamedModel& model,
                                         StreamProblem& problem, error_code& syntax_error, std::size_t& error_offset) {
  boost::json::parse_options options;
  options.max_depth = 64;
  boost::json::basic_parser<StreamHandler> parser(options, storage, model, problem);
  error_offset = parser.write_some(false, text.data(), text.size(), syntax_error);
  if (!problem.message.empty()) return nullptr;
  if (!syntax_error && error_offset < text.size()) syntax_error = boost::json::error::extra_data;
  if (!syntax_error && !parser.done()) syntax_error = boost::json::error::incomplete;
  if (syntax_error) return nullptr;
  return parser.handler().release();
}

}  // namespace tinker::tokenizer_detail::hf
