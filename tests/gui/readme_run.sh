#!/bin/bash
# The README's run command, exactly as a new user types it: the line is read from README.md (the first
# `scripts/qwenchat.sh run` line of its first sh block, so the two cannot drift) and run from the
# repository root under Xvfb, with a fresh XDG config and data home. It installs what is missing, builds
# (a no-op when the suite's build is current; the time limit allows a whole first build) and opens the app
# on the default model. Then, like a new user: two questions typed into the chat box, the replies awaited
# in the conversation database, a capture of the screen, Ctrl+Q.
# With the trained default model committed (assets/qwenchat-default.gguf) the answers must be right (17 + 25
# is held out of training) and the reply's stats must carry the MTP acceptance the diagnostics panel shows;
# with the random stand-in only that replies arrive.
# Usage: readme_run.sh SOURCE_DIR ARTIFACTS_DIR. Exit 77 = skipped (a tool is missing).
set -u
SRC=$1 ART=$2

for tool in Xvfb xdotool import identify sqlite3 setsid; do
  if ! command -v "$tool" >/dev/null; then
    echo "SKIP: $tool is not installed (apt-get install xvfb xdotool imagemagick sqlite3)"
    exit 77
  fi
done

LINE=$(awk '/^```sh/ { inblock = 1; next } /^```/ { if (inblock) exit } inblock && /scripts\/qwenchat\.sh run/ { print; exit }' \
  "$SRC/README.md" | sed 's/[[:space:]]*#.*$//')
[ -n "$LINE" ] || { echo "FAIL: no 'scripts/qwenchat.sh run' line in the first sh block of $SRC/README.md"; exit 1; }
echo "README run line: $LINE"

WORK=$(mktemp -d /tmp/qwenchat-readme-run.XXXXXX)
XVFB_PID="" APP_PID=""
cleanup() {
  [ -n "$APP_PID" ] && kill -- "-$APP_PID" 2>/dev/null
  [ -n "$XVFB_PID" ] && kill "$XVFB_PID" 2>/dev/null
  rm -rf "$WORK"
}
trap cleanup EXIT
fail() {
  echo "FAIL: $*"
  [ -n "${DISPLAY:-}" ] && import -window root "$ART/at_failure.png" 2>/dev/null && echo "screen at failure: $ART/at_failure.png"
  [ -f "$ART/run.log" ] && { echo "--- run log (last 40 lines)"; tail -40 "$ART/run.log"; }
  exit 1
}
# shellcheck source=xvfb_lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/xvfb_lib.sh"

rm -rf "$ART" && mkdir -p "$ART" "$WORK/config/qwenchat" "$WORK/data"
# A new user's settings, except a fixed sampling seed so that every run gives the same replies.
echo '{"settings": {"random_seed": false, "seed": 7}}' >"$WORK/config/qwenchat/config.json"

start_xvfb 1600x1000x24 "$WORK/xvfb.log" || fail "no virtual display (the reason is above)"

# The line itself, in its own process group (the build's and the app's processes end together).
(cd "$SRC" && XDG_CONFIG_HOME="$WORK/config" XDG_DATA_HOME="$WORK/data" LIBGL_ALWAYS_SOFTWARE=1 \
  exec setsid bash -c "$LINE") >"$ART/run.log" 2>&1 &
APP_PID=$!
TITLE='^qwenchat · qwenchat-default.gguf$'
# Generous: on a fresh machine this includes apt and the whole first build.
wait_for 2400 xdotool search --name "$TITLE" || fail "no window '$TITLE' appeared"
WIN=$(xdotool search --name "$TITLE" | head -1)
DB="$WORK/data/qwenchat/qwenchat.db"
wait_for 60 test -f "$DB" || fail "no database at $DB"

TRAINED=0
[ -f "$SRC/assets/qwenchat-default.gguf" ] && TRAINED=1
reply_to() {
  sqlite3 "$DB" "SELECT m.content FROM messages m JOIN messages u ON u.conversation_id = m.conversation_id
      AND u.id = m.parent_id WHERE m.role='assistant' AND m.state='complete' AND u.content='$1'"
}
replied_to() {
  [ "$(sqlite3 "$DB" "SELECT count(*) FROM messages m JOIN messages u ON u.conversation_id = m.conversation_id
      AND u.id = m.parent_id WHERE m.role='assistant' AND m.state='complete' AND u.content='$1'")" = 1 ]
}
stats_of_reply_to() {
  sqlite3 "$DB" "SELECT m.stats FROM messages m JOIN messages u ON u.conversation_id = m.conversation_id
      AND u.id = m.parent_id WHERE m.role='assistant' AND m.state='complete' AND u.content='$1'"
}
ask() {  # question, expected substring (checked with the trained model only)
  local q=$1 want=$2
  xdotool mousemove --window "$WIN" 700 925 click 1
  xdotool type --delay 20 "$q"
  xdotool keydown Return; sleep 0.2; xdotool keyup Return
  wait_for 300 replied_to "$q" || fail "no complete reply to '$q' in the database"
  local got
  got=$(reply_to "$q")
  echo "Q: $q"
  echo "A: $got"
  if [ $TRAINED = 1 ]; then
    case "$got" in *"$want"*) ;; *) fail "the reply to '$q' does not contain '$want'" ;; esac
    local st
    st=$(stats_of_reply_to "$q")
    echo "   stats: $st"
    [ "$(sqlite3 "$DB" "SELECT json_extract('$st', '$.mtp_draft_len')")" = 1 ] ||
      fail "MTP (on by default for a model with the block, draft 1) is not in the reply's stats"
    [ -n "$(sqlite3 "$DB" "SELECT json_extract('$st', '$.mtp_acceptance')")" ] ||
      fail "the reply's stats carry no MTP acceptance"
  fi
}
ask "What is 17 + 25?" "42"
ask "Define: lantern" "Lantern (noun)"

# The diagnostics tab (right column, top): the last reply's speed and MTP acceptance per draft position.
xdotool mousemove --window "$WIN" 1307 46 click 1
xdotool mousemove 5 995  # no tooltip in the capture
sleep 1                  # a few frames for the tab and the last stats line
import -window root "$ART/readme_run.png" || fail "screen capture"
sd=$(identify -format '%[fx:standard_deviation]' "$ART/readme_run.png")
awk -v s="$sd" 'BEGIN { exit !(s > 0.02) }' || fail "the capture looks blank (standard deviation $sd)"
echo "readme_run.png: $(identify -format '%wx%h' "$ART/readme_run.png"), standard deviation $sd"

xdotool key ctrl+q
for _ in $(seq 1 100); do kill -0 "$APP_PID" 2>/dev/null || break; sleep 0.2; done
kill -0 "$APP_PID" 2>/dev/null && fail "the app did not quit on Ctrl+Q"
wait "$APP_PID"; rc=$?; APP_PID=""
[ $rc -eq 0 ] || fail "exit status $rc after Ctrl+Q"
[ "$(sqlite3 "$DB" 'PRAGMA integrity_check')" = ok ] || fail "database integrity"
echo "PASS (capture in $ART)"
