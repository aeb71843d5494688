#!/usr/bin/env python3
"""Measures a converted default model with our own engine (qwenchat-cli), for assets/README.md:
  - held-out perplexity: qwenchat-cli logits over consecutive windows of valid.u16 (tokenize_data.py),
    mean next-token cross-entropy, exp'd;
  - exact-match rate on held-out chat questions (prepare_data.py's eval_*.jsonl): greedy reply (chat
    template, thinking off) == the expected answer, after stripping surrounding whitespace;
  - MTP draft acceptance on the model's own greedy outputs (draft length 1 and 2), and decode tok/s with
    MTP off / on (greedy: the text is identical, which is checked) on the backend given.
Needs numpy only (no torch). Prints one JSON object and writes it to --out.

    python3 evaluate.py --cli build/app/qwenchat-cli --model assets/qwenchat-default.gguf \
        --data DIR_WITH_eval_jsonl_AND_valid.u16 --out metrics.json [--backend cpu] [--limit N]
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

import numpy as np

MTP_PROMPTS = ["Define: lantern", "What is 17 + 25?", "Tell me a fortune.", "Who are you?",
               "How do you spell necessary?", "Count from 3 to 15.", "Quote a Bible verse.", "Define: river"]


def generate(cli, model, prompt, backend, extra=(), max_tokens=64, chat=True, threads=None):
    cmd = [cli, "generate", "--model", model, "--prompt", prompt, "--temperature", "0", "--max-tokens",
           str(max_tokens), "--backend", backend]
    if chat:
        cmd.append("--chat")
    if threads:
        cmd += ["--threads", str(threads)]
    cmd += list(extra)
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)}: {r.stderr.strip()}")
    stats = r.stderr.strip().splitlines()[-1]
    fields = dict(kv.split("=", 1) for kv in stats.split() if "=" in kv)
    text = r.stdout[:-1] if r.stdout.endswith("\n") else r.stdout  # the CLI adds one newline
    return text, fields, stats


def perplexity(cli, model, valid, backend, windows, seq):
    total, count = 0.0, 0
    with tempfile.TemporaryDirectory() as work:
        out = os.path.join(work, "l.bin")
        for w in range(windows):
            toks = valid[w * seq:(w + 1) * seq + 1]
            if len(toks) < seq + 1:
                break
            subprocess.run([cli, "logits", "--model", model, "--tokens", ",".join(map(str, toks[:-1])), "--out",
                            out, "--backend", backend, "--ctx", str(seq + 8)], check=True, capture_output=True)
            with open(out + ".json") as f:
                h = json.load(f)
            n, V = h["n_tokens"], h["n_vocab"]
            lg = np.fromfile(out, dtype=np.float32)[: n * V].reshape(n, V).astype(np.float64)
            m = lg.max(-1, keepdims=True)
            lse = (m[:, 0] + np.log(np.exp(lg - m).sum(-1)))
            total += float((lse - lg[np.arange(n), toks[1:]]).sum())
            count += n
    return {"ce": total / count, "ppl": float(np.exp(total / count)), "tokens": count, "window": seq}


ARITH = re.compile(r"(\d+) ([-+*/]) (\d+)")


def arith_kind(question):
    """'+ 2x2' for a two-digit plus two-digit addition; None when the question holds no a op b."""
    m = ARITH.search(question)
    return f"{m.group(2)} {len(m.group(1))}x{len(m.group(3))}" if m else None


def exact_match(cli, model, path, backend, limit, keep=lambda row: True):
    rows = [r for r in (json.loads(l) for l in open(path, encoding="utf-8")) if keep(r)][:limit]
    hits, samples, misses, kinds = 0, [], [], {}
    for r in rows:
        text, _, _ = generate(cli, model, r["q"], backend, max_tokens=96)
        ok = text.strip() == r["a"].strip()
        hits += ok
        if len(samples) < 5:
            samples.append({"q": r["q"], "expected": r["a"], "got": text.strip()})
        if not ok and len(misses) < 10:
            misses.append({"q": r["q"], "expected": r["a"], "got": text.strip()})
        k = arith_kind(r["q"])
        if k:
            kinds.setdefault(k, [0, 0])
            kinds[k][0] += ok
            kinds[k][1] += 1
    res = {"rate": hits / max(len(rows), 1), "n": len(rows), "samples": samples, "misses": misses}
    if kinds:
        res["by_kind"] = {k: {"rate": h / n, "n": n} for k, (h, n) in sorted(kinds.items(), key=lambda x: -x[1][1])}
    return res


def mtp_runs(cli, model, backend, threads, max_tokens):
    out = {}
    for draft in (1, 2):
        acc_num = [0.0] * draft
        acc_den = 0
        off_s = on_s = 0.0
        same = True
        for p in MTP_PROMPTS:
            t0, f0, _ = generate(cli, model, p, backend, ["--mtp", "off"], max_tokens, threads=threads)
            t1, f1, _ = generate(cli, model, p, backend, ["--mtp", "on", "--draft", str(draft)], max_tokens,
                                 threads=threads)
            same &= t0 == t1
            n0, n1 = int(f0["tokens"]), int(f1["tokens"])
            off_s += n0 / float(f0["decode"])
            on_s += n1 / float(f1["decode"])
            a = [float(x) for x in f1.get("mtp_accept", "0").split("/")]
            for j in range(draft):
                acc_num[j] += a[j] * n1
            acc_den += n1
        # One process per reply: on a GPU a short reply's decode takes a few ms and one-off start costs
        # decide this ratio; qwenchat-bench --model measures the speed-up in process, warmed.
        out[f"draft{draft}"] = {"acceptance_per_position": [x / max(acc_den, 1) for x in acc_num],
                                "speedup": off_s / on_s if on_s else None, "greedy_text_identical": same,
                                "tokens": acc_den, "decode_seconds_off_on": [off_s, on_s]}
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli", required=True)
    ap.add_argument("--model", required=True)
    ap.add_argument("--data", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--backend", default="cpu")
    ap.add_argument("--threads", type=int, default=0)
    ap.add_argument("--limit", type=int, default=200)
    ap.add_argument("--ppl-windows", type=int, default=16)
    ap.add_argument("--ppl-seq", type=int, default=512)
    ap.add_argument("--mtp-tokens", type=int, default=96)
    args = ap.parse_args()
    valid = np.fromfile(os.path.join(args.data, "valid.u16"), dtype="<u2").astype(np.int64)
    res = {"model": args.model, "backend": args.backend}
    if args.ppl_windows > 0:
        res["perplexity"] = perplexity(args.cli, args.model, valid, args.backend, args.ppl_windows, args.ppl_seq)
    for name in ("eval_arith", "eval_define", "eval_define_seen") if args.limit > 0 else ():
        res[name] = exact_match(args.cli, args.model, os.path.join(args.data, name + ".jsonl"), args.backend,
                                args.limit)
    if args.limit > 0:  # every held-out two-digit + two-digit addition (the README's acceptance question)
        res["two_digit_addition"] = exact_match(args.cli, args.model, os.path.join(args.data, "eval_arith.jsonl"),
                                                args.backend, 10 ** 9, lambda r: arith_kind(r["q"]) == "+ 2x2")
    res["mtp"] = mtp_runs(args.cli, args.model, args.backend, args.threads or None, args.mtp_tokens)
    with open(args.out, "w") as f:
        json.dump(res, f, indent=1)
    print(json.dumps(res, indent=1))


if __name__ == "__main__":
    main()
