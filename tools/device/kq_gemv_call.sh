#!/usr/bin/env bash
# One device call for #16's GEMV work: build, the block-format kernel tests, the gemv_block schedule sweep
# (--block-forms), an Nsight Compute look at named forms (KQ_NCU="shape:form ..."), whole-token decode
# of the 27B preset in llama.cpp's mixes (KQ_DECODE="q4_k_m q6_k"), and with KQ_FILE=1 a written 27B
# Q4_K_M file (gpu_run.sh kqfile: mkmodel on all cores, then decode). Logs in a scratch dir; the few the
# device tool can return are copied to $OUT; a short table last.
#
#   KQ_FORMS=hl1,hl1ps KQ_NCU="gateup:hl1 down:hl1" KQ_DECODE=q4_k_m tools/device/kq_gemv_call.sh
set -u -o pipefail
ROOT=$(pwd)
FINAL=${OUT:-$ROOT/device_out}
SCRATCH=/tmp/kqcall
rm -rf "$SCRATCH"; mkdir -p "$SCRATCH" "$FINAL"
export OUT=$SCRATCH QWENCHAT_DEVICE_PREFIX=${QWENCHAT_DEVICE_PREFIX:-$ROOT/.device/root/usr}
QWENCHAT_GPU_STEPS="info build" tools/device/gpu_run.sh > "$SCRATCH/gpu_run.log" 2>&1
BUILD=${QWENCHAT_DEVICE_BUILD:-$ROOT/build-device}
TESTS_BIN=$(find "$BUILD" -name qwenchat_gpu_tests -type f -perm -u+x | head -1)
BENCH_BIN=$(find "$BUILD" -name qwenchat-gemv-bench -type f -perm -u+x | head -1)
DECODE_BIN=$(find "$BUILD" -name qwenchat-bench -type f -perm -u+x | head -1)
tail -3 "$SCRATCH/gpu_run.log"
if [[ -n "${KQ_TESTS:-1}" && -n "$TESTS_BIN" ]]; then
  timeout 240 "$TESTS_BIN" --gtest_color=no --gtest_filter="${KQ_TEST_FILTER:-BlockQuant*:KQuantModel*}" \
    > "$SCRATCH/tests.log" 2>&1
  echo "tests rc $?"; grep -E "^\[  PASSED|^\[  FAILED|tests ran" "$SCRATCH/tests.log" | head -12
  grep -A5 -m3 "Failure$" "$SCRATCH/tests.log" | cut -c1-240
fi
if [[ -n "${KQ_FORMS:-}" && -n "$BENCH_BIN" ]]; then
  timeout "${KQ_SWEEP_S:-200}" "$BENCH_BIN" --blocks "${KQ_BLOCKS:-q4_k,q6_k}" --quick --block-forms "$KQ_FORMS" \
    ${KQ_SHAPES:+--block-shapes $KQ_SHAPES} > "$SCRATCH/sweep.log" 2>&1
  echo "sweep rc $?"
fi
for spec in ${KQ_NCU:-}; do
  shape=${spec%%:*}; form=${spec#*:}
  command -v ncu > /dev/null || { echo "no ncu"; break; }
  timeout 90 ncu --section SpeedOfLight --section MemoryWorkloadAnalysis --section Occupancy --section LaunchStats \
    --section WarpStateStats --section SchedulerStats --section ComputeWorkloadAnalysis -k regex:gemv_block_q \
    --launch-skip 2 --launch-count 1 "$BENCH_BIN" --blocks q4_k --quick --block-forms "$form" --block-shapes "$shape" \
    > "$SCRATCH/ncu_${shape}_${form}.log" 2>&1
  echo "ncu $shape $form rc $?"
done
[[ -n "${KQ_NCU:-}" ]] && cat "$SCRATCH"/ncu_*.log > "$SCRATCH/ncu_all.log" 2>/dev/null
for w in ${KQ_DECODE:-}; do
  timeout "${KQ_DECODE_S:-150}" "$DECODE_BIN" --weights "$w" --variants "${KQ_VARIANTS:-tile}" --contexts "${KQ_CONTEXTS:-0}" \
    --tokens 32 --budget 100 > "$SCRATCH/decode_$w.log" 2>&1
  echo "decode $w rc $?"
done
if [[ -n "${KQ_FILE:-}" ]]; then  # gpu_run.sh's kqfile: mkmodel 27b q4_k_m on all cores, then decode that file
  QWENCHAT_GPU_STEPS="build kqfile" tools/device/gpu_run.sh > "$SCRATCH/kqfile_run.log" 2>&1
  echo "kqfile rc $?"
  cat "$SCRATCH/kqfile_run.log" "$SCRATCH/kqfile_mkmodel.log" "$SCRATCH/kqfile_decode.log" > "$SCRATCH/kqfile.log" 2>/dev/null
fi
cp "$SCRATCH"/gpu_run.log "$SCRATCH"/tests.log "$FINAL"/ 2>/dev/null
for f in sweep.log ncu_all.log device_info.txt kqfile.log; do [[ -f "$SCRATCH/$f" ]] && cp "$SCRATCH/$f" "$FINAL/"; done
for w in ${KQ_DECODE:-}; do cp "$SCRATCH/decode_$w.log" "$FINAL/" 2>/dev/null; done
echo "==== summary ===="
[[ -f "$SCRATCH/sweep.log" ]] && sed -n '/==== gemv_block summary/,$p' "$SCRATCH/sweep.log" && grep -E "^read ceiling" "$SCRATCH/sweep.log" | head -3
[[ -f "$SCRATCH/kqfile_run.log" ]] && grep -vE "^\[gpu_run" "$SCRATCH/kqfile_run.log" | tail -12
for w in ${KQ_DECODE:-}; do grep -E "^model:|^bytes per token|ERROR" "$SCRATCH/decode_$w.log" | head -3; sed -n '/==== summary/,$p' "$SCRATCH/decode_$w.log" | head -8; done
