// The weighted sum of per-token terms: ready-made terms and their evaluation on a batch.
#include "losses/checks.hpp"

#include <tinker/losses.hpp>

#include <algorithm>
#include <cmath>

namespace tinker::losses {
namespace {

constexpr std::string_view kPerTokenLoss = "per_token";

// Ratios come from log-ratios clamped to this range, so an absurd sampling logprob (the -99999
// some clients pad with) gives a large but finite value instead of inf or NaN.
constexpr double kMaxLogRatio = 80.0;

double ratio(double log_ratio) {
  return std::exp(std::clamp(log_ratio, -kMaxLogRatio, kMaxLogRatio));
}

const char* input_name(TokenInput input) {
  switch (input) {
    case TokenInput::advantages: return "advantages";
    case TokenInput::sampling_logprobs: return "sampling_logprobs";
    case TokenInput::reference_logprobs: break;
  }
  return "reference_logprobs";
}

const std::vector<float>& input_values(const TokenInputs& inputs, TokenInput input) {
  switch (input) {
    case TokenInput::advantages: return inputs.advantages;
    case TokenInput::sampling_logprobs: return inputs.sampling_logprobs;
    case TokenInput::reference_logprobs: break;
  }
  return inputs.reference_logprobs;
}

std::optional<double>& view_slot(TokenView& view, TokenInput input) {
  switch (input) {
    case TokenInput::advantages: return view.advantage;
    case TokenInput::sampling_logprobs: return view.sampling_logprob;
    case TokenInput::reference_logprobs: break;
  }
  return view.reference_logprob;
}

// The inputs any term of `loss` needs.
std::vector<TokenInput> needed_inputs(const TokenLoss& loss) {
  std::vector<TokenInput> needed;
  for (const Term& term : loss.terms) {
    for (TokenInput input : term.needs) {
      if (std::find(needed.begin(), needed.end(), input) == needed.end()) needed.push_back(input);
    }
  }
  return needed;
}

// Checks that datum i carries every needed input with the right length.
void check_inputs(const std::vector<TokenInput>& needed, const TokenLoss& loss, const TokenInputs& inputs,
                  std::size_t i, std::size_t count) {
  for (TokenInput input : needed) {
    const std::vector<float>& values = input_values(inputs, input);
    if (values.empty() && count > 0) {
      std::string users;
      for (const Term& term : loss.terms) {
        if (std::find(term.needs.begin(), term.needs.end(), input) == term.needs.end()) continue;
        users += (users.empty() ? "" : ", ") + term.name;
      }
      detail::fail(kPerTokenLoss,
                   detail::datum_path(i) + ": missing " + input_name(input) + " (needed by " + users + ")");
    }
    detail::check_length(kPerTokenLoss, i, input_name(input), values.size(), count);
  }
}

// The view of token t of datum i with exactly the inputs `term` declared.
void fill_term_inputs(TokenView& view, const Term& term, const TokenInputs* inputs) {
  view.advantage.reset();
  view.sampling_logprob.reset();
  view.reference_logprob.reset();
  for (TokenInput input : term.needs) view_slot(view, input) = input_values(*inputs, input)[view.position];
}

void check_finite(double x, const Term& term, const TokenView& view, const char* what) {
  if (std::isfinite(x)) return;
  detail::fail(kPerTokenLoss, detail::datum_path(view.datum) + ": term '" + term.name + "' gave a non-finite " + what +
                                  " at token " + std::to_string(view.position));
}

void check_term(const Term& term) {
  if (term.name.empty()) throw error(errc::invalid_argument, "losses::term: the name is empty");
  if (term.name.find(':') != std::string::npos) {
    throw error(errc::invalid_argument, "losses::term: name '" + term.name + "' contains ':' (metric names may not)");
  }
  if (term.name == "loss") {
    throw error(errc::invalid_argument, "losses::term: the name 'loss' is taken by the total's metric");
  }
  if (!term.value || !term.derivative) {
    throw error(errc::invalid_argument, "losses::term: '" + term.name + "' needs both a value and a derivative");
  }
}

}  // namespace

TokenLoss nll() {
  return TokenLoss(Term(
      "nll", [](const TokenView& v) { return -v.weight * v.logprob; }, [](const TokenView& v) { return -v.weight; }));
}

TokenLoss policy_gradient() {
  // d/dp of -w exp(p - q) A is the value itself.
  auto value = [](const TokenView& v) { return -v.weight * ratio(v.logprob - *v.sampling_logprob) * *v.advantage; };
  return TokenLoss(Term("policy_gradient", value, value, {TokenInput::advantages, TokenInput::sampling_logprobs}));
}

TokenLoss kl_to_reference(KlEstimator estimator) {
  TokenFunction value;
  TokenFunction derivative;
  switch (estimator) {
    case KlEstimator::k1:
      value = [](const TokenView& v) { return v.weight * (v.logprob - *v.reference_logprob); };
      derivative = [](const TokenView& v) { return v.weight; };
      break;
    case KlEstimator::k2:
      value = [](const TokenView& v) {
        const double d = v.logprob - *v.reference_logprob;
        return v.weight * 0.5 * d * d;
      };
      derivative = [](const TokenView& v) { return v.weight * (v.logprob - *v.reference_logprob); };
      break;
    case KlEstimator::k3:
      value = [](const TokenView& v) {
        const double d = v.logprob - *v.reference_logprob;
        return v.weight * (ratio(-d) - 1.0 + d);
      };
      derivative = [](const TokenView& v) { return v.weight * (1.0 - ratio(*v.reference_logprob - v.logprob)); };
      break;
  }
  return TokenLoss(Term("kl_to_reference", std::move(value), std::move(derivative), {TokenInput::reference_logprobs}));
}

TokenLoss term(std::string name, TokenFunction value, TokenFunction derivative, std::vector<TokenInput> needs) {
  Term made(std::move(name), std::move(value), std::move(derivative), std::move(needs));
  check_term(made);
  return TokenLoss(std::move(made));
}

CustomLossOutput evaluate(const TokenLoss& loss, const std::vector<Datum>& data,
                          const std::vector<std::vector<float>>& logprobs, const std::vector<TokenInputs>& inputs) {
  if (loss.terms.empty()) detail::fail(kPerTokenLoss, "the loss has no terms");
  for (const Term& term : loss.terms) {
    check_term(term);
    if (!std::isfinite(term.scale)) detail::fail(kPerTokenLoss, "term '" + term.name + "' has a non-finite scale");
  }
  const std::vector<TokenInput> needed = needed_inputs(loss);
  detail::check_batch(kPerTokenLoss, "logprobs", logprobs.size(), data.size());
  if (!needed.empty() || !inputs.empty()) detail::check_batch(kPerTokenLoss, "inputs", inputs.size(), data.size());

  CustomLossOutput out;
  out.gradients.resize(data.size());
  for (const Term& term : loss.terms) out.metrics[term.name] = 0.0;
  for (std::size_t i = 0; i < data.size(); ++i) {
    const std::size_t count = detail::target_count(kPerTokenLoss, data[i], i);
    detail::check_length(kPerTokenLoss, i, "logprobs", logprobs[i].size(), count);
    const std::vector<float> weights = detail::datum_weights(kPerTokenLoss, data[i], i, count, false);
    const TokenInputs* datum_inputs = inputs.empty() ? nullptr : &inputs[i];
    if (!needed.empty()) check_inputs(needed, loss, *datum_inputs, i, count);
    std::vector<float>& gradient = out.gradients[i];
    gradient.assign(count, 0.0f);
    TokenView view;
    view.datum = i;
    for (std::size_t t = 0; t < count; ++t) {
      view.position = t;
      view.logprob = logprobs[i][t];
      view.weight = weights.empty() ? 1.0 : weights[t];
      double d_total = 0.0;
      for (const Term& term : loss.terms) {
        fill_term_inputs(view, term, datum_inputs);
        const double value = term.value(view);
        const double derivative = term.derivative(view);
        check_finite(value, term, view, "value");
        check_finite(derivative, term, view, "derivative");
        out.metrics[term.name] += term.scale * value;
        out.loss += term.scale * value;
        d_total += term.scale * derivative;
      }
      gradient[t] = static_cast<float>(d_total);
    }
  }
  out.metrics["loss"] = out.loss;
  return out;
}

CustomLossFunction per_token(TokenLoss loss, std::vector<TokenInputs> inputs) {
  for (const Term& term : loss.terms) check_term(term);
  return [loss = std::move(loss), inputs = std::move(inputs)](const std::vector<Datum>& data,
                                                              const std::vector<std::vector<float>>& logprobs) {
    return evaluate(loss, data, logprobs, inputs);
  };
}

}  // namespace tinker::losses
