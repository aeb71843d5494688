#!/bin/bash
# The app in front of a remote OpenAI-compatible endpoint (Model > Remote endpoint): qwenchat-server on the
# default model plays the remote (as vLLM would for a model on several GPUs), over real HTTP with an API
# key. The app connects at start (the saved source), a message typed in the window gets the endpoint's
# reply, the conversation is stored like a local one and exports to Markdown with the reply in it.
# Usage: gui_remote.sh QWENCHAT QWENCHAT_SERVER QWENCHAT_CLI SRC ARTIFACTS_DIR. Exit 77 = a tool is missing.
set -u
APP=$1 SERVER=$2 CLI=$3 SRC=$4 ART=$5
for tool in Xvfb xdotool sqlite3 curl import; do
  command -v "$tool" > /dev/null || { echo "SKIP: $tool is not installed"; exit 77; }
done
. "$SRC/tests/gui/xvfb_lib.sh"
WORK=$(mktemp -d /tmp/qwenchat-gui-remote.XXXXXX)
XVFB_PID="" APP_PID="" SERVER_PID=""
cleanup() {
  [ -n "$APP_PID" ] && kill "$APP_PID" 2> /dev/null
  [ -n "$SERVER_PID" ] && kill "$SERVER_PID" 2> /dev/null
  [ -n "$XVFB_PID" ] && kill "$XVFB_PID" 2> /dev/null
  rm -rf "$WORK"
}
trap cleanup EXIT
fail() {
  echo "FAIL: $*"
  for f in app.log server.err; do [ -f "$ART/$f" ] && { echo "--- $f"; cat "$ART/$f"; }; done
  exit 1
}
rm -rf "$ART" && mkdir -p "$ART" "$WORK/config/qwenchat" "$WORK/data" "$WORK/cwd"

echo "remote-key" > "$WORK/key"
"$SERVER" --model "$SRC/assets/qwenchat-default.gguf" --port 0 --api-key-file "$WORK/key" > "$ART/server.out" 2> "$ART/server.err" &
SERVER_PID=$!
wait_for 120 grep -q "listening on" "$ART/server.out" || fail "the server did not start"
URL=$(sed -n 's/.*listening on \(http:[^ ]*\).*/\1/p' "$ART/server.out")/v1
echo "the remote endpoint: $URL"

# The saved model source is the endpoint; greedy replies.
cat > "$WORK/config/qwenchat/config.json" << JSON
{"settings": {"temperature": 0, "presence_penalty": 0, "random_seed": false, "seed": 1},
 "use_remote": true, "remote_url": "$URL", "remote_model": "qwenchat-default"}
JSON
start_xvfb 1600x1000x24 "$ART/xvfb.log" || fail "no virtual display (the reason is above)"
(cd "$WORK/cwd" && XDG_CONFIG_HOME="$WORK/config" XDG_DATA_HOME="$WORK/data" LIBGL_ALWAYS_SOFTWARE=1 \
  QWENCHAT_REMOTE_API_KEY=remote-key exec "$APP" --db "$WORK/chat.db") > "$ART/app.log" 2>&1 &
APP_PID=$!
TITLE='^qwenchat · qwenchat-default \(remote\)$'
wait_for 120 xdotool search --name "$TITLE" || fail "no window connected to the remote endpoint"
WIN=$(xdotool search --name "$TITLE" | head -1)

MESSAGE="What is 17 + 25?"
xdotool mousemove --window "$WIN" 700 925 click 1
xdotool type --delay 20 "$MESSAGE"
xdotool keydown Return; sleep 0.2; xdotool keyup Return
replied() {
  [ "$(sqlite3 "$WORK/chat.db" "SELECT count(*) FROM messages m JOIN messages u ON u.id = m.parent_id
       WHERE m.role='assistant' AND m.state='complete' AND u.content='$MESSAGE'")" = 1 ]
}
wait_for 120 replied || fail "no complete reply from the remote endpoint in the history"
reply=$(sqlite3 "$WORK/chat.db" "SELECT content FROM messages WHERE role='assistant' ORDER BY id DESC LIMIT 1")
echo "reply through the endpoint: $reply"
[[ $reply == *42* ]] || fail "the reply has no 42: $reply"
curl -s -H "Authorization: Bearer remote-key" "${URL%/v1}/metrics" | grep -q '^qwenchat_generations_total 1$' ||
  fail "the endpoint did not generate the reply"
import -window root "$ART/window.png" 2> /dev/null || true

# Stored like a local conversation: the export has the message and the reply.
"$CLI" export --db "$WORK/chat.db" --all --format md --out "$ART/export.md" || fail "export failed"
grep -qF "$MESSAGE" "$ART/export.md" && grep -qF "$reply" "$ART/export.md" || fail "the export lacks the exchange: $(cat "$ART/export.md")"
echo "gui_remote: all checks passed"
