# shellcheck shell=bash
# The measuring steps that verify_call.sh (after its build) and short_call.sh (prebuilt binaries) share, so
# the two calls run the same commands and print the same summary. Sourced; each step takes the binary's path
# and writes its log into $OUT. A step's own limit: the first argument after the binary where one is taken.

# qwenchat-gemv-bench on the gemv_block forms $2 (comma-separated), types ${SWEEP_BLOCKS:-q4_k}.
sweep_step() {  # bin forms limit_s
  timeout "${3:-150}" "$1" --blocks "${SWEEP_BLOCKS:-q4_k}" --quick --block-forms "$2" > "$OUT/sweep.log" 2>&1
  echo "== sweep rc=$? $(date +%T)"
}

# qwenchat-gemv-bench --variants $2: each variant (the mma ones in every schedule) at M = 1..4 per 27B shape.
variants_step() {  # bin variants limit_s
  timeout "${3:-145}" "$1" --variants "$2" --budget $((${3:-145} - 30)) --json "$OUT/gemv-variants.json" \
    > "$OUT/gemv-variants.log" 2>&1
  echo "== variants rc=$? $(date +%T)"
}

# Nsight Compute on one graph launch of kernel $2 (a mangled-name regex) while qwenchat-gemv-bench runs
# --variants $3 (the clocks left alone: --clock-control none); the lines that say where its time goes.
ncu_step() {  # bin kernel_regex variants
  timeout 60 ncu --clock-control none --kernel-name-base mangled -k "regex:$2" --launch-skip 3 \
    --launch-count 1 --section SpeedOfLight --section WarpStateStats --section SchedulerStats --section Occupancy \
    --section LaunchStats --section InstructionStats "$1" --variants "$3" --budget 10 > "$OUT/ncu_$2.txt" 2>&1
  echo "== ncu $2 rc=$? $(date +%T)"
  grep -E "Duration|DRAM Throughput|Issued Warp|Executed Instructions  |Warp Cycles Per Issued" \
    "$OUT/ncu_$2.txt" | head -10
}

# Whole-token decode of the 27B preset in weights $2 at the contexts ${DECODE_CONTEXTS:-0}, the variants
# ${DECODE_VARIANTS:-tile,tile_h} and the extra arguments $4 (e.g. --block-engines registers,auto); the log
# $OUT/decode${5:+-$5}.log.
decode_step() {  # bin weights limit_s extra_args [log_tag]
  # shellcheck disable=SC2086  # $4 is a list of arguments
  timeout "${3:-150}" "$1" --weights "$2" --variants "${DECODE_VARIANTS:-tile,tile_h}" \
    --contexts "${DECODE_CONTEXTS:-0}" --tokens 32 --quick --budget "${DECODE_BUDGET:-60}" $4 \
    > "$OUT/decode${5:+-$5}.log" 2>&1
  echo "== decode${5:+ $5} rc=$? $(date +%T)"
}

# The short table printed last: the GPU tests' verdict, the sweep's summary, the decode summary.
summary_step() {
  echo "==== summary"
  [[ -f $OUT/gpu-tests.log ]] && grep -hE "^\[  (PASSED|FAILED) |^\[  FAILED  \] [A-Z]" "$OUT/gpu-tests.log" | head -12
  local f
  for f in "$OUT"/decode*.log; do
    [[ -f $f ]] && echo "-- $(basename "$f")" && sed -n '/==== summary/,$p' "$f" | head -8
  done
  [[ -f $OUT/gemv-variants.log ]] && sed -n '/==== variants/,$p' "$OUT/gemv-variants.log" | grep -v "/8 "
  [[ -f $OUT/sweep.log ]] && sed -n '/==== gemv_block summary/,$p' "$OUT/sweep.log" &&
    grep -E "^read ceiling" "$OUT/sweep.log" | head -2
  return 0
}
