'use strict';
// The Hugging Face reference for the tokenizer.json tests: runs the `tokenizers` package (Hugging Face's Rust
// tokenizers through their Node binding) over a corpus and prints what it produces, so the C++ tests compare
// against the reference at test time instead of against stored ids.
//
// Usage: node hf_reference.js [--split-special-tokens] <tokenizer.json> <corpus> [<node_modules directory>]
//   <corpus> ending in ".jsonl": one case per line, each line a JSON string (any text, line breaks included);
//   otherwise: one case per line, taken literally (the final "\n" ends the last case).
//   The `tokenizers` package is looked up in <node_modules directory> when given, else through NODE_PATH.
//   --split-special-tokens: encode as the Rust core does with `encode_special_tokens` set (transformers'
//   `split_special_tokens=True`), which the Node binding does not expose. The core then drops every match of
//   a special added token (AddedVocabulary::find_matches), leaving its text to the normalizer, pre-tokenizer
//   and model like the text around it. The script gets the same by loading the file with each special added
//   token made unmatchable: its content replaced by a placeholder no case holds (the core numbers added
//   tokens in file order, ignoring their "id", so each stays in place to keep the ids of those after it),
//   or dropped when its content is a model vocabulary entry (such a token takes the entry's id, not a new
//   one). That differs from the core only where a non-special added token starts inside a special one in
//   the same pass (both `normalized` or both not): the core, having skipped the special match, resumes
//   after it and never sees the other one. The script refuses such a file, and a case holding a
//   placeholder.
// Output: one JSON line per case, in corpus order:
//   {"ids": encode(text, addSpecialTokens=false), "ids_special": encode(text, addSpecialTokens=true),
//    "decoded": decode(ids_special, skipSpecialTokens=false), "decoded_skip": decode(ids_special, true)}
// Any failure: a message on stderr and exit status 1.
const fs = require('fs');
const path = require('path');

function loadTokenizers(nodeModules) {
  if (nodeModules) return require(path.join(path.resolve(nodeModules), 'tokenizers'));
  return require('tokenizers');
}

function readCases(corpusPath) {
  const text = fs.readFileSync(corpusPath, 'utf8');
  const lines = text.split('\n');
  if (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
  if (!corpusPath.endsWith('.jsonl')) return lines;
  return lines.map((line, index) => {
    const value = JSON.parse(line);
    if (typeof value !== 'string') throw new Error(`${corpusPath}:${index + 1}: expected a JSON string`);
    return value;
  });
}

// True when `inner` would start at some offset inside `outer`: a proper prefix of it, or running on
// from one of its suffixes (a longer token that starts with `outer` wins over it anyway).
function startsInside(inner, outer) {
  for (let k = 0; k < outer.length; k++) {
    const tail = outer.slice(k);
    if (tail.startsWith(inner) && !(k === 0 && inner.length === outer.length)) return true;
    if (k > 0 && inner.startsWith(tail)) return true;
  }
  return false;
}

const placeholderMark = '\u0000\u0001';

// The tokenizer.json text with its special added tokens made unmatchable (see --split-special-tokens).
function withSpecialAddedTokensUnmatchable(tokenizerPath) {
  const config = JSON.parse(fs.readFileSync(tokenizerPath, 'utf8'));
  const added = config.added_tokens || [];
  const vocab = (config.model && config.model.vocab) || {};
  const contents = new Set();
  for (const token of added) {
    if (contents.has(token.content)) throw new Error(`${tokenizerPath}: ${token.content} is added twice`);
    contents.add(token.content);
  }
  for (const s of added.filter((token) => token.special)) {
    for (const o of added.filter((token) => !token.special)) {
      if (Boolean(s.normalized) === Boolean(o.normalized) && startsInside(o.content, s.content)) {
        throw new Error(`${tokenizerPath}: the added token ${JSON.stringify(o.content)} can start inside the ` +
                        `special token ${JSON.stringify(s.content)}, where encode_special_tokens would not match it`);
      }
    }
  }
  config.added_tokens = added
      .filter((token) => !(token.special && Object.prototype.hasOwnProperty.call(vocab, token.content)))
      .map((token, index) => (token.special ? { ...token, content: `${placeholderMark}special ${index}` } : token));
  return JSON.stringify(config);
}

async function main(argv) {
  const splitSpecialTokens = argv[0] === '--split-special-tokens';
  if (splitSpecialTokens) argv = argv.slice(1);
  if (argv.length < 2 || argv.length > 3) {
    throw new Error(
        'usage: node hf_reference.js [--split-special-tokens] <tokenizer.json> <corpus> [<node_modules directory>]');
  }
  const [tokenizerPath, corpusPath, nodeModules] = argv;
  const { Tokenizer } = loadTokenizers(nodeModules);
  let tokenizer;
  try {
    tokenizer = splitSpecialTokens ? Tokenizer.fromString(withSpecialAddedTokensUnmatchable(tokenizerPath))
                                   : Tokenizer.fromFile(tokenizerPath);
  } catch (error) {
    throw new Error(`cannot load ${tokenizerPath}: ${error.message}`);
  }
  const out = [];
  for (const text of readCases(corpusPath)) {
    if (splitSpecialTokens && text.includes(placeholderMark)) throw new Error('a case holds the placeholder mark');
    const ids = (await tokenizer.encode(text, null, { addSpecialTokens: false })).getIds();
    const idsSpecial = (await tokenizer.encode(text, null, { addSpecialTokens: true })).getIds();
    out.push(JSON.stringify({
      ids: Array.from(ids),
      ids_special: Array.from(idsSpecial),
      decoded: await tokenizer.decode(Array.from(idsSpecial), false),
      decoded_skip: await tokenizer.decode(Array.from(idsSpecial), true),
    }));
  }
  out.push('');
  fs.writeFileSync(1, out.join('\n'));
}

main(process.argv.slice(2)).catch((error) => {
  process.stderr.write(`hf_reference.js: ${error && error.message ? error.message : error}\n`);
  process.exitCode = 1;
});
