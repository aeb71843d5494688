#!/usr/bin/env bash
# Step 4 of the recipe as one device call: trains the default model on the GPU while the engine builds on
# the otherwise idle CPU cores (niced, 12 of 16 jobs), so that gpu_measure.sh, chained right after on the
# same warm machine, finds both the checkpoint and the build (build-device/, build-device-keep/: ignored
# folders, kept between calls while the machine stays warm).
#
#   run  carry: [".xfer/model", ".device/root"]  timeout_s: 600  command: assets/recipe/gpu_train.sh
#
# .xfer/model holds train.u16.xz and valid.u16 (recipe README, steps 1-3);
# .device/root is tools/device/make_prefix.sh's library prefix. $OUT gets the checkpoint (config.json, the
# index, the F16 shards, metrics.json), train.log and build_logs.tgz: 8 files, the device tool's limit.
# TRAIN_SECONDS (default 470) is the cosine schedule's length in wall-clock seconds of training.
set -u -o pipefail
T_END=$(( $(date +%s) + 580 ))  # inside the device tool's 600 s per call, with room for the tar
ROOT=$(pwd)
OUT=${OUT:-$ROOT/device_out}
KEEP=$ROOT/build-device-keep
mkdir -p "$OUT" "$KEEP/logs" "$KEEP/ckpt"
(OUT=$KEEP/logs QWENCHAT_DEVICE_JOBS=12 QWENCHAT_DEVICE_PREFIX=$ROOT/.device/root/usr QWENCHAT_GPU_STEPS="info build" \
  nice -n 15 tools/device/gpu_run.sh > "$KEEP/logs/build_console.txt" 2>&1) &
build_pid=$!
(PYTHONUNBUFFERED=1 python3 assets/recipe/train.py --data .xfer/model --out "$OUT" --device cuda --batch 64 --seq 512 \
  --lr 2e-3 --warmup 150 --train-seconds "${TRAIN_SECONDS:-470}" --save-every 60) 2>&1 | tee "$OUT/train.log"
train_rc=$?
cp "$OUT"/config.json "$OUT"/model.safetensors.index.json "$OUT"/model-*.safetensors "$OUT"/metrics.json "$KEEP/ckpt/"
while kill -0 "$build_pid" 2> /dev/null && (( $(date +%s) < T_END )); do sleep 2; done
kill -0 "$build_pid" 2> /dev/null && echo "build still running at the call's end: gpu_measure.sh's ninja finishes it"
tar czf "$OUT/build_logs.tgz" -C "$KEEP/logs" .
echo "==== build (in parallel) ===="
cat "$KEEP/logs/build_console.txt"
echo "==== train rc=$train_rc; $(ls "$KEEP/ckpt" | tr '\n' ' ')"
exit "$train_rc"
