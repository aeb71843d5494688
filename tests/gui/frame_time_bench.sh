#!/bin/bash
# The frame-time benchmark of the chat view against conversation length (#13, docs/PERFORMANCE.md): for each
# N, one linear conversation of N messages (about 60 characters each, a code block every 50th) is imported,
# the app opens on it (it reopens the last conversation) with --frame-stats, the pointer sweeps the chat
# 300 times (every move is an event, so a frame), Ctrl+Q writes the statistics. Not a test (no threshold):
# a measurement, printed as a table. Xvfb with software OpenGL, 1600x1000.
# Usage: frame_time_bench.sh BUILD_DIR [N ...]   (default N: 100 1000 10000 50000)
set -u
BUILD=$(cd "$1" && pwd); shift
SRC=$(cd "$(dirname "$0")/../.." && pwd)
APP=$BUILD/app/qwenchat CLI=$BUILD/app/qwenchat-cli
[ -x "$APP" ] || APP=$(find "$BUILD" -name qwenchat -type f -perm -u+x | head -1)
[ -x "$CLI" ] || CLI=$(find "$BUILD" -name qwenchat-cli -type f -perm -u+x | head -1)
SIZES=("$@")
[ ${#SIZES[@]} -gt 0 ] || SIZES=(100 1000 10000 50000)
for tool in Xvfb xdotool sqlite3 awk python3; do
  command -v "$tool" > /dev/null || { echo "$tool is not installed"; exit 1; }
done
. "$SRC/tests/gui/xvfb_lib.sh"
WORK=$(mktemp -d /tmp/qwenchat-frames.XXXXXX)
XVFB_PID="" APP_PID=""
cleanup() {
  [ -n "$APP_PID" ] && kill "$APP_PID" 2> /dev/null
  [ -n "$XVFB_PID" ] && kill "$XVFB_PID" 2> /dev/null
  rm -rf "$WORK"
}
trap cleanup EXIT
start_xvfb 1600x1000x24 "$WORK/xvfb.log" || { echo "no virtual display"; exit 1; }
printf "%9s %8s %10s %8s %8s %8s %8s\n" messages frames median_ms p90_ms p99_ms max_ms mean_ms
for N in "${SIZES[@]}"; do
  rm -rf "$WORK/run" && mkdir -p "$WORK/run/config/qwenchat" "$WORK/run/data"
  awk -v n="$N" 'BEGIN {
    printf "{\"format\":\"qwenchat-export\",\"version\":1,\"conversations\":[{\"title\":\"long\",\"messages\":["
    for (i = 1; i <= n; i++) {
      role = (i % 2 == 1) ? "user" : "assistant"
      printf "%s{\"id\":%d,\"parent_id\":%d,\"role\":\"%s\",\"content\":\"Message %d: the quick brown fox jumps over the lazy dog.%s\"}",
        (i > 1 ? "," : ""), i, i - 1, role, i, (i % 50 == 0 ? "\\n\\n```\\ncode\\n```" : "")
    }
    printf "]}]}\n"
  }' > "$WORK/run/long.json"
  "$CLI" import --db "$WORK/run/chat.db" --in "$WORK/run/long.json" > /dev/null || { echo "import of $N failed"; exit 1; }
  XDG_CONFIG_HOME="$WORK/run/config" XDG_DATA_HOME="$WORK/run/data" LIBGL_ALWAYS_SOFTWARE=1 \
    "$APP" --db "$WORK/run/chat.db" --model "$SRC/assets/qwenchat-default.gguf" \
    --frame-stats "$WORK/run/frames.json" > "$WORK/run/app.log" 2>&1 &
  APP_PID=$!
  wait_for 180 xdotool search --name '^qwenchat · qwenchat-default.gguf$' || { echo "no window for $N"; exit 1; }
  WIN=$(xdotool search --name '^qwenchat · qwenchat-default.gguf$' | head -1)
  sleep 1
  for i in $(seq 1 150); do
    xdotool mousemove --window "$WIN" $((500 + (i % 20) * 20)) 400
    xdotool mousemove --window "$WIN" $((520 + (i % 20) * 20)) 600
  done
  xdotool key --window "$WIN" ctrl+q
  for i in $(seq 1 300); do kill -0 "$APP_PID" 2> /dev/null || break; sleep 0.1; done
  wait "$APP_PID" 2> /dev/null
  APP_PID=""
  [ -s "$WORK/run/frames.json" ] || { echo "no frame statistics for $N: $(tail -3 "$WORK/run/app.log")"; exit 1; }
  python3 - "$N" "$WORK/run/frames.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[2]))
print("%9s %8d %10.2f %8.2f %8.2f %8.2f %8.2f" % (sys.argv[1], j["frames"], j["median_ms"], j["p90_ms"], j["p99_ms"], j["max_ms"], j["mean_ms"]))
PY
done
