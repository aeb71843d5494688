// Every code point through both pre-tokenizers: Hugging Face's Split (Oniguruma) and ours (PCRE2).
//
//   node hf_pretokenizer_sweep.mjs OUT_DIR PRETOKENIZE_DUMP
//
// Ids alone can hide a wrong split (when no merge crosses it), so this compares the splits themselves.
// For each code point c one probe string puts c next to letters, punctuation, spaces, digits,
// apostrophes (the case-insensitive contractions) and line breaks; HF's pre-token byte lengths must
// equal ours. Every scalar value of planes 0-3 and 14 (all assigned characters live there) is probed,
// and one in 64 of planes 4-13 (unassigned in every Unicode version so far) and 15-16 (private use):
// those ranges are uniform in both engines, and HF's preTokenizeString costs ~4 us per pre-token, so
// the full 1.1M would take minutes. A code point whose probe differs is allowed only if PCRE2's Unicode tables
// call it unassigned (\p{Cn}): Debian 12's PCRE2 10.42 knows Unicode 14, the Oniguruma inside HF
// tokenizers a later version, and characters assigned since (a few new scripts and digits, CJK
// extensions H and I) get other classes there. Which Unicode version applies depends on the HF release
// anyway, so there is no single right answer for them; the count is printed.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

import { REGEXES } from './hf_bpe_train.mjs';
import { hfTokenizers } from './npm_modules.mjs';

const probe = (c) => `a${c}b!${c}! ${c} 1${c}2'${c} '${c}${c} '${c}e 'r${c} 'v${c}  ${c}\n${c}\r\n${c}`;

function codePoints() {
  const out = [];
  for (let c = 0; c <= 0x10ffff; ++c) {
    if (c >= 0xd800 && c <= 0xdfff) continue;
    const plane = c >> 16;
    if (plane <= 3 || plane === 14 || c % 64 === 0) out.push(c);
  }
  return out;
}

function hfSplit(tk, regex) {
  const byteLevel = { type: 'ByteLevel', add_prefix_space: false, trim_offsets: false, use_regex: false };
  const pre = tk.Tokenizer.fromString(JSON.stringify({
    version: '1.0', added_tokens: [], normalizer: null, post_processor: null, decoder: null,
    pre_tokenizer: { type: 'Sequence', pretokenizers: [
      { type: 'Split', pattern: { Regex: regex }, behavior: 'Isolated', invert: false }, byteLevel] },
    model: { type: 'BPE', vocab: {}, merges: [] },
  })).getPreTokenizer();
  // Byte-level pieces have one character per byte, so a piece's length is its byte length.
  return (s) => JSON.stringify(pre.preTokenizeString(s).map(([piece]) => piece.length));
}

// Runs our pre-tokenizer on `strings`, one result line per string.
function oursSplit(dumpTool, name, strings, file) {
  fs.writeFileSync(file, strings.map((x) => JSON.stringify(x)).join('\n') + '\n');
  const out = execFileSync(dumpTool, [name, file], { maxBuffer: 1 << 30 }).toString().split('\n');
  fs.rmSync(file);
  return out;
}

function main() {
  const [outDir, dumpTool] = process.argv.slice(2);
  if (!outDir || !dumpTool) throw new Error('usage: node hf_pretokenizer_sweep.mjs OUT_DIR PRETOKENIZE_DUMP');
  fs.mkdirSync(outDir, { recursive: true });
  const tk = hfTokenizers();
  const cps = codePoints();
  // Probes go in batches of BATCH code points per string (1/BATCH of the per-call overhead on both
  // sides); a batch that differs is redone one probe per code point to name them.
  const BATCH = 64;
  const batches = [];
  for (let i = 0; i < cps.length; i += BATCH) {
    batches.push(cps.slice(i, i + BATCH).map((c) => probe(String.fromCodePoint(c))).join(''));  // join: no O(n^2) +=
  }
  const tmp = path.join(outDir, 'sweep_probes.jsonl');
  const hex = (c) => `U+${c.toString(16).toUpperCase().padStart(4, '0')}`;
  let failed = false;
  for (const [name, regex] of Object.entries(REGEXES)) {
    const hf = hfSplit(tk, regex);
    const oursBatches = oursSplit(dumpTool, name, batches, tmp);
    const suspects = [];
    batches.forEach((b, k) => {
      if (hf(b) !== oursBatches[k]) suspects.push(...cps.slice(k * BATCH, (k + 1) * BATCH));
    });
    const probes = suspects.map((c) => probe(String.fromCodePoint(c)));
    const oursSingle = suspects.length ? oursSplit(dumpTool, name, probes, tmp) : [];
    const differ = suspects.filter((c, k) => hf(probes[k]) !== oursSingle[k]);
    // Which of the differing code points PCRE2 does not know.
    const cn = new Set();
    if (differ.length) {
      fs.writeFileSync(tmp, differ.map((c) => JSON.stringify(String.fromCodePoint(c))).join('\n') + '\n');
      const flags = execFileSync(dumpTool, ['--unassigned', tmp]).toString().split('\n');
      differ.forEach((c, k) => flags[k] === '1' && cn.add(c));
      fs.rmSync(tmp);
    }
    const assigned = differ.filter((c) => !cn.has(c));
    for (const c of assigned.slice(0, 20)) {
      const k = suspects.indexOf(c);
      console.log(`--- ${name} ${hex(c)}: probe ${JSON.stringify(probes[k])}`);
      console.log(`  HF:   ${hf(probes[k])}`);
      console.log(`  ours: ${oursSingle[k]}`);
    }
    const examples = [...cn].slice(0, 4).map(hex).join(' ');
    console.log(`${name} pre-tokenizer sweep: ${cps.length - differ.length}/${cps.length} code points identical; ` +
      `${cn.size} differ that PCRE2's Unicode tables leave unassigned${cn.size ? ` (e.g. ${examples})` : ''}; ` +
      `${assigned.length} assigned code points differ`);
    if (assigned.length > 0) failed = true;
  }
  if (failed) process.exit(1);
}

try {
  main();
} catch (e) {
  console.error(`FAIL: ${e.stack || e}`);
  process.exit(1);
}
