# Shared by the scripts that drive the app under Xvfb (tests/gui/gui_e2e.sh, tests/gui/readme_run.sh,
# packaging/check_deb.sh); sourced, not run.

# Waits up to $1 seconds (a hang guard, not a timing expectation) for the command in $2.. to succeed.
wait_for() {
  local limit=$1; shift
  for _ in $(seq 1 $((limit * 5))); do "$@" >/dev/null 2>&1 && return 0; sleep 0.2; done
  return 1
}

# Starts Xvfb on a free display with screen $1 (e.g. 1600x1000x24), its log in $2; sets XVFB_PID and
# exports DISPLAY. Returns non-zero, with the reason on stdout, when it cannot. The server picks the
# display number itself (-displayfd): scanning /tmp/.X*-lock here would race with a test started at the
# same moment (ctest -j), and both apps would end up on one display.
start_xvfb() {
  local screen=$1 log=$2 numfile display
  numfile=$(mktemp) || { echo "mktemp failed"; return 1; }
  # -noreset: an X server resets when its last client leaves, closing every connection it holds, also
  # one that arrived while it was handling that exit. The readiness probe below is such a last client:
  # an app started right after it, on a busy machine, got "Failed to open display :0" from a live server
  # (twice in about ten runs, once in CI; the server's log empty, xdotool fine a moment later).
  Xvfb -displayfd 3 -screen 0 "$screen" -nolisten tcp -noreset 3>"$numfile" >"$log" 2>&1 &
  XVFB_PID=$!
  wait_for 30 test -s "$numfile" || { echo "Xvfb did not report a display: $(cat "$log")"; rm -f "$numfile"; return 1; }
  display=$(head -1 "$numfile"); rm -f "$numfile"
  export DISPLAY=":$display"
  wait_for 30 xdotool getdisplaygeometry || { echo "Xvfb :$display did not start: $(cat "$log")"; return 1; }
}
