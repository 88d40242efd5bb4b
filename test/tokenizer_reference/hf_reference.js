'use strict';
// The Hugging Face reference for the tokenizer.json tests: runs the `tokenizers` package (Hugging Face's Rust
// tokenizers through their Node binding) over a corpus and prints what it produces, so the C++ tests compare
// against the reference at test time instead of against stored ids.
//
// Usage: node hf_reference.js <tokenizer.json> <corpus> [<node_modules directory>]
//   <corpus> ending in ".jsonl": one case per line, each line a JSON string (any text, line breaks included);
//   otherwise: one case per line, taken literally (the final "\n" ends the last case).
//   The `tokenizers` package is looked up in <node_modules directory> when given, else through NODE_PATH.
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

async function main(argv) {
  if (argv.length < 2 || argv.length > 3) {
    throw new Error('usage: node hf_reference.js <tokenizer.json> <corpus> [<node_modules directory>]');
  }
  const [tokenizerPath, corpusPath, nodeModules] = argv;
  const { Tokenizer } = loadTokenizers(nodeModules);
  let tokenizer;
  try {
    tokenizer = Tokenizer.fromFile(tokenizerPath);
  } catch (error) {
    throw new Error(`cannot load ${tokenizerPath}: ${error.message}`);
  }
  const out = [];
  for (const text of readCases(corpusPath)) {
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
