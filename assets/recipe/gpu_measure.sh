#!/usr/bin/env bash
# The device call after gpu_train.sh (chained on the warm machine, or on a fresh one with the converted
# assets/qwenchat-default.gguf in the tree, which then travels): builds what is missing, runs the default
# model's tests on the CUDA backend (recording, then re-checking, tests/golden/default_model/greedy_cuda.json),
# measures MTP acceptance and decode speed-up on the GPU (evaluate.py --backend cuda), then the GPU suites
# of tools/device/gpu_run.sh with the time that is left.
#
#   run  carry: [".device/root"]  timeout_s: 600  command: assets/recipe/gpu_measure.sh
#
# $OUT: greedy_cuda.json, metrics-h200.json, logs.tgz (every log), summary.txt. The table is printed last.
set -u -o pipefail
ROOT=$(pwd)
OUT=${OUT:-$ROOT/device_out}
KEEP=$ROOT/build-device-keep
BUILD=$ROOT/build-device
LOGS=$KEEP/logs2
DEADLINE=$(( $(date +%s) + ${MEASURE_SECONDS:-560} ))
P=$ROOT/.device/root/usr
export CMAKE_PREFIX_PATH="$P" LD_LIBRARY_PATH="$P/lib:$P/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export PKG_CONFIG_PATH="$P/lib/pkgconfig:$P/lib/x86_64-linux-gnu/pkgconfig:$P/share/pkgconfig"
export PATH="/usr/local/cuda/bin:$PATH"
rm -rf "$LOGS"
mkdir -p "$OUT" "$LOGS"
SUMMARY=()
left() { echo $(( DEADLINE - $(date +%s) )); }
note() { SUMMARY+=("$*"); echo "[measure $(date +%H:%M:%S)] $*"; }
finish() {
  tar czf "$OUT/logs.tgz" -C "$LOGS" .
  printf '%s\n' "${SUMMARY[@]}" > "$OUT/summary.txt"
  echo; echo "==== gpu_measure summary ===="; printf '  %s\n' "${SUMMARY[@]}"
}
trap finish EXIT

# 0. The build: incremental on the machine gpu_train.sh left warm, whole on a fresh one (~2 min, 16 cores).
cmake -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_CUDA_ARCHITECTURES=90 -DQWENCHAT_GUI=OFF -DQWENCHAT_CUDA=ON \
  -DQWENCHAT_PTXAS_VERBOSE=ON -DQWENCHAT_WERROR=ON > "$LOGS/configure.log" 2>&1 || { note "configure FAILED"; tail -5 "$LOGS/configure.log"; exit 1; }
# What the default model's measurements need first; the GPU suites' binaries are built in step 4, if time allows.
ninja -C "$BUILD" qwenchat-cli qwenchat-convert qwenchat_unit_tests > "$LOGS/build.log" 2>&1 || { note "build FAILED"; grep -E "error" "$LOGS/build.log" | head; exit 1; }
note "build done at $(( ${MEASURE_SECONDS:-560} - $(left) )) s"
CLI=$(find "$BUILD" -name qwenchat-cli -type f | head -1)
CONVERT=$(find "$BUILD" -name qwenchat-convert -type f | head -1)
UNIT=$(find "$BUILD" -name qwenchat_unit_tests -type f | head -1)

# 1. The model: the GGUF that travelled with the tree (converted here by finish.sh), else the checkpoint of
# gpu_train.sh converted now with the same converter and arguments.
if [[ ! -f assets/qwenchat-default.gguf ]]; then
  [[ -f $KEEP/ckpt/config.json ]] || { note "neither assets/qwenchat-default.gguf nor a checkpoint"; exit 1; }
  CK=$KEEP/ck_tok
  rm -rf "$CK" && mkdir -p "$CK" && cp "$KEEP"/ckpt/* "$CK/"
  cp assets/recipe/tokenizer.model assets/recipe/tokenizer_config.json assets/recipe/chat_template.jinja "$CK/"
  "$CONVERT" "$CK" assets/qwenchat-default.gguf --outtype q8_0 --name qwenchat-default > "$LOGS/convert.log" 2>&1 ||
    { note "convert FAILED: $(tail -1 "$LOGS/convert.log")"; exit 1; }
fi
note "gguf $(stat -c %s assets/qwenchat-default.gguf) bytes sha256 $(sha256sum assets/qwenchat-default.gguf | cut -c1-16)"
"$CLI" info --model assets/qwenchat-default.gguf > "$LOGS/info.log" 2>&1

# 2. The default model on the CUDA backend: record the golden streams, then check them and everything else.
QWENCHAT_UPDATE_GOLDEN=1 timeout 150 "$UNIT" --gtest_color=no \
  --gtest_filter='DefaultModelCuda.GoldenGreedyStreamsPerVariantClass' > "$LOGS/golden_record.log" 2>&1
note "golden record rc=$?"
grep "^\[ golden" "$LOGS/golden_record.log"
cp tests/golden/default_model/greedy_cuda.json "$OUT/" 2>/dev/null
timeout 200 "$UNIT" --gtest_color=no --gtest_filter='DefaultModelCuda.*:DefaultModel.AnswersArithmeticAndDefinitions:DefaultModel.MtpIsExactAndItsDraftsAreAccepted' \
  > "$LOGS/default_model_tests.log" 2>&1
note "default-model tests rc=$? ($(grep -E '^\[  PASSED|^\[  FAILED  \] [0-9]' "$LOGS/default_model_tests.log" | tr '\n' ' '))"
grep -E "^\[ mtp|^\[  FAILED  \] [A-Za-z]" "$LOGS/default_model_tests.log"
grep -A5 -m6 "Failure$" "$LOGS/default_model_tests.log" | cut -c1-300

# 3. MTP on the GPU: acceptance on the model's own greedy replies, tokens/s with and without.
if (( $(left) > 60 )); then
  timeout $(( $(left) - 40 )) python3 assets/recipe/evaluate.py --cli "$CLI" --model assets/qwenchat-default.gguf \
    --data assets/recipe/eval --out "$OUT/metrics-h200.json" --backend cuda --ppl-windows 0 --limit 0 \
    > "$LOGS/evaluate_cuda.log" 2>&1
  note "evaluate cuda rc=$?: $(python3 -c "import json;m=json.load(open('$OUT/metrics-h200.json'))['mtp'];print(' '.join(f\"{k} acc={['%.3f'%a for a in v['acceptance_per_position']]} speedup={v['speedup']:.3f} same={v['greedy_text_identical']}\" for k,v in m.items()))" 2>&1 | tail -1)"
fi

# 4. The GPU suites, with what is left (kernel tests, CUDA backend tests, the worker on CUDA).
if (( $(left) > 150 )); then
  OUT=$LOGS QWENCHAT_DEVICE_PREFIX=$P QWENCHAT_GPU_STEPS="build tests backend worker" \
    timeout $(( $(left) - 15 )) tools/device/gpu_run.sh > "$LOGS/gpu_run_console.txt" 2>&1
  note "gpu_run rc=$?"
  sed -n '/==== gpu_run summary/,$p' "$LOGS/gpu_run_console.txt"
  grep -E "^\[  FAILED  \] [A-Za-z]|PASSED|tests from .* ran" "$LOGS/gpu_run_console.txt" | head -20
fi
