#!/usr/bin/env bash
# qwenchat-cli export/import end to end: import the golden fixture's JSON, export it back in every
# format and compare with the golden files; every kind of bad input exits non-zero (and not by a
# signal) with exactly one line on stderr and nothing on stdout.
set -uo pipefail
CLI=$1
GOLDEN=$2
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fails=0
pass=0
ok() { pass=$((pass + 1)); echo "ok   $1"; }
bad() { fails=$((fails + 1)); echo "FAIL $1"; }
check() { local name=$1; shift; if "$@"; then ok "$name"; else bad "$name"; fi; }
body() { tail -n +2 "$GOLDEN/$1"; }  # a golden file without its header line

body branchy.all.json > "$T/in.json"
"$CLI" import --db "$T/sub/dir/chat.db" --in "$T/in.json" > "$T/import.out" 2> "$T/import.err"
check "import exits 0" test $? -eq 0
check "import says what it did" grep -q "^imported 1 conversation into $T/sub/dir/chat.db: 1$" "$T/import.out"

# The fixture's conversation id was 7; in the new database it is 1. Everything else is identical.
"$CLI" export --db "$T/sub/dir/chat.db" --conversation 1 --format json --branch all > "$T/all.json"
check "json export = the imported JSON but the id" cmp -s <(sed 's/^      "id": 7,$/      "id": 1,/' "$T/in.json") "$T/all.json"
"$CLI" export --db "$T/sub/dir/chat.db" --conversation 1 --format md --branch all --out "$T/all.md"
check "md whole tree = golden" cmp -s <(body branchy.all.md) "$T/all.md"
check "no temporary file left" test -z "$(compgen -G "$T/all.md.partial*")"
"$CLI" export --db "$T/sub/dir/chat.db" --conversation 1 --format md > "$T/cur.md"
check "md current branch (the default) = golden" cmp -s <(body branchy.current.md) "$T/cur.md"
"$CLI" export --db "$T/sub/dir/chat.db" --conversation 1 --format txt --branch current > "$T/cur.txt"
check "txt current branch = golden" cmp -s <(body branchy.current.txt) "$T/cur.txt"
"$CLI" export --db "$T/sub/dir/chat.db" --conversation 1 --format json --branch current > "$T/cur.json"
check "json current branch = golden" cmp -s <(body branchy.current.json | sed 's/^      "id": 7,$/      "id": 1,/') "$T/cur.json"

"$CLI" import --db "$T/sub/dir/chat.db" --in "$T/all.json" > /dev/null
"$CLI" export --db "$T/sub/dir/chat.db" --all --format json --branch all > "$T/both.json"
check "--all exports both conversations" test "$(grep -c '"title": "Prime numbers"' "$T/both.json")" -eq 2
"$CLI" import --db "$T/round.db" --in "$T/both.json" > /dev/null
"$CLI" export --db "$T/round.db" --all --format json --branch all > "$T/both2.json"
check "export -> import -> export (--all) is identical" cmp -s "$T/both.json" "$T/both2.json"

# The default database: $XDG_DATA_HOME/qwenchat/qwenchat.db.
XDG_DATA_HOME="$T/xdg" "$CLI" import --in "$T/in.json" > /dev/null
check "import without --db uses XDG_DATA_HOME" test -s "$T/xdg/qwenchat/qwenchat.db"
XDG_DATA_HOME="$T/xdg" "$CLI" export --all --format txt > "$T/xdg.txt"
check "export without --db uses XDG_DATA_HOME" cmp -s <(body branchy.current.txt) "$T/xdg.txt"

# Bad input: non-zero, not a signal, exactly one line on stderr, nothing on stdout.
expect_error() {
  local name=$1; shift
  "$@" > "$T/err.out" 2> "$T/err.err"
  local rc=$?
  local lines
  lines=$(wc -l < "$T/err.err")
  if [ $rc -ne 0 ] && [ $rc -lt 128 ] && [ "$lines" -eq 1 ] && [ ! -s "$T/err.out" ]; then
    ok "$name: $(cat "$T/err.err")"
  else
    bad "$name (rc=$rc, $lines stderr lines)"; cat "$T/err.err"
  fi
}
echo '{"format":"qwenchat-export","version":2,"conversations":[]}' > "$T/v2.json"
echo '{"format":"something-else","version":1}' > "$T/other.json"
printf '{"format": "qwenchat-export", ' > "$T/broken.json"
DB="$T/sub/dir/chat.db"
expect_error "missing db" "$CLI" export --db "$T/nope.db" --all --format md
check "export does not create a missing db" test ! -e "$T/nope.db"
expect_error "unknown conversation" "$CLI" export --db "$DB" --conversation 999 --format md
expect_error "bad conversation id" "$CLI" export --db "$DB" --conversation abc --format md
expect_error "--all and --conversation" "$CLI" export --db "$DB" --all --conversation 1 --format md
expect_error "neither --all nor --conversation" "$CLI" export --db "$DB" --format md
expect_error "unknown format" "$CLI" export --db "$DB" --all --format html
expect_error "missing format" "$CLI" export --db "$DB" --all
expect_error "unknown branch" "$CLI" export --db "$DB" --all --format md --branch some
expect_error "unwritable --out" "$CLI" export --db "$DB" --all --format md --out "$T/no/such/dir/x.md"
expect_error "not a database" "$CLI" export --db "$T/in.json" --all --format md
expect_error "import: invalid JSON" "$CLI" import --db "$T/new.db" --in "$T/broken.json"
expect_error "import: wrong format" "$CLI" import --db "$T/new.db" --in "$T/other.json"
expect_error "import: wrong version" "$CLI" import --db "$T/new.db" --in "$T/v2.json"
expect_error "import: missing file" "$CLI" import --db "$T/new.db" --in "$T/missing.json"
expect_error "import: missing --in" "$CLI" import --db "$T/new.db"
check "a failed import creates no database" test ! -e "$T/new.db"

echo "$pass passed, $fails failed"
[ $fails -eq 0 ]
