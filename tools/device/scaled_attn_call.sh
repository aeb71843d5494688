#!/usr/bin/env bash
# EXPERIMENT (branch attn-exp2): one device call for two prompt-path changes. First scaled_scan_call.sh
# without its second bench round and ncu (build, GDN tests, token vs scaled bench, golden re-record with the
# scaled scan, every test); then the base-2 softmax of the flash attention kernel (QC_ATTN_EXP2=1): the
# attention tests with it, and the prompt path with the scaled scan, exp2 off / on / off / on. ~8 min on an
# H200. At most 7 files under $OUT.
set -u
R=$OUT
SKIP_ROUND2=1 SKIP_NCU=1 OUT=$R tools/device/scaled_scan_call.sh
echo "== scaled part rc=$? $(date +%T)"
export QWENCHAT_DEVICE_PREFIX=$PWD/.device/root/usr
# shellcheck source-path=SCRIPTDIR source=prefix_env.sh
source "$(dirname "${BASH_SOURCE[0]}")/prefix_env.sh"
gt=$(find build-after -name qwenchat_gpu_tests -type f | head -1)
bench=$(find build-after -name qwenchat-bench -type f | head -1)
QC_ATTN_EXP2=1 timeout 100 "$gt" --gtest_color=no --gtest_filter='Attention.*:*Prefill*:*Golden*' > "$R/attn.log" 2>&1
echo "== exp2 attention tests rc=$? $(date +%T)"
grep -E "^\[  (PASSED|FAILED) |^\[  FAILED  \] [A-Z]" "$R/attn.log" | head -12
for round in 1 2; do
  for e in 0 1; do
    echo "==== exp2=$e round $round" >> "$R/attn.log"
    QC_ATTN_EXP2=$e timeout 100 "$bench" --only-prefill --prefill 512,2048 --reuse 8000,100 --gdn-scan scaled \
      >> "$R/attn.log" 2>&1
    echo "== bench exp2=$e round $round rc=$? $(date +%T): $(grep -E 'prefill +[0-9]+ tokens' "$R/attn.log" |
      tail -2 | awk '{print $(NF-1)}' | tr '\n' ' ')tok/s; attention $(grep -E '^  attention ' "$R/attn.log" |
      tail -2 | head -1 | awk '{print $2}') ms"
  done
done
# What the attention kernel waits on (one 1024-row call of a 27B layer, kernel replay), if time is left.
if (( SECONDS < 430 )); then
  QC_ATTN_EXP2=1 timeout 100 ncu --section SpeedOfLight --section WarpStateStats --section Occupancy \
    --section SchedulerStats -k regex:attn_flash --launch-skip 40 --launch-count 1 \
    "$bench" --only-prefill --prefill 2048 --reuse 100000,1 --gdn-scan scaled > "$R/attn-ncu.txt" 2>&1
  echo "== attention ncu rc=$? $(date +%T)"
  grep -E "Duration|Stall|Issued Warp|Achieved Occupancy|Registers|No Eligible|Compute \(SM\) Thr|Memory Thr" \
    "$R/attn-ncu.txt" | head -30
fi
