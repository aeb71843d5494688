#!/bin/bash
# Start-up failures are shown in a window, not only on stderr (a user who starts the app from the desktop
# sees no terminal): a database written by a newer qwenchat, a file that is not a database, and a database
# another qwenchat has open (checked while the third case's app runs). For each:
# a window titled "qwenchat · could not start" appears, its capture is not blank, the message is on stderr
# too, Quit (Esc) ends the app with status 1, and the database file is unchanged.
# Usage: gui_startup_error.sh QWENCHAT SRC ARTIFACTS_DIR. Exit 77 = a tool is missing.
set -u
APP=$1 SRC=$2 ART=$3
for tool in Xvfb xdotool sqlite3 import identify; do
  command -v "$tool" > /dev/null || { echo "SKIP: $tool is not installed"; exit 77; }
done
. "$SRC/tests/gui/xvfb_lib.sh"
WORK=$(mktemp -d /tmp/qwenchat-gui-startup.XXXXXX)
XVFB_PID="" APP_PID=""
cleanup() {
  [ -n "$APP_PID" ] && kill "$APP_PID" 2> /dev/null
  [ -n "$XVFB_PID" ] && kill "$XVFB_PID" 2> /dev/null
  rm -rf "$WORK"
}
trap cleanup EXIT
fail() {
  echo "FAIL: $*"
  [ -f "$ART/app.log" ] && { echo "--- app.log"; cat "$ART/app.log"; }
  exit 1
}
# Presses Esc in the visible window titled "qwenchat · could not start" until process $1 ends (up to 10
# tries, each waiting up to 2 s: hang guards, not timings). Found by name alone, the window may exist
# before it is mapped: focusing it then fails (X_SetInputFocus BadMatch) and the key goes elsewhere, which
# once left a refused app running (a local run, 2026-12-05). So only a visible window is focused, and a
# press that went nowhere is repeated.
quit_with_escape() {
  local pid=$1 try win i
  for try in $(seq 1 10); do
    win=$(xdotool search --onlyvisible --name '^qwenchat · could not start$' 2> /dev/null | head -1)
    if [ -n "$win" ]; then
      xdotool windowactivate --sync "$win" 2> /dev/null || xdotool windowfocus --sync "$win" 2> /dev/null
      xdotool keydown Escape; sleep 0.3; xdotool keyup Escape
    fi
    for i in $(seq 1 20); do kill -0 "$pid" 2> /dev/null || return 0; sleep 0.1; done
  done
  return 1
}
rm -rf "$ART" && mkdir -p "$ART" "$WORK/config" "$WORK/data"
start_xvfb 1280x720x24 "$WORK/xvfb.log" || fail "no virtual display (the reason is above)"

# case NAME DB EXPECTED_STDERR
check_case() {
  local name=$1 db=$2 expected=$3
  local before
  before=$(md5sum < "$db")
  XDG_CONFIG_HOME="$WORK/config" XDG_DATA_HOME="$WORK/data" LIBGL_ALWAYS_SOFTWARE=1 \
    "$APP" --db "$db" > "$ART/app.log" 2>&1 &
  APP_PID=$!
  wait_for 60 xdotool search --name '^qwenchat · could not start$' ||
    fail "$name: no 'could not start' window appeared"
  # Captured until the first frames are drawn (the window exists before them): a hang guard, not a timing.
  drawn() {
    import -window root "$ART/$name.png" 2> /dev/null || return 1
    sd=$(identify -format '%[fx:standard_deviation]' "$ART/$name.png")
    awk -v s="$sd" 'BEGIN { exit !(s > 0.02) }'
  }
  local sd=""
  wait_for 60 drawn || fail "$name: the capture stays blank (standard deviation $sd)"
  grep -q "$expected" "$ART/app.log" || fail "$name: stderr does not say '$expected'"
  quit_with_escape "$APP_PID" || fail "$name: Quit (Esc) did not end the app"
  local rc=0
  wait "$APP_PID"; rc=$?
  APP_PID=""
  [ $rc -eq 1 ] || fail "$name: expected exit status 1, got $rc"
  [ "$(md5sum < "$db")" = "$before" ] || fail "$name: the database file changed"
  echo "$name: window shown, status 1, file unchanged"
}

sqlite3 "$WORK/newer.db" "CREATE TABLE t(x); PRAGMA user_version = 999;"
check_case newer_schema "$WORK/newer.db" "newer"
head -c 4096 /dev/urandom > "$WORK/garbage.db"
printf 'not a database at all\n' | dd of="$WORK/garbage.db" conv=notrunc 2> /dev/null
check_case not_a_database "$WORK/garbage.db" "qwenchat: "

# A clean start after an earlier failure: the last model of the recent list is gone; the bundled default
# loads instead, and the missing path does not stay in the recent list.
mkdir -p "$WORK/config/qwenchat"
echo '{"recent_models": ["/nonexistent/gone.gguf"], "backend": "cpu"}' > "$WORK/config/qwenchat/config.json"
XDG_CONFIG_HOME="$WORK/config" XDG_DATA_HOME="$WORK/data" LIBGL_ALWAYS_SOFTWARE=1 \
  "$APP" --db "$WORK/fresh.db" > "$ART/app.log" 2>&1 &
APP_PID=$!
wait_for 120 xdotool search --name '^qwenchat · qwenchat-default.gguf$' ||
  fail "the bundled default model did not load after the last model failed"
# A second app on the same database is refused at start-up (docs/GUI.md, "One app per database"): the
# start-up error window names the database and the running app's pid; Esc quits it with status 1, and the
# first app goes on.
XDG_CONFIG_HOME="$WORK/config" XDG_DATA_HOME="$WORK/data" LIBGL_ALWAYS_SOFTWARE=1 \
  "$APP" --db "$WORK/fresh.db" > "$ART/second.log" 2>&1 &
SECOND_PID=$!
wait_for 60 xdotool search --name '^qwenchat · could not start$' ||
  { cat "$ART/second.log"; kill "$SECOND_PID" 2> /dev/null; fail "a second app on the same database was not refused"; }
grep -q "$WORK/fresh.db is already open in another qwenchat (pid $APP_PID" "$ART/second.log" ||
  { cat "$ART/second.log"; kill "$SECOND_PID" 2> /dev/null; fail "the refusal does not name the database and pid $APP_PID"; }
quit_with_escape "$SECOND_PID" || { kill "$SECOND_PID"; fail "Esc did not end the refused second app"; }
wait "$SECOND_PID"; rc=$?
[ $rc -eq 1 ] || fail "the refused second app: expected exit status 1, got $rc"
kill -0 "$APP_PID" 2> /dev/null || fail "the first app ended when the second was refused"
echo "second app on the same database: refused naming pid $APP_PID, status 1, the first app goes on"

win=$(xdotool search --name '^qwenchat · qwenchat-default.gguf$' | head -1)
xdotool windowactivate --sync "$win" 2> /dev/null || xdotool windowfocus "$win"
xdotool key ctrl+q
for i in $(seq 1 100); do kill -0 "$APP_PID" 2> /dev/null || break; sleep 0.1; done
kill -0 "$APP_PID" 2> /dev/null && fail "Ctrl+Q did not end the app"
APP_PID=""
grep -q "qwenchat-default.gguf" "$WORK/config/qwenchat/config.json" || fail "the default model is not in the recent list"
grep -q "gone.gguf" "$WORK/config/qwenchat/config.json" && fail "the missing model stayed in the recent list"
echo "missing last model: the bundled default loaded, the recent list holds only it"
echo "PASS"
