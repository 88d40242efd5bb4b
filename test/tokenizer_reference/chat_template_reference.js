'use strict';
// The reference for the chat renderer tests: renders a model's own chat template with @huggingface/jinja (the
// Jinja implementation transformers.js uses for apply_chat_template) and prints the rendered text, so the C++ tests
// tokenize it and compare with what a renderer builds, token for token.
//
// Usage: node chat_template_reference.js <template> <cases.json> [<node_modules directory>]
//   <template>: a tokenizer_config.json (its "chat_template", a string or the "default" entry of a list of named
//     templates; its bos_token / eos_token become template variables) or a Jinja file (any other name).
//   <cases.json>: a JSON list of cases, each {"messages": [...], "add_generation_prompt": bool, "variables": {...}}.
//     Messages are in the Hugging Face / OpenAI shape: role, content (a string), reasoning_content, tool_calls
//     ([{"type": "function", "id", "function": {"name", "arguments"}}]), name, tool_call_id. "variables" (optional)
//     are extra template variables such as enable_thinking, and override bos_token / eos_token.
//   @huggingface/jinja is looked up in <node_modules directory> when given, else through NODE_PATH.
// Output: one line per case, in order: the rendered text as a JSON string.
// Any failure: a message on stderr naming the case, and exit status 1.
const fs = require('fs');
const path = require('path');

function loadJinja(nodeModules) {
  if (nodeModules) return require(path.join(path.resolve(nodeModules), '@huggingface', 'jinja'));
  return require('@huggingface/jinja');
}

function tokenText(token) {
  if (token === undefined || token === null) return undefined;
  if (typeof token === 'string') return token;
  if (typeof token === 'object' && typeof token.content === 'string') return token.content;
  return undefined;
}

// The template source and the variables its file defines.
function readTemplate(templatePath) {
  const text = fs.readFileSync(templatePath, 'utf8');
  if (!templatePath.endsWith('.json')) return { source: text, variables: {} };
  const config = JSON.parse(text);
  let source = config.chat_template;
  if (Array.isArray(source)) {
    const named = source.find((entry) => entry && entry.name === 'default');
    source = named ? named.template : undefined;
  }
  if (typeof source !== 'string') throw new Error(`${templatePath} has no chat_template`);
  const variables = {};
  const bos = tokenText(config.bos_token);
  const eos = tokenText(config.eos_token);
  if (bos !== undefined) variables.bos_token = bos;
  if (eos !== undefined) variables.eos_token = eos;
  return { source, variables };
}

function main(argv) {
  if (argv.length < 2 || argv.length > 3) {
    throw new Error('usage: node chat_template_reference.js <template> <cases.json> [<node_modules directory>]');
  }
  const [templatePath, casesPath, nodeModules] = argv;
  const { Template } = loadJinja(nodeModules);
  const { source, variables } = readTemplate(templatePath);
  const template = new Template(source);
  const cases = JSON.parse(fs.readFileSync(casesPath, 'utf8'));
  if (!Array.isArray(cases)) throw new Error(`${casesPath}: expected a JSON list of cases`);
  const out = cases.map((entry, index) => {
    try {
      const rendered = template.render({
        ...variables,
        ...(entry.variables || {}),
        messages: entry.messages,
        add_generation_prompt: Boolean(entry.add_generation_prompt),
      });
      return JSON.stringify(rendered);
    } catch (error) {
      throw new Error(`case ${index}: ${error && error.message ? error.message : error}`);
    }
  });
  out.push('');
  fs.writeFileSync(1, out.join('\n'));
}

try {
  main(process.argv.slice(2));
} catch (error) {
  process.stderr.write(`chat_template_reference.js: ${error && error.message ? error.message : error}\n`);
  process.exitCode = 1;
}
