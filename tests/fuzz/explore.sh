#!/usr/bin/env bash
# Open-ended fuzzing, run by hand (CI runs only the fixed replay + bounded tests, tests/fuzz/CMakeLists.txt).
#   tests/fuzz/explore.sh [SECONDS_PER_TARGET=600] [TARGET...]     targets: gguf safetensors tokenizer_json spm_model import reading
# Builds build-fuzz (clang 14, ASan + UBSan + libFuzzer) if needed, fuzzes each target from a random seed
# starting from the committed corpus and the generated seeds, then merges what raised coverage into
# tests/fuzz/corpus/<target>/ (-merge=1 keeps only inputs that add coverage, so the folder stays small).
# A crash stops that target and leaves build-fuzz/tests/fuzz/<target>-crash-*: fix it, then copy the
# input into tests/fuzz/corpus/<target>/ (the replay test then guards it) and add a unit test for the cause.
# Commit the corpus changes: CI replays them.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
SECONDS_PER_TARGET=${1:-600}
shift || true
TARGETS=("$@")
[ ${#TARGETS[@]} -gt 0 ] || TARGETS=(gguf safetensors tokenizer_json spm_model import reading)
BUILD=${QWENCHAT_FUZZ_BUILD:-build-fuzz}
if [ ! -f "$BUILD/CMakeCache.txt" ]; then
  CC=clang-14 CXX=clang++-14 cmake -S . -B "$BUILD" -G Ninja -DQWENCHAT_CUDA=OFF -DQWENCHAT_GUI=OFF \
    -DQWENCHAT_FUZZ=ON -DQWENCHAT_SANITIZE=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo > /dev/null
fi
ninja -C "$BUILD" gguf_fuzz gguf_fuzz_seeds safetensors_fuzz safetensors_fuzz_seeds tokenizer_json_fuzz \
  spm_model_fuzz tokenizer_fuzz_seeds import_fuzz reading_fuzz > /dev/null
F=$BUILD/tests/fuzz
"$F/gguf_fuzz_seeds" "$F/gguf_seeds" "$F/gguf_corpus"
"$F/safetensors_fuzz_seeds" "$F/safetensors_seeds" "$F/safetensors_corpus"
"$F/tokenizer_fuzz_seeds" "$F/tokenizer_json_seeds" "$F/tokenizer_json_corpus" "$F/spm_model_seeds" "$F/spm_model_corpus"
mkdir -p "$F/import_seeds" tests/fuzz/corpus/import "$F/reading_seeds"
tail -n +2 tests/golden/export/branchy.all.json > "$F/import_seeds/branchy.json"
tail -n +2 tests/golden/export/branchy.current.json > "$F/import_seeds/current.json"

status=0
for t in "${TARGETS[@]}"; do
  extra=()
  [ "$t" = safetensors ] || [ "$t" = reading ] && extra=(-max_len=4096)
  work=$(mktemp -d)
  echo "explore: $t for ${SECONDS_PER_TARGET}s"
  if ! "$F/${t}_fuzz" -max_total_time="$SECONDS_PER_TARGET" -rss_limit_mb=2048 -timeout=10 \
      -dict="tests/fuzz/$t.dict" -artifact_prefix="$F/$t-" "${extra[@]}" \
      "$work" "tests/fuzz/corpus/$t" "$F/${t}_seeds" > "$F/$t-explore.log" 2>&1; then
    echo "explore: $t FOUND A FAILURE, see $F/$t-explore.log and $F/$t-crash-*"; status=1
  fi
  before=$(ls "tests/fuzz/corpus/$t" | wc -l)
  "$F/${t}_fuzz" -merge=1 "${extra[@]}" "tests/fuzz/corpus/$t" "$work" > "$F/$t-merge.log" 2>&1
  echo "explore: $t corpus $before -> $(ls "tests/fuzz/corpus/$t" | wc -l) entries"
  rm -rf "$work"
done
exit $status
