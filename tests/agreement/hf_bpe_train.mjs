// Byte-level BPE training with Hugging Face tokenizers (the Rust library through the
// @anush008/tokenizers Node-API binding; its regexes run on Oniguruma like the Python package's).
//
// trainBpe: Split(regex, Isolated) then ByteLevel(use_regex false), decoder ByteLevel, no normalizer,
// trained with HF's BpeTrainer on corpusText(). The binding only exposes the default trainer
// (vocab_size 30000), so the merge list is cut at VOCAB_SIZE tokens afterwards: the trainer's merge
// order does not depend on its size limit, so this is what vocab_size=VOCAB_SIZE gives. Byte characters
// the corpus lacks are appended, then the ChatML added tokens, Qwen's way: <|endoftext|>, <|im_start|>,
// <|im_end|> special; <think>, </think> special in qwen2 and not special in qwen35 (as in Qwen3's
// tokenizer.json), so both added-token kinds are covered. The file written is what HF itself saves.
//
// corpusText: text every Debian machine has (/usr/share/common-licenses, word lists and man pages when
// present) plus built-in multilingual lines; ~1 MB.
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';

import { FRAGMENTS } from './tokenizer_cases.mjs';

// Must equal engine/tokenizer/pretokenizer.cpp character for character: our tokenizer.json loader only
// accepts these exact patterns, so a drift fails the test at load time.
export const REGEXES = {
  qwen35: String.raw`(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`,
  qwen2: String.raw`(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`,
};
const VOCAB_SIZE = 3000;  // before the added tokens

const MULTILINGUAL = [
  'The quick brown fox jumps over the lazy dog. DON\'T PANIC, we\'ll be fine; it\'s what they\'ve said.',
  'Café, naïve, façade, résumé, jalapeño, Zürich, Ångström, São Paulo, Dvořák, Łódź, straße.',
  'Ελληνικά: Καλημέρα κόσμε. Русский: Привет, мир! Как дела? Українська: Добрий день.',
  '中文：你好，世界！我们今天学习分词器。日本語：こんにちは、世界。カタカナとひらがな。',
  '한국어: 안녕하세요 세계. 토크나이저를 테스트합니다.',
  'العربية: مرحبا بالعالم. السَّلَامُ عَلَيْكُمْ. עברית: שלום עולם.',
  'हिन्दी: नमस्ते दुनिया। यह एक परीक्षण है। தமிழ்: வணக்கம் உலகம். বাংলা: হ্যালো বিশ্ব।',
  'ไทย: สวัสดีชาวโลก ภาษาไทย. Tiếng Việt: Xin chào thế giới.',
  'Emoji: 👍 👍🏽 👨‍👩‍👧‍👦 🏳️‍🌈 🇺🇸 ❤️ 😂 🤔 🎉 1️⃣',
  'Numbers: 0 1 2 3 4 5 6 7 8 9 10 100 1000 3.14159 2024-01-31 12:30 $100 99% ١٢٣ १२३',
  'def main():\n    for i in range(10):\n        print(f"{i}: {i**2}")\n    return 0\n',
  'int main(int argc, char** argv) {\n\tstd::vector<int> v{1, 2, 3};\n\treturn v.size() > 2 ? 0 : 1;\n}\n',
  '<|im_start|>user\nHello!<|im_end|>\n<|im_start|>assistant\n<think>\nA greeting.\n</think>\n\nHi!<|im_end|>\n',
  'Windows line\r\nendings\r\n\r\nand\ttabs\t\tand  double  spaces   here.\n',
  "IT'S DON'T WE'LL THEY'RE WE'VE I'M HE'D SHE'S it's don't we'll they're we've i'm he'd She'S We'Ll",
  'Cafe\u0301 nai\u0308ve re\u0301sume\u0301 A\u030angstro\u0308m \u0915\u094d\u0937 \u0645\u064e\u0631\u0652',
  'tabs\t\tthen   spaces    and\n\n\nnewlines  \n  mixed \u00a0nbsp\u3000ideographic\u2003em',
];

export function corpusText() {
  const parts = [];
  const seen = new Set();
  const addFile = (f, text) => {
    const real = fs.realpathSync(f);
    if (seen.has(real)) return;
    seen.add(real);
    parts.push(text ?? fs.readFileSync(real, 'utf8'));
  };
  const listDir = (d) => (fs.existsSync(d) ? fs.readdirSync(d).sort().map((n) => path.join(d, n)) : []);
  for (const f of listDir('/usr/share/common-licenses')) if (fs.statSync(f).isFile()) addFile(f);
  for (const f of listDir('/usr/share/dict')) {
    if (fs.statSync(f).isFile()) addFile(f, fs.readFileSync(f, 'utf8').slice(0, 200000));
  }
  // Man pages: roff source, requests and escapes dropped. Bounded so the corpus stays ~1 MB.
  let manBytes = 0;
  for (const f of listDir('/usr/share/man/man1').filter((n) => n.endsWith('.gz'))) {
    if (manBytes > 300000) break;
    try {
      const roff = zlib.gunzipSync(fs.readFileSync(f)).toString('utf8');
      const text = roff.split('\n').filter((l) => !l.startsWith('.') && !l.startsWith("'"))
        .map((l) => l.replace(/\\f[BIRP]|\\[-&e(]|\\\*\(..|\\\*./g, '')).join('\n');
      manBytes += text.length;
      addFile(f, text);
    } catch {
      // A symlink to a missing page or a non-gzip file: skip it.
    }
  }
  // Repeated so that merges span the places where the pre-tokenizers' splits could go wrong (marks after
  // letters, uppercase contractions, whitespace runs before words, emoji sequences): with only byte
  // tokens there, a wrong split would still give the same ids and go unnoticed.
  for (let i = 0; i < 20; ++i) parts.push(MULTILINGUAL.join('\n'));
  const fragments = Object.values(FRAGMENTS).flat();
  for (let i = 0; i < 8; ++i) parts.push(fragments.join(i % 2 ? ' ' : '\n'));
  return { text: parts.join('\n'), files: seen.size };
}

function untrainedJson(regex) {
  const byteLevel = { type: 'ByteLevel', add_prefix_space: false, trim_offsets: false, use_regex: false };
  return {
    version: '1.0', truncation: null, padding: null, added_tokens: [], normalizer: null,
    pre_tokenizer: { type: 'Sequence', pretokenizers: [
      { type: 'Split', pattern: { Regex: regex }, behavior: 'Isolated', invert: false }, byteLevel] },
    post_processor: null, decoder: byteLevel,
    model: { type: 'BPE', dropout: null, unk_token: null, continuing_subword_prefix: null,
      end_of_word_suffix: null, fuse_unk: false, byte_fallback: false, ignore_merges: false, vocab: {},
      merges: [] },
  };
}

// GPT-2's byte -> character table (the ByteLevel alphabet), to add byte tokens the corpus lacks.
function byteLevelAlphabet() {
  const keep = [];
  for (let b = 0x21; b <= 0x7e; ++b) keep.push(b);
  for (let b = 0xa1; b <= 0xac; ++b) keep.push(b);
  for (let b = 0xae; b <= 0xff; ++b) keep.push(b);
  const out = [];
  let n = 0;
  for (let b = 0; b < 256; ++b) out.push(String.fromCodePoint(keep.includes(b) ? b : 256 + n++));
  return out;
}

export function trainBpe(tk, name, corpusPath, outDir) {
  const t = tk.Tokenizer.fromString(JSON.stringify(untrainedJson(REGEXES[name])));
  t.train([corpusPath]);
  const raw = path.join(outDir, 'trained_full.json');
  t.save(raw, false);
  const j = JSON.parse(fs.readFileSync(raw, 'utf8'));
  const vocab = j.model.vocab;
  const merges = j.model.merges.map((m) => (Array.isArray(m) ? m : m.split(' ')));
  // Tokens that no merge produces are the initial alphabet; merge results follow in merge order.
  const produced = new Set(merges.map(([a, b]) => a + b));
  const kept = new Set(Object.keys(vocab).filter((tok) => !produced.has(tok)));
  const keptMerges = [];
  for (const [a, b] of merges) {
    if (kept.size >= VOCAB_SIZE) break;
    kept.add(a + b);
    keptMerges.push([a, b]);
  }
  const entries = Object.entries(vocab).filter(([tok]) => kept.has(tok)).sort((x, y) => x[1] - y[1]);
  entries.forEach(([, id], i) => {
    if (id !== i) throw new Error(`${name}: trained ids are not contiguous at ${i} (got ${id})`);
  });
  const newVocab = Object.fromEntries(entries);
  let next = entries.length;
  for (const ch of byteLevelAlphabet()) if (!(ch in newVocab)) newVocab[ch] = next++;
  const added = [['<|endoftext|>', true], ['<|im_start|>', true], ['<|im_end|>', true],
    ['<think>', name === 'qwen2'], ['</think>', name === 'qwen2']];
  j.model.vocab = newVocab;
  j.model.merges = keptMerges;
  j.added_tokens = added.map(([content, special]) => ({ id: next++, content, single_word: false,
    lstrip: false, rstrip: false, normalized: !special, special }));
  // Round trip through the library so the file is exactly what HF itself writes.
  const final = tk.Tokenizer.fromString(JSON.stringify(j));
  const file = path.join(outDir, 'tokenizer.json');
  final.save(file, true);
  fs.rmSync(raw);
  return { tokenizer: tk.Tokenizer.fromFile(file), vocab: next, merges: keptMerges.length };
}

