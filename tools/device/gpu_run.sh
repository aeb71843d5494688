#!/usr/bin/env bash
# One call on the GPU machine, from the repository root: configure, build the GPU test binary and the GEMV
# benchmark, run both, keep every log under $OUT, print a short summary last.
#
#   tools/device/gpu_run.sh                 # everything
#   QWENCHAT_DEVICE_PREFIX=/path/prefix tools/device/gpu_run.sh
#   QWENCHAT_GPU_STEPS="build tests" tools/device/gpu_run.sh
#
# Environment:
#   OUT                      where logs go (the device tool sets it; default ./device_out)
#   QWENCHAT_DEVICE_PREFIX   prefix holding the engine's Debian libraries (pcre2, sentencepiece, nlohmann
#                            json, gtest): added to CMAKE_PREFIX_PATH, PKG_CONFIG_PATH, LD_LIBRARY_PATH
#   QWENCHAT_GPU_STEPS       steps to run (default: "info build tests bench backend worker decode"; also
#                            reuse: state reuse + prefill bench, gemm: the prompt path's GEMM bench,
#                            kquant: the block formats' tests and benchmarks, #16: kqtests + kqbench)
#   QWENCHAT_BENCH_ARGS      extra arguments for qwenchat-gemv-bench (e.g. --quick)
#   QWENCHAT_DECODE_ARGS     extra arguments for qwenchat-bench (e.g. --quick, --variants tile,hu)
#   QWENCHAT_DEVICE_JOBS     parallel build jobs (default: all cores; fewer while the GPU trains)
#   QWENCHAT_DECODE_BUDGET   seconds qwenchat-bench may measure before skipping the rest (default 170)
# Steps: info, build, tests (kernel GPU tests), bench (GEMV bench), backend (the CUDA backend's tests and
# `qwenchat-cli generate --backend cuda` end to end), worker (the app's worker thread on the CUDA backend),
# decode (qwenchat-bench: whole-token decode), reuse (state reuse tests, prefill and time-to-first-token
# bench).
# If the full project does not configure (missing libraries), the kernels directory is configured on its
# own (kernels/CMakeLists.txt supports that): the bench always builds, the tests when GoogleTest is found.
#
# To add a step: write a function step_NAME that returns non-zero on failure, add NAME to the default list.
set -u -o pipefail

ROOT=$(pwd)
OUT=${OUT:-$ROOT/device_out}
mkdir -p "$OUT"
BUILD=${QWENCHAT_DEVICE_BUILD:-$ROOT/build-device}
JOBS=${QWENCHAT_DEVICE_JOBS:-$(nproc 2>/dev/null || echo 8)}
STEPS=${QWENCHAT_GPU_STEPS:-"info build tests bench backend worker decode"}
SUMMARY=()
TESTS_BIN=""
BENCH_BIN=""
DECODE_BIN=""
CLI_BIN=""
MKMODEL_BIN=""
UNIT_BIN=""

# shellcheck source-path=SCRIPTDIR source=prefix_env.sh
source "$(dirname "${BASH_SOURCE[0]}")/prefix_env.sh"
export PATH="/usr/local/cuda/bin:$PATH"

log() { echo "[gpu_run $(date +%H:%M:%S)] $*"; }

step_info() {
  {
    nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.draw,temperature.gpu,memory.used,memory.total --format=csv
    nvidia-smi -q -d CLOCK,PERFORMANCE 2>/dev/null | head -60
    nvcc --version | tail -2
    cmake --version | head -1
  } > "$OUT/device_info.txt" 2>&1
  head -2 "$OUT/device_info.txt"
  return 0
}

step_build() {
  local common=(-G Ninja -DCMAKE_CUDA_ARCHITECTURES=90 -DQWENCHAT_GUI=OFF -DQWENCHAT_CUDA=ON -DQWENCHAT_PTXAS_VERBOSE=ON -DQWENCHAT_WERROR=ON)
  if cmake -S "$ROOT" -B "$BUILD" "${common[@]}" > "$OUT/configure.log" 2>&1; then
    log "configured the full project in $BUILD"
  else
    log "full configure failed (see configure.log); configuring kernels/ standalone"
    BUILD="$BUILD-kernels"
    cmake -S "$ROOT/kernels" -B "$BUILD" "${common[@]}" >> "$OUT/configure.log" 2>&1 || return 1
  fi
  local targets=(qwenchat-gemv-bench qwenchat-gemm-bench)
  local t
  for t in qwenchat_gpu_tests qwenchat-bench qwenchat-cli qwenchat-mkmodel qwenchat-convert qwenchat_unit_tests; do
    if grep -q "build $t:\|build [^:]*/$t:" "$BUILD/build.ninja" 2>/dev/null; then targets+=("$t"); fi
  done
  if ! ninja -C "$BUILD" -k 0 -j"$JOBS" "${targets[@]}" > "$OUT/build.log" 2>&1; then
    # A newer compiler than the project's (Debian 12) may warn where GCC 12 does not: keep every error of
    # this pass in the log, then build on without -Werror so the measurements still run.
    log "build failed (errors below, all of them in build.log); retrying with QWENCHAT_WERROR=OFF, -k 0"
    grep -E "error:|FAILED" "$OUT/build.log" | grep -v "ptxas" | cut -c1-240 | sort -u | head -30
    mv "$OUT/build.log" "$OUT/build_werror.log"
    cmake -S "$ROOT" -B "$BUILD" -DQWENCHAT_WERROR=OFF >> "$OUT/configure.log" 2>&1
    ninja -C "$BUILD" -k 0 -j"$JOBS" "${targets[@]}" > "$OUT/build.log" 2>&1 ||
      { grep -E "error:|FAILED" "$OUT/build.log" | grep -v ptxas | cut -c1-240 | head -30; }
  fi
  # Register/spill report of the kernels (from -Xptxas -v) for the record.
  python3 "$ROOT/tools/device/ptxas_summary.py" "$OUT/build.log" > "$OUT/ptxas.txt" 2>/dev/null ||
    grep -E "Compiling entry|registers|spill" "$OUT/build.log" > "$OUT/ptxas.txt" || true
  TESTS_BIN=$(find "$BUILD" -name qwenchat_gpu_tests -type f -perm -u+x | head -1)
  BENCH_BIN=$(find "$BUILD" -name qwenchat-gemv-bench -type f -perm -u+x | head -1)
  DECODE_BIN=$(find "$BUILD" -name qwenchat-bench -type f -perm -u+x | head -1)
  CLI_BIN=$(find "$BUILD" -name qwenchat-cli -type f -perm -u+x | head -1)
  MKMODEL_BIN=$(find "$BUILD" -name qwenchat-mkmodel -type f -perm -u+x | head -1)
  UNIT_BIN=$(find "$BUILD" -name qwenchat_unit_tests -type f -perm -u+x | head -1)
  log "tests: ${TESTS_BIN:-not built}; gemv bench: ${BENCH_BIN:-not built}; decode bench: ${DECODE_BIN:-not built}; cli: ${CLI_BIN:-not built}"
  [[ -n "$BENCH_BIN" || -n "$TESTS_BIN" || -n "$DECODE_BIN" ]]
}

step_tests() {
  [[ -n "$TESTS_BIN" ]] || { log "no test binary (GoogleTest missing?)"; return 1; }
  timeout 240 "$TESTS_BIN" --gtest_color=no --gtest_filter='-CudaBackend*' > "$OUT/gpu_tests.log" 2>&1
  local rc=$?
  grep -E "^\[ device   \]|^\[==========\] .* ran|^\[  PASSED  \]|^\[  SKIPPED \] [0-9]+ test" "$OUT/gpu_tests.log"
  grep -E "^\[  FAILED  \] [A-Za-z]" "$OUT/gpu_tests.log" | sed 's/ ([0-9]* ms)//' | sort -u | head -30
  # The first failure messages, short.
  grep -A4 -m4 "Failure$" "$OUT/gpu_tests.log" | cut -c1-300 | head -40
  [[ $rc -eq 124 ]] && log "tests TIMED OUT after 240 s"
  return $rc
}

step_bench() {
  [[ -n "$BENCH_BIN" ]] || return 1
  # shellcheck disable=SC2086
  timeout 240 "$BENCH_BIN" --json "$OUT/gemv_bench.json" --budget 170 ${QWENCHAT_BENCH_ARGS:-} > "$OUT/gemv_bench.log" 2>&1
  local rc=$?
  [[ $rc -eq 124 ]] && log "bench TIMED OUT after 240 s (partial log kept)"
  return $rc
}

# The prompt path's GEMMs (kernels/bench/gemm_bench.cu): every 27B projection shape at M = 128..2048, gemm_q8 h and
# hl, gemm_f16 with and without its dequantisation.
step_gemm() {
  local bin
  bin=$(find "$BUILD" -name qwenchat-gemm-bench -type f -perm -u+x | head -1)
  [[ -n "$bin" ]] || { log "qwenchat-gemm-bench not built"; return 1; }
  timeout 120 "$bin" > "$OUT/gemm_bench.log" 2>&1
  local rc=$?
  grep -E " 2048 " "$OUT/gemm_bench.log" | head -12
  return $rc
}

# The CUDA backend: its GPU tests (test_backend_*.cpp), then the CLI end to end on a generated model with
# the real 0.8B layer shapes (4 layers, 4096-token vocabulary): greedy text per variant/switch, and greedy
# with MTP against greedy without. Everything goes to backend_tests.log; the summary lines are printed.
step_backend() {
  [[ -n "$TESTS_BIN" ]] || { log "no test binary"; return 1; }
  local log_file="$OUT/backend_tests.log" rc=0
  timeout 200 "$TESTS_BIN" --gtest_color=no --gtest_filter='CudaBackend*' > "$log_file" 2>&1 || rc=$?
  grep -E "^\[ (distance|greedy|batch|mtp|hash|memory) +\]|^\[==========\] .* ran|^\[  PASSED  \]|^\[  SKIPPED \] [0-9]+ test" "$log_file"
  grep -E "^\[  FAILED  \] [A-Za-z]" "$log_file" | sed 's/ ([0-9]* ms)//' | sort -u | head -20
  grep -A6 -m6 "Failure$" "$log_file" | cut -c1-300 | head -50
  [[ $rc -eq 124 ]] && log "backend tests TIMED OUT after 200 s"
  if [[ -n "$CLI_BIN" && -n "$MKMODEL_BIN" ]]; then
    local m="$BUILD/e2e-0.8b-4l.gguf" base=(generate --prompt "The GPU says hello" --max-tokens 24 --temperature 0)
    {
      echo "==== cli end to end ===="
      timeout 120 "$MKMODEL_BIN" --preset 0.8b --layers 4 --vocab 4096 --seed 5 --out "$m" --quiet
      local args
      for args in "" "--gemv hl" "--gemv tile_h" "--gemv sk --splitk 8" "--gemv deq" "--graph off" "--fuse off" \
                  "--pdl off" "--probes on" "--mtp on --draft 2" "--backend cpu"; do
        local be=(--backend cuda)
        [[ "$args" == "--backend cpu" ]] && be=()
        # shellcheck disable=SC2086
        timeout 30 "$CLI_BIN" "${base[@]}" --model "$m" "${be[@]}" $args > "$OUT/cli.out" 2> "$OUT/cli.err"
        local crc=$?
        echo "[ cli      ] rc=$crc ${args:-default}: text md5 $(md5sum < "$OUT/cli.out" | cut -c1-8)" \
          "\"$(tr -c '[:print:]' '.' < "$OUT/cli.out" | cut -c1-32)\" | $(tail -n1 "$OUT/cli.err" | cut -c1-220)"
      done
      rm -f "$OUT/cli.out" "$OUT/cli.err"
    } >> "$log_file" 2>&1
    grep -E "^\[ cli" "$log_file"
  fi
  return $rc
}

# The worker thread on the CUDA backend (tests/unit/test_worker_cuda.cpp, skipped on machines without a
# device): load progress events, a reply, a GEMV-variant switch in the middle of a reply.
step_worker() {
  [[ -n "$UNIT_BIN" ]] || { log "qwenchat_unit_tests not built"; return 1; }
  timeout 120 "$UNIT_BIN" --gtest_color=no --gtest_filter='WorkerCuda*' > "$OUT/worker_tests.log" 2>&1
  local rc=$?
  grep -E "^\[ (worker|switch) +\]|^\[==========\] .* ran|^\[  PASSED  \]|^\[  SKIPPED \]|^\[  FAILED  \] [A-Za-z]" \
    "$OUT/worker_tests.log"
  grep -A6 -m4 "Failure$" "$OUT/worker_tests.log" | cut -c1-300 | head -30
  return $rc
}

# Conversation state reuse on the CUDA backend (tests/unit/test_prefix_reuse_cuda.cpp: every reply after
# reuse bit-identical to a fresh prefill), then qwenchat-bench's prefill rates and the time to first token
# of a message after a long conversation with and without the kept state (QWENCHAT_REUSE_ARGS).
step_reuse() {
  [[ -n "$UNIT_BIN" ]] || { log "qwenchat_unit_tests not built"; return 1; }
  local rc=0
  timeout 200 "$UNIT_BIN" --gtest_color=no --gtest_filter='PrefixReuse*' > "$OUT/reuse_tests.log" 2>&1 || rc=$?
  grep -E "^\[==========\] .* ran|^\[  PASSED  \]|^\[  SKIPPED \]|^\[  FAILED  \] [A-Za-z]" "$OUT/reuse_tests.log"
  grep -A6 -m4 "Failure$" "$OUT/reuse_tests.log" | cut -c1-300 | head -30
  [[ -n "$DECODE_BIN" ]] || { log "qwenchat-bench not built"; return 1; }
  # shellcheck disable=SC2086
  timeout 400 "$DECODE_BIN" --only-prefill --json "$OUT/prefill_bench.json" --budget 380 \
    ${QWENCHAT_REUSE_ARGS:-} > "$OUT/prefill_bench.log" 2>&1 || rc=$?
  grep -E "^device:|^model:|prefill +[0-9]+ tokens|time to first token|another conversation|ERROR|skipped" \
    "$OUT/prefill_bench.log"
  return $rc
}

step_decode() {
  [[ -n "$DECODE_BIN" ]] || { log "qwenchat-bench not built"; return 1; }
  # shellcheck disable=SC2086
  timeout 240 "$DECODE_BIN" --json "$OUT/decode_bench.json" --budget "${QWENCHAT_DECODE_BUDGET:-170}" ${QWENCHAT_DECODE_ARGS:-} > "$OUT/decode_bench.log" 2>&1
  local rc=$?
  [[ $rc -eq 124 ]] && log "decode bench TIMED OUT after 240 s (partial log kept)"
  grep -E "^model:|^bytes per token|^loaded" "$OUT/decode_bench.log" | head -4
  # The --model path (upload from a GGUF file) on the end-to-end model of step backend, when it exists.
  local m="$BUILD/e2e-0.8b-4l.gguf"
  if [[ -f "$m" ]]; then
    { echo; echo "==== qwenchat-bench --model $m ===="; } >> "$OUT/decode_bench.log"
    timeout 60 "$DECODE_BIN" --model "$m" --variants tile,hu --contexts 0,1024 --tokens 16 --quick \
      >> "$OUT/decode_bench.log" 2>&1 || log "decode bench on $m failed"
    grep -A4 "^variant  kernels" "$OUT/decode_bench.log" | tail -3
  fi
  return $rc
}

# llama.cpp's block formats (#16): their GPU tests, gemv_block per type and shape, whole-token decode and
# prefill of the 27B preset as Q4_K_M (llama.cpp's mix, --weights q4_k_m) and Q6_K, and the 24 GB card of
# the design case (--memory-limit 24).
step_kquant() {
  local rc=0
  step_kqtests || rc=$?
  step_kqbench || rc=$?
  return $rc
}

# kquant's tests alone (they also run in step tests, which runs every kernel test).
step_kqtests() {
  [[ -n "$TESTS_BIN" ]] || { log "kqtests: no test binary"; return 1; }
  local rc=0
  timeout 200 "$TESTS_BIN" --gtest_color=no --gtest_filter='BlockQuant*:KQuantModel*:CudaMemoryPlan*:SmallOps*' \
    > "$OUT/kquant_tests.log" 2>&1 || rc=$?
  grep -E "^\[ distance \]|^\[ memory   \]|^\[==========\] .* ran|^\[  PASSED  \]|^\[  FAILED  \] [A-Za-z]" \
    "$OUT/kquant_tests.log"
  grep -A6 -m4 "Failure$" "$OUT/kquant_tests.log" | cut -c1-300 | head -30
  return $rc
}

# kquant's benchmarks: gemv_block per type and shape, whole-token decode and prefill of the 27B preset as
# Q4_K_M and Q6_K (QWENCHAT_KQ_WEIGHTS), the 24 GB card of the design case.
step_kqbench() {
  [[ -n "$DECODE_BIN" && -n "$BENCH_BIN" ]] || { log "kqbench: binaries missing"; return 1; }
  local rc=0
  timeout 150 "$BENCH_BIN" --blocks "${QWENCHAT_KQ_BLOCKS:-q4_k,q6_k,q5_k,q4_0,q5_0}" --quick > "$OUT/kquant_gemv.log" 2>&1 || rc=$?
  sed -n '/==== gemv_block summary/,$p' "$OUT/kquant_gemv.log"
  grep -E "^read ceiling" "$OUT/kquant_gemv.log" | head -4
  local w
  for w in ${QWENCHAT_KQ_WEIGHTS:-q4_k_m q6_k}; do
    timeout 150 "$DECODE_BIN" --weights "$w" --variants tile,tile_h,deq --contexts 0,32768 --tokens 32 --prefill 512,2048 \
      --reuse 8000,100 --budget 120 > "$OUT/kquant_decode_$w.log" 2>&1 || rc=$?
    grep -E "^model:|^bytes per token|prefill +[0-9]+ tokens|time to first token|ERROR" "$OUT/kquant_decode_$w.log"
    sed -n '/==== summary/,$p' "$OUT/kquant_decode_$w.log" | head -12
  done
  if [[ -z "${QWENCHAT_KQ_SKIP_24:-}" ]]; then
    timeout 120 "$DECODE_BIN" --weights q4_k_m --memory-limit 24 --variants tile --contexts 32768 --tokens 16 \
      --prefill 2048 --reuse 8000,100 --budget 90 > "$OUT/kquant_24gb.log" 2>&1 || rc=$?
    grep -E "^model:|^loaded|note|prefill +[0-9]+ tokens|ERROR|does not fit" "$OUT/kquant_24gb.log" | head -8
  fi
  return $rc
}

# A real file (#16 item 3 and the done-when): qwenchat-mkmodel writes the 27B preset as Q4_K_M on every core
# of this machine (timed), then qwenchat-bench loads that file (the upload path a user's file takes) and
# decodes it. The file (~16.5 GB) goes to /tmp and is removed.
step_kqfile() {
  [[ -n "$MKMODEL_BIN" && -n "$DECODE_BIN" ]] || { log "kqfile: binaries missing"; return 1; }
  local f=/tmp/qc-27b-q4_k_m.gguf rc=0 t0 t1
  t0=$(date +%s.%N)
  timeout 300 "$MKMODEL_BIN" --preset 27b --type q4_k_m --threads "$(nproc)" --seed 1 --out "$f" --quiet \
    > "$OUT/kqfile_mkmodel.log" 2>&1 || rc=$?
  t1=$(date +%s.%N)
  echo "[ mkmodel  ] 27b q4_k_m on $(nproc) threads: rc=$rc $(echo "$t1 - $t0" | bc 2>/dev/null || python3 -c "print($t1-$t0)") s, $(stat -c %s "$f" 2>/dev/null) bytes" |
    tee -a "$OUT/kqfile_mkmodel.log"
  [[ $rc -eq 0 ]] || return $rc
  timeout 150 "$DECODE_BIN" --model "$f" --variants tile --contexts 0 --tokens 32 --prefill 2048 \
    --budget 120 > "$OUT/kqfile_decode.log" 2>&1 || rc=$?
  grep -E "^model:|^loaded|prefill +[0-9]+ tokens|ERROR" "$OUT/kqfile_decode.log" | head -6
  sed -n '/==== summary/,$p' "$OUT/kqfile_decode.log" | head -8
  rm -f "$f"
  return $rc
}

for s in $STEPS; do
  log "step $s"
  t0=$(date +%s)
  "step_$s"
  rc=$?
  SUMMARY+=("$(printf '%-8s %-6s %4ss' "$s" "$([[ $rc -eq 0 ]] && echo ok || echo FAIL:$rc)" "$(( $(date +%s) - t0 ))")")
  if [[ $s == build && $rc -ne 0 ]]; then log "build failed: stopping"; break; fi
done

# Last: the bench tables (their tails) and the step summary.
if [[ -f "$OUT/decode_bench.log" ]]; then
  echo
  grep -A6 "^== switches" "$OUT/decode_bench.log"
  grep -A9 "^== M tokens" "$OUT/decode_bench.log" | head -20
  sed -n '/==== summary/,$p' "$OUT/decode_bench.log"
fi
if [[ -f "$OUT/gemv_bench.log" ]]; then
  echo
  sed -n '/==== summary/,$p' "$OUT/gemv_bench.log"
  grep -E "^read ceiling|^device-to-device|^device:" "$OUT/gemv_bench.log" | head -6
fi
echo
echo "==== gpu_run summary (logs in $OUT) ===="
for line in "${SUMMARY[@]}"; do echo "  $line"; done
