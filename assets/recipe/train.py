#!/usr/bin/env python3
"""Trains the embedded default model (qwen35_torch.Qwen35: GDN + gated attention 3:1, SwiGLU, tied
embeddings, an MTP block trained jointly) and writes a Hugging Face qwen3_5 checkpoint folder that
qwenchat-convert reads (config.json with mtp_num_hidden_layers, sharded safetensors with mtp.*, an index).

Loss = CE(main, t_{p+1}) + mtp_weight * CE(MTP, t_{p+2}); the MTP block reads the main model's
post-final-norm hidden state h_p and embed(t_{p+1}) (QWEN35.md section 6); its gradient flows into the
main model (joint training).

Data: train.u16.xz / valid.u16 from tokenize_data.py. Windows of seq+1 tokens at seeded random offsets.
The schedule is in wall-clock seconds (warmup by steps, then cosine to min_lr over --train-seconds), since
the run is bounded by machine time; the step count reached is recorded in metrics.json. A checkpoint is
written every --save-every seconds (each file renamed into place) and at the end.

    python3 train.py --data DIR --out DIR [--device cpu|cuda] [--threads N] ...
"""
import argparse
import contextlib
import json
import lzma
import math
import os
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from qwen35_torch import Config, Qwen35, save_hf_checkpoint  # noqa: E402

@torch.no_grad()
def evaluate(model, stream, seq, batch, n_batches, device, autocast):
    """Mean main and MTP CE over consecutive windows of `stream`, and teacher-forced MTP agreement
    (argmax of the MTP head at p == argmax of the main model at p+1)."""
    model.eval()
    tot_m = tot_x = 0.0
    agree = count = 0
    n = 0
    for b in range(n_batches):
        starts = [(b * batch + i) * seq for i in range(batch)]
        if starts[-1] + seq + 1 > len(stream):
            break
        x = torch.stack([torch.from_numpy(stream[s:s + seq + 1].astype(np.int64)) for s in starts]).to(device)
        with autocast():
            h = model.hidden(x)
            logits = model.logits(h).float()
            ml = model.logits(model.mtp_hidden(x[:, 1:-1], h[:, :-2])).float()
        tot_m += F.cross_entropy(logits[:, :-1].reshape(-1, logits.shape[-1]), x[:, 1:].reshape(-1)).item()
        tot_x += F.cross_entropy(ml.reshape(-1, ml.shape[-1]), x[:, 2:].reshape(-1)).item()
        agree += (ml.argmax(-1) == logits[:, 1:-1].argmax(-1)).sum().item()
        count += ml.shape[0] * ml.shape[1]
        n += 1
    model.train()
    return {"main_ce": tot_m / max(n, 1), "mtp_ce": tot_x / max(n, 1), "ppl": math.exp(tot_m / max(n, 1)),
            "mtp_teacher_forced_agreement": agree / max(count, 1), "windows": n * batch}


def load_u16(path):
    if path.endswith(".xz"):
        with lzma.open(path, "rb") as f:
            return np.frombuffer(f.read(), dtype="<u2")
    return np.fromfile(path, dtype="<u2")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", required=True, help="folder with train.u16.xz and valid.u16 (tokenize_data.py)")
    ap.add_argument("--out", required=True)
    ap.add_argument("--vocab", type=int, default=8192)
    ap.add_argument("--seed", type=int, default=20261202)
    ap.add_argument("--train-seconds", type=float, default=110,
                    help="length of the schedule in wall-clock seconds of training (warmup, cosine to min)")
    ap.add_argument("--steps", type=int, default=0,
                    help="> 0: a step-based schedule of this many steps (reproducible run to run; "
                         "--train-seconds then only stops a run that is too slow)")
    ap.add_argument("--save-every", type=float, default=25, help="seconds between checkpoint saves")
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--seq", type=int, default=512)
    ap.add_argument("--lr", type=float, default=2e-3)
    ap.add_argument("--min-lr-frac", type=float, default=0.05)
    ap.add_argument("--warmup", type=int, default=100, help="steps")
    ap.add_argument("--wd", type=float, default=0.1)
    ap.add_argument("--mtp-weight", type=float, default=0.5)
    ap.add_argument("--hidden", type=int, default=384)
    ap.add_argument("--ff", type=int, default=1152)
    ap.add_argument("--layers", type=int, default=8)
    # Attention heads of 128: the CUDA backend's attention kernels take head_dim 128 or 256 (Qwen3.5's own),
    # so the default model runs on the GPU too. 4 x 128 keeps the query width of the first design (8 x 64).
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--kv-heads", type=int, default=2)
    ap.add_argument("--head-dim", type=int, default=128)
    ap.add_argument("--gdn-k-heads", type=int, default=4)
    ap.add_argument("--gdn-v-heads", type=int, default=8)
    ap.add_argument("--gdn-head-dim", type=int, default=64)
    ap.add_argument("--rope-theta", type=float, default=10000.0)
    ap.add_argument("--max-pos", type=int, default=4096)
    ap.add_argument("--shard-mb", type=float, default=15.5)
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--threads", type=int, default=0)
    ap.add_argument("--eos-id", type=int, default=3, help="<|im_end|> in our SentencePiece model")
    ap.add_argument("--eval-batch", type=int, default=16)
    ap.add_argument("--eval-batches", type=int, default=16)
    args = ap.parse_args()
    t_start = time.time()
    os.makedirs(args.out, exist_ok=True)
    torch.manual_seed(args.seed)
    np.random.seed(args.seed)
    device = args.device
    torch.set_flush_denormal(True)
    if args.threads:
        torch.set_num_threads(args.threads)
    if device == "cuda":
        torch.backends.cuda.matmul.allow_tf32 = True

        def autocast():
            return torch.autocast("cuda", dtype=torch.bfloat16)
    else:
        autocast = contextlib.nullcontext  # f32 on the CPU
    print(f"torch {torch.__version__} device {device} threads {torch.get_num_threads()}", flush=True)
    stream = load_u16(os.path.join(args.data, "train.u16.xz"))
    valid = load_u16(os.path.join(args.data, "valid.u16"))
    print(f"data: train {len(stream)} tokens, valid {len(valid)} tokens, {time.time() - t_start:.1f} s", flush=True)

    cfg = Config(vocab_size=args.vocab, hidden_size=args.hidden, intermediate_size=args.ff,
                 num_hidden_layers=args.layers, num_attention_heads=args.heads, num_key_value_heads=args.kv_heads,
                 head_dim=args.head_dim, linear_num_key_heads=args.gdn_k_heads,
                 linear_num_value_heads=args.gdn_v_heads, linear_key_head_dim=args.gdn_head_dim,
                 linear_value_head_dim=args.gdn_head_dim, rope_theta=args.rope_theta,
                 max_position_embeddings=args.max_pos, eos_token_id=args.eos_id)
    print(json.dumps(cfg.to_hf_json()), flush=True)
    model = Qwen35(cfg).to(device)
    n_mtp = sum(p.numel() for n, p in model.named_parameters() if n.startswith("mtp."))
    n_main = sum(p.numel() for p in model.parameters()) - n_mtp
    print(f"parameters: main {n_main} (embedding {model.model.embed_tokens.weight.numel()}), mtp {n_mtp}",
          flush=True)
    params = [p for p in model.parameters() if p.requires_grad]
    decay = [p for p in params if p.dim() >= 2]
    no_decay = [p for p in params if p.dim() < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": args.wd}, {"params": no_decay, "weight_decay": 0.0}],
                            lr=args.lr, betas=(0.9, 0.95), eps=1e-8)

    def lr_at(step, train_s):
        # Warmup by steps, then cosine over wall-clock training time: the run is bounded by device time,
        # not by a step count (the step count reached is recorded in metrics.json).
        if step < args.warmup:
            return args.lr * (step + 1) / args.warmup
        p = min(1.0, (step / args.steps) if args.steps > 0 else (train_s / args.train_seconds))
        return args.lr * (args.min_lr_frac + (1 - args.min_lr_frac) * 0.5 * (1 + math.cos(math.pi * p)))

    metrics = {"parameters_main": n_main, "parameters_mtp": n_mtp, "train_tokens_in_stream": int(len(stream)),
               "args": vars(args)}

    def save(tag):
        t0 = time.time()
        metrics.update({"saved_at_step": step, "tokens": tokens_done, "train_seconds": time.time() - t_train,
                        "epochs": tokens_done / len(stream), "tag": tag})
        save_hf_checkpoint(model, args.out, int(args.shard_mb * 1024 * 1024), {"step": step})
        tmp = os.path.join(args.out, "tmp.partial")
        with open(tmp, "w") as f:
            json.dump(metrics, f, indent=1)
        os.replace(tmp, os.path.join(args.out, "metrics.json"))
        print(f"saved ({tag}) at step {step} in {time.time() - t0:.1f} s", flush=True)

    rng = np.random.default_rng(args.seed)
    T = args.seq
    n_windows = len(stream) - T - 1
    tokens_done = 0
    step = 0
    t_train = time.time()
    last_save = t_train
    try:
        while True:
            train_s = time.time() - t_train
            if train_s > args.train_seconds or (args.steps > 0 and step >= args.steps):
                break
            starts = rng.integers(0, n_windows, size=args.batch)
            x = torch.from_numpy(np.stack([stream[s:s + T + 1] for s in starts]).astype(np.int64)).to(
                device, non_blocking=True)
            for g in opt.param_groups:
                g["lr"] = lr_at(step, train_s)
            with autocast():
                main_l, mtp_l = model.losses(x)
                loss = main_l + args.mtp_weight * mtp_l
            opt.zero_grad(set_to_none=True)
            loss.backward()
            gn = torch.nn.utils.clip_grad_norm_(params, 1.0)
            opt.step()
            step += 1
            tokens_done += args.batch * T
            if step % 20 == 0 or step <= 3:
                el = time.time() - t_train
                print(f"step {step} lr {lr_at(step - 1, train_s):.2e} main {main_l.item():.4f} mtp {mtp_l.item():.4f} "
                      f"gnorm {gn.item():.2f} tok/s {tokens_done / el:.0f} elapsed {el:.0f}s", flush=True)
            if time.time() - last_save > args.save_every:
                save("periodic")
                last_save = time.time()
    except Exception:
        import traceback
        traceback.print_exc()
        if step > 0:
            save("after-error")
        raise
    metrics["valid"] = evaluate(model, valid, T, args.eval_batch, args.eval_batches, device, autocast)
    print(json.dumps(metrics["valid"]), flush=True)
    save("final")
    print(f"done; total {time.time() - t_start:.0f} s", flush=True)


if __name__ == "__main__":
    main()
