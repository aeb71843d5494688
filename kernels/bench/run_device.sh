#!/usr/bin/env bash
# One device call for the GEMV work (docs/KERNELS.md): the GPU tests, then qwenchat-gemv-bench; logs under
# $OUT, the bench's summary table last. kernels/ is configured standalone and built there
# (QWENCHAT_DEVICE_PREFIX: a prefix holding GoogleTest).
#
#   bash kernels/bench/run_device.sh          # from the tree's root on the GPU machine
#
# Prebuilt binaries (no build on the device, for a short budget) travel with tools/device/short_call.sh, the
# one home of that: the two binaries this script ran prebuilt no longer fit the transfer together.
# Environment: OUT, QWENCHAT_DEVICE_PREFIX, T_TESTS (s, default 50), T_BENCH (s, default 175),
# BENCH_BUDGET (s, default 140), BENCH_ARGS (extra bench arguments).
set -u -o pipefail
ROOT=$(pwd)
OUT=${OUT:-$ROOT/device_out}
mkdir -p "$OUT"
BIN=/tmp/qwenchat-bin
mkdir -p "$BIN"
log() { echo "[run_device $(date +%H:%M:%S)] $*"; }

nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.draw,temperature.gpu \
  --format=csv > "$OUT/device_info.txt" 2>&1
head -2 "$OUT/device_info.txt"

export PATH=/usr/local/cuda/bin:$PATH
[[ -n "${QWENCHAT_DEVICE_PREFIX:-}" ]] && export CMAKE_PREFIX_PATH=$QWENCHAT_DEVICE_PREFIX
log "building kernels/ standalone"
if ! { cmake -S kernels -B /tmp/qwenchat-build -G Ninja -DCMAKE_CUDA_ARCHITECTURES=90 -DQWENCHAT_PTXAS_VERBOSE=ON \
  > "$OUT/build.log" 2>&1 &&
  ninja -C /tmp/qwenchat-build -j"$(nproc)" qwenchat-gemv-bench qwenchat_gpu_tests >> "$OUT/build.log" 2>&1; }; then
  tail -30 "$OUT/build.log"
  exit 1
fi
cp /tmp/qwenchat-build/qwenchat-gemv-bench /tmp/qwenchat-build/tests_gpu/qwenchat_gpu_tests "$BIN/"

log "tests"
timeout "${T_TESTS:-50}" "$BIN/qwenchat_gpu_tests" --gtest_color=no > "$OUT/gpu_tests.log" 2>&1
trc=$?
grep -E "^\[==========\] .* ran|^\[  PASSED  \]" "$OUT/gpu_tests.log"
grep -E "^\[  FAILED  \] [A-Za-z]" "$OUT/gpu_tests.log" | sed 's/ ([0-9]* ms)//' | sort -u | head -20
grep -A6 -m6 "Failure$" "$OUT/gpu_tests.log" | cut -c1-400 | head -50
[[ $trc == 124 ]] && log "tests TIMED OUT"

# A fault in a kernel poisons the CUDA context of the whole process: if the tests saw one, the bench leaves
# engine 2 (the only engine with asynchronous copies and barriers) out rather than dying at its first launch.
if grep -qiE "launch failure|illegal (instruction|address)|unspecified|trap" "$OUT/gpu_tests.log"; then
  log "device fault in the tests: bench without engine 2"
  BENCH_ARGS="${BENCH_ARGS:-} --engines 1,3"
fi
log "bench"
# shellcheck disable=SC2086
timeout "${T_BENCH:-175}" "$BIN/qwenchat-gemv-bench" --json "$OUT/gemv_bench.json" --budget "${BENCH_BUDGET:-140}" \
  ${BENCH_ARGS:-} > "$OUT/gemv_bench.log" 2>&1
brc=$?
if [[ $brc != 0 ]]; then
  log "bench exited with $brc; last lines:"
  tail -5 "$OUT/gemv_bench.log"
fi
echo
sed -n '/==== summary/,$p' "$OUT/gemv_bench.log"
grep -E "^read ceiling|^device-to-device" "$OUT/gemv_bench.log" | head -6
log "tests rc=$trc bench rc=$brc"
