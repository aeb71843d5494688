#!/usr/bin/env bash
# The calls waiting since the fourteenth session, in one prebuilt call that does the most important thing
# first for whichever card comes (~5 min on an H200, ~4 on an H100, after the machine's ~130 s start):
#
#   SHORT_DIR=.xfer/short2 SHORT_SLIM=test_attention SHORT_BUILD=build \
#     tools/device/short_call.sh pack slim-tests bench        # here: 1.1 + 16.7 MB, transfer 58 MB
#   OUT=$OUT tools/device/waiting_call.sh                     # device call, carry [".xfer/short2"]
#
# On an H200 (more than 100 GB): #12's gate first (the prompt path at 512, 2048 and 8192 tokens with the
# resident f16 weights, the 100-token message after 8000), then, time allowing, 512 tokens with the
# cuBLASLt algorithms picked for 512 rows, not 1024 (--prefill-rows 512: are the N = 5120 projections' large
# tiles, 64-80 of them at 512 rows on 132 SMs, what holds 512 back?). Then on any card: the attention GPU
# tests and the decode attention's K / V batch (kv_ahead 1 against 4, tile_h, Q8_0, contexts 0 and 32768).
# WAIT_BUDGET (seconds, default 480) is what the call may take; steps that would not fit are skipped.
set -u
export SHORT_DIR=.xfer/short2
budget=${WAIT_BUDGET:-480}
mem=$(nvidia-smi --query-gpu=memory.total --format=csv,noheader,nounits | head -1)
mem=${mem:-0}
if ((mem > 100000)); then
  (
    export LD_LIBRARY_PATH=$PWD/$SHORT_DIR/lib
    xz -dc "$SHORT_DIR/bench.xz" > /tmp/wait-bench && chmod +x /tmp/wait-bench
    nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
    timeout 170 /tmp/wait-bench --only-prefill --prefill 512,2048,8192 --reuse 8000,100 --json "$OUT/prefill.json" \
      > "$OUT/prefill.log" 2>&1
    echo "== prefill gate rc=$? $(date +%T)"
    grep -E "^loaded|^prompt path|prefill +[0-9]+ tokens|time to first|where the kept" "$OUT/prefill.log"
    if ((budget - SECONDS > 260)); then
      timeout 45 /tmp/wait-bench --only-prefill --prefill 512 --prefill-rows 512 > "$OUT/prefill-rows512.log" 2>&1
      echo "== prefill, 512-row plan rc=$? $(date +%T)"
      grep -E "prefill +[0-9]+ tokens" "$OUT/prefill-rows512.log"
    fi
  )
fi
left=$((budget - SECONDS))
if ((left < 120)); then
  echo "== attention step skipped: ${left} s left"
  exit 0
fi
# Two decode runs and the tests in what is left: each run's limit is a third of it, at most 90 s.
per=$((left / 3 > 90 ? 90 : left / 3))
contexts=0,32768
((per < 70)) && contexts=32768  # the 32k row is the one to read; ctx 0 should not move
SHORT_T_BENCH=$per SHORT_T_TESTS=40 SHORT_FILTER='Attention.*' SHORT_KV_AHEAD=1,4 SHORT_WEIGHTS=q8_0 \
  DECODE_VARIANTS=tile_h DECODE_CONTEXTS=$contexts tools/device/short_call.sh run
