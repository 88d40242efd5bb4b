// Reference logprobs for DPO from a SamplingClient, the cookbook's way: compute_logprobs on each
// datum's full sequence (model_input plus its last target token), aligned with target_tokens.
#include "losses/checks.hpp"

#include "client/async/countdown.hpp"

#include <tinker/losses.hpp>
#include <tinker/sync/sampling_client.hpp>

#include <boost/asio/append.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/system_executor.hpp>

#include <cmath>
#include <memory>
#include <optional>

namespace tinker::losses {
namespace {

constexpr std::string_view kReferenceLoss = "reference_logprobs";

std::vector<std::int64_t> targets_of(const Datum& datum, std::size_t i) {
  auto it = datum.loss_fn_inputs.find("target_tokens");
  if (it == datum.loss_fn_inputs.end())
    detail::fail(kReferenceLoss, detail::datum_path(i) + ".loss_fn_inputs.target_tokens: missing");
  return it->second.to_dense_ints();
}

// The alignment assumes target_tokens[k] == model_input[k + 1]; checked where the input is text.
void check_shifted(const Datum& datum, const std::vector<std::int64_t>& targets, std::size_t i) {
  std::vector<TokenId> tokens;
  try {
    tokens = datum.model_input.to_ints();
  } catch (const error&) {
    return;  // image chunks: the token ids are not known here
  }
  if (tokens.size() != targets.size()) {
    detail::fail(kReferenceLoss, detail::datum_path(i) + ": model_input has " + std::to_string(tokens.size()) +
                                     " tokens but " + std::to_string(targets.size()) +
                                     " target tokens; reference logprobs need targets = model_input shifted by one");
  }
  for (std::size_t k = 0; k + 1 < targets.size(); ++k) {
    if (targets[k] == tokens[k + 1]) continue;
    detail::fail(kReferenceLoss, detail::datum_path(i) + ".loss_fn_inputs.target_tokens[" + std::to_string(k) +
                                     "] = " + std::to_string(targets[k]) + " but model_input[" + std::to_string(k + 1) +
                                     "] = " + std::to_string(tokens[k + 1]) +
                                     "; reference logprobs need targets = model_input shifted by one");
  }
}

// Gathers the compute_logprobs results of every datum and completes the handler once. The
// completions come on any thread: client::async::Countdown picks the last one.
class Gather {
 public:
  Gather(SamplingClient reference_, std::vector<Datum> data_, diagnostics* user_diag_,
         tinker::detail::Handler<ReferenceLogprobs> handler_)
      : reference(std::move(reference_)),
        data(std::move(data_)),
        results(data.size()),
        codes(data.size()),
        diags(data.size()),
        countdown_(data.size()),
        user_diag(user_diag_),
        handler(std::move(handler_)) {}

  const SamplingClient reference;
  const std::vector<Datum> data;
  std::vector<PromptLogprobs> results;
  std::vector<boost::system::error_code> codes;
  std::vector<diagnostics> diags;  // one per datum: submission, then the wait

  // Records datum i's outcome; the last one completes the handler.
  void done(std::size_t i, boost::system::error_code code, PromptLogprobs logprobs) {
    results[i] = std::move(logprobs);
    codes[i] = code;
    if (countdown_.finish(i, static_cast<bool>(code)).last) complete();
  }

 private:
  // The first datum that failed fails the whole call, naming it.
  void complete() {
    boost::system::error_code code;
    diagnostics diag;
    ReferenceLogprobs aligned;
    if (const std::optional<std::size_t> failed = countdown_.first_failure()) {
      const std::size_t i = *failed;
      code = codes[i];
      diag = diags[i];
      diag.message = "losses::reference_logprobs: " + detail::datum_path(i) +
                     ": compute_logprobs failed: " + (diags[i].message.empty() ? code.message() : diags[i].message);
    } else {
      try {
        aligned = align_reference_logprobs(data, results);
      } catch (const error& e) {
        code = e.code();
        diag = e.diag();
      }
    }
    if (user_diag != nullptr) *user_diag = std::move(diag);
    boost::asio::dispatch(boost::asio::append(std::move(handler), code, std::move(aligned)));
  }

  client::async::Countdown countdown_;
  diagnostics* user_diag;
  tinker::detail::Handler<ReferenceLogprobs> handler;
};

void wait_for(std::shared_ptr<Gather> gather, std::size_t i, Future<PromptLogprobs> future) {
  future.async_get(gather->diags[i], [gather, i](boost::system::error_code code, PromptLogprobs logprobs) {
    gather->done(i, code, std::move(logprobs));
  });
}

void submit(const std::shared_ptr<Gather>& gather, std::size_t i) {
  gather->reference.async_compute_logprobs(full_sequence(gather->data[i]), gather->diags[i],
                                           [gather, i](boost::system::error_code code, Future<PromptLogprobs> future) {
                                             if (code) return gather->done(i, code, {});
                                             wait_for(gather, i, std::move(future));
                                           });
}

}  // namespace

ModelInput full_sequence(const Datum& datum) {
  ModelInput sequence = datum.model_input;
  auto it = datum.loss_fn_inputs.find("target_tokens");
  if (it == datum.loss_fn_inputs.end()) return sequence;
  const std::vector<std::int64_t> targets = it->second.to_dense_ints();
  if (!targets.empty()) sequence.append_int(static_cast<TokenId>(targets.back()));
  return sequence;
}

ReferenceLogprobs align_reference_logprobs(const std::vector<Datum>& data,
                                           const std::vector<PromptLogprobs>& computed) {
  detail::check_batch(kReferenceLoss, "computed logprobs", computed.size(), data.size());
  ReferenceLogprobs aligned(data.size());
  for (std::size_t i = 0; i < data.size(); ++i) {
    const std::vector<std::int64_t> targets = targets_of(data[i], i);
    if (targets.empty()) continue;
    check_shifted(data[i], targets, i);
    if (computed[i].size() != targets.size() + 1) {
      detail::fail(kReferenceLoss, detail::datum_path(i) + ": compute_logprobs returned " +
                                       std::to_string(computed[i].size()) + " entries for a full sequence of " +
                                       std::to_string(targets.size() + 1) + " tokens");
    }
    aligned[i].reserve(targets.size());
    for (std::size_t t = 0; t < targets.size(); ++t) {
      const std::optional<float>& logprob = computed[i][t + 1];
      if (!logprob || !std::isfinite(*logprob)) {
        detail::fail(
            kReferenceLoss,
            detail::datum_path(i) + ": compute_logprobs gave no finite logprob for target token " + std::to_string(t));
      }
      aligned[i].push_back(*logprob);
    }
  }
  return aligned;
}

namespace detail {

void reference_logprobs_op(SamplingClient reference, std::vector<Datum> data, diagnostics* diag,
                           tinker::detail::Handler<ReferenceLogprobs> handler) {
  if (data.empty()) {
    // Nothing to submit, and the handler may not run inside this call: complete from the system
    // executor, dispatching to the handler's own executor.
    boost::asio::post(boost::asio::system_executor(), [handler = std::move(handler)]() mutable {
      boost::asio::dispatch(boost::asio::append(std::move(handler), boost::system::error_code(), ReferenceLogprobs()));
    });
    return;
  }
  auto gather = std::make_shared<Gather>(std::move(reference), std::move(data), diag, std::move(handler));
  for (std::size_t i = 0; i < gather->data.size(); ++i) submit(gather, i);
}

}  // namespace detail

ReferenceLogprobs reference_logprobs(const sync::SamplingClient& reference, const std::vector<Datum>& data) {
  std::vector<Future<PromptLogprobs>> pending;
  pending.reserve(data.size());
  std::vector<PromptLogprobs> computed;
  computed.reserve(data.size());
  std::size_t i = 0;
  try {
    for (; i < data.size(); ++i) pending.push_back(reference.compute_logprobs(full_sequence(data[i])));
    for (i = 0; i < pending.size(); ++i) computed.push_back(pending[i].get());
  } catch (const error& e) {
    diagnostics diag = e.diag();
    diag.message = "losses::reference_logprobs: " + detail::datum_path(i) +
                   ": compute_logprobs failed: " + (diag.message.empty() ? e.code().message() : diag.message);
    throw error(e.code(), std::move(diag));
  }
  return align_reference_logprobs(data, computed);
}

}  // namespace tinker::losses
