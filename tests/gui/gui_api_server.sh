#!/bin/bash
# The API server inside the desktop app (Settings > API server), under Xvfb on the default model: the app
# announces the address, an API client gets an answer from the model the window loaded, the window's own
# chat works after it on the same worker, and API requests are not written into the user's history.
# Usage: gui_api_server.sh QWENCHAT SRC ARTIFACTS_DIR. Exit 77 = skipped (a tool is missing).
set -u
APP=$1 SRC=$2 ART=$3
for tool in Xvfb xdotool sqlite3 curl import; do
  command -v "$tool" > /dev/null || { echo "SKIP: $tool is not installed"; exit 77; }
done
. "$SRC/tests/gui/xvfb_lib.sh"
WORK=$(mktemp -d /tmp/qwenchat-gui-api.XXXXXX)
XVFB_PID="" APP_PID=""
cleanup() {
  [ -n "$APP_PID" ] && kill "$APP_PID" 2> /dev/null
  [ -n "$XVFB_PID" ] && kill "$XVFB_PID" 2> /dev/null
  rm -rf "$WORK"
}
trap cleanup EXIT
fail() {
  echo "FAIL: $*"
  [ -f "$ART/app.log" ] && { echo "--- app log"; cat "$ART/app.log"; }
  # What the display was doing (how the server-reset race in xvfb_lib.sh was found).
  echo "--- Xvfb (pid ${XVFB_PID:-none}, DISPLAY ${DISPLAY:-unset}): $(kill -0 "${XVFB_PID:-0}" 2> /dev/null && echo alive || echo gone);" \
    "xdotool: $(xdotool getdisplaygeometry 2>&1)"
  [ -f "$ART/xvfb.log" ] && cat "$ART/xvfb.log"
  exit 1
}
rm -rf "$ART" && mkdir -p "$ART" "$WORK/config/qwenchat" "$WORK/data" "$WORK/cwd"
# Greedy replies (fixed), the API server on any free port.
echo '{"settings": {"temperature": 0, "presence_penalty": 0, "random_seed": false, "seed": 1, "api_server": true, "api_port": 0}}' \
  > "$WORK/config/qwenchat/config.json"
start_xvfb 1600x1000x24 "$ART/xvfb.log" || fail "no virtual display (the reason is above)"

MODEL="$SRC/assets/qwenchat-default.gguf"
(cd "$WORK/cwd" && XDG_CONFIG_HOME="$WORK/config" XDG_DATA_HOME="$WORK/data" LIBGL_ALWAYS_SOFTWARE=1 \
  exec "$APP" --db "$WORK/chat.db" --model "$MODEL") > "$ART/app.log" 2>&1 &
APP_PID=$!
wait_for 120 xdotool search --name '^qwenchat · qwenchat-default.gguf$' || fail "no window with the default model"
wait_for 60 grep -q "API server: serving" "$ART/app.log" || fail "the app did not announce its API server"
URL=$(sed -n 's/.*API server: serving \(http:[^ ]*\).*/\1/p' "$ART/app.log" | head -1)
echo "the app serves $URL"

curl -s "${URL%/v1}/health" | grep -q '"ok"' || fail "/health: $(curl -s "${URL%/v1}/health")"
reply=$(curl -s "$URL/chat/completions" -H 'Content-Type: application/json' \
  -d '{"messages":[{"role":"user","content":"What is 17 + 25?"}],"temperature":0,"max_tokens":48,"chat_template_kwargs":{"enable_thinking":false}}')
echo "API reply: $reply"
[[ $reply == *'"content":"'*42* ]] || fail "the in-app server's answer has no 42: $reply"
curl -s "$URL/models" | grep -q '"id":"qwenchat-default"' || fail "/v1/models: $(curl -s "$URL/models")"

# The window's own chat, after the API request, on the same worker.
WIN=$(xdotool search --name '^qwenchat · qwenchat-default.gguf$' | head -1)
MESSAGE="What is 12 + 30?"
xdotool mousemove --window "$WIN" 700 925 click 1
xdotool type --delay 20 "$MESSAGE"
xdotool keydown Return; sleep 0.2; xdotool keyup Return
replied() {
  [ "$(sqlite3 "$WORK/chat.db" "SELECT count(*) FROM messages m JOIN messages u ON u.id = m.parent_id
       WHERE m.role='assistant' AND m.state='complete' AND u.content='$MESSAGE'")" = 1 ]
}
wait_for 120 replied || fail "no complete reply to the window's message"
echo "window reply: $(sqlite3 "$WORK/chat.db" "SELECT content FROM messages WHERE role='assistant' ORDER BY id DESC LIMIT 1")"
# Only the window's conversation is in the history (the API request is not).
users=$(sqlite3 "$WORK/chat.db" "SELECT count(*) FROM messages WHERE role='user'")
[ "$users" = 1 ] || fail "expected 1 user message in the history (the window's), found $users"
import -window root "$ART/window.png" 2> /dev/null || true
# The Settings tab scrolled to its API server section (looked at by hand; the checks above are the test).
xdotool mousemove --window "$WIN" 1222 46 click 1
sleep 0.5
xdotool mousemove --window "$WIN" 1350 600
for _ in $(seq 1 30); do xdotool click 5; done
sleep 0.5
import -window root "$ART/settings.png" 2> /dev/null || true
echo "gui_api_server: all checks passed"
