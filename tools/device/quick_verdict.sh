set -u
export QWENCHAT_DEVICE_PREFIX=$PWD/.device/root/usr
source tools/device/prefix_env.sh
export PATH=/usr/local/cuda/bin:$PATH
nvidia-smi --query-gpu=name --format=csv,noheader
cmake -S . -B build-after -G Ninja -DCMAKE_CUDA_ARCHITECTURES=90 -DQWENCHAT_GUI=OFF -DQWENCHAT_CUDA=ON -DQWENCHAT_WERROR=OFF > $OUT/configure.log 2>&1 || { tail -5 $OUT/configure.log; exit 1; }
ninja -C build-after -j16 qwenchat_gpu_tests > $OUT/build.log 2>&1 || { grep error $OUT/build.log | head; exit 1; }
echo "built $SECONDS s"
gt=$(find build-after -name qwenchat_gpu_tests -type f | head -1)
timeout 100 $gt --gtest_color=no --gtest_filter='*GdnPrefill*:*GdnScans*:Attention.*' > $OUT/tests.log 2>&1
echo "tests rc=$? $SECONDS s"
grep -E "^\[  (PASSED|FAILED) |^\[  FAILED  \] [A-Z]" $OUT/tests.log | head -20
