#!/usr/bin/env bash
# A device call for a short budget: binaries built here (Debian 12, sm_90) travel in the ignored .xfer/short,
# so the call skips the ~2 min build (verify_call.sh LEAN builds first) and fits what is left after a
# machine's ~130 s start.
#
#   SHORT_BUILD=build tools/device/short_call.sh pack gemv-bench gpu-tests   # here, after a CUDA build
#   OUT=$OUT tools/device/short_call.sh run     # device call, carry [".xfer/short"]
#
# pack: strips and xz-compresses the named programs of the CUDA build in $SHORT_BUILD (gemv-bench, gpu-tests,
# bench), in the order given, with the shared libraries they load from Debian (PCRE2, SentencePiece,
# utf8proc: the GPU machine has none), and stops before the first that would make the call's transfer
# (tracked files + .xfer/short) exceed its 64 MiB. Measured 2026-12-07 at e22f841: tracked files 38.2 MB,
# so 28.9 MB remain; gemv-bench 13.8 MB, gpu-tests 16.3 MB, bench 15.8 MB, libraries 2.2 MB (the fatbins,
# sm_90 code and compute_90 PTX, are most of each and xz gains little on them): one of the three fits with
# room, gemv-bench + gpu-tests do not.
# run: unpacks what travelled and runs, each under its own limit, logs in $OUT (the steps and the summary
# are verify_call.sh's, steps.sh):
#   gemv-bench  qwenchat-gemv-bench --blocks ${SHORT_BLOCKS:-q4_k} --quick --block-forms $SHORT_FORMS
#               (default hlauto,hlpick,hlg,hauto,hg: the register engine, kAuto's pick, the segment engine)
#   gpu-tests   qwenchat_gpu_tests --gtest_filter=${SHORT_FILTER:-BlockQuantKernels.*:KQuantModel.*}
#   bench       qwenchat-bench --weights ${SHORT_WEIGHTS:-q4_k_m} --variants tile,tile_h --contexts 0
#               --tokens 32 --quick --budget 60 ${SHORT_BENCH_ARGS:---block-engines registers,auto}
set -u -o pipefail
DIR=.xfer/short
declare -A SRC=([gemv-bench]=kernels/qwenchat-gemv-bench [gpu-tests]=tests/gpu/qwenchat_gpu_tests
  [bench]=app/qwenchat-bench)
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
  local f
  for f in "$DIR"/*.xz; do
    [[ -f $f ]] || continue
    local to
    to=/tmp/$(basename "$f" .xz)
    xz -dc "$f" > "$to" 2> /dev/null ||
      python3 -c "import lzma,sys; sys.stdout.buffer.write(lzma.open(sys.argv[1]).read())" "$f" > "$to"
    chmod +x "$to"
  done
  [[ -x /tmp/gemv-bench ]] &&
    SWEEP_BLOCKS=${SHORT_BLOCKS:-q4_k} sweep_step /tmp/gemv-bench "${SHORT_FORMS:-hlauto,hlpick,hlg,hauto,hg}" \
      "${SHORT_T_SWEEP:-110}"
  if [[ -x /tmp/gpu-tests ]]; then
    timeout "${SHORT_T_TESTS:-60}" /tmp/gpu-tests --gtest_color=no \
      --gtest_filter="${SHORT_FILTER:-BlockQuantKernels.*:KQuantModel.*}" > "$OUT/gpu-tests.log" 2>&1
    echo "== tests rc=$? $(date +%T)"
  fi
  [[ -x /tmp/bench ]] && decode_step /tmp/bench "${SHORT_WEIGHTS:-q4_k_m}" "${SHORT_T_BENCH:-60}" \
    "${SHORT_BENCH_ARGS:---block-engines registers,auto}"
  summary_step
}

case ${1:-} in
  pack) shift && pack "$@" ;;
  run) run ;;
  *) sed -n '2,22p' "$0" && exit 2 ;;
esac
