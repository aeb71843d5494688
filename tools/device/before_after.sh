#!/usr/bin/env bash
# "No behaviour change" on the GPU (issue #11): the same GPU tests, the same CLI greedy texts and the same
# benchmarks on a before tree and on this tree, on one machine, so that a refactoring is judged by what it
# runs, not by how it reads. The before tree is a git archive of its commit that travels in the ignored
# .xfer/ (carry it):
#   git archive --format=tar.gz -o .xfer/before-COMMIT.tar.gz COMMIT -- CMakeLists.txt engine kernels app \
#     tests cmake tools scripts third_party packaging README.md LICENSE
# Phases (BA_PHASE), each one device call, chained while the machine is warm:
#   build  unpack the before tree (assets/ linked from this one), build both side by side (half the cores each)
#   tests  every GPU test, the CUDA worker and state-reuse unit tests, the CLI's greedy texts per kernel
#          variant on one generated model, for both trees
#   bench  whole-token decode and the prompt path of the 27B preset, alternating before, after, before, after
# Environment: OUT (logs), QWENCHAT_DEVICE_PREFIX (the Debian libraries, as for gpu_run.sh), BA_BEFORE (the
# archive; default the only .xfer/before-*.tar.gz), BA_DECODE_ARGS / BA_PREFILL_ARGS (qwenchat-bench),
# BA_ONLY=after (this tree alone, all jobs: when the before figures are already measured on this card
# kind; the texts are then compared across the variants, which must agree with each other).
set -u -o pipefail
ROOT=$(pwd)
OUT=${OUT:-$ROOT/device_out}
mkdir -p "$OUT"
PHASE=${BA_PHASE:-build}
ARCHIVE=${BA_BEFORE:-$(ls "$ROOT"/.xfer/before-*.tar.gz 2>/dev/null | head -1)}
BEFORE=$ROOT/.xfer/before
TREES=${BA_ONLY:-before after}
if [[ $TREES == "before after" ]]; then JOBS=$(( $(nproc) / 2 )); else JOBS=$(nproc); fi
# shellcheck source-path=SCRIPTDIR source=prefix_env.sh
source "$(dirname "${BASH_SOURCE[0]}")/prefix_env.sh"
export PATH="/usr/local/cuda/bin:$PATH"
log() { echo "[before_after $(date +%H:%M:%S)] $*"; }
bin() { find "$1" -name "$2" -type f -perm -u+x | head -1; }

build_tree() {  # $1 source, $2 build dir, $3 log name
  cmake -S "$1" -B "$2" -G Ninja -DCMAKE_CUDA_ARCHITECTURES=90 -DQWENCHAT_GUI=OFF -DQWENCHAT_CUDA=ON \
    -DQWENCHAT_WERROR=OFF > "$OUT/$3-configure.log" 2>&1 || return 1
  ninja -C "$2" -j"$JOBS" qwenchat_gpu_tests qwenchat_unit_tests qwenchat-bench qwenchat-cli qwenchat-mkmodel \
    qwenchat-gemv-bench \
    > "$OUT/$3-build.log" 2>&1
}

if [[ $PHASE == build ]]; then
  if [[ $TREES == "after" ]]; then
    log "building this tree alone, $JOBS jobs"
    build_tree "$ROOT" "$ROOT/build-after" after; r=$?
    log "build after rc=$r"
    grep -E "error:|FAILED" "$OUT/after-build.log" | grep -v ptxas | head -10
    exit $r
  fi
  [[ -f "$ARCHIVE" ]] || { log "no before archive (.xfer/before-*.tar.gz)"; exit 1; }
  if [[ ! -d "$BEFORE" ]]; then
    mkdir -p "$BEFORE" && tar xzf "$ARCHIVE" -C "$BEFORE" && ln -s "$ROOT/assets" "$BEFORE/assets"
  fi
  log "building $(basename "$ARCHIVE") and this tree, $JOBS jobs each"
  build_tree "$BEFORE" "$ROOT/build-before" before & p1=$!
  build_tree "$ROOT" "$ROOT/build-after" after & p2=$!
  wait $p1; r1=$?; wait $p2; r2=$?
  log "build before rc=$r1, after rc=$r2"
  for t in before after; do grep -E "error:|FAILED" "$OUT/$t-build.log" | grep -v ptxas | head -10; done
  exit $(( r1 + r2 ))
fi

if [[ $PHASE == tests ]]; then
  rc=0
  model=$ROOT/build-after/ba-0.8b-4l.gguf
  [[ -f $model ]] || timeout 120 "$(bin "$ROOT/build-after" qwenchat-mkmodel)" --preset 0.8b --layers 4 --vocab 4096 \
    --seed 5 --out "$model" --quiet
  for t in $TREES; do
    b=$ROOT/build-$t
    timeout 300 "$(bin "$b" qwenchat_gpu_tests)" --gtest_color=no > "$OUT/$t-gpu-tests.log" 2>&1 || rc=1
    timeout 240 "$(bin "$b" qwenchat_unit_tests)" --gtest_color=no --gtest_filter='WorkerCuda*:PrefixReuse*:*Cuda*' \
      > "$OUT/$t-unit-cuda-tests.log" 2>&1 || rc=1
    cli=$(bin "$b" qwenchat-cli)
    : > "$OUT/$t-cli-texts.txt"
    for args in "" "--gemv hl" "--gemv hu" "--gemv tile_h" "--gemv sk --splitk 8" "--gemv deq" "--graph off" \
                "--fuse off" "--pdl off" "--probes on" "--mtp on --draft 2" "--backend cpu"; do
      be=(--backend cuda); [[ "$args" == "--backend cpu" ]] && be=()
      # shellcheck disable=SC2086
      timeout 30 "$cli" generate --prompt "The GPU says hello" --max-tokens 32 --temperature 0 --model "$model" \
        "${be[@]}" $args > "$OUT/cli.out" 2>/dev/null
      echo "rc=$? ${args:-default}: $(md5sum < "$OUT/cli.out" | cut -c1-12)" >> "$OUT/$t-cli-texts.txt"
    done
    rm -f "$OUT/cli.out"
  done
  echo "==== tests: $TREES ===="
  for f in gpu-tests unit-cuda-tests; do
    for t in $TREES; do
      printf '%-16s %-7s %s\n' "$f" "$t" "$(grep -E '^\[==========\] .* ran|^\[  PASSED  \]|^\[  FAILED  \] [0-9]|^\[  SKIPPED \] [0-9]' \
        "$OUT/$t-$f.log" | tr '\n' ' ' | cut -c1-200)"
    done
    for t in $TREES; do grep -hE "^\[  FAILED  \] [A-Za-z]" "$OUT/$t-$f.log"; done | sort | uniq -c | head -20
  done
  if [[ $TREES == "after" ]]; then  # every variant and switch gives the same greedy text on this model
    echo "==== CLI greedy texts (md5 of 32 tokens), this tree ===="
    cat "$OUT/after-cli-texts.txt"
    if [[ $(grep -c "^rc=0 " "$OUT/after-cli-texts.txt") -eq 12 && $(sed 's/.*: //' "$OUT/after-cli-texts.txt" | sort -u | wc -l) -eq 1 ]]; then
      echo "texts: identical across variants"
    else
      echo "texts: DIFFER"; rc=1
    fi
    exit $rc
  fi
  echo "==== CLI greedy texts (md5 of 32 tokens), before | after ===="
  paste -d'|' "$OUT/before-cli-texts.txt" "$OUT/after-cli-texts.txt"
  if cmp -s "$OUT/before-cli-texts.txt" "$OUT/after-cli-texts.txt"; then echo "texts: identical"; else echo "texts: DIFFER"; rc=1; fi
  exit $rc
fi

if [[ $PHASE == bench ]]; then
  rc=0
  for round in 1 2; do
    for t in $TREES; do
      b=$ROOT/build-$t
      # shellcheck disable=SC2086
      timeout 200 "$(bin "$b" qwenchat-bench)" --json "$OUT/$t-$round-bench.json" --budget 150 \
        ${BA_DECODE_ARGS:---variants tile,hu --contexts 0,4096 --tokens 64 --prefill 512,2048 --reuse 8000,100} \
        > "$OUT/$t-$round-bench.log" 2>&1 || rc=1
      echo "==== $t, round $round ===="
      grep -E "prefill +[0-9]+ tokens|time to first token|ERROR" "$OUT/$t-$round-bench.log" | head -6
      sed -n '/==== summary/,$p' "$OUT/$t-$round-bench.log" | head -10
    done
  done
  exit $rc
fi
log "unknown BA_PHASE $PHASE (build, tests, bench)"
exit 2
