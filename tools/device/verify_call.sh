#!/usr/bin/env bash
# One device call that judges the tree as it stands: build; every GPU test, the CUDA unit tests (the golden
# CUDA streams among them) and the CLI texts per kernel variant (before_after.sh's tests phase, this tree
# alone); the prompt path of the 27B preset, two rounds (--prefill ${BENCH_PREFILL:-512,2048} --reuse
# 8000,100: #12's figures, with the time per phase); then, if NCU_KERNEL names a kernel (a regex) and time
# is left, ncu's speed-of-light, scheduler and warp-state sections for NCU_COUNT (1) calls of the kernels it
# matches, after 40 (e.g. NCU_KERNEL='attn_flash|gdn_scaled' NCU_COUNT=2). ~5 min on an H100.
# Logs straight into $OUT (a call cut short keeps what ran); a short table last. LEAN=1 (~3 min, for a short
# device budget): builds the GPU and unit tests and the benches alone, runs the GDN, attention and K-quant GPU
# tests and the DefaultModelCuda ones (the golden streams), one bench round, no ncu (LEAN knobs: GPU_FILTER, the
# GPU tests' gtest filter; SKIP_UNIT=1, no unit tests; ROUNDS=0, no prompt-path bench). SWEEP_FORMS=f1,f2,...: after the
# tests, qwenchat-gemv-bench --blocks ${SWEEP_BLOCKS:-q4_k} --quick on those gemv_block forms. DECODE_WEIGHTS=q4_k_m:
# then decode of the 27B preset in that mix (--variants ${DECODE_VARIANTS:-tile,tile_h}, ctx 0, + DECODE_ARGS).
#   OUT=$OUT tools/device/verify_call.sh    # carry [".device/root"]
set -u
R=$OUT
export QWENCHAT_DEVICE_PREFIX=$PWD/.device/root/usr
# shellcheck source-path=SCRIPTDIR source=prefix_env.sh
source "$(dirname "${BASH_SOURCE[0]}")/prefix_env.sh"
# shellcheck source-path=SCRIPTDIR source=steps.sh
source "$(dirname "${BASH_SOURCE[0]}")/steps.sh"
export PATH=/usr/local/cuda/bin:$PATH
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
# UPDATE_GOLDEN=1: re-record the golden CUDA streams first (for a change meant to change a kernel's bits),
# returned as $OUT/greedy_cuda.json for the commit; the tests then check against them.
golden() {
  QWENCHAT_UPDATE_GOLDEN=1 timeout 100 "$(find build-after -name qwenchat_unit_tests -type f | head -1)" \
    --gtest_color=no --gtest_filter='DefaultModelCuda.Golden*' > /tmp/golden.log 2>&1
  echo "== golden re-recorded rc=$? $(date +%T)"
  cp tests/golden/default_model/greedy_cuda.json "$R/"
}
if [[ ${LEAN:-0} == 1 ]]; then  # ~3 min: the GDN and attention GPU tests, the golden streams, one round
  cmake -S . -B build-after -G Ninja -DCMAKE_CUDA_ARCHITECTURES=90 -DQWENCHAT_GUI=OFF -DQWENCHAT_CUDA=ON \
    -DQWENCHAT_WERROR=OFF > /tmp/configure.log 2>&1 || { tail -20 /tmp/configure.log; exit 1; }
  unit=qwenchat_unit_tests
  [[ ${SKIP_UNIT:-0} == 1 ]] && unit=
  ninja -C build-after -j"$(nproc)" qwenchat_gpu_tests $unit qwenchat-bench qwenchat-gemv-bench \
    > /tmp/build.log 2>&1 ||
    { grep -E "error" /tmp/build.log | head; exit 1; }
  echo "== built $(date +%T)"
  [[ ${UPDATE_GOLDEN:-0} == 1 ]] && golden
  timeout 150 "$(find build-after -name qwenchat_gpu_tests -type f | head -1)" --gtest_color=no \
    --gtest_filter="${GPU_FILTER:-*GdnPrefill*:*GdnScans*:Attention.*:BlockQuantKernels.*:KQuantModel.*:HostKernelConfig.*}" \
    > "$R/gpu-tests.log" 2>&1
  t_rc=$?
  [[ -n $unit ]] && { timeout 100 "$(find build-after -name qwenchat_unit_tests -type f | head -1)" --gtest_color=no \
    --gtest_filter='DefaultModelCuda.*' > "$R/unit-cuda-tests.log" 2>&1 || t_rc=1; }
  echo "== tests rc=$t_rc $(date +%T)"
  grep -hE "^\[  (PASSED|FAILED) |^\[  FAILED  \] [A-Z]" "$R/gpu-tests.log" "$R/unit-cuda-tests.log" 2> /dev/null |
    head -12
  grep -hA6 "Failure$" "$R/gpu-tests.log" | head -30
  rounds=${ROUNDS:-1}
else
  OUT=$R BA_ONLY=after BA_PHASE=build tools/device/before_after.sh || exit 1
  [[ ${UPDATE_GOLDEN:-0} == 1 ]] && golden
  OUT=$R BA_ONLY=after BA_PHASE=tests tools/device/before_after.sh > "$R/tests-summary.log" 2>&1
  t_rc=$?
  echo "== tests rc=$t_rc $(date +%T)"
  rm -f "$R/after-cli-texts.txt" "$R/after-configure.log" "$R/after-build.log"  # in tests-summary.log
  rounds=2
fi
[[ -n ${SWEEP_FORMS:-} ]] && sweep_step "$(find build-after -name qwenchat-gemv-bench -type f | head -1)" "$SWEEP_FORMS"
# e.g. DECODE_WEIGHTS=q4_k_m DECODE_ARGS="--block-engines registers,auto"
[[ -n ${DECODE_WEIGHTS:-} ]] &&
  decode_step "$(find build-after -name qwenchat-bench -type f | head -1)" "$DECODE_WEIGHTS" 150 "${DECODE_ARGS:-}"
bench=$(find build-after -name qwenchat-bench -type f | head -1)
for round in $(seq "$rounds"); do
  echo "==== round $round" >> "$R/bench.log"
  timeout 150 "$bench" --only-prefill --prefill "${BENCH_PREFILL:-512,2048}" --reuse 8000,100 >> "$R/bench.log" 2>&1
  echo "== bench round $round rc=$? $(date +%T)"
done
if [[ -n ${NCU_KERNEL:-} && ${LEAN:-0} != 1 ]] && (( SECONDS < 420 )); then
  timeout 120 ncu --section SpeedOfLight --section WarpStateStats --section SchedulerStats \
    --section InstructionStats -k "regex:$NCU_KERNEL" --launch-skip 40 --launch-count "${NCU_COUNT:-1}" \
    "$bench" --only-prefill --prefill 2048 --reuse 100000,1 > "$R/ncu.txt" 2>&1
  echo "== ncu rc=$? $(date +%T)"
fi
summary_step
[[ -f $R/tests-summary.log ]] && tail -18 "$R/tests-summary.log"
grep -E "prefill +[0-9]+ tokens|time to first token" "$R/bench.log"
grep -E "^  (gdn|attention|sum) " "$R/bench.log" | head -8
[[ -f $R/ncu.txt ]] && grep -E "Duration|Executed Instructions  |Issued Warp|No Eligible|Warp Cycles Per Issued" \
  "$R/ncu.txt" | head -8
exit $t_rc
