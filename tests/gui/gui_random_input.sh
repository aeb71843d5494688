#!/bin/bash
# Robustness under random input (#14 item 2): the app on a seeded database and the tiny model under Xvfb
# gets a fixed number of random events drawn from a PRNG with a fixed seed (awk srand): key presses with
# every combination of Ctrl/Shift/Alt/Super over letters, digits, F-keys, Enter, Esc, Tab, arrows, Delete,
# Backspace, Home/End, PageUp/Down; typed text (ASCII and UTF-8); clicks, double clicks and wheel turns of
# every mouse button and drags anywhere in the window; resizes down to the minimum size (and below it,
# which only a window manager prevents) and back; UI scale (Ctrl+= / Ctrl+- / Ctrl+0) and theme (View
# menu) changes. Then:
#   - the app is still running (its pid) and its stderr holds no assertion, abort or crash;
#   - every message stored before is still in the database, unchanged (count and a hash of the rows; new
#     messages may be added); integrity_check ok;
#   - a draft typed into the message box at the end survives a resize to the minimum and back, a UI scale
#     change (font atlas rebuilt) and hiding/showing both side columns: Enter then stores exactly it.
#     (The app keeps no draft on disk: the message box's text lives in the chat panel; sending it is how
#     the test reads it back.)
#   - Ctrl+Q then quits with status 0.
# What random input could legitimately do that would spoil those checks is held off outside the app's
# logic: quit requests (Ctrl+Q, File > Quit) are ignored while the file QWENCHAT_TEST_HOLD_QUIT names
# exists (counted from stderr), and deleting a seeded message (Delete, or deleting its conversation) is
# refused by a trigger in the database, so the app meets a failing write, shows it and carries on.
# Exports go to HOME, a temporary folder.
#
# Usage: gui_random_input.sh QWENCHAT MKMODEL SEED ARTIFACTS_DIR [RANDOM_SEED [STEPS]]. Exit 77 = skipped.
# A failure names the seed and the step: rerun with those to replay the same events.
set -u
APP=$1 MKMODEL=$2 SEED=$3 ART=$4 RSEED=${5:-20261204} STEPS=${6:-400}
for tool in Xvfb xdotool import identify sqlite3 awk md5sum; do
  command -v "$tool" >/dev/null || { echo "SKIP: $tool is not installed (apt-get install xvfb xdotool imagemagick sqlite3)"; exit 77; }
done
WORK=$(mktemp -d /tmp/qwenchat-gui-random.XXXXXX)
XVFB_PID="" APP_PID=""
cleanup() {
  [ -n "$APP_PID" ] && kill "$APP_PID" 2>/dev/null
  [ -n "$XVFB_PID" ] && kill "$XVFB_PID" 2>/dev/null
  rm -rf "$WORK"
}
trap cleanup EXIT
fail() {
  echo "FAIL (seed $RSEED, $STEPS steps): $*"
  [ -f "$ART/app.log" ] && { echo "--- app log (last 40 lines)"; tail -40 "$ART/app.log"; }
  exit 1
}
# shellcheck source=xvfb_lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/xvfb_lib.sh"
rm -rf "$ART" && mkdir -p "$ART/shots" "$WORK/config/qwenchat" "$WORK/data" "$WORK/home"
DB="$WORK/chat.db"

# 1. The database: the demo conversation and three more, the seeded messages protected from deletion.
"$MKMODEL" --preset tiny --seed 3 --out "$WORK/tiny.gguf" --quiet || fail "mkmodel"
"$SEED" "$DB" || fail "seed"
{
  for c in 1 2 3; do
    echo "INSERT INTO conversations (title, created_ms, updated_ms) VALUES ('Seeded $c', $((1700000000000 + c)), $((1700000000000 + c)));"
    echo "INSERT INTO messages (conversation_id, id, parent_id, role, content, created_ms, updated_ms)
          SELECT max(id), 1, NULL, 'user', 'question $c: **bold**, \`code\`, ünïcödé 日本語', 1, 1 FROM conversations;"
    echo "INSERT INTO messages (conversation_id, id, parent_id, role, content, created_ms, updated_ms)
          SELECT max(id), 2, 1, 'assistant', '| a | b |
|---|---|
| $c | x |

- item
\`\`\`
code $c
\`\`\`', 2, 2 FROM conversations;"
  done
  echo "CREATE TABLE rt_keep AS SELECT conversation_id, id FROM messages;"
  echo "CREATE TRIGGER rt_keep_seeded BEFORE DELETE ON messages
        WHEN EXISTS (SELECT 1 FROM rt_keep k WHERE k.conversation_id = old.conversation_id AND k.id = old.id)
        BEGIN SELECT RAISE(ABORT, 'gui_random_input: the seeded messages are kept'); END;"
} | sqlite3 "$DB" || fail "seeding the extra conversations"
seeded_rows() {
  sqlite3 "$DB" "SELECT m.conversation_id, m.id, m.parent_id, m.role, m.content, m.thinking FROM messages m
                 JOIN rt_keep k ON k.conversation_id = m.conversation_id AND k.id = m.id ORDER BY 1, 2"
}
COUNT_BEFORE=$(sqlite3 "$DB" "SELECT count(*) FROM messages")
HASH_BEFORE=$(seeded_rows | md5sum | cut -d' ' -f1)
echo "seeded: $COUNT_BEFORE messages in $(sqlite3 "$DB" "SELECT count(*) FROM conversations") conversations, rows hash $HASH_BEFORE"

CONFIG="$WORK/config/qwenchat/config.json"
# Short replies (8 tokens): sends happen often, and a reply must not hold the 2-core machine for long.
echo '{"settings": {"max_tokens": 8, "n_ctx": 512, "random_seed": false, "seed": 1},
       "window": {"x": 0, "y": 0, "w": 1280, "h": 800}}' >"$CONFIG"

# 2. The app.
start_xvfb 1600x1000x24 "$WORK/xvfb.log" || fail "no virtual display (the reason is above)"
HOLD="$WORK/hold-quit"
touch "$HOLD"
(cd "$WORK" && HOME="$WORK/home" XDG_CONFIG_HOME="$WORK/config" XDG_DATA_HOME="$WORK/data" LIBGL_ALWAYS_SOFTWARE=1 \
  QWENCHAT_TEST_HOLD_QUIT="$HOLD" exec "$APP" --db "$DB" --model "$WORK/tiny.gguf" --screenshot-dir "$ART/shots") \
  >"$ART/app.log" 2>&1 &
APP_PID=$!
wait_for 120 xdotool search --name '^qwenchat · tiny.gguf$' || fail "no window with the model loaded"
WIN=$(xdotool search --name '^qwenchat · tiny.gguf$' | head -1)
sleep 0.5

# 3. Defects this test found, replayed first by fixed steps. An edit box left open (Edit on the demo's
# first message) kept the message box from taking the focus after Ctrl+N, so the typed text went nowhere.
# (A column shown again taking the focus is covered by the draft check at the end.)
stored() { [ "$(sqlite3 "$DB" "SELECT count(*) FROM messages WHERE role = 'user' AND content = '$1'")" -ge 1 ]; }
xdotool mousemove --window "$WIN" 100 131 click 1 sleep 1  # the demo conversation (the list's first row)
xdotool mousemove --window "$WIN" 500 400 click --repeat 30 --delay 20 4 sleep 1  # scrolled to its top
xdotool mousemove --window "$WIN" 676 105 click 1 sleep 0.5  # Edit on the first message
xdotool key ctrl+n sleep 1 type --delay 20 "typed after an edit box"
xdotool keydown Return; sleep 0.2; xdotool keyup Return
wait_for 30 stored "typed after an edit box" || fail "Ctrl+N after an open edit box: the typed message was not stored"
# (A send while the reply above streams would be refused: wait for it to end.)
idle() { [ "$(sqlite3 "$DB" "SELECT count(*) FROM messages WHERE state = 'streaming'")" = 0 ]; }
wait_for 60 idle || fail "the reply to the first fixed message did not end"
# Another (seed 6): Ctrl+K with the sidebar hidden left a focus request that took the focus from the
# message box when the sidebar was shown later. Keys held: ImGui samples them once per frame.
sidebar_is() { grep -q "\"show_sidebar\": *$1" "$CONFIG"; }
xdotool key ctrl+b
wait_for 30 sidebar_is false || fail "Ctrl+B did not hide the sidebar"
# Ctrl+K handled (the sidebar shown, so config.json says so) before the click, or its focus request,
# applied a frame later on a loaded machine, takes the box's focus after the click.
xdotool key ctrl+k
wait_for 30 sidebar_is true || fail "Ctrl+K did not show the sidebar"
sleep 0.5
xdotool mousemove --window "$WIN" 450 715 click 1 sleep 0.5  # the message box
xdotool type --delay 20 "typed before "
xdotool key ctrl+b
wait_for 30 sidebar_is false || fail "Ctrl+B did not hide the sidebar"
xdotool key ctrl+b
wait_for 30 sidebar_is true || fail "Ctrl+B did not show the sidebar"
xdotool type --delay 20 "and after showing the sidebar"
xdotool keydown Return; sleep 0.2; xdotool keyup Return
wait_for 30 stored "typed before and after showing the sidebar" ||
  fail "Ctrl+K with the sidebar hidden, then the sidebar shown: the typed message was not stored as typed;
    newest: '$(sqlite3 "$DB" "SELECT content FROM messages WHERE role = 'user' ORDER BY created_ms DESC LIMIT 1")'"

# 4. The events, drawn once from the seed (one per line; positions as fractions of the window).
awk -v seed="$RSEED" -v steps="$STEPS" '
function pick(list,   a, n) { n = split(list, a, " "); return a[int(rand() * n) + 1] }
function px() { return int(rand() * W) }  # positions in the window as it is then (resizes tracked here)
function py() { return int(rand() * H) }
BEGIN {
  srand(seed)
  W = 1280; H = 800
  keys = "a b c d e f g h i j k l m n o p q r s t u v w x y z 0 1 2 3 4 5 6 7 8 9 F1 F2 F3 F4 F5 F6 F7 F8 F9 F10 " \
         "F11 F12 Return Escape Tab Up Down Left Right Delete BackSpace Home End Prior Next space minus equal"
  split("ctrl shift alt super", mod, " ")
  split("a b c x y z 0 1 7 9 , . ; : ! ? - _ ( ) [ ] { } # * ` | \\ / < > é ß ü ñ 日 本 語 Ж λ ✓", chars, " ")
  nchars = 0; for (i in chars) nchars++
  for (s = 1; s <= steps; s++) {
    r = rand()
    if (r < 0.36) {                                   # a key with a random set of modifiers (all 16)
      m = int(rand() * 16); combo = ""
      for (b = 0; b < 4; b++) if (int(m / 2 ^ b) % 2) combo = combo mod[b + 1] "+"
      printf "key %s%s %d\n", combo, pick(keys), rand() < 0.5
    } else if (r < 0.46) {                            # typed text
      n = 1 + int(rand() * 12); t = ""
      for (i = 0; i < n; i++) t = t chars[int(rand() * nchars) + 1]
      printf "type %s\n", t
    } else if (r < 0.70) {                            # clicks of every button, wheel turns
      printf "click %d %d %s %d\n", px(), py(), pick("1 1 1 1 1 1 3 3 2 8 9 4 4 5 5 6 7"), 1 + (rand() < 0.15)
    } else if (r < 0.78) {                            # drags
      printf "drag %d %d %d %d %s\n", px(), py(), px(), py(), pick("1 1 1 3 2")
    } else if (r < 0.84) {                            # the menu bar and the corner under it (File, View, Help)
      printf "click %d %d 1 1\n", rand() * 160, rand() * 130
    } else if (r < 0.89) {                            # resizes: the minimum, below it, anything, the screen
      q = rand()
      if (q < 0.35) { W = 800; H = 500 }
      else if (q < 0.5) { W = 200 + int(rand() * 600); H = 150 + int(rand() * 350) }
      else if (q < 0.85) { W = 800 + int(rand() * 800); H = 500 + int(rand() * 500) }
      else { W = 1600; H = 1000 }
      printf "resize %d %d\n", W, H
    } else if (r < 0.93) {                            # UI scale
      printf "key ctrl+%s 0\n", pick("equal equal minus minus 0")
    } else if (r < 0.96) {                            # theme through the View menu
      printf "theme %s\n", pick("dark light")
    } else {                                          # a pause: replies run, frames catch up
      printf "wait %.2f\n", 0.2 + rand() * 0.6
    }
    printf "sleep %.3f\n", 0.02 + rand() * 0.06
  }
}' >"$ART/events.txt" || fail "awk"
cp "$ART/events.txt" "$WORK/events.txt"

alive() { kill -0 "$APP_PID" 2>/dev/null; }
crashed() { grep -E -m3 "Assertion|assertion failed|Aborted|terminate called|Segmentation|core dumped" "$ART/app.log"; }
scales="" themes=""
observe() {  # what the configuration says now (saved at most once a second): UI scales and themes seen
  local sc th
  sc=$(grep -o '"ui_scale": *[0-9.]*' "$CONFIG" | grep -o '[0-9.]*$')
  th=$(grep -o '"dark_theme": *[a-z]*' "$CONFIG" | grep -o '[a-z]*$')
  case " $scales " in *" $sc "*) ;; *) scales="$scales $sc" ;; esac
  case " $themes " in *" $th "*) ;; *) themes="$themes $th" ;; esac
}
step=0
while read -r kind a b c d e; do
  case $kind in
    key)
      if [ "$b" = 1 ]; then xdotool keydown "$a"; sleep 0.05; xdotool keyup "$a"; else xdotool key "$a"; fi ;;
    type) xdotool type --delay 8 -- "$a" ;;
    click) xdotool mousemove --window "$WIN" "$a" "$b" click --repeat "$d" --delay 60 "$c" ;;
    drag)
      xdotool mousemove --window "$WIN" "$a" "$b" mousedown "$e" sleep 0.05 \
        mousemove --window "$WIN" $(((a * 2 + c) / 3)) $(((b * 2 + d) / 3)) sleep 0.05 \
        mousemove --window "$WIN" $(((a + c * 2) / 3)) $(((b + d * 2) / 3)) sleep 0.05 \
        mousemove --window "$WIN" "$c" "$d" sleep 0.05 mouseup "$e" ;;
    resize) xdotool windowsize "$WIN" "$a" "$b" ;;
    theme)  # at UI scale 1 (Ctrl+0) the View menu is at (65, 12); its theme items at y 91 and 113
      xdotool key Escape key ctrl+0 sleep 0.3 mousemove --window "$WIN" 65 12 click 1 sleep 0.3
      if [ "$a" = dark ]; then xdotool mousemove --window "$WIN" 90 91 click 1; else xdotool mousemove --window "$WIN" 90 113 click 1; fi
      sleep 1.1 ;;  # config.json is saved at most once a second: observe() below then sees the theme
    wait) sleep "$a" ;;
    sleep) sleep "$a"; continue ;;
  esac
  step=$((step + 1))
  if [ $((step % 25)) -eq 0 ] || [ "$kind" = resize ] || [ "$kind" = theme ]; then
    alive || fail "the app ended at step $step ($kind $a $b $c $d $e); last steps: $(grep -v ^sleep "$ART/events.txt" | sed -n "$((step > 5 ? step - 5 : 1)),${step}p" | tr '\n' ';')"
    crashed && fail "assertion or crash on stderr by step $step"
    observe
  fi
done <"$WORK/events.txt"
alive || fail "the app ended after the last step"
crashed && fail "assertion or crash on stderr"
sleep 1.2; observe
echo "ran $step events; UI scales seen in config.json:$scales; dark_theme seen:$themes"
echo "quit requests held: $(grep -c 'quit request held' "$ART/app.log")"
import -window root "$ART/after_random.png" 2>/dev/null

# 5. A draft typed at the end survives a resize to the minimum and back, a UI scale change and hiding
# and showing both columns; Enter then stores exactly that text.
# Esc held (see Ctrl+A below) closes what the random phase left open: a dialog, a menu, an edit.
for _ in 1 2 3; do xdotool keydown Escape; sleep 0.2; xdotool keyup Escape; sleep 0.2; done
xdotool windowsize "$WIN" 1280 800; sleep 0.5
xdotool mousemove --window "$WIN" 640 5 key ctrl+0 sleep 0.5 key ctrl+n sleep 1
# The message box keeps what random typing left there: select all and delete it. Held for a moment:
# ImGui 1.86 samples key state once per frame, and xdotool's instant taps of Ctrl+A / BackSpace were
# missed (seed 4: the leftover text stayed after the draft).
xdotool keydown ctrl+a; sleep 0.2; xdotool keyup ctrl+a
xdotool keydown BackSpace; sleep 0.2; xdotool keyup BackSpace
# ASCII: xdotool types characters missing from the keymap by remapping a key, and under load some are
# lost (seen: "ünïcödé" arrived as "üncd"), which is xdotool's doing, not the app's.
DRAFT_1="draft after $STEPS random events, seed $RSEED"
DRAFT_2="second line"
xdotool type --delay 15 -- "$DRAFT_1"
xdotool keydown shift+Return; sleep 0.2; xdotool keyup shift+Return
xdotool type --delay 15 -- "$DRAFT_2"
sleep 0.3
xdotool windowsize "$WIN" 800 500; sleep 0.5; xdotool windowsize "$WIN" 1280 800; sleep 0.5
xdotool key ctrl+equal sleep 0.5 key ctrl+b sleep 0.3 key ctrl+i sleep 0.3 key ctrl+b sleep 0.3 key ctrl+i sleep 0.3
rm -f "$ART/shots/done"; xdotool key F12
wait_for 60 test -f "$ART/shots/done" || fail "no captures after the random events"
cp "$ART/shots/full_model.png" "$ART/draft.png" 2>/dev/null
xdotool key ctrl+0 sleep 0.5
xdotool keydown Return; sleep 0.2; xdotool keyup Return
DRAFT="$DRAFT_1"$'\n'"$DRAFT_2"
wait_for 30 stored "$DRAFT" || { import -window root "$ART/draft_failed.png" 2>/dev/null; false; } || fail "the draft was not stored as typed; newest user message: '$(sqlite3 "$DB" \
  "SELECT content FROM messages WHERE role = 'user' ORDER BY created_ms DESC LIMIT 1")'"
echo "draft stored as typed"

# 6. Quit: allowed again, Ctrl+Q ends the app with status 0.
rm -f "$HOLD"
xdotool key Escape sleep 0.2 key ctrl+q
for _ in $(seq 1 100); do alive || break; sleep 0.2; done
alive && fail "the app did not quit on Ctrl+Q"
wait "$APP_PID"; rc=$?; APP_PID=""
[ $rc -eq 0 ] || fail "exit status $rc after Ctrl+Q"
crashed && fail "assertion or crash on stderr at quit"

# 7. Nothing stored before was lost or changed.
COUNT_AFTER=$(sqlite3 "$DB" "SELECT count(*) FROM messages")
HASH_AFTER=$(seeded_rows | md5sum | cut -d' ' -f1)
echo "messages: $COUNT_BEFORE before, $COUNT_AFTER after; seeded rows hash $HASH_AFTER"
[ "$HASH_AFTER" = "$HASH_BEFORE" ] || fail "a seeded message was lost or changed (hash $HASH_BEFORE -> $HASH_AFTER)"
[ "$COUNT_AFTER" -ge "$COUNT_BEFORE" ] || fail "messages lost: $COUNT_BEFORE -> $COUNT_AFTER"
[ "$(sqlite3 "$DB" 'PRAGMA integrity_check')" = ok ] || fail "database integrity"
echo "PASS (seed $RSEED, $step events; artifacts in $ART)"
