#!/usr/bin/env bash
# One device call that judges the tensor-core GEMV (mma, mma_h; kernels/gemv_q8/gemv_q8_mma.cu) and measures
# what #15 asks of it, each step while the 600 s call has time for it (~9 min on an H100):
#   build (the GPU tests and both benches); the GPU tests of the Q8_0 GEMVs, the variant table, the
#   speculative commit and the every-variant oracle (FILTER overrides the gtest filter); on an H200 #12's
#   prompt-path gate (one round, resident f16 weights); qwenchat-gemv-bench --variants tile,tile_h,mma,mma_h
#   (% of the read ceiling at M = 1..4 per 27B shape, each M's time over M = 1's); qwenchat-bench on the
#   27B preset in Q8_0, tile / mma / tile_h / mma_h, with --passes (each row's M = 2..4 verification passes
#   and the MTP projection); the default model's measured MTP speed-up with tile and mma.
#   OUT=$OUT tools/device/mma_call.sh    # carry [".device/root"]
set -u
R=$OUT
export QWENCHAT_DEVICE_PREFIX=$PWD/.device/root/usr
# shellcheck source-path=SCRIPTDIR source=prefix_env.sh
source "$(dirname "${BASH_SOURCE[0]}")/prefix_env.sh"
export PATH=/usr/local/cuda/bin:$PATH
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$R/device.txt"
cmake -S . -B build-after -G Ninja -DCMAKE_CUDA_ARCHITECTURES=90 -DQWENCHAT_GUI=OFF -DQWENCHAT_CUDA=ON \
  -DQWENCHAT_WERROR=OFF > "$R/cfg.log" 2>&1
if ! ninja -C build-after -j"$(nproc)" qwenchat_gpu_tests qwenchat-bench qwenchat-gemv-bench > "$R/build.log" 2>&1; then
  grep -E "error" "$R/build.log" | head
  exit 1
fi
echo "== built $(date +%T) (${SECONDS}s)"
find_bin() { find build-after -name "$1" -type f -perm -u+x | head -1; }
T=$(find_bin qwenchat_gpu_tests)
G=$(find_bin qwenchat-gemv-bench)
B=$(find_bin qwenchat-bench)
left() { echo $((585 - SECONDS)); }
filter=${FILTER:-GemvQ8*:Host*:CudaBackendSpeculative.*:CudaBackend.EveryVariantMatchesOracle:BlockQuantKernels.Auto*}
timeout 110 "$T" --gtest_color=no --gtest_filter="$filter" > "$R/gpu-tests.log" 2>&1
echo "== tests rc=$? $(date +%T) (${SECONDS}s)"
grep -E "^\[  (PASSED|FAILED|SKIPPED) \]|Failure|FAILED" "$R/gpu-tests.log" | head -30
if grep -q H200 "$R/device.txt"; then # #12's gate when an H200 came: one round
  timeout 110 "$B" --only-prefill --prefill 512,2048,8192 --reuse 8000,100 > "$R/prefill-1.log" 2>&1
  echo "== prefill rc=$? $(date +%T) (${SECONDS}s)"
  grep -E "prompt path:|prefill +[0-9]+ tokens|time to first token|resident" "$R/prefill-1.log" | head -20
fi
if (($(left) > 100)); then
  timeout $(($(left) > 230 ? 120 : $(left) - 100)) "$G" --variants tile,tile_h,mma,mma_h --budget 100 \
    --json "$R/gemv-variants.json" > "$R/gemv-variants.log" 2>&1
  echo "== gemv rc=$? $(date +%T) (${SECONDS}s)"
fi
if (($(left) > 130)); then
  timeout $(($(left) - 60)) "$B" --weights q8_0 --variants tile,mma,tile_h,mma_h --contexts 0 --tokens 32 \
    --quick --passes --budget $(($(left) - 110)) > "$R/decode-q8.log" 2>&1
  echo "== decode rc=$? $(date +%T) (${SECONDS}s)"
fi
if (($(left) > 50)); then
  timeout "$(left)" "$B" --model assets/qwenchat-default.gguf --variants tile,mma --contexts 0 --tokens 32 \
    --quick --passes --budget $(($(left) - 25)) > "$R/default-model.log" 2>&1
  echo "== default model rc=$? $(date +%T) (${SECONDS}s)"
fi
sed -n '/==== variants/,$p' "$R/gemv-variants.log" 2> /dev/null
grep -E "^(tile|mma)[a-z_]* +0 " "$R/decode-q8.log" 2> /dev/null
grep -E "MTP on the model|draft [0-9]|no MTP" "$R/default-model.log" 2> /dev/null
