// Ground truth for the tokenizer agreement test, from Hugging Face tokenizers.
//
//   node hf_tokenizer_prepare.mjs OUT_DIR
//
// 1. The training corpus (hf_bpe_train.mjs) -> OUT_DIR/corpus.txt.
// 2. For each pre-tokenizer (qwen35, qwen2) a byte-level BPE trained by HF (hf_bpe_train.mjs)
//    -> OUT_DIR/<name>/tokenizer.json.
// 3. The test strings (tokenizer_cases.mjs) -> OUT_DIR/cases.jsonl, one JSON string per line, and HF's
//    ids for each -> OUT_DIR/<name>/expected.jsonl, one JSON array per line. HF always splits added
//    tokens out of the text before pre-tokenizing, which is what `tokenize --special` does. HF's own
//    decode(encode(s)) == s is counted too (a sanity check of the reference).
import fs from 'node:fs';
import path from 'node:path';

import { corpusText, REGEXES, trainBpe } from './hf_bpe_train.mjs';
import { makeCases } from './tokenizer_cases.mjs';
import { hfTokenizers, packageVersion } from './npm_modules.mjs';

async function main() {
  const outDir = process.argv[2];
  if (!outDir) throw new Error('usage: node hf_tokenizer_prepare.mjs OUT_DIR');
  fs.mkdirSync(outDir, { recursive: true });
  const tk = hfTokenizers();
  console.log(`reference: @anush008/tokenizers ${packageVersion('@anush008/tokenizers')} (HF tokenizers, Rust)`);
  const corpus = corpusText();
  const corpusPath = path.join(outDir, 'corpus.txt');
  fs.writeFileSync(corpusPath, corpus.text);
  console.log(`corpus: ${corpus.files} files, ${corpus.text.length} UTF-16 units`);

  const cases = makeCases();
  fs.writeFileSync(path.join(outDir, 'cases.jsonl'), cases.map((s) => JSON.stringify(s)).join('\n') + '\n');
  console.log(`cases: ${cases.length}`);

  for (const name of Object.keys(REGEXES)) {
    const dir = path.join(outDir, name);
    fs.mkdirSync(dir, { recursive: true });
    const { tokenizer, vocab, merges } = trainBpe(tk, name, corpusPath, dir);
    const lines = [];
    let hfRoundTrip = 0;
    for (const s of cases) {
      const ids = (await tokenizer.encode(s, null, { addSpecialTokens: false })).getIds();
      lines.push(JSON.stringify(ids));
      if ((await tokenizer.decode(ids, false)) === s) ++hfRoundTrip;
    }
    fs.writeFileSync(path.join(dir, 'expected.jsonl'), lines.join('\n') + '\n');
    console.log(`${name}: vocab ${vocab} (${merges} merges); HF decode(encode(s)) == s for ` +
      `${hfRoundTrip}/${cases.length}`);
    if (hfRoundTrip !== cases.length) throw new Error(`${name}: the reference does not round-trip its own ids`);
  }
}

main().catch((e) => {
  console.error(`FAIL: ${e.stack || e}`);
  process.exit(1);
});
