#!/usr/bin/env bash
# EXPERIMENT (branch attn-exp2): one device call for two prompt-path changes, both the tree's default here:
# the scaled GDN scan (GdnScan::kScaled) and the flash attention kernel's base-2 softmax (off with
# QC_ATTN_EXP2=0). Build; the GDN and attention tests; the prompt path token+exp2, scaled+exp2, scaled+exp
# (round 1); the golden CUDA streams re-recorded with these defaults and every test; round 2 (scaled, exp2
# on and off); ncu of one attention call if time is left. ~8 min on an H200. At most 8 files under $OUT.
# LEAN=1: build the bench and GPU tests, the tests, round 1 only (~4 min).
set -u
R=$OUT
export QWENCHAT_DEVICE_PREFIX=$PWD/.device/root/usr
export OUT=/tmp/ba
mkdir -p "$OUT"
# shellcheck source-path=SCRIPTDIR source=prefix_env.sh
source "$(dirname "${BASH_SOURCE[0]}")/prefix_env.sh"
export PATH=/usr/local/cuda/bin:$PATH
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
if [[ ${LEAN:-0} == 1 ]]; then  # the bench and the GPU tests only; no golden, no second round, no ncu
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

timeout 150 "$gt" --gtest_color=no --gtest_filter='*GdnPrefill*:*GdnScans*:Attention.*-*StrongDecaysMatchCpuDouble/chunked' \
  > "$R/gdn-attn-tests.log" 2>&1
t_rc=$?
echo "== gdn + attention tests rc=$t_rc $(date +%T)"
grep -E "^\[  (PASSED|FAILED) |^\[  FAILED  \] [A-Z]" "$R/gdn-attn-tests.log" | head -16

one() {  # one prompt-path run: label, QC_ATTN_EXP2, --gdn-scan
  echo "==== $1" >> "$R/bench.log"
  QC_ATTN_EXP2=$2 timeout 120 "$bench" --only-prefill --prefill "${BENCH_PREFILL:-512,2048,8192}" \
    --reuse 8000,100 --gdn-scan "$3" >> "$R/bench.log" 2>&1
  echo "== $1 rc=$? $(date +%T): $(grep -E 'prefill +[0-9]+ tokens' "$R/bench.log" | tail -3 |
    awk '{print $(NF-1)}' | tr '\n' ' ')tok/s; gdn $(grep -E '^  gdn  ' "$R/bench.log" | tail -2 | head -1 |
    awk '{print $2}') ms; attention $(grep -E '^  attention ' "$R/bench.log" | tail -2 | head -1 |
    awk '{print $2}') ms; kept-state $(grep -E 'time to first' "$R/bench.log" | tail -1 |
    sed -E 's/.* ([0-9.]+) ms from the kept.*/\1/') ms"
}
one "r1 token exp2" 1 token
one "r1 scaled exp2" 1 scaled
one "r1 scaled exp" 0 scaled
[[ ${LEAN:-0} == 1 ]] && exit $t_rc
if [[ $t_rc -eq 0 ]]; then
  QWENCHAT_UPDATE_GOLDEN=1 timeout 100 "$ut" --gtest_color=no --gtest_filter='DefaultModelCuda.Golden*' \
    > /tmp/golden.log 2>&1
  echo "== golden update rc=$? $(date +%T)"
  cp tests/golden/default_model/greedy_cuda.json "$R/"
  # Logs straight into $R: a call cut short by the device time still brings back what ran.
  OUT=$R BA_ONLY=after BA_PHASE=tests tools/device/before_after.sh > "$R/tests-summary.log" 2>&1
  echo "== tests rc=$? $(date +%T)"
  tail -16 "$R/tests-summary.log"
  rm -f "$R/after-cli-texts.txt"  # printed in tests-summary.log; the file count stays at 8
fi
# The SASS of the attention kernel and the scaled scan: whether ldmatrix loads run ahead of the mma that
# consume them (the attention kernel's ~0.6 instructions a cycle suggests they do not).
(cuobjdump -sass build-after/kernels/CMakeFiles/qwenchat_kernels.dir/attention_flash.cu.o
 cuobjdump -sass build-after/kernels/CMakeFiles/qwenchat_kernels.dir/gdn_scaled.cu.o) 2>&1 |
  gzip > "$R/sass.txt.gz"
one "r2 scaled exp" 0 scaled
one "r2 scaled exp2" 1 scaled
(( SECONDS < 400 )) && one "r2 token exp2" 1 token
grep -E "^loaded|^prompt path" "$R/bench.log" | sort -u | head -4
grep -E "^  (gdn|attention|f16: activation rounding|sum) " "$R/bench.log" | tail -8

# What the attention kernel waits on (one call of a 27B layer, kernel replay), if time is left.
if (( SECONDS < 450 )); then
  timeout 100 ncu --section SpeedOfLight --section WarpStateStats --section Occupancy \
    --section SchedulerStats -k regex:attn_flash --launch-skip 40 --launch-count 1 \
    "$bench" --only-prefill --prefill 2048 --reuse 100000,1 > "$R/attn-ncu.txt" 2>&1
  echo "== attention ncu rc=$? $(date +%T)"
  grep -E "Duration|Stall|Issued Warp|Achieved Occupancy|Registers|No Eligible|Compute \(SM\) Thr|Memory Thr" \
    "$R/attn-ncu.txt" | head -30
fi
