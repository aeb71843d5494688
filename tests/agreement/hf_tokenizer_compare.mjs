// Compares our ids with Hugging Face's, line by line, and prints "N/N identical".
//
//   node hf_tokenizer_compare.mjs NAME CASES.jsonl EXPECTED.jsonl OURS.jsonl TOKENIZER.json
//
// For the first mismatches it shows the string and both token sequences as token texts (from the
// tokenizer.json vocabulary), which is usually enough to see the pre-tokenizer split that differs.
// Exit status 1 unless every line is identical.
import fs from 'node:fs';

const [name, casesPath, expectedPath, oursPath, tokenizerPath] = process.argv.slice(2);
const lines = (p) => fs.readFileSync(p, 'utf8').split('\n').filter((l) => l.length > 0);
const cases = lines(casesPath).map((l) => JSON.parse(l));
const expected = lines(expectedPath);
const ours = lines(oursPath);

const tj = JSON.parse(fs.readFileSync(tokenizerPath, 'utf8'));
const idToText = new Map(Object.entries(tj.model.vocab).map(([t, id]) => [id, t]));
for (const a of tj.added_tokens) idToText.set(a.id, a.content);
const show = (ids) => ids.map((id) => `${id}:${JSON.stringify(idToText.get(id) ?? '?')}`).join(' ');
const clip = (s) => (s.length > 300 ? `${s.slice(0, 300)}... (${s.length} chars)` : s);

let same = 0;
let shown = 0;
const problems = [];
if (expected.length !== cases.length) problems.push(`${expected.length} expected lines for ${cases.length} cases`);
if (ours.length !== cases.length) problems.push(`${ours.length} lines from qwenchat-cli for ${cases.length} cases`);
for (let i = 0; i < cases.length; ++i) {
  const e = expected[i];
  const o = ours[i];
  if (e !== undefined && o !== undefined && JSON.stringify(JSON.parse(o)) === JSON.stringify(JSON.parse(e))) {
    ++same;
    continue;
  }
  if (shown++ < 15) {
    console.log(`--- ${name} case ${i + 1}: ${clip(JSON.stringify(cases[i]))}`);
    if (e === undefined || o === undefined) {
      console.log(`  ${e === undefined ? 'HF' : 'our'} line is missing`);
      continue;
    }
    // From a few tokens before the first difference.
    const he = JSON.parse(e);
    const ho = JSON.parse(o);
    let k = 0;
    while (k < he.length && k < ho.length && he[k] === ho[k]) ++k;
    const from = Math.max(0, k - 3);
    console.log(`  first difference at token ${k}; from token ${from}:`);
    console.log(`  HF:   ${clip(show(he.slice(from, k + 8)))}`);
    console.log(`  ours: ${clip(show(ho.slice(from, k + 8)))}`);
  }
}
for (const p of problems) console.log(`FAIL ${name}: ${p}`);
console.log(`${name}: ${same}/${cases.length} identical`);
process.exit(same === cases.length && problems.length === 0 ? 0 : 1);
