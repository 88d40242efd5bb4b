/// \file
/// Links to the Tinker console's pages for sessions, training runs and checkpoints
/// (`doc/rest.md#console-urls`). Pure string builders: nothing is sent.
#pragma once

#include <string>
#include <string_view>

namespace tinker::console {

/// The console's address: "https://tinker.thinkingmachines.ai".
inline constexpr std::string_view base_url = "https://tinker.thinkingmachines.ai";

/// Percent-encodes `text` as Python's `urllib.parse.quote(text, safe)` does: letters, digits,
/// underscore, dot, hyphen, tilde and the characters of `safe` are kept, every other byte becomes a
/// percent sign and two upper-case hex digits.
std::string url_quote(std::string_view text, std::string_view safe = "/");

/// "<base>/sessions": the list of sessions.
std::string sessions_url();
/// "<base>/sessions/<session_id>" (the id as it is, as the Python SDK builds it).
std::string session_url(std::string_view session_id);
/// "<base>/training_runs/<training_run_id>" (the id as it is, as the Python SDK builds it).
std::string training_run_url(std::string_view training_run_id);
/// "<base>/checkpoints/<quote(run, "")>/<quote(checkpoint_id, "")>": each part one path
/// segment, so the ':' of the run id and the '/' of "<kind>/<name>" are encoded
/// ("abc%3Atrain%3A0/weights%2Fstep-1").
std::string checkpoint_url(std::string_view training_run_id, std::string_view checkpoint_id);
/// "<base>/checkpoints/<quote(run, "")>/sampler_weights": the run's sampler checkpoints.
std::string sampler_checkpoints_url(std::string_view training_run_id);
/// "<base>/playground?mode=checkpoint&checkpoint=<quote(tinker_path, "")>": the playground on a
/// sampler checkpoint (the whole path encoded, '/' and ':' included, since it is a query value).
std::string playground_url(std::string_view tinker_path);
/// The checkpoint page of a `tinker://<run>/<kind>/<name>` path. Throws tinker::error
/// (invalid_argument) for a malformed path.
std::string console_url(std::string_view tinker_path);

}  // namespace tinker::console
