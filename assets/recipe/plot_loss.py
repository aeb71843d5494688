#!/usr/bin/env python3
"""train.log (train.py's output) -> a loss-curve PNG: main and MTP cross-entropy per logged step against the
tokens seen, the learning rate on a second axis, and the held-out figures of the final evaluation.
Needs matplotlib (Debian: python3-matplotlib).

    /usr/bin/python3 plot_loss.py assets/recipe/run/train.log assets/recipe/run/loss.png
"""
import json
import re
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

STEP = re.compile(r"^step (\d+) lr (\S+) main (\S+) mtp (\S+) gnorm \S+ tok/s (\d+) elapsed (\d+)s")


def main():
    log, out = sys.argv[1], sys.argv[2]
    steps, lr, main_l, mtp_l = [], [], [], []
    valid, device, batch_tokens = None, "", 64 * 512
    for line in open(log, encoding="utf-8"):
        m = STEP.match(line)
        if m:
            steps.append(int(m.group(1)))
            lr.append(float(m.group(2)))
            main_l.append(float(m.group(3)))
            mtp_l.append(float(m.group(4)))
        elif line.startswith('{"main_ce"'):
            valid = json.loads(line)
        elif line.startswith("torch "):
            device = line.strip()
    tokens = [s * batch_tokens / 1e6 for s in steps]
    fig, ax = plt.subplots(figsize=(8, 4.5), dpi=100)
    ax.plot(tokens, main_l, label="next token (train batch)", color="#2b6cb0")
    ax.plot(tokens, mtp_l, label="MTP, token after next (train batch)", color="#c05621")
    if valid:
        ax.axhline(valid["main_ce"], color="#2b6cb0", ls="--", lw=1,
                   label=f"held-out next token {valid['main_ce']:.3f} (ppl {valid['ppl']:.1f})")
        ax.axhline(valid["mtp_ce"], color="#c05621", ls="--", lw=1, label=f"held-out MTP {valid['mtp_ce']:.3f}")
    ax.set_xlabel("training tokens seen (millions)")
    ax.set_ylabel("cross-entropy (nats)")
    ax.set_ylim(0, max(4.0, min(main_l[:3] + [9.5])))
    ax.grid(alpha=0.3)
    ax2 = ax.twinx()
    ax2.plot(tokens, lr, color="#718096", lw=0.8, label="learning rate")
    ax2.set_ylabel("learning rate", color="#718096")
    lines = ax.get_legend_handles_labels()
    lines2 = ax2.get_legend_handles_labels()
    ax.legend(lines[0] + lines2[0], lines[1] + lines2[1], loc="upper right", fontsize=8)
    ax.set_title(f"qwenchat default model: {steps[-1]} steps, {tokens[-1]:.1f}M tokens ({device})", fontsize=9)
    fig.tight_layout()
    fig.savefig(out)


if __name__ == "__main__":
    main()
