'use strict';
// The reference for Kimi's split pattern: the pattern as the model's tokenization_kimi.py writes it
// (for tiktoken's engine, Rust's fancy-regex), run by V8's own RegExp, which has class set
// operations under the `v` flag. tinker's tiktoken backend runs a PCRE2 rewrite of it
// (TiktokenOptions::kimi_k2()); the tests compare the pieces the two find.
//
// Usage:
//   node kimi_pattern_reference.js <pattern file> <cases.jsonl>
//     Prints, for each case (one JSON string per line), the JSON array of the pieces (the matches,
//     left to right) the pattern splits it into.
//
// The Rust syntax is rewritten mechanically, each step keeping what the Rust engine matches:
//   [A&&B]       -> [[A]&&B]           (Rust's && joins the whole class on its left; V8's needs
//                                         one operand a side)
//   \p{Han}      -> \p{Script=Han}     (a bare script name is the Script property in Rust)
//   \s, \S       -> \p{White_Space}, \P{White_Space}  (Rust's \s is White_Space; V8's adds
//                                         U+FEFF and lacks U+0085)
//   (?i:X)       -> (?:X) with each letter of X a class of the characters that fold to it (V8 has
//                                         no inline flags); the classes come from V8's own
//                                         case-insensitive matching, which is Unicode simple case
//                                         folding as in Rust ("s" also matches U+017F)
const fs = require('fs');

const foldCache = new Map();
// The characters that match `letter` case-insensitively (the BMP holds all of them for ASCII).
function folded(letter) {
  if (!foldCache.has(letter)) {
    const re = new RegExp('^' + letter + '$', 'iu');
    let chars = '';
    for (let cp = 0; cp <= 0xffff; cp++) {
      if (cp >= 0xd800 && cp <= 0xdfff) continue;
      const c = String.fromCodePoint(cp);
      if (re.test(c)) chars += c;
    }
    foldCache.set(letter, '[' + chars + ']');
  }
  return foldCache.get(letter);
}

function toV8(pattern) {
  let out = pattern.replace(/\(\?i:([^()]*)\)/g, (_, body) =>
    '(?:' + body.replace(/[A-Za-z]/g, (letter) => folded(letter)) + ')');
  out = out.replace(/\[([^\[\]]*?)&&(\[[^\]]*\])\]/g, '[[$1]&&$2]');
  out = out.replace(/\\p\{Han\}/g, '\\p{Script=Han}');
  out = out.replace(/\\s/g, '\\p{White_Space}').replace(/\\S/g, '\\P{White_Space}');
  return new RegExp(out, 'gv');
}

const [patternFile, casesFile] = process.argv.slice(2);
if (!patternFile || !casesFile) {
  process.stderr.write('usage: kimi_pattern_reference.js <pattern file> <cases.jsonl>\n');
  process.exit(2);
}
const re = toV8(fs.readFileSync(patternFile, 'utf8'));
const lines = fs.readFileSync(casesFile, 'utf8').split('\n').filter((l) => l.length > 0);
const out = lines.map((line) => JSON.stringify(Array.from(JSON.parse(line).matchAll(re), (m) => m[0])));
process.stdout.write(out.join('\n') + '\n');
