#!/usr/bin/env bash
# The package check CI runs (scripts/qwenchat.sh test, last stage): builds the .deb of this machine
# (packaging/build_deb.sh: with the CUDA backend when nvcc is installed, built for sm_90 only here to keep
# the check short, else the CPU-only variant), then
#   1. lintian: no error or warning; every remaining info or pedantic tag is listed in
#      packaging/lintian-explained with the reason it stays;
#   2. desktop-file-validate and appstreamcli validate on the installed desktop entry and metainfo;
#   3. a user's data (a conversation database and the settings) is written before the install;
#   4. apt-get install ./the.deb, then /usr/bin/qwenchat-cli answers on the installed default model, the man
#      pages open, and /usr/bin/qwenchat opens its window on the default model under Xvfb and quits;
#   5. apt-get remove: the programs are gone, the user's database and settings are byte for byte the same.
# Needs root (it installs a package); exit 77 (skipped) otherwise or without the tools.
set -u -o pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROOT=$PWD
fail() { echo "check_deb: FAIL: $*"; exit 1; }
# shellcheck source=../tests/gui/xvfb_lib.sh
. tests/gui/xvfb_lib.sh

[ "$(id -u)" -eq 0 ] || { echo "check_deb: SKIP: installs a package, needs root"; exit 77; }
for tool in lintian desktop-file-validate appstreamcli dpkg-shlibdeps help2man Xvfb xdotool sqlite3 apt-get; do
  command -v "$tool" > /dev/null || { echo "check_deb: SKIP: $tool is missing"; exit 77; }
done
if dpkg-query -W -f='${Status}' qwenchat qwenchat-cpu 2> /dev/null | grep -q "install ok installed"; then
  echo "check_deb: SKIP: a qwenchat package is already installed here; not touching it"
  exit 77
fi

variant=()
BUILT=$ROOT/build-deb-cuda
command -v nvcc > /dev/null || [ -x /usr/local/cuda/bin/nvcc ] || { variant=(--cpu); BUILT=$ROOT/build-deb-cpu; }
OUT=$ROOT/build-deb
if [ -n "${QWENCHAT_DEB_REUSE:-}" ] && ls "$OUT"/*.deb > /dev/null 2>&1; then  # iterating on this script
  rm -rf "$OUT/extract"
else
  rm -rf "$OUT"
  QWENCHAT_DEB_OUT=$OUT QWENCHAT_CUDA_ARCHITECTURES=${QWENCHAT_CUDA_ARCHITECTURES:-90} \
    packaging/build_deb.sh "${variant[@]}" > "$OUT.log" 2>&1 || { tail -40 "$OUT.log"; fail "build_deb.sh"; }
fi
DEB=$(ls "$OUT"/*.deb)
PKG=$(dpkg-deb -f "$DEB" Package)
echo "check_deb: built $(basename "$DEB") ($(du -h "$DEB" | cut -f1)), Depends: $(dpkg-deb -f "$DEB" Depends)"

# 1. lintian. Errors and warnings fail; the other tags must each be explained.
lintian --allow-root -I --pedantic "$DEB" > "$OUT/lintian.txt" 2>&1
cat "$OUT/lintian.txt"
grep -E "^[EW]: " "$OUT/lintian.txt" && fail "lintian reports errors or warnings (above)"
while read -r line; do
  tag=$(echo "$line" | awk '{print $3}')
  grep -q "^$tag:" packaging/lintian-explained || fail "lintian tag '$tag' is not explained in packaging/lintian-explained"
done < <(grep -E "^[IPX]: " "$OUT/lintian.txt")

# 2. The desktop files as installed.
EXTRACT=$OUT/extract
dpkg-deb -x "$DEB" "$EXTRACT"
desktop-file-validate "$EXTRACT"/usr/share/applications/*.desktop || fail "desktop-file-validate"
appstreamcli validate --no-net "$EXTRACT"/usr/share/metainfo/*.metainfo.xml || fail "appstreamcli validate"

# 3. A user's data before the install (a database the app wrote, with one conversation, and settings).
HOMEDIR=$(mktemp -d /tmp/qwenchat-deb-home.XXXXXX)
export XDG_CONFIG_HOME=$HOMEDIR/config XDG_DATA_HOME=$HOMEDIR/data
mkdir -p "$XDG_CONFIG_HOME/qwenchat" "$XDG_DATA_HOME/qwenchat"
echo '{"settings": {"random_seed": false, "seed": 7, "temperature": 0.5}}' > "$XDG_CONFIG_HOME/qwenchat/config.json"
tail -n +2 "$ROOT/tests/golden/export/branchy.all.json" > "$HOMEDIR/conversation.json"  # after the golden's header line
"$BUILT/app/qwenchat-cli" import --db "$XDG_DATA_HOME/qwenchat/qwenchat.db" --in "$HOMEDIR/conversation.json" \
  > /dev/null || fail "could not write the user's database"
snapshot() { (cd "$HOMEDIR" && find . -type f -exec sha256sum {} + | sort); }
before_install=$(snapshot)

# 4. Install, use, and look at what was installed.
cleanup() { apt-get remove -y "$PKG" > /dev/null 2>&1; [ -n "${XVFB_PID:-}" ] && kill "$XVFB_PID" 2> /dev/null; rm -rf "$HOMEDIR"; }
trap cleanup EXIT
apt-get install -y "$DEB" > "$OUT/install.log" 2>&1 || { tail -20 "$OUT/install.log"; fail "apt-get install $DEB"; }
[ "$(snapshot)" = "$before_install" ] || fail "the install changed the user's data"
for p in qwenchat qwenchat-cli qwenchat-convert qwenchat-mkmodel; do
  [ -x /usr/bin/$p ] || fail "/usr/bin/$p missing"
  [ -f /usr/share/man/man1/$p.1.gz ] || fail "no man page for $p"
  /usr/bin/$p --version | grep -q "^$p " || fail "$p --version"
done
reply=$(cd / && /usr/bin/qwenchat-cli generate --chat --prompt "What is 17 + 25?" --temperature 0 --max-tokens 24 2> "$OUT/cli.err")
echo "check_deb: installed qwenchat-cli on the installed default model: $reply"
[[ $reply == *42* ]] || fail "no '42' from the installed default model ($(tail -1 "$OUT/cli.err"))"

start_xvfb 1280x800x24 "$OUT/xvfb.log" || fail "no virtual display (the reason is above)"
# Started the way the desktop does it: the installed entry's Exec line (no field codes in it), on the
# user's own database.
DESKTOP=$(ls /usr/share/applications/io.github.qwenchat.qwenchat.desktop) || fail "no installed desktop entry"
EXEC=$(sed -n 's/^Exec=//p' "$DESKTOP")
[ "$(command -v "${EXEC%% *}")" = /usr/bin/qwenchat ] || fail "the desktop entry's Exec '$EXEC' does not start /usr/bin/qwenchat"
(cd / && LIBGL_ALWAYS_SOFTWARE=1 exec $EXEC) > "$OUT/gui.log" 2>&1 &
APP=$!
wait_for 60 xdotool search --name '^qwenchat · qwenchat-default.gguf$' ||
  { cat "$OUT/gui.log"; fail "the installed app showed no window on the default model"; }
if command -v xprop > /dev/null; then  # the desktop entry's StartupWMClass
  wm_class=$(xprop -id "$(xdotool search --name '^qwenchat · ' | head -1)" WM_CLASS)
  [[ $wm_class == *'"qwenchat", "qwenchat"'* ]] || fail "WM_CLASS is $wm_class, expected qwenchat (StartupWMClass)"
fi
xdotool key ctrl+q
for _ in $(seq 1 100); do kill -0 $APP 2> /dev/null || break; sleep 0.2; done
kill -0 $APP 2> /dev/null && fail "the installed app did not quit on Ctrl+Q"
wait $APP || fail "the installed app's exit status was not 0"
echo "check_deb: the desktop entry's '$EXEC' opened the app on /usr/share/qwenchat/qwenchat-default.gguf; it quit cleanly"

# 5. Remove; the user's data stays as it was (the settings the app saved on quit included).
before=$(snapshot)
apt-get remove -y "$PKG" > "$OUT/remove.log" 2>&1 || fail "apt-get remove $PKG"
[ ! -e /usr/bin/qwenchat-cli ] || fail "/usr/bin/qwenchat-cli is still there after the removal"
after=$(snapshot)
[ "$before" = "$after" ] || fail "the user's data changed: before: $before after: $after"
# 6. The other variant (the CPU-only package where this machine built the CUDA one): built and linted.
if [ ${#variant[@]} -eq 0 ]; then
  QWENCHAT_DEB_OUT=$OUT/cpu packaging/build_deb.sh --cpu > "$OUT/cpu.log" 2>&1 || { tail -20 "$OUT/cpu.log"; fail "build_deb.sh --cpu"; }
  lintian --allow-root -I --pedantic "$OUT"/cpu/*.deb > "$OUT/lintian-cpu.txt" 2>&1
  grep -E "^[EW]: " "$OUT/lintian-cpu.txt" && fail "lintian on the CPU-only package reports errors or warnings"
  while read -r line; do
    tag=$(echo "$line" | awk '{print $3}')
    grep -q "^$tag:" packaging/lintian-explained || fail "lintian tag '$tag' (CPU package) is not explained"
  done < <(grep -E "^[IPX]: " "$OUT/lintian-cpu.txt")
  echo "check_deb: $(basename "$OUT"/cpu/*.deb) built, lintian clean ($(grep -c . "$OUT/lintian-cpu.txt") info lines)"
fi
echo "check_deb: PASS ($PKG: lintian clean, desktop entry and metainfo valid, installed, used, removed; user data untouched)"
