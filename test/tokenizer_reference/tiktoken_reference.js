'use strict';
// The tiktoken reference for the tiktoken backend's tests: OpenAI's tiktoken (its Rust core compiled
// to WebAssembly, npm package `tiktoken`).
//
// Usage:
//   node tiktoken_reference.js ranks <encoding> <out file>
//     Writes the ranks of <encoding> (cl100k_base, o200k_base) as a standard tiktoken file: lines of
//     "<base64 token> <rank>". The npm package keeps them in a compact form: space-separated base64
//     tokens with consecutive ranks, "! <rank>" setting the rank of the next token.
//   node tiktoken_reference.js encode <encoding> <cases.jsonl> [<pattern file>]
//     Prints, for each case (one JSON string per line), the JSON array of encode(text, "all"). With a
//     pattern file, the encoding's ranks are used with that split pattern and no special tokens.
//   node tiktoken_reference.js encode_ordinary <encoding> <cases.jsonl>
//     The same with encode_ordinary(text): special token text is encoded as ordinary text.
const fs = require('fs');
const path = require('path');

function encoder(name) {
  const file = require.resolve(path.join('tiktoken', 'encoders', name + '.json'));
  return JSON.parse(fs.readFileSync(file, 'utf8'));
}

function ranks(name, out) {
  const words = encoder(name).bpe_ranks.split(/\s+/).filter((w) => w.length > 0);
  const lines = [];
  let rank = 0;
  for (let i = 0; i < words.length; i++) {
    if (words[i] === '!') {
      rank = Number(words[++i]);
      continue;
    }
    lines.push(words[i] + ' ' + rank++);
  }
  fs.writeFileSync(out, lines.join('\n') + '\n');
}

function encode(name, casesFile, patternFile, ordinary) {
  const { Tiktoken } = require('tiktoken');
  const data = encoder(name);
  const tokenizer = patternFile
    ? new Tiktoken(data.bpe_ranks, {}, fs.readFileSync(patternFile, 'utf8'))
    : new Tiktoken(data.bpe_ranks, data.special_tokens, data.pat_str);
  const lines = fs.readFileSync(casesFile, 'utf8').split('\n').filter((l) => l.length > 0);
  const encodeLine = ordinary ? (text) => tokenizer.encode_ordinary(text) : (text) => tokenizer.encode(text, 'all');
  const out = lines.map((line) => JSON.stringify(Array.from(encodeLine(JSON.parse(line)))));
  process.stdout.write(out.join('\n') + '\n');
  tokenizer.free();
}

const [mode, name, a, b] = process.argv.slice(2);
if (mode === 'ranks') ranks(name, a);
else if (mode === 'encode') encode(name, a, b, false);
else if (mode === 'encode_ordinary') encode(name, a, undefined, true);
else {
  process.stderr.write('usage: tiktoken_reference.js ranks|encode|encode_ordinary <encoding> ...\n');
  process.exit(2);
}
