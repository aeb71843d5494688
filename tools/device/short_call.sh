#!/usr/bin/env bash
# A device call for a short budget: binaries built here (Debian 12, sm_90) travel in the ignored .xfer/short,
# so the call skips the ~2 min build (verify_call.sh LEAN builds first) and fits what is left after a
# machine's ~130 s start.
#
#   SHORT_BUILD=build tools/device/short_call.sh pack gemv-bench gpu-tests   # here, after a CUDA build
#   OUT=$OUT tools/device/short_call.sh run     # device call, carry [".xfer/short"]
#
# pack: strips and xz-compresses the named programs of the CUDA build in $SHORT_BUILD (gemv-bench, gpu-tests,
# bench, slim-tests: the Q8_0 GEMV / GEMM GPU tests alone, linked here from the build's objects, 4.7 MB
# against gpu-tests' 16.3, so that it fits beside gemv-bench), in the order given, with the shared libraries they load from Debian (PCRE2, SentencePiece,
# utf8proc: the GPU machine has none), and stops before the first that would make the call's transfer
# (tracked files + .xfer/short) exceed its 64 MiB. Measured 2026-12-07 at e22f841: tracked files 38.2 MB,
# so 28.9 MB remain; gemv-bench 13.8 MB, gpu-tests 16.3 MB, bench 15.8 MB, libraries 2.2 MB (the fatbins,
# sm_90 code and compute_90 PTX, are most of each and xz gains little on them): one of the three fits with
# room, gemv-bench + gpu-tests do not.
# run: unpacks what travelled and runs, each under its own limit, logs in $OUT (the steps and the summary
# are verify_call.sh's, steps.sh):
#   gemv-bench  qwenchat-gemv-bench --blocks ${SHORT_BLOCKS:-q4_k} --quick --block-forms $SHORT_FORMS
#               (default hlauto,hlpick,hlg,hauto,hg: the register engine, kAuto's pick, the segment engine)
#               or, with SHORT_VARIANTS (e.g. tile_h,mma,mma_h), --variants $SHORT_VARIANTS (each variant and
#               schedule at M = 1..4 per 27B shape), then Nsight Compute on one launch of each kernel that
#               SHORT_NCU names (comma-separated mangled-name regexes, e.g. gemv_mma_kernelILb0ELi2ELb0ELb1ELb1E)
#   gpu-tests   qwenchat_gpu_tests --gtest_filter=${SHORT_FILTER:-BlockQuantKernels.*:KQuantModel.*}
#   slim-tests  the same filter (default GemvQ8*:GemmQ8* for it)
#   bench       qwenchat-bench --weights ${SHORT_WEIGHTS:-q4_k_m} --variants ${DECODE_VARIANTS:-tile,tile_h}
#               --contexts ${DECODE_CONTEXTS:-0} --tokens 32 --quick ${SHORT_BENCH_ARGS:---block-engines
#               registers,auto}; with SHORT_KV_AHEAD (e.g. 1,4) once per value with --kv-ahead
set -u -o pipefail
DIR=${SHORT_DIR:-.xfer/short}  # another folder per call lets two packed calls chain within the 30 s warm window
declare -A SRC=([gemv-bench]=kernels/qwenchat-gemv-bench [gpu-tests]=tests/gpu/qwenchat_gpu_tests
  [bench]=app/qwenchat-bench [slim-tests]=slim-tests)
# The slim test binary's objects (tests/gpu/CMakeLists.txt's sources): the Q8_0 GEMV / GEMM tests, or those
# SHORT_SLIM names (kernel tests only: a test of the backend pulls in every kernel, 16.8 MB).
# shellcheck disable=SC2206  # the list is split on purpose
SLIM_OBJECTS=(cpu_ref test_00_device ${SHORT_SLIM:-test_gemv_q8 test_gemv_q8_mma test_gemm_q8})
link_slim() {  # build -> $build/slim-tests
  local o=$1/tests/gpu/CMakeFiles/qwenchat_gpu_tests.dir objs=() name
  for name in "${SLIM_OBJECTS[@]}"; do objs+=("$o/$name.cpp.o"); done
  g++ -O2 -o "$1/slim-tests" "${objs[@]}" "$1/kernels/libqwenchat_kernels.a" -lgtest -lgtest_main \
    -L/usr/local/cuda/targets/x86_64-linux/lib -lcudadevrt -lcudart_static -lrt -lpthread -ldl
}
LIMIT=$((64 * 1024 * 1024))
# shellcheck source-path=SCRIPTDIR source=steps.sh
source "$(dirname "${BASH_SOURCE[0]}")/steps.sh"

pack() {
  local build=${SHORT_BUILD:-build}
  [[ $# -gt 0 ]] || { echo "short_call.sh pack: name programs: gemv-bench, gpu-tests, bench" >&2; return 2; }
  local tracked
  tracked=$(git ls-files -z | python3 -c \
    "import os,sys; print(sum(os.path.getsize(f) for f in sys.stdin.read().split('\0') if os.path.isfile(f)))")
  rm -rf "$DIR" && mkdir -p "$DIR/lib"
  local lib
  for lib in libpcre2-8.so.0 libsentencepiece.so.0 libutf8proc.so.2; do
    cp -L "/lib/x86_64-linux-gnu/$lib" "$DIR/lib/" || return 1
  done
  local name
  for name in "$@"; do
    if [[ $name == slim-tests ]]; then link_slim "$build" || return 1; fi
    local bin=$build/${SRC[$name]:-}
    [[ -n ${SRC[$name]:-} && -x $bin ]] || { echo "short_call.sh pack: no $name in $build" >&2; return 1; }
    strip -o "/tmp/short-$name" "$bin" && xz -T0 -6 -c "/tmp/short-$name" > "$DIR/$name.xz" && rm "/tmp/short-$name"
    local total=$((tracked + $(du -sb "$DIR" | cut -f1)))
    if ((total > LIMIT)); then
      rm "$DIR/$name.xz"
      echo "short_call.sh pack: $name left out: the transfer would be $((total / 1000000)) MB (64 MiB at most)"
      break
    fi
    echo "short_call.sh pack: $name packed, transfer $((total / 1000000)) MB"
  done
}

run() {
  export LD_LIBRARY_PATH=$PWD/$DIR/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/device.txt"
  # A fresh folder per call: a second call on the same warm machine must not run the first one's programs.
  local B=/tmp/short-bin f
  rm -rf "$B" && mkdir -p "$B"
  for f in "$DIR"/*.xz; do
    [[ -f $f ]] || continue
    local to
    to=$B/$(basename "$f" .xz)
    xz -dc "$f" > "$to" 2> /dev/null ||
      python3 -c "import lzma,sys; sys.stdout.buffer.write(lzma.open(sys.argv[1]).read())" "$f" > "$to"
    chmod +x "$to"
  done
  if [[ -x "$B/slim-tests" ]]; then
    timeout "${SHORT_T_TESTS:-100}" "$B/slim-tests" --gtest_color=no \
      --gtest_filter="${SHORT_FILTER:-GemvQ8*:GemmQ8*}" > "$OUT/gpu-tests.log" 2>&1
    echo "== slim tests rc=$? $(date +%T)"
  fi
  if [[ -x "$B/gemv-bench" && -n ${SHORT_VARIANTS:-} ]]; then
    variants_step "$B/gemv-bench" "$SHORT_VARIANTS" "${SHORT_T_SWEEP:-145}"
    local k
    for k in ${SHORT_NCU//,/ }; do ncu_step "$B/gemv-bench" "$k" "${SHORT_VARIANTS##*,}"; done
  elif [[ -x "$B/gemv-bench" ]]; then
    SWEEP_BLOCKS=${SHORT_BLOCKS:-q4_k} sweep_step "$B/gemv-bench" "${SHORT_FORMS:-hlauto,hlpick,hlg,hauto,hg}" \
      "${SHORT_T_SWEEP:-110}"
  fi
  if [[ -x "$B/gpu-tests" ]]; then
    timeout "${SHORT_T_TESTS:-60}" "$B/gpu-tests" --gtest_color=no \
      --gtest_filter="${SHORT_FILTER:-BlockQuantKernels.*:KQuantModel.*}" > "$OUT/gpu-tests.log" 2>&1
    echo "== tests rc=$? $(date +%T)"
  fi
  if [[ -x "$B/bench" && -n ${SHORT_KV_AHEAD:-} ]]; then  # the decode attention's K / V batch, one run each
    local kv
    for kv in ${SHORT_KV_AHEAD//,/ }; do
      DECODE_BUDGET=$((${SHORT_T_BENCH:-90} - 30)) decode_step "$B/bench" "${SHORT_WEIGHTS:-q4_k_m}" \
        "${SHORT_T_BENCH:-90}" "${SHORT_BENCH_ARGS:-} --kv-ahead $kv" "kv$kv"
    done
  elif [[ -x "$B/bench" ]]; then
    decode_step "$B/bench" "${SHORT_WEIGHTS:-q4_k_m}" "${SHORT_T_BENCH:-60}" \
      "${SHORT_BENCH_ARGS:---block-engines registers,auto}"
  fi
  summary_step
}

case ${1:-} in
  pack) shift && pack "$@" ;;
  run) run ;;
  *) sed -n '2,22p' "$0" && exit 2 ;;
esac
