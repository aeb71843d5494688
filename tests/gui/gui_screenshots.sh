#!/bin/bash
# Screenshots of every panel (#14 item 7) at 1920x1080 and 1280x720, taken by the app's own F12 captures
# under Xvfb: the chat, the conversations sidebar, the Model, Settings and Diagnostics tabs (after a live
# reply of the tiny model, so the diagnostics have a plot), the search (Ctrl+K) with its highlighted
# matches, and the export dialog (Ctrl+E). Then the chat at UI scale 1.76, where the "Assistant" label
# once ran into the Copy button. Each capture is checked to be of the window's size and not blank (pixel
# standard deviation > 0.02); the docs' pictures (docs/gui/) are chosen from these artifacts.
# Usage: gui_screenshots.sh QWENCHAT MKMODEL SEED ARTIFACTS_DIR. Exit 77 = skipped (a tool is missing).
set -u
APP=$1 MKMODEL=$2 SEED=$3 ART=$4
for tool in Xvfb xdotool identify sqlite3; do
  command -v "$tool" >/dev/null || { echo "SKIP: $tool is not installed (apt-get install xvfb xdotool imagemagick sqlite3)"; exit 77; }
done
WORK=$(mktemp -d /tmp/qwenchat-gui-shots.XXXXXX)
XVFB_PID="" APP_PID=""
cleanup() {
  [ -n "$APP_PID" ] && kill "$APP_PID" 2>/dev/null
  [ -n "$XVFB_PID" ] && kill "$XVFB_PID" 2>/dev/null
  rm -rf "$WORK"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; [ -f "$ART/app.log" ] && { echo "--- app log"; tail -30 "$ART/app.log"; }; exit 1; }
# shellcheck source=xvfb_lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/xvfb_lib.sh"
rm -rf "$ART" && mkdir -p "$ART" "$WORK/config/qwenchat" "$WORK/home"
"$MKMODEL" --preset tiny --seed 3 --out "$WORK/tiny.gguf" --quiet || fail "mkmodel"
start_xvfb 1920x1080x24 "$WORK/xvfb.log" || fail "no virtual display (the reason is above)"

start_app() {  # $1 width, $2 height, $3 UI scale
  echo "{\"settings\": {\"max_tokens\": 48, \"n_ctx\": 512, \"random_seed\": false, \"seed\": 1, \"ui_scale\": $3},
         \"window\": {\"x\": 0, \"y\": 0, \"w\": $1, \"h\": $2}}" >"$WORK/config/qwenchat/config.json"
  rm -f "$WORK"/chat.db*
  "$SEED" "$WORK/chat.db" || fail "seed"
  (HOME="$WORK/home" XDG_CONFIG_HOME="$WORK/config" XDG_DATA_HOME="$WORK/data" LIBGL_ALWAYS_SOFTWARE=1 \
    exec "$APP" --db "$WORK/chat.db" --model "$WORK/tiny.gguf" --screenshot-dir "$WORK/shots") >>"$ART/app.log" 2>&1 &
  APP_PID=$!
  wait_for 120 xdotool search --name '^qwenchat · tiny.gguf$' || fail "no window with the model loaded"
  WIN=$(xdotool search --name '^qwenchat · tiny.gguf$' | head -1)
  sleep 1
}
quit_app() {
  xdotool key Escape sleep 0.2 key ctrl+q
  for _ in $(seq 1 100); do kill -0 "$APP_PID" 2>/dev/null || break; sleep 0.2; done
  wait "$APP_PID"; local rc=$?; APP_PID=""
  [ $rc -eq 0 ] || fail "exit status $rc after Ctrl+Q"
}
capture() {  # F12, then $1: prefix for the copies; the remaining arguments: name=capture pairs
  local prefix=$1; shift
  rm -rf "$WORK/shots"
  xdotool mousemove --window "$WIN" 2 2; xdotool key F12
  wait_for 60 test -f "$WORK/shots/done" || fail "no captures ($prefix)"
  local pair
  for pair in "$@"; do cp "$WORK/shots/${pair#*=}.png" "$ART/${prefix}_${pair%%=*}.png" || fail "no ${pair#*=}.png"; done
}
check() {  # $1 file, $2 expected size or "" (a panel)
  local sd size
  size=$(identify -format '%wx%h' "$1") sd=$(identify -format '%[fx:standard_deviation]' "$1")
  [ -z "$2" ] || [ "$size" = "$2" ] || fail "$1 is $size, expected $2"
  awk -v s="$sd" 'BEGIN { exit !(s > 0.02) }' || fail "$1 looks blank (standard deviation $sd)"
  echo "$(basename "$1"): $size, standard deviation $sd"
}

for size in 1920x1080 1280x720; do
  w=${size%x*} h=${size#*x}
  start_app "$w" "$h" 1.0
  # The demo conversation (the only row of the list, at y 131 at UI scale 1): the chat and the sidebar.
  xdotool mousemove --window "$WIN" 100 131 click 1; sleep 1
  capture "$size" chat=full_model chat_panel=chat sidebar=sidebar
  # A live reply in a new chat: the diagnostics then have a decode plot and per-layer norms.
  xdotool key ctrl+n sleep 1 type --delay 20 "Tell me about decoding"  # matched by its end: under load a first key can land before the focus
  xdotool keydown Return; sleep 0.2; xdotool keyup Return
  replied() { [ "$(sqlite3 "$WORK/chat.db" "SELECT count(*) FROM messages m JOIN messages u ON u.conversation_id =
                   m.conversation_id AND u.id = m.parent_id WHERE m.role = 'assistant' AND m.state = 'complete'
                   AND u.content LIKE '%about decoding'")" = 1 ]; }
  wait_for 120 replied || fail "no reply ($size); messages: $(sqlite3 "$WORK/chat.db" "SELECT conversation_id, id, role,
    state, substr(content, 1, 30) FROM messages WHERE created_ms > 1700000000000 ORDER BY created_ms" | tr '\n' ';')"
  # Back to the demo conversation (now the list's second row): the random model's reply is word salad.
  xdotool mousemove --window "$WIN" 100 153 click 1; sleep 1
  capture "$size" model=full_model settings=full_settings diagnostics=full_diagnostics
  # The search: matches in both conversations, highlighted.
  xdotool key ctrl+k sleep 1 type --delay 20 "decod"
  sleep 1
  capture "$size" search=full_model
  xdotool key Escape; sleep 0.5
  xdotool key ctrl+e; sleep 1
  capture "$size" export=full_model
  quit_app
  for f in "$ART/${size}"_*.png; do
    case $f in *_chat_panel.png | *_sidebar.png) check "$f" "" ;; *) check "$f" "$size" ;; esac
  done
done

# UI scale 1.76 (a message's role label and its buttons: the label once ran into Copy).
start_app 1280 720 1.76
xdotool mousemove --window "$WIN" 100 230 click 1; sleep 1  # the demo conversation (row at y 230 at 1.76)
xdotool mousemove --window "$WIN" 550 350 click --repeat 40 --delay 20 4; sleep 1  # its top: the role labels
capture scale176 chat=full_model
quit_app
check "$ART/scale176_chat.png" 1280x720
echo "PASS (artifacts in $ART)"
