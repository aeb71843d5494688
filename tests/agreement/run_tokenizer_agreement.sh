#!/usr/bin/env bash
# tokenizer_agreement_hf: HF-trained byte-level BPEs (qwen35 and qwen2 pre-tokenizers), >= 2000 test
# strings; qwenchat-cli's ids must equal HF's for every string and every decode must give the string back.
# Then the pre-tokenizer code point sweep (hf_pretokenizer_sweep.mjs), then published tokenizer.json files
# and normalizer variants (hf_real_tokenizers.mjs).
#   run_tokenizer_agreement.sh SOURCE_DIR OUT_DIR QWENCHAT_CLI TOKENIZER_ROUNDTRIP PRETOKENIZE_DUMP
set -uo pipefail
SRC=$1
OUT=$2
CLI=$3
ROUNDTRIP=$4
PRETOKENIZE=$5
# shellcheck source=npm_setup.sh
source "$SRC/tests/agreement/npm_setup.sh"
rm -rf "$OUT"
mkdir -p "$OUT"
node "$SRC/tests/agreement/hf_tokenizer_prepare.mjs" "$OUT" 2>&1 | grep -v '^[[:space:]]*$' || exit 1
fails=0
for name in qwen35 qwen2; do
  dir=$OUT/$name
  if ! "$CLI" tokenize --tokenizer "$dir/tokenizer.json" --input "$OUT/cases.jsonl" --special > "$dir/ours.jsonl"; then
    echo "FAIL $name: qwenchat-cli tokenize exited non-zero"
    fails=$((fails + 1))
    continue
  fi
  node "$SRC/tests/agreement/hf_tokenizer_compare.mjs" "$name" "$OUT/cases.jsonl" "$dir/expected.jsonl" \
    "$dir/ours.jsonl" "$dir/tokenizer.json" || fails=$((fails + 1))
  echo "$name round trips:"
  "$ROUNDTRIP" "$dir/tokenizer.json" "$OUT/cases.jsonl" "$dir/expected.jsonl" || fails=$((fails + 1))
done
node "$SRC/tests/agreement/hf_pretokenizer_sweep.mjs" "$OUT" "$PRETOKENIZE" || fails=$((fails + 1))
# Published tokenizer.json files (Qwen3 with its NFC normalizer, Llama 3) and Qwen3's with every other
# normalizer step we implement (hf_real_tokenizers.mjs): the same strings, HF's ids against ours.
if node "$SRC/tests/agreement/hf_real_tokenizers.mjs" "$OUT"; then
  while read -r name; do
    dir=$OUT/real/$name
    if ! "$CLI" tokenize --tokenizer "$dir/tokenizer.json" --input "$OUT/cases.jsonl" --special > "$dir/ours.jsonl"; then
      echo "FAIL $name: qwenchat-cli tokenize exited non-zero"
      fails=$((fails + 1))
      continue
    fi
    node "$SRC/tests/agreement/hf_tokenizer_compare.mjs" "$name" "$OUT/cases.jsonl" "$dir/expected.jsonl" \
      "$dir/ours.jsonl" "$dir/tokenizer.json" || fails=$((fails + 1))
  done < "$OUT/real/names.txt"
else
  echo "FAIL: hf_real_tokenizers.mjs"
  fails=$((fails + 1))
fi
[ $fails -eq 0 ] && echo "tokenizer agreement: all identical" || echo "tokenizer agreement: $fails check(s) failed"
exit $((fails > 0))
