#!/usr/bin/env bash
# Issue #12's gate in one lean device call (~5 min on an H200): build qwenchat-bench alone, then the prompt
# path of the 27B preset at the default chunk size (2048 rows) and at 1024 rows. Needs the H200's memory for
# the resident f16 weights (on an 80 GB card they do not fit and prompts dequantise per chunk).
# Environment: OUT (logs), QWENCHAT_DEVICE_PREFIX (the Debian libraries, as for gpu_run.sh).
set -u -o pipefail
OUT=${OUT:-$(pwd)/device_out}
mkdir -p "$OUT"
# shellcheck source-path=SCRIPTDIR source=prefix_env.sh
source "$(dirname "${BASH_SOURCE[0]}")/prefix_env.sh"
export PATH="/usr/local/cuda/bin:$PATH"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
cmake -S . -B build-after -G Ninja -DCMAKE_CUDA_ARCHITECTURES=90 -DQWENCHAT_GUI=OFF -DQWENCHAT_CUDA=ON \
  -DQWENCHAT_WERROR=OFF > "$OUT/configure.log" 2>&1 || { tail -20 "$OUT/configure.log"; exit 1; }
ninja -C build-after -j"$(nproc)" qwenchat-bench > "$OUT/build.log" 2>&1 || { grep -E "error" "$OUT/build.log" | head; exit 1; }
echo "built $(date +%T)"
bench=$(find build-after -name qwenchat-bench -type f | head -1)
timeout 170 "$bench" --only-prefill --prefill 512,2048,8192 --reuse 8000,100 --json "$OUT/bench-1.json" \
  > "$OUT/bench-1.log" 2>&1
echo "== bench 1: default rc=$?"
grep -E "^loaded|^prompt path|prefill +[0-9]+ tokens|time to first|^  (attention|gdn|mtp eh_proj|sum) " \
  "$OUT/bench-1.log" | head -14
timeout 120 "$bench" --only-prefill --prefill 512,2048 --reuse 8000,100 --prefill-rows 1024 > "$OUT/bench-2.log" 2>&1
echo "== bench 2: --prefill-rows 1024 rc=$?"
grep -E "prefill +[0-9]+ tokens|time to first" "$OUT/bench-2.log" | head -4
