// Python's formatting of JSON values, as the families' tool declarations write them (Kimi's,
// Nemotron's, Qwen's): the models' templates build them in Python from the parsed tools, so
// json.dumps's separators, repr() of floats ("1.0", "1e-05") and str() of None / True are part of
// the tokens.
#pragma once

#include <string>

namespace boost::json {
class value;
}

namespace tinker::renderers::detail::python {

/// repr() of a float: the shortest digits that read back the same, in fixed notation when the
/// decimal exponent is in [-4, 16) (an integral value keeps ".0"), else "1e-05", "1.5e+16".
std::string float_repr(double value);

/// Appends json.dumps(value, ensure_ascii=False): separators "," and ":" when `compact`, else
/// Python's ", " and ": "; keys in the object's order; floats as float_repr.
void append_json(std::string& out, const boost::json::value& value, bool compact);

/// Appends repr() of the value json.loads gives: None, True, 1, 1.0, 'text', [...], {...}.
void append_repr(std::string& out, const boost::json::value& value);

/// str() of the value json.loads gives: a string as it is, anything else as repr().
std::string str(const boost::json::value& value);

/// Python's truth value of the value json.loads gives (empty and zero values are false).
bool truthy(const boost::json::value& value);

/// The value with every object's keys in sorted order (code point order), as Kimi's tokenizer
/// sorts tools before declaring them.
boost::json::value deep_sorted(const boost::json::value& value);

}  // namespace tinker::renderers::detail::python
