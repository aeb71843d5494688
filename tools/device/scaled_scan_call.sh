#!/usr/bin/env bash
# One device call for the scaled GDN scan (kernels/gdn_scaled.h) as the prompt path's default: build, the GDN
# tests of every scan, the prompt path of the 27B preset with --gdn-scan token and scaled (on an H200 that is
# issue #12's gate), the golden CUDA streams re-recorded with the tree's default, every GPU test, the CUDA
# unit tests and the CLI texts (before_after.sh tests), a second bench round, the scans' SASS and ncu's
# instruction counts for one 2048-row call of the scaled scan: the most needed first, so that a call cut
# short by the session's device time still brings back the verdicts. At most 8 files under $OUT (more are
# dropped). ~7 min on an H200.
# Environment: OUT; run from the repository root with .device/root carried. LEAN=1: build, GDN tests and one
# bench round only (~4 min), for when the session's device time is short; BENCH_PREFILL: the prompt sizes;
# SKIP_ROUND2=1, SKIP_NCU=1: leave out the second bench round, ncu.
set -u
export QWENCHAT_DEVICE_PREFIX=$PWD/.device/root/usr
R=$OUT
export OUT=/tmp/ba
mkdir -p "$OUT"
# shellcheck source-path=SCRIPTDIR source=prefix_env.sh
source "$(dirname "${BASH_SOURCE[0]}")/prefix_env.sh"
export PATH=/usr/local/cuda/bin:$PATH
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
if [[ ${LEAN:-0} == 1 ]]; then
  cmake -S . -B build-after -G Ninja -DCMAKE_CUDA_ARCHITECTURES=90 -DQWENCHAT_GUI=OFF -DQWENCHAT_CUDA=ON \
    -DQWENCHAT_WERROR=OFF > "$OUT/configure.log" 2>&1 || { tail -20 "$OUT/configure.log"; exit 1; }
  ninja -C build-after -j"$(nproc)" qwenchat-bench qwenchat_gpu_tests > "$OUT/build.log" 2>&1 ||
    { grep -E "error" "$OUT/build.log" | head; exit 1; }
  echo "built $(date +%T)"
else
  BA_ONLY=after BA_PHASE=build tools/device/before_after.sh || exit 1
fi
gt=$(find build-after -name qwenchat_gpu_tests -type f | head -1)
ut=$(find build-after -name qwenchat_unit_tests -type f | head -1)
bench=$(find build-after -name qwenchat-bench -type f | head -1)

timeout 150 "$gt" --gtest_color=no --gtest_filter='*GdnPrefill*:*GdnScans*:Attention.*' > "$R/gdn-tests.log" 2>&1
gdn_rc=$?
echo "== gdn tests rc=$gdn_rc $(date +%T)"
grep -E "^\[  (PASSED|FAILED) |^\[  FAILED  \] [A-Z]|^\[gdn_prefill\]" "$R/gdn-tests.log" | head -16

bench_round() {
  for s in token scaled; do
    echo "==== round $1, --gdn-scan $s" >> "$R/bench.log"
    timeout 150 "$bench" --only-prefill --prefill "${BENCH_PREFILL:-512,2048,8192}" --reuse 8000,100 --gdn-scan $s \
      >> "$R/bench.log" 2>&1
    echo "== bench $s round $1 rc=$? $(date +%T): $(grep -E 'prefill +[0-9]+ tokens' "$R/bench.log" |
      tail -3 | awk '{print $(NF-1)}' | tr '\n' ' ')tok/s; gdn $(grep -E '^  gdn  ' "$R/bench.log" | tail -2 |
      head -1 | awk '{print $2}') ms; kept-state $(grep -E 'time to first' "$R/bench.log" | tail -1 |
      sed -E 's/.* ([0-9.]+) ms from the kept.*/\1/') ms"
  done
}
bench_round 1
(cuobjdump -sass build-after/kernels/CMakeFiles/qwenchat_kernels.dir/gdn_scaled.cu.o
 cuobjdump -sass build-after/kernels/CMakeFiles/qwenchat_kernels.dir/gdn_prefill.cu.o) 2>&1 | gzip > "$R/sass.txt.gz"

if [[ $gdn_rc -eq 0 && ${LEAN:-0} != 1 ]]; then
  QWENCHAT_UPDATE_GOLDEN=1 timeout 100 "$ut" --gtest_color=no --gtest_filter='DefaultModelCuda.Golden*' \
    > /tmp/golden.log 2>&1
  echo "== golden update rc=$? $(date +%T)"
  cp tests/golden/default_model/greedy_cuda.json "$R/"
  BA_ONLY=after BA_PHASE=tests tools/device/before_after.sh > "$R/tests-summary.log" 2>&1
  echo "== tests rc=$? $(date +%T)"
  cat "$OUT/after-gpu-tests.log" "$OUT/after-unit-cuda-tests.log" "$OUT/after-cli-texts.txt" > "$R/tests-full.log"
  tail -16 "$R/tests-summary.log"
fi

[[ ${LEAN:-0} == 1 || ${SKIP_ROUND2:-0} == 1 ]] || bench_round 2
# An 80 GB card plans per-chunk f16 weights (the resident copy leaves less than a quarter free); forced
# resident, the 27B's 72.6 GiB may still fit, and the prompt path then runs as on the H200.
if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H100; then
  for s in token scaled; do
    echo "==== resident weights, --gdn-scan $s" >> "$R/bench.log"
    timeout 120 "$bench" --only-prefill --prefill 512,2048 --reuse 8000,100 --gdn-scan $s \
      --prefill-weights resident >> "$R/bench.log" 2>&1
    echo "== bench $s resident rc=$? $(date +%T): $(grep -E 'prefill +[0-9]+ tokens' "$R/bench.log" |
      tail -2 | awk '{print $(NF-1)}' | tr '\n' ' ')tok/s"
  done
fi
grep -E "^loaded|^prompt path" "$R/bench.log" | sort -u | head -4
grep -E "^  (gdn|attention|f16: activation rounding|sum) " "$R/bench.log" | tail -8

[[ ${LEAN:-0} == 1 || ${SKIP_NCU:-0} == 1 ]] && exit $gdn_rc

# One 2048-row call of a 27B layer of the scaled scan (the token scan's: docs/PERFORMANCE.md); application
# replay: one pass per metric group, nothing saved and restored. Skip 96 scan calls: two prompts (the warm-up).
for s in scaled; do
  timeout 110 ncu --replay-mode application --metrics \
    gpu__time_duration.sum,sm__inst_executed.sum,smsp__issue_active.avg.pct_of_peak_sustained_active \
    -k regex:'gdn_(scaled|prefill)_scan' --launch-skip 96 --launch-count 3 --csv \
    "$bench" --only-prefill --prefill 2048 --reuse 100000,1 --gdn-scan $s >> "$R/ncu.txt" 2>&1
  echo "== ncu $s rc=$? $(date +%T)"
done
grep -E '"gdn_' "$R/ncu.txt" | awk -F'","' '{print $5, $(NF-2), $NF}' | cut -c1-160 | head -20
