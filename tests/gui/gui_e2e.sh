#!/bin/bash
# End-to-end test of the desktop app under Xvfb: a seeded database (a demo conversation), the tiny model,
# a message typed with xdotool, the reply awaited in SQLite, captures of every panel (F12) checked not
# blank, a clean quit (Ctrl+Q) that leaves the configuration in XDG_CONFIG_HOME and nothing in the CWD,
# and the no-display path (a message and exit status 1).
# Usage: gui_e2e.sh QWENCHAT MKMODEL SEED ARTIFACTS_DIR. Exit 77 = skipped (a tool is missing).
set -u
APP=$1 MKMODEL=$2 SEED=$3 ART=$4

for tool in Xvfb xdotool import identify sqlite3; do
  if ! command -v "$tool" >/dev/null; then
    echo "SKIP: $tool is not installed (apt-get install xvfb xdotool imagemagick sqlite3)"
    exit 77
  fi
done

WORK=$(mktemp -d /tmp/qwenchat-gui-e2e.XXXXXX)
XVFB_PID="" APP_PID=""
cleanup() {
  [ -n "$APP_PID" ] && kill "$APP_PID" 2>/dev/null
  [ -n "$XVFB_PID" ] && kill "$XVFB_PID" 2>/dev/null
  rm -rf "$WORK"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; [ -f "$ART/app.log" ] && { echo "--- app log"; cat "$ART/app.log"; }; exit 1; }
# shellcheck source=xvfb_lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/xvfb_lib.sh"

rm -rf "$ART" && mkdir -p "$ART" "$WORK/config" "$WORK/data" "$WORK/cwd"

# 1. Without a display: a clear message and status 1, never a crash.
out=$(cd "$WORK/cwd" && env -u DISPLAY -u WAYLAND_DISPLAY "$APP" --db "$WORK/nodisplay.db" 2>&1); rc=$?
[ $rc -eq 1 ] || fail "no display: expected exit status 1, got $rc ($out)"
echo "$out" | grep -q "no display" || fail "no display: message was: $out"

# 2. Inputs: the tiny model and a database holding the demo conversation.
"$MKMODEL" --preset tiny --seed 3 --out "$WORK/tiny.gguf" --quiet || fail "mkmodel"
"$SEED" "$WORK/chat.db" || fail "seed"
# Replies run until the context is full (a few seconds on the tiny model), so Esc certainly lands
# while the second one streams.
mkdir -p "$WORK/config/qwenchat"
# A fixed seed: the same reply on every run. MTP on (draft 2; the tiny model has the block): the
# diagnostics capture shows its acceptance per position, and the stats stored with the reply carry it.
echo '{"settings": {"max_tokens": 100000, "n_ctx": 2048, "random_seed": false, "seed": 1, "mtp": true, "mtp_draft": 2}}' \
  >"$WORK/config/qwenchat/config.json"

# 3. A virtual display.
start_xvfb 1600x1000x24 "$WORK/xvfb.log" || fail "no virtual display (the reason is above)"

# 4. The app.
(cd "$WORK/cwd" && XDG_CONFIG_HOME="$WORK/config" XDG_DATA_HOME="$WORK/data" LIBGL_ALWAYS_SOFTWARE=1 \
  exec "$APP" --db "$WORK/chat.db" --model "$WORK/tiny.gguf" --screenshot-dir "$ART") >"$ART/app.log" 2>&1 &
APP_PID=$!
# The title names the model once frames run and the model is loaded.
wait_for 120 xdotool search --name '^qwenchat · tiny.gguf$' || fail "no qwenchat window with the model loaded appeared"
WIN=$(xdotool search --name '^qwenchat · tiny.gguf$' | head -1)

# 5. Type a message of two lines into the input box (bottom of the chat column): Shift+Enter adds the line
# break (it once aborted the app on an ImGui assertion, losing the draft), Enter sends.
MESSAGE=$'Hello from the\nend-to-end test'
xdotool mousemove --window "$WIN" 700 925 click 1
xdotool type --delay 20 "Hello from the"
# Held for a moment: ImGui 1.86 samples key state once per frame (the app's own shortcuts do not need it).
xdotool keydown shift+Return; sleep 0.2; xdotool keyup shift+Return
sleep 0.5  # a few frames
kill -0 "$APP_PID" 2>/dev/null || fail "the app ended on Shift+Enter in the message box"
xdotool type --delay 20 "end-to-end test"
xdotool keydown Return; sleep 0.2; xdotool keyup Return
count_user() { sqlite3 "$WORK/chat.db" "SELECT count(*) FROM messages WHERE role='user' AND content='$MESSAGE'"; }
replied() {
  [ "$(sqlite3 "$WORK/chat.db" "SELECT count(*) FROM messages m JOIN messages u ON u.conversation_id = m.conversation_id
       AND u.id = m.parent_id WHERE m.role='assistant' AND m.state='complete' AND u.content='$MESSAGE'")" = 1 ]
}
wait_for 120 replied || fail "no complete reply in the database (user rows: $(count_user))"
echo "reply: $(sqlite3 "$WORK/chat.db" "SELECT generated || ' tokens' FROM (SELECT json_extract(stats, '$.generated_tokens') AS generated
     FROM messages WHERE role='assistant' ORDER BY created_ms DESC LIMIT 1)")"
mtp_len=$(sqlite3 "$WORK/chat.db" "SELECT json_extract(stats, '$.mtp_draft_len') FROM messages WHERE role='assistant'
     ORDER BY created_ms DESC LIMIT 1")
[ "$mtp_len" = 2 ] || fail "the reply's stats do not record MTP with draft 2 (mtp_draft_len '$mtp_len')"

# 6. Captures of every panel, checked not blank (pixel standard deviation, a statistic of the image).
xdotool mousemove 5 995  # no tooltip in the captures
xdotool key F12
wait_for 60 test -f "$ART/done" || fail "the app wrote no captures"
for p in sidebar chat model settings diagnostics full_model full_settings full_diagnostics; do
  f="$ART/$p.png"
  [ -s "$f" ] || fail "$f missing"
  sd=$(identify -format '%[fx:standard_deviation]' "$f")
  awk -v s="$sd" 'BEGIN { exit !(s > 0.02) }' || fail "$f looks blank (standard deviation $sd)"
  echo "$p.png: $(identify -format '%wx%h' "$f"), standard deviation $sd"
done
[ "$(identify -format '%wx%h' "$ART/full_model.png")" = "1600x1000" ] || fail "full frame is not 1600x1000"
import -window root "$ART/xvfb_root.png" 2>/dev/null  # the X server's own view, for comparison

# 7. Esc stops a streaming reply; what came is kept as "stopped".
SECOND="Now a reply to interrupt"
xdotool type --delay 20 "$SECOND"
xdotool keydown Return; sleep 0.2; xdotool keyup Return
state_of_second() {
  sqlite3 "$WORK/chat.db" "SELECT m.state FROM messages m JOIN messages u ON u.conversation_id = m.conversation_id
      AND u.id = m.parent_id WHERE m.role='assistant' AND u.content='$SECOND'"
}
second_is() { [ "$(state_of_second)" = "$1" ]; }
wait_for 60 second_is streaming || fail "the second reply did not start (state '$(state_of_second)')"
xdotool key Escape
wait_for 60 second_is stopped || fail "Esc did not stop the reply (state '$(state_of_second)')"
echo "second reply: $(state_of_second)"

# 8. Quit cleanly: the configuration is in XDG_CONFIG_HOME, nothing was written to the working directory.
xdotool key ctrl+q
for _ in $(seq 1 100); do kill -0 "$APP_PID" 2>/dev/null || break; sleep 0.2; done
if kill -0 "$APP_PID" 2>/dev/null; then fail "the app did not quit on Ctrl+Q"; fi
wait "$APP_PID"; rc=$?; APP_PID=""
[ $rc -eq 0 ] || fail "exit status $rc after Ctrl+Q"
[ -f "$WORK/config/qwenchat/config.json" ] || fail "no config.json in XDG_CONFIG_HOME"
grep -q tiny.gguf "$WORK/config/qwenchat/config.json" || fail "the model is not in the recent list"
[ -z "$(ls -A "$WORK/cwd")" ] || fail "files written to the working directory: $(ls -A "$WORK/cwd")"
[ "$(sqlite3 "$WORK/chat.db" 'PRAGMA integrity_check')" = ok ] || fail "database integrity"
echo "PASS (artifacts in $ART)"
