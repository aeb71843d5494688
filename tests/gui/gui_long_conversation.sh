#!/bin/bash
# A 20,000-message conversation stays usable (#13): the app opens on it (it reopens the last conversation
# at start), a message typed into the box is sent and stored, the reply completes, and the app quits
# cleanly. Before the chat view drew only the visible messages and walked the branch once per frame, a
# frame cost O(n^3): such a conversation never drew a window, and 1,000 messages took 85 s to take a
# typed message (docs/PERFORMANCE.md). The waits below are hang guards, not timing thresholds.
# Usage: gui_long_conversation.sh QWENCHAT QWENCHAT_CLI SRC ARTIFACTS_DIR. Exit 77 = a tool is missing.
set -u
APP=$1 CLI=$2 SRC=$3 ART=$4
for tool in Xvfb xdotool sqlite3 awk; do
  command -v "$tool" > /dev/null || { echo "SKIP: $tool is not installed"; exit 77; }
done
. "$SRC/tests/gui/xvfb_lib.sh"
WORK=$(mktemp -d /tmp/qwenchat-gui-long.XXXXXX)
XVFB_PID="" APP_PID=""
cleanup() {
  [ -n "$APP_PID" ] && kill "$APP_PID" 2> /dev/null
  [ -n "$XVFB_PID" ] && kill "$XVFB_PID" 2> /dev/null
  rm -rf "$WORK"
}
trap cleanup EXIT
fail() {
  echo "FAIL: $*"
  [ -f "$ART/app.log" ] && { echo "--- app.log"; tail -20 "$ART/app.log"; }
  exit 1
}
rm -rf "$ART" && mkdir -p "$ART" "$WORK/config/qwenchat" "$WORK/data"

N=20000
awk -v n=$N 'BEGIN {
  printf "{\"format\":\"qwenchat-export\",\"version\":1,\"conversations\":[{\"title\":\"long\",\"messages\":["
  for (i = 1; i <= n; i++) {
    role = (i % 2 == 1) ? "user" : "assistant"
    printf "%s{\"id\":%d,\"parent_id\":%d,\"role\":\"%s\",\"content\":\"Message %d: the quick brown fox jumps over the lazy dog.%s\"}",
      (i > 1 ? "," : ""), i, i - 1, role, i, (i % 50 == 0 ? "\\n\\n```\\ncode\\n```" : "")
  }
  printf "]}]}\n"
}' > "$WORK/long.json"
"$CLI" import --db "$WORK/chat.db" --in "$WORK/long.json" > /dev/null || fail "import of $N messages"
[ "$(sqlite3 "$WORK/chat.db" "SELECT count(*) FROM messages")" = $N ] || fail "the import did not store $N messages"
echo '{"settings": {"max_tokens": 16, "random_seed": false, "seed": 1, "temperature": 0}}' \
  > "$WORK/config/qwenchat/config.json"

start_xvfb 1600x1000x24 "$WORK/xvfb.log" || fail "no virtual display (the reason is above)"
XDG_CONFIG_HOME="$WORK/config" XDG_DATA_HOME="$WORK/data" LIBGL_ALWAYS_SOFTWARE=1 \
  "$APP" --db "$WORK/chat.db" --model "$SRC/assets/qwenchat-default.gguf" > "$ART/app.log" 2>&1 &
APP_PID=$!
wait_for 120 xdotool search --name '^qwenchat · qwenchat-default.gguf$' || fail "no window on a $N-message conversation"
WIN=$(xdotool search --name '^qwenchat · qwenchat-default.gguf$' | head -1)
xdotool mousemove --window "$WIN" 700 925 click 1
xdotool type --delay 20 "What is 17 + 25?"
xdotool keydown Return; sleep 0.2; xdotool keyup Return
stored() { [ "$(sqlite3 "$WORK/chat.db" "SELECT count(*) FROM messages WHERE content='What is 17 + 25?' AND parent_id=$N")" = 1 ]; }
wait_for 120 stored || fail "the typed message was not stored under message $N"
replied() {
  [ "$(sqlite3 "$WORK/chat.db" "SELECT count(*) FROM messages WHERE role='assistant' AND state='complete' AND id > $N")" = 1 ]
}
wait_for 120 replied || fail "no complete reply after the typed message"
echo "reply: $(sqlite3 "$WORK/chat.db" "SELECT content FROM messages WHERE role='assistant' AND id > $N")"
xdotool key ctrl+q
for i in $(seq 1 100); do kill -0 "$APP_PID" 2> /dev/null || break; sleep 0.1; done
kill -0 "$APP_PID" 2> /dev/null && fail "Ctrl+Q did not end the app"
wait "$APP_PID"; rc=$?
APP_PID=""
[ $rc = 0 ] || fail "the app exited with $rc"
[ "$(sqlite3 "$WORK/chat.db" "PRAGMA integrity_check")" = ok ] || fail "database integrity"
echo "PASS: $N messages, a typed message stored and answered, clean quit"
