#!/usr/bin/env python3
"""Training data for the embedded default model, from Debian packages only (assets/README.md lists each
source and its licence). Deterministic: the same packages and --seed give byte-identical output.

Sources (read from their installed paths):
  wordnet / wordnet-base   /usr/share/wordnet/data.*  glosses and examples, one entry per synset
  dict-gcide               /usr/share/dictd/gcide.dict.dz  (dictzip = gzip) the 1913 Webster entries
  fortunes, fortunes-min   /usr/share/games/fortunes/*  (the plain files; % separates fortunes)
  bible-kjv(-text)         `bible -f Gen1:1-Rev22:21`  the King James Bible, one chapter per document
  base-files               /usr/share/common-licenses/*  licence texts (plain-text documentation)
plus generated chat exercises rendered with the engine's ChatML layout (engine/tokenizer/chat_format.cpp):
arithmetic with exact answers, WordNet definitions, spelling, letter counting, counting sequences, unit
conversions, a few fixed identity/greeting turns, fortunes and verses on request; single and multi-turn,
thinking off (the app's default) and on.

Outputs in --out:
  train.jsonl        one document per line: {"t": text} (plain, an <|endoftext|> follows it) or
                     {"c": [[special(0/1), text], ...]} (a chat: segments; specials are whole tokens)
  valid_text.jsonl   held-out plain documents (every 64th by a hash of its text), for perplexity
  eval_arith.jsonl   held-out arithmetic questions {"q", "a"}: operand pairs never seen in training
  eval_define.jsonl  held-out definition questions: the word's chat exercise is never trained, only its
                     WordNet gloss is read as plain text
  eval_define_seen.jsonl  definition questions that were trained (memorisation, for comparison)
  spm_input.txt      sentences for spm_train (plain text and chat contents, one per line)
  stats.json         documents and characters per source
"""
import argparse
import glob
import gzip
import hashlib
import json
import os
import random
import re
import subprocess
import zlib

IM_START, IM_END, THINK_B, THINK_E, EOT = "<|im_start|>", "<|im_end|>", "<think>", "</think>", "<|endoftext|>"
SYSTEM_PROMPTS = ["", "", "", "You are a helpful assistant.", "You are qwenchat, a small helpful assistant."]


def h32(s):
    return zlib.crc32(s.encode("utf-8"))


# ---------------------------------------------------------------------------------------------- sources

POS = {"noun": "n", "verb": "v", "adj": "a", "adv": "r"}
POS_NAME = {"noun": "noun", "verb": "verb", "adj": "adjective", "adv": "adverb"}


def read_wordnet(root="/usr/share/wordnet"):
    """synsets: list of (pos, [words], definition, [examples]); first_sense: word -> (pos, definition)
    for the most frequent sense (first synset in index.<pos>, nouns before verbs before adjectives)."""
    synsets = {}
    out = []
    for pos in POS:
        with open(os.path.join(root, "data." + pos), encoding="latin-1") as f:
            for line in f:
                if line.startswith("  "):
                    continue
                head, _, gloss = line.partition(" | ")
                parts = head.split()
                offset, n_words = parts[0], int(parts[3], 16)
                words = [parts[4 + 2 * i].replace("_", " ") for i in range(n_words)]
                words = [re.sub(r"\((a|p|ip)\)$", "", w) for w in words]
                gloss = gloss.strip()
                examples = re.findall(r'"([^"]+)"', gloss)
                definition = gloss.split('; "')[0].split(' "')[0].strip().rstrip(";").strip()
                if not definition:
                    continue
                synsets[(pos, offset)] = (pos, words, definition, examples)
                out.append((pos, words, definition, examples))
    first_sense = {}
    for pos in POS:
        with open(os.path.join(root, "index." + pos), encoding="latin-1") as f:
            for line in f:
                if line.startswith("  "):
                    continue
                parts = line.split()
                lemma = parts[0].replace("_", " ")
                n_ptr = int(parts[3])
                offsets = parts[6 + n_ptr:]
                s = synsets.get((pos, offsets[0])) if offsets else None
                if s and lemma not in first_sense and re.fullmatch(r"[a-z][a-z -]*[a-z]", lemma):
                    first_sense[lemma] = (pos, s[2], s[3])
    return out, first_sense


def wordnet_docs(synsets, rng):
    entries = []
    for pos, words, definition, examples in synsets:
        e = f"{words[0]} ({POS_NAME[pos]}): {definition}."
        if len(words) > 1:
            e += " Also: " + ", ".join(words[1:]) + "."
        for x in examples:
            e += f' Example: "{x}".'
        entries.append(e)
    rng.shuffle(entries)
    return ["\n".join(entries[i:i + 40]) for i in range(0, len(entries), 40)]


def gcide_docs(path="/usr/share/dictd/gcide.dict.dz", max_chars=14_000_000):
    with gzip.open(path, "rt", encoding="utf-8", errors="replace") as f:
        text = f.read()
    entries, cur = [], []
    for line in text.split("\n"):
        if line and not line.startswith(" "):
            if cur:
                entries.append(cur)
            cur = [line]
        elif line.strip():
            cur.append(line.strip())
    if cur:
        entries.append(cur)
    docs, doc, size = [], [], 0
    for e in entries:
        head = re.sub(r"\\[^\\]*\\", "", e[0])  # pronunciation \Ab*do"men\
        body = " ".join(e[1:])
        s = re.sub(r"\s+", " ", head + " " + body)
        s = re.sub(r"\[(1913 Webster|Webster 1913 Suppl\.|PJC|WordNet 1\.5|[A-Z]{2,4})\]", "", s)
        s = re.sub(r"\s+", " ", s).strip()
        if len(s) < 20 or s.startswith("00-database"):
            continue
        doc.append(s)
        if len(doc) == 30:
            docs.append("\n".join(doc))
            size += len(docs[-1])
            doc = []
        if size > max_chars:
            break
    return docs


def fortune_items(root="/usr/share/games/fortunes"):
    items = []
    for path in sorted(glob.glob(os.path.join(root, "*"))):
        if path.endswith((".dat", ".u8")) or os.path.isdir(path):
            continue
        with open(path, encoding="utf-8", errors="replace") as f:
            for item in f.read().split("\n%\n"):
                item = item.strip("\n%")
                if item.strip():
                    items.append(item)
    return items


def kjv_docs():
    text = subprocess.run(["bible", "-f", "Gen1:1-Rev22:21"], check=True, capture_output=True,
                          text=True).stdout
    chapters, cur, key = [], [], None
    verses = []
    for line in text.split("\n"):
        m = re.match(r"^(\w+?)(\d+):(\d+) (.*)$", line)
        if m:
            k = (m.group(1), m.group(2))
            if k != key and cur:
                chapters.append("\n".join(cur))
                cur = []
            key = k
            cur.append(f"{m.group(2)}:{m.group(3)} {m.group(4)}")
            verses.append(m.group(4))
        elif line.strip() and cur:
            cur[-1] += " " + line.strip()
    if cur:
        chapters.append("\n".join(cur))
    return chapters, verses


def license_docs(root="/usr/share/common-licenses"):
    docs = []
    for p in sorted(os.listdir(root)):
        path = os.path.join(root, p)
        if os.path.isfile(path) and not os.path.islink(path):
            with open(path, encoding="utf-8", errors="replace") as f:
                for part in f.read().split("\n\n\n"):
                    if part.strip():
                        docs.append(part.strip())
    return docs


# ------------------------------------------------------------------------------------- chat exercises

def render_chat(turns, system="", thinking_mode=False, last_thinking=""):
    """Segments exactly as encode_chat produces them for the prompt + the reply the model should write.
    turns: [(user, assistant), ...]; earlier assistant turns are written without thinking (the template
    drops it); the last reply follows the generation prompt."""
    seg = []

    def sp(t):
        seg.append([1, t])

    def tx(t):
        if seg and seg[-1][0] == 0:
            seg[-1][1] += t
        else:
            seg.append([0, t])

    if system:
        sp(IM_START), tx("system\n" + system), sp(IM_END), tx("\n")
    for i, (u, a) in enumerate(turns):
        sp(IM_START), tx("user\n" + u), sp(IM_END), tx("\n")
        sp(IM_START), tx("assistant\n")
        if i + 1 < len(turns):
            tx(a), sp(IM_END), tx("\n")
            continue
        sp(THINK_B), tx("\n")
        if thinking_mode:
            # the prompt ends after "<think>\n": the model writes its thinking and closes the block
            seg.append([0, (last_thinking + "\n") if last_thinking else "\n"])
        else:
            tx("\n"), sp(THINK_E), tx("\n\n")
            seg.append([0, a])  # the reply is a text run of its own, as in generation
            sp(IM_END), tx("\n")
            return seg
        sp(THINK_E)
        seg.append([0, "\n\n" + a])
        sp(IM_END), tx("\n")
    return seg


NUM_WORDS = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven",
             "twelve"]
UNITS = [  # (big, small, factor)
    ("metre", "centimetre", 100), ("kilometre", "metre", 1000), ("metre", "millimetre", 1000),
    ("kilogram", "gram", 1000), ("litre", "millilitre", 1000), ("hour", "minute", 60), ("minute", "second", 60),
    ("day", "hour", 24), ("week", "day", 7), ("foot", "inch", 12), ("yard", "foot", 3), ("pound", "ounce", 16),
    ("year", "month", 12), ("dozen", "item", 12),
]
PLURAL = {"foot": "feet", "inch": "inches", "dozen": "dozens", "century": "centuries"}


def plural(u, n):
    return u if n == 1 else PLURAL.get(u, u + "s")


def arith_question(rng, a, b, op):
    sym = {"+": "+", "-": "-", "*": "*", "/": "/"}[op]
    forms = [f"What is {a} {sym} {b}?", f"What's {a} {sym} {b}?", f"Calculate {a} {sym} {b}.",
             f"{a} {sym} {b} = ?", f"Compute {a} {sym} {b}", f"what is {a}{sym}{b}"]
    if op == "*":
        forms += [f"What is {a} times {b}?", f"Multiply {a} by {b}."]
    if op == "+":
        forms += [f"What is {a} plus {b}?", f"Add {a} and {b}."]
    if op == "-":
        forms += [f"What is {a} minus {b}?", f"Subtract {b} from {a}."]
    if op == "/":
        forms += [f"What is {a} divided by {b}?", f"Divide {a} by {b}."]
    return rng.choice(forms)


def arith_answer(a, b, op):
    r = {"+": a + b, "-": a - b, "*": a * b, "/": a // b if b else 0}[op]
    return r, f"{a} {op} {b} = {r}."


def arith_heldout(a, b, op):
    return h32(f"{a}{op}{b}") % 16 == 0


def arith_operands(rng):
    op = rng.choice("++--*/")
    if op in "+-":
        hi = rng.choice([10, 100, 100, 1000])
        a, b = rng.randint(0, hi), rng.randint(0, hi)
        if op == "-" and rng.random() < 0.7 and b > a:
            a, b = b, a
    elif op == "*":
        a, b = rng.randint(0, 20), rng.randint(0, rng.choice([12, 20, 100]))
    else:
        b = rng.randint(1, 12)
        a = b * rng.randint(0, 12)
    return a, b, op


def define_question(rng, w):
    return rng.choice([f"Define: {w}", f"Define {w}.", f"What does \"{w}\" mean?", f"What is the meaning of {w}?",
                       f"define {w}", f"What does the word {w} mean?", f"Definition of {w}?",
                       f"What is a {w}?" if not w.endswith("ly") else f"What does {w} mean?"])


def define_answer(w, pos, definition):
    return f"{w[0].upper() + w[1:]} ({POS_NAME[pos]}): {definition}."


def define_heldout(w):
    return h32("define:" + w) % 16 == 0


def exercise(rng, first_sense, words, fortunes, verses):
    """One (user, assistant, thinking) exercise."""
    k = rng.random()
    if k < 0.34:
        while True:
            a, b, op = arith_operands(rng)
            if not arith_heldout(a, b, op):
                break
        r, ans = arith_answer(a, b, op)
        return arith_question(rng, a, b, op), ans, f"{a} {op} {b} = {r}"
    if k < 0.62:
        while True:
            w = rng.choice(words)
            if not define_heldout(w):
                break
        pos, d, ex = first_sense[w]
        ans = define_answer(w, pos, d)
        if ex and rng.random() < 0.3:
            ans += f' For example: "{ex[0]}".'
        return define_question(rng, w), ans, f"The word is {w}."
    if k < 0.70:
        w = rng.choice(words).replace(" ", "")
        q = rng.choice([f"How do you spell {w}?", f"Spell \"{w}\".", f"Spell {w} letter by letter.",
                        f"spell {w}"])
        return q, f"{w} is spelled " + "-".join(w.upper()) + ".", ""
    if k < 0.77:
        w = rng.choice(words).replace(" ", "")
        q = rng.choice([f"How many letters are in \"{w}\"?", f"How many letters does {w} have?",
                        f"Count the letters in {w}."])
        return q, f"\"{w}\" has {len(w)} letters: " + ", ".join(w) + ".", ""
    if k < 0.82:
        a = rng.randint(0, 50)
        b = a + rng.randint(2, 12)
        q = rng.choice([f"Count from {a} to {b}.", f"List the numbers from {a} to {b}.", f"count {a} to {b}"])
        return q, ", ".join(str(i) for i in range(a, b + 1)) + ".", ""
    if k < 0.90:
        big, small, f = rng.choice(UNITS)
        n = rng.randint(1, 12)
        if rng.random() < 0.5:
            q = rng.choice([f"How many {plural(small, 2)} are in {n} {plural(big, n)}?",
                            f"Convert {n} {plural(big, n)} to {plural(small, 2)}."])
            return q, f"{n} {plural(big, n)} = {n * f} {plural(small, n * f)}.", f"{n} * {f} = {n * f}"
        m = n * f
        q = rng.choice([f"How many {plural(big, 2)} are in {m} {plural(small, m)}?",
                        f"Convert {m} {plural(small, m)} to {plural(big, 2)}."])
        return q, f"{m} {plural(small, m)} = {n} {plural(big, n)}.", f"{m} / {f} = {n}"
    if k < 0.93:
        q = rng.choice(["Tell me a fortune.", "Give me a quote.", "Say something wise.", "Tell me a joke.",
                        "fortune"])
        return q, rng.choice(fortunes), ""
    if k < 0.95:
        q = rng.choice(["Quote a Bible verse.", "Give me a verse from the King James Bible.", "A verse, please."])
        return q, rng.choice(verses), ""
    return rng.choice(IDENTITY)


IDENTITY = [
    ("Hello", "Hello! I am the small model built into qwenchat. I can define words, do arithmetic, spell and "
              "count, and convert units. What would you like to know?", ""),
    ("Hi!", "Hi! Ask me to define a word, to do some arithmetic, or to spell a word.", ""),
    ("Who are you?", "I am qwenchat's built-in model: a small Qwen3.5-style hybrid model trained on Debian's "
                     "dictionaries, fortunes and the King James Bible. I know definitions and arithmetic.", ""),
    ("What can you do?", "I can define English words, do arithmetic with whole numbers, spell words, count "
                         "letters, and convert units. I am small, so keep questions short.", ""),
    ("Thank you!", "You are welcome!", ""),
    ("thanks", "You're welcome.", ""),
    ("How are you?", "I am fine, thank you. What would you like to know?", ""),
    ("What is your name?", "I am the qwenchat default model.", ""),
    ("Goodbye", "Goodbye!", ""),
]


def chat_docs(rng, n, first_sense, fortunes, verses):
    words = sorted(first_sense)
    docs = []
    for _ in range(n):
        n_turns = 1 if rng.random() < 0.7 else rng.randint(2, 4)
        ex = [exercise(rng, first_sense, words, fortunes, verses) for _ in range(n_turns)]
        thinking_mode = rng.random() < 0.25
        system = rng.choice(SYSTEM_PROMPTS)
        docs.append(render_chat([(u, a) for u, a, _ in ex], system, thinking_mode,
                                ex[-1][2] if thinking_mode else ""))
    return docs


# ------------------------------------------------------------------------------------------------ main

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--seed", type=int, default=20261202)
    ap.add_argument("--chats", type=int, default=160000)
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    rng = random.Random(args.seed)

    synsets, first_sense = read_wordnet()
    fortunes = fortune_items()
    chapters, verses = kjv_docs()
    plain = {
        "wordnet": wordnet_docs(synsets, rng),
        "gcide": gcide_docs(),
        "fortunes": ["\n\n".join(fortunes[i:i + 8]) for i in range(0, len(fortunes), 8)],
        "kjv": chapters,
        "licenses": license_docs(),
    }
    short_fortunes = [f for f in fortunes if len(f) < 300]
    chats = chat_docs(rng, args.chats, first_sense, short_fortunes, [v for v in verses if len(v) < 200])

    stats = {"seed": args.seed, "sources": {}}
    train, valid = [], []
    for src, docs in plain.items():
        chars = 0
        for d in docs:
            (valid if h32(d) % 64 == 0 else train).append({"t": d})
            chars += len(d)
        stats["sources"][src] = {"docs": len(docs), "chars": chars}
    stats["sources"]["chat"] = {"docs": len(chats), "chars": sum(len(t) for c in chats for _, t in c)}
    train += [{"c": c} for c in chats]
    rng.shuffle(train)

    def dump(name, rows):
        with open(os.path.join(args.out, name), "w", encoding="utf-8") as f:
            for r in rows:
                f.write(json.dumps(r, ensure_ascii=False) + "\n")

    dump("train.jsonl", train)
    dump("valid_text.jsonl", valid)

    # Held-out evaluation questions (one fixed phrasing each, so exact match is well defined).
    erng = random.Random(args.seed + 1)
    arith = []
    seen = set()
    while len(arith) < 400:
        a, b, op = arith_operands(erng)
        if arith_heldout(a, b, op) and (a, b, op) not in seen:
            seen.add((a, b, op))
            arith.append({"q": f"What is {a} {op} {b}?", "a": arith_answer(a, b, op)[1]})
    dump("eval_arith.jsonl", arith)
    words = sorted(first_sense)
    held = [w for w in words if define_heldout(w) and " " not in w]
    seen_w = [w for w in words if not define_heldout(w) and " " not in w]
    erng.shuffle(held)
    erng.shuffle(seen_w)
    dump("eval_define.jsonl", [{"q": f"Define: {w}", "a": define_answer(w, *first_sense[w][:2])} for w in held[:300]])
    dump("eval_define_seen.jsonl",
         [{"q": f"Define: {w}", "a": define_answer(w, *first_sense[w][:2])} for w in seen_w[:300]])

    # spm_train input: lines of plain text and chat contents (no special tokens).
    with open(os.path.join(args.out, "spm_input.txt"), "w", encoding="utf-8") as f:
        for r in train:
            text = r["t"] if "t" in r else "\n".join(t for s, t in r["c"] if not s)
            for line in text.split("\n"):
                if line.strip():
                    f.write(line + "\n")
    with open(os.path.join(args.out, "stats.json"), "w") as f:
        json.dump(stats, f, indent=1)
    print(json.dumps(stats))


if __name__ == "__main__":
    main()
