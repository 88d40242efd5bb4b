'use strict';
// The reference side of tinker-bench-tokenizers (benchmarks/tokenizer_throughput.cpp), which runs this
// script once per measurement and parses the one JSON line it prints:
//
//   node tokenizer_reference_bench.js encode   <tokenizer.json> <corpus> <reps>
//       Hugging Face `tokenizers` (Rust through the Node binding), one chunk at a time.
//   node tokenizer_reference_bench.js batch    <tokenizer.json> <corpus> <reps>
//       the same with encodeBatch over all chunks (the Rust core's thread pool).
//   node tokenizer_reference_bench.js tiktoken <encoding name> <corpus> <reps>
//       npm `tiktoken` (WebAssembly), e.g. o200k_base, one chunk at a time, special tokens allowed.
//   node tokenizer_reference_bench.js load     <tokenizer.json>
//       load time and memory of a loaded tokenizer (run in a fresh process).
//
// The corpus is cut into chunks exactly as the C++ side cuts it (see chunk_boundaries there): at the
// last '\n' at or before 64 KiB from the chunk's start, or at 64 KiB moved back to a UTF-8 character
// start when the chunk holds no '\n'. Every timed mode does one untimed warm-up pass, then `reps` timed
// passes, and reports the best; `tokens` and `hash` (FNV-1a over the ids) let the caller check that both
// sides produced the same ids. Packages are found through NODE_PATH.
const fs = require('fs');

const CHUNK_BYTES = 64 * 1024;

function chunksOf(corpusPath) {
  const bytes = fs.readFileSync(corpusPath);
  const chunks = [];
  let start = 0;
  while (start < bytes.length) {
    let end = Math.min(start + CHUNK_BYTES, bytes.length);
    if (end < bytes.length) {
      const newline = bytes.lastIndexOf(0x0a, end - 1);
      if (newline >= start) {
        end = newline + 1;
      } else {
        while (end > start && (bytes[end] & 0xc0) === 0x80) end -= 1;
      }
    }
    chunks.push(bytes.subarray(start, end).toString('utf8'));
    start = end;
  }
  return { chunks, bytes: bytes.length };
}

class IdDigest {
  constructor() {
    this.tokens = 0;
    this.hash = 0x811c9dc5;
  }
  add(ids) {
    for (const id of ids) {
      this.hash = Math.imul(this.hash ^ id, 0x01000193) >>> 0;
    }
    this.tokens += ids.length;
  }
}

async function timedPasses(reps, pass) {
  await pass(new IdDigest());  // warm-up
  let best = { seconds: Infinity };
  for (let i = 0; i < reps; ++i) {
    const digest = new IdDigest();
    const cpuStart = process.cpuUsage();
    const start = process.hrtime.bigint();
    await pass(digest);
    const seconds = Number(process.hrtime.bigint() - start) / 1e9;
    const cpu = process.cpuUsage(cpuStart);
    if (seconds < best.seconds) {
      best = { seconds, cpu_seconds: (cpu.user + cpu.system) / 1e6, tokens: digest.tokens, hash: digest.hash };
    }
  }
  return best;
}

function vmHwmBytes() {
  const status = fs.readFileSync('/proc/self/status', 'utf8');
  const match = /VmHWM:\s+(\d+) kB/.exec(status);
  return match ? Number(match[1]) * 1024 : 0;
}

async function main([mode, source, corpusPath, repsText]) {
  const reps = Number(repsText || '3');
  if (mode === 'load') {
    const { Tokenizer } = require('tokenizers');
    const rssBefore = process.memoryUsage().rss;
    const start = process.hrtime.bigint();
    const tokenizer = Tokenizer.fromFile(source);
    const seconds = Number(process.hrtime.bigint() - start) / 1e9;
    const rssAfter = process.memoryUsage().rss;
    if (!tokenizer) throw new Error('no tokenizer');
    return { seconds, rss_before: rssBefore, rss_after: rssAfter, hwm: vmHwmBytes() };
  }
  const { chunks, bytes } = chunksOf(corpusPath);
  if (mode === 'encode' || mode === 'batch') {
    const { Tokenizer } = require('tokenizers');
    const tokenizer = Tokenizer.fromFile(source);
    const options = { addSpecialTokens: false };
    const pass = mode === 'encode'
      ? async (digest) => {
        for (const chunk of chunks) digest.add((await tokenizer.encode(chunk, null, options)).getIds());
      }
      : async (digest) => {
        for (const encoding of await tokenizer.encodeBatch(chunks, options)) digest.add(encoding.getIds());
      };
    return { bytes, ...(await timedPasses(reps, pass)) };
  }
  if (mode === 'tiktoken') {
    const { get_encoding } = require('tiktoken');
    const encoding = get_encoding(source);
    try {
      const pass = async (digest) => {
        for (const chunk of chunks) digest.add(encoding.encode(chunk, 'all'));
      };
      return { bytes, ...(await timedPasses(reps, pass)) };
    } finally {
      encoding.free();
    }
  }
  throw new Error(`unknown mode '${mode}' (encode, batch, tiktoken or load)`);
}

main(process.argv.slice(2)).then(
  (result) => process.stdout.write(JSON.stringify(result) + '\n'),
  (error) => {
    process.stderr.write(`tokenizer_reference_bench.js: ${error && error.message ? error.message : error}\n`);
    process.exitCode = 1;
  });
