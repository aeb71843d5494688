#!/bin/bash
# The window and its columns under Xvfb (#14): the saved window size and place are restored, the minimum
# size is set (WM_NORMAL_HINTS), a column splitter drag and Ctrl+B/Ctrl+I are kept in config.json, F12
# creates a capture folder that does not exist, Esc in the search box clears the search, and after a
# restart the diagnostics show the stored reply's figures (capture kept for a look).
# Usage: gui_layout.sh QWENCHAT MKMODEL SEED ARTIFACTS_DIR. Exit 77 = skipped (a tool is missing).
set -u
APP=$1 MKMODEL=$2 SEED=$3 ART=$4
for tool in Xvfb xdotool xprop identify compare convert sqlite3 python3; do
  command -v "$tool" >/dev/null || { echo "SKIP: $tool is not installed"; exit 77; }
done
WORK=$(mktemp -d /tmp/qwenchat-gui-layout.XXXXXX)
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
rm -rf "$ART" && mkdir -p "$ART" "$WORK/config/qwenchat" "$WORK/data"
"$MKMODEL" --preset tiny --seed 3 --out "$WORK/tiny.gguf" --quiet || fail "mkmodel"
"$SEED" "$WORK/chat.db" || fail "seed"
CONFIG="$WORK/config/qwenchat/config.json"
echo '{"settings": {"max_tokens": 8, "n_ctx": 512, "random_seed": false, "seed": 1},
       "window": {"x": 40, "y": 30, "w": 1200, "h": 800}}' >"$CONFIG"
start_xvfb 1600x1000x24 "$WORK/xvfb.log" || fail "no virtual display (the reason is above)"

start_app() {  # $1: capture folder
  (XDG_CONFIG_HOME="$WORK/config" XDG_DATA_HOME="$WORK/data" LIBGL_ALWAYS_SOFTWARE=1 \
    exec "$APP" --db "$WORK/chat.db" --model "$WORK/tiny.gguf" --screenshot-dir "$1") >>"$ART/app.log" 2>&1 &
  APP_PID=$!
  wait_for 120 xdotool search --name '^qwenchat · tiny.gguf$' || fail "no window with the model loaded"
  WIN=$(xdotool search --name '^qwenchat · tiny.gguf$' | head -1)
  sleep 0.5
}
quit_app() {
  xdotool key ctrl+q
  for _ in $(seq 1 100); do kill -0 "$APP_PID" 2>/dev/null || break; sleep 0.2; done
  wait "$APP_PID"; local rc=$?; APP_PID=""
  [ $rc -eq 0 ] || fail "exit status $rc after Ctrl+Q"
}
cfg() { python3 -c "import json,sys; c=json.load(open('$CONFIG')); print(eval(sys.argv[1]))" "$1"; }
capture() {  # $1: folder; waits for the F12 sequence
  rm -f "$1/done"
  xdotool mousemove 5 5; xdotool key F12
  wait_for 60 test -f "$1/done" || fail "no captures in $1"
}

# 1. The saved size and place; the minimum size hint.
start_app "$WORK/shots/not/yet/there"
geom=$(xdotool getwindowgeometry "$WIN")
echo "$geom"
echo "$geom" | grep -q "Position: 40,30" || fail "window not at the saved place (40,30): $geom"
echo "$geom" | grep -q "Geometry: 1200x800" || fail "window not of the saved size (1200x800): $geom"
xprop -id "$WIN" WM_NORMAL_HINTS | grep -q "minimum size: 800 by 500" ||
  fail "no minimum size hint: $(xprop -id "$WIN" WM_NORMAL_HINTS)"

# 2. F12 into a folder that does not exist yet: created.
capture "$WORK/shots/not/yet/there"
cp "$WORK/shots/not/yet/there/full_model.png" "$ART/start_full.png"

# 3. Esc in the search box clears it: the sidebar looks as before the search.
cp "$WORK/shots/not/yet/there/sidebar.png" "$ART/sidebar_before.png"
xdotool key ctrl+k; sleep 0.3
xdotool type --delay 30 "demo"; sleep 1
capture "$WORK/shots/not/yet/there"
cp "$WORK/shots/not/yet/there/sidebar.png" "$ART/sidebar_search.png"
xdotool key Escape; sleep 0.5
capture "$WORK/shots/not/yet/there"
cp "$WORK/shots/not/yet/there/sidebar.png" "$ART/sidebar_after_esc.png"
# The list below the search box (the box itself is drawn focused after Esc: it keeps the keyboard).
diff_px() {
  convert "$1" -crop 10000x10000+0+100 +repage "$WORK/a.png"
  convert "$2" -crop 10000x10000+0+100 +repage "$WORK/b.png"
  compare -metric AE "$WORK/a.png" "$WORK/b.png" null: 2>&1 | cut -d' ' -f1
}
searching=$(diff_px "$ART/sidebar_before.png" "$ART/sidebar_search.png")
after=$(diff_px "$ART/sidebar_before.png" "$ART/sidebar_after_esc.png")
echo "sidebar pixels changed: searching $searching, after Esc $after"
awk -v s="$searching" 'BEGIN { exit !(s > 500) }' || fail "the search did not change the list ($searching px)"
awk -v a="$after" 'BEGIN { exit !(a < 50) }' || fail "Esc did not clear the search ($after px of the list differ)"

# 4. Drag the sidebar's splitter 60 px right (the bar is 6 px wide at x = 17 em = 272).
xdotool mousemove --window "$WIN" 275 400; sleep 0.3
xdotool mousedown 1; sleep 0.3
for dx in 10 20 30 40 50 60; do xdotool mousemove --window "$WIN" $((275 + dx)) 400; sleep 0.1; done
sleep 0.3; xdotool mouseup 1; sleep 0.3
# 5. Hide the inspector; resize the window.
xdotool key ctrl+i; sleep 0.3
xdotool windowsize "$WIN" 1000 700; sleep 1
rm -f "$WORK/shots/not/yet/there/model.png"
capture "$WORK/shots/not/yet/there"
cp "$WORK/shots/not/yet/there/full_model.png" "$ART/no_inspector.png"
[ -f "$WORK/shots/not/yet/there/model.png" ] && fail "a capture of the hidden inspector was written"
quit_app
echo "config: $(cfg 'c["window"], c["sidebar_em"], c["show_sidebar"], c["show_inspector"]')"
[ "$(cfg 'c["window"]["w"], c["window"]["h"]')" = "(1000, 700)" ] || fail "window size not saved"
[ "$(cfg 'c["show_inspector"]')" = False ] || fail "Ctrl+I not saved"
awk -v e="$(cfg 'c["sidebar_em"]')" 'BEGIN { exit !(e > 19 && e < 22) }' || fail "splitter drag not saved (sidebar_em $(cfg 'c["sidebar_em"]'))"

# 6. Restart: the size comes back; Ctrl+I shows the inspector again and the diagnostics show the stored
# reply of the seeded conversation.
start_app "$WORK/shots2"
xdotool getwindowgeometry "$WIN" | grep -q "Geometry: 1000x700" || fail "size not restored: $(xdotool getwindowgeometry "$WIN")"
xdotool key ctrl+i; sleep 0.3
capture "$WORK/shots2"
cp "$WORK/shots2/full_diagnostics.png" "$ART/restart_diagnostics.png"
cp "$WORK/shots2/chat.png" "$ART/restart_chat.png"
quit_app
echo "PASS (artifacts in $ART)"
