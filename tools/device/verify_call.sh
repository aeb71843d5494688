#!/usr/bin/env bash
# One device call that judges the tree as it stands: build; every GPU test, the CUDA unit tests (the golden
# CUDA streams among them) and the CLI texts per kernel variant (before_after.sh's tests phase, this tree
# alone); the prompt path of the 27B preset, two rounds (--prefill ${BENCH_PREFILL:-512,2048} --reuse
# 8000,100: #12's figures, with the time per phase); then, if NCU_KERNEL names a kernel (a regex) and time
# is left, ncu's speed-of-light, scheduler and warp-state sections for one call of it. ~5 min on an H100.
# Logs straight into $OUT (a call cut short keeps what ran); a short table last.
#   OUT=$OUT tools/device/verify_call.sh    # carry [".device/root"]
set -u
R=$OUT
export QWENCHAT_DEVICE_PREFIX=$PWD/.device/root/usr
# shellcheck source-path=SCRIPTDIR source=prefix_env.sh
source "$(dirname "${BASH_SOURCE[0]}")/prefix_env.sh"
export PATH=/usr/local/cuda/bin:$PATH
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
OUT=$R BA_ONLY=after BA_PHASE=build tools/device/before_after.sh || exit 1
OUT=$R BA_ONLY=after BA_PHASE=tests tools/device/before_after.sh > "$R/tests-summary.log" 2>&1
t_rc=$?
echo "== tests rc=$t_rc $(date +%T)"
rm -f "$R/after-cli-texts.txt" "$R/after-configure.log" "$R/after-build.log"  # in tests-summary.log / not needed
bench=$(find build-after -name qwenchat-bench -type f | head -1)
for round in 1 2; do
  echo "==== round $round" >> "$R/bench.log"
  timeout 150 "$bench" --only-prefill --prefill "${BENCH_PREFILL:-512,2048}" --reuse 8000,100 >> "$R/bench.log" 2>&1
  echo "== bench round $round rc=$? $(date +%T)"
done
if [[ -n ${NCU_KERNEL:-} ]] && (( SECONDS < 420 )); then
  timeout 120 ncu --section SpeedOfLight --section WarpStateStats --section SchedulerStats \
    --section InstructionStats -k "regex:$NCU_KERNEL" --launch-skip 40 --launch-count 1 \
    "$bench" --only-prefill --prefill 2048 --reuse 100000,1 > "$R/ncu.txt" 2>&1
  echo "== ncu rc=$? $(date +%T)"
fi
echo "==== summary"
tail -18 "$R/tests-summary.log"
grep -E "prefill +[0-9]+ tokens|time to first token" "$R/bench.log"
grep -E "^  (gdn|attention|sum) " "$R/bench.log" | head -8
[[ -f $R/ncu.txt ]] && grep -E "Duration|Executed Instructions  |Issued Warp|No Eligible|Warp Cycles Per Issued" \
  "$R/ncu.txt" | head -8
exit $t_rc
