#!/bin/bash
# The shipped programs link no offline tooling (issue #11): no strong symbol (function or data) that
# qwenchat_offline's objects define (the GGUF writer, the quantisers, the importer, the BPE trainer,
# synthetic models) is defined in a shipped program. Weak symbols (inline functions, template instances)
# are shared by design and not counted. With --expect-some the check is inverted, as the control: each
# program named must hold some of them (the tools that link the library), so that an nm call that reads
# nothing cannot pass as "none".
# Usage: check_no_offline_symbols.sh NM LIBQWENCHAT_OFFLINE.a [--expect-some] PROGRAM...
set -euo pipefail
NM=$1 LIB=$2; shift 2
EXPECT=none
if [ "${1:-}" = --expect-some ]; then EXPECT=some; shift; fi
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

strong() {  # mangled names of the strong defined globals of $1, sorted, unique
  "$NM" --defined-only --extern-only --format=posix "$1" | awk '$2 ~ /^[TDBR]$/ { print $1 }' | sort -u
}
strong "$LIB" > "$WORK/offline"
n_offline=$(wc -l < "$WORK/offline")
[ "$n_offline" -ge 20 ] || { echo "FAIL: $LIB: only $n_offline strong symbols read; expected hundreds"; exit 1; }
rc=0
for p in "$@"; do
  strong "$p" > "$WORK/prog"
  comm -12 "$WORK/offline" "$WORK/prog" > "$WORK/shared"
  n=$(wc -l < "$WORK/shared")
  name=$(basename "$p")
  if [ "$EXPECT" = none ] && [ "$n" -gt 0 ]; then
    echo "FAIL: $name defines $n symbols of the offline library, among them:"
    head -10 "$WORK/shared" | c++filt | sed 's/^/  /'
    rc=1
  elif [ "$EXPECT" = some ] && [ "$n" -eq 0 ]; then
    echo "FAIL: $name defines none of the offline library's $n_offline symbols (the control expects some)"
    rc=1
  else
    echo "$name: $n of the offline library's $n_offline strong symbols (expected $EXPECT)"
  fi
done
exit $rc
