#!/usr/bin/env bash
# qwenchat-cli and qwenchat-mkmodel end to end: generate a tiny model, inspect it, generate text twice
# (same seed -> same logits hash), tokenize, dump logits, and check that every kind of bad input exits
# non-zero with exactly one clear line on stderr and never crashes (exit code > 128 = killed by a signal).
set -uo pipefail
CLI=$1
MKMODEL=$2
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fails=0
pass=0
ok() { pass=$((pass + 1)); echo "ok   $1"; }
bad() { fails=$((fails + 1)); echo "FAIL $1"; }
check() { local name=$1; shift; if "$@"; then ok "$name"; else bad "$name"; fi; }

"$MKMODEL" --preset tiny --seed 7 --out "$T/tiny.gguf" --quiet || { echo "FAIL mkmodel"; exit 1; }
check "mkmodel wrote a file" test -s "$T/tiny.gguf"
"$MKMODEL" --preset tiny --seed 7 --out "$T/tiny2.gguf" --quiet
check "mkmodel is deterministic" cmp -s "$T/tiny.gguf" "$T/tiny2.gguf"
"$MKMODEL" --preset tiny --seed 7 --type f32 --out "$T/tiny-f32.gguf" --quiet
check "mkmodel f32" test -s "$T/tiny-f32.gguf"

"$CLI" info --model "$T/tiny.gguf" > "$T/info.txt" 2>&1
check "info runs" grep -q "MTP block:     present" "$T/info.txt"
check "info lists Q8_0" grep -q "Q8_0" "$T/info.txt"

run_gen() {
  "$CLI" generate --model "$T/tiny.gguf" --prompt "Hello, qwenchat" --max-tokens 24 --seed 3 --temperature 0.8 "$@"
}
run_gen > "$T/gen1.out" 2> "$T/gen1.err"; rc1=$?
run_gen > "$T/gen2.out" 2> "$T/gen2.err"; rc2=$?
check "generate exits 0" test $rc1 -eq 0 -a $rc2 -eq 0
check "generate prints text" test -s "$T/gen1.out"
check "generate stats line has tok/s and a hash" grep -Eq "decode=[0-9.]+ tok/s.*logits_hash=[0-9a-f]{16}" <(tail -n1 "$T/gen1.err")
h1=$(tail -n1 "$T/gen1.err" | grep -o 'logits_hash=[0-9a-f]*')
h2=$(tail -n1 "$T/gen2.err" | grep -o 'logits_hash=[0-9a-f]*')
check "same seed, same logits hash" test -n "$h1" -a "$h1" = "$h2"
check "same seed, same text" cmp -s "$T/gen1.out" "$T/gen2.out"
"$CLI" generate --model "$T/tiny.gguf" --prompt hi --max-tokens 2 --ctx 1048576 > /dev/null 2> "$T/cap.err"
check "a --ctx above the training context is reported, not silently capped" \
  grep -q "^qwenchat-cli: --ctx 1048576 is above the model's training context: using 4096$" "$T/cap.err"
"$CLI" generate --model "$T/tiny.gguf" --prompt "Hello" --max-tokens 16 --temperature 0 --threads 1 > "$T/g1.out" 2> "$T/g1.err"
"$CLI" generate --model "$T/tiny.gguf" --prompt "Hello" --max-tokens 16 --temperature 0 --threads 2 > "$T/g2.out" 2> "$T/g2.err"
check "thread count does not change the bits" test "$(tail -n1 "$T/g1.err" | grep -o 'logits_hash=[0-9a-f]*')" = "$(tail -n1 "$T/g2.err" | grep -o 'logits_hash=[0-9a-f]*')"
"$CLI" generate --model "$T/tiny.gguf" --prompt "Hello" --max-tokens 16 --temperature 0 --mtp on --draft 2 > "$T/m.out" 2> "$T/m.err"
check "greedy with MTP gives the same text" cmp -s "$T/g1.out" "$T/m.out"
check "MTP acceptance reported" grep -q "mtp_accept=" <(tail -n1 "$T/m.err")
check "MTP verification rolls back without a re-run pass" grep -q "rerun_passes=0" <(tail -n1 "$T/m.err")
"$CLI" generate --model "$T/tiny.gguf" --prompt "What is 2+2?" --chat --max-tokens 8 > /dev/null 2> "$T/chat.err"
check "generate --chat" test $? -eq 0

"$CLI" generate --model "$T/tiny.gguf" --prompt "$(printf 'a longer prompt than one forward call takes %.0s' $(seq 1 12))" --max-tokens 4 > /dev/null 2> "$T/long.err"
check "a prompt longer than the backend's batch is chunked" grep -q "stop=max_tokens" <(tail -n1 "$T/long.err")

"$CLI" tokenize --model "$T/tiny.gguf" --text "Hello world" > "$T/tok.json"
check "tokenize prints a JSON array" grep -Eq '^\[[0-9]+(,[0-9]+)*\]$' "$T/tok.json"
printf '"Hello world"\n"second line"\n' > "$T/cases.jsonl"
"$CLI" tokenize --model "$T/tiny.gguf" --input "$T/cases.jsonl" > "$T/tok2.json"
check "tokenize --input: one array per line" test "$(wc -l < "$T/tok2.json")" -eq 2
check "tokenize --input matches --text" test "$(head -n1 "$T/tok2.json")" = "$(cat "$T/tok.json")"

"$CLI" logits --model "$T/tiny.gguf" --tokens 1,2,3 --out "$T/logits.bin"
vocab=$(grep -o '"n_vocab": [0-9]*' "$T/logits.bin.json" | grep -o '[0-9]*$')
embd=$(grep -o '"n_embd": [0-9]*' "$T/logits.bin.json" | grep -o '[0-9]*$')
check "logits file size = 3 x (vocab + embd) floats" test "$(stat -c %s "$T/logits.bin")" -eq $((3 * (vocab + embd) * 4))

# Bad input: non-zero exit, one line on stderr, no signal.
expect_error() {
  local name=$1; shift
  "$@" > /dev/null 2> "$T/err.txt"
  local rc=$?
  if [ $rc -ne 0 ] && [ $rc -lt 128 ] && [ "$(wc -l < "$T/err.txt")" -eq 1 ]; then ok "$name"; else
    bad "$name (rc=$rc)"; cat "$T/err.txt"; fi
}
head -c 1000 "$T/tiny.gguf" > "$T/trunc-header.gguf"
head -c $(( $(stat -c %s "$T/tiny.gguf") - 4096 )) "$T/tiny.gguf" > "$T/trunc-data.gguf"
cp "$T/tiny.gguf" "$T/corrupt.gguf"; printf 'XXXX' | dd of="$T/corrupt.gguf" bs=1 seek=0 conv=notrunc 2>/dev/null
cp "$T/tiny.gguf" "$T/corrupt2.gguf"; printf '\xff\xff\xff\xff\xff\xff\xff\x7f' | dd of="$T/corrupt2.gguf" bs=1 seek=8 conv=notrunc 2>/dev/null
echo "not a model" > "$T/text.gguf"
expect_error "missing file" "$CLI" generate --model "$T/nope.gguf" --prompt hi
expect_error "truncated header" "$CLI" generate --model "$T/trunc-header.gguf" --prompt hi
expect_error "truncated data" "$CLI" info --model "$T/trunc-data.gguf"
expect_error "bad magic" "$CLI" info --model "$T/corrupt.gguf"
expect_error "huge tensor count" "$CLI" info --model "$T/corrupt2.gguf"
expect_error "text file" "$CLI" tokenize --model "$T/text.gguf" --text hi
expect_error "directory" "$CLI" info --model "$T"
expect_error "unknown option" "$CLI" generate --model "$T/tiny.gguf" --prompt hi --bogus 1
expect_error "bad number" "$CLI" generate --model "$T/tiny.gguf" --prompt hi --temperature warm
expect_error "top-p out of range" "$CLI" generate --model "$T/tiny.gguf" --prompt hi --top-p 1.5
expect_error "gpu-memory out of range" "$CLI" generate --model "$T/tiny.gguf" --prompt hi --gpu-memory 0.1
"$CLI" generate --model "$T/tiny.gguf" --prompt hi --max-tokens 2 --gpu-memory 24 > /dev/null 2> "$T/gm.err"
check "--gpu-memory is accepted (the CPU backend ignores it)" test $? -eq 0
expect_error "token out of range" "$CLI" logits --model "$T/tiny.gguf" --tokens 1,99999999 --out "$T/x.bin"
expect_error "unknown backend" "$CLI" generate --model "$T/tiny.gguf" --prompt hi --backend tpu
expect_error "unknown block engine" "$CLI" generate --model "$T/tiny.gguf" --prompt hi --block-engine fast
grep -q 'expected one of auto, registers, stream, segments' "$T/err.txt"
check "--block-engine names the engines it takes" test $? -eq 0
"$CLI" generate --model "$T/tiny.gguf" --prompt hi --max-tokens 2 --block-engine segments > /dev/null 2> "$T/be.err"
check "--block-engine is accepted (the CPU backend has no kernel engines)" test $? -eq 0
expect_error "prompt longer than the context" "$CLI" generate --model "$T/tiny.gguf" --prompt "$(printf 'word %.0s' $(seq 1 200))" --ctx 16
# A message too long for the context is refused and the chat session goes on (issue 13: a 1 MB prompt
# ended the session).
{ head -c 1000000 /dev/zero | tr '\0' 'a'; echo; echo "Hello"; echo; } |
  "$CLI" chat --model "$T/tiny.gguf" --ctx 256 --max-tokens 4 --temperature 0 > "$T/chat.out" 2> "$T/chat.err"
rc=$?
check "chat survives a 1 MB message" test $rc -eq 0
check "chat says the long message was not sent" grep -q "that message was not sent: " "$T/chat.err"
check "chat answers the next message" grep -q "tokens=" "$T/chat.err"
expect_error "unknown command" "$CLI" frobnicate
expect_error "mkmodel unknown preset" "$MKMODEL" --preset huge --out "$T/x.gguf"
expect_error "mkmodel unwritable output" "$MKMODEL" --preset tiny --out /proc/qwenchat/x.gguf
check "no partial file left" test ! -e "$T/x.gguf.partial"

echo "$pass passed, $fails failed"
[ $fails -eq 0 ]
