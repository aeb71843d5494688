#!/usr/bin/env python3
"""Ground truth for qwenchat-convert and the engine: Hugging Face transformers' qwen3_5 vs our GGUF path.

For each test case (a small random Qwen3.5 text model: value heads != key heads, several GDN and
attention layers, tied or untied embeddings) this script
  1. builds the model in transformers with weights from a hash formula (reproducible in C++: CI rebuilds
     the same checkpoint without torch), saves it with save_pretrained (safetensors), adds random MTP
     weights the way Qwen3.5 checkpoints store them (mtp.* in a second shard, model.safetensors.index.json,
     mtp_num_hidden_layers in config.json; transformers itself drops mtp.*) and a tokenizer.json;
  2. runs `qwenchat-convert` to an F32 and a Q8_0 GGUF and checks every tensor of both against an
     independent numpy re-implementation of llama.cpp's conversion (convert_hf_to_gguf.py: norm + 1 except
     linear_attn.norm, -exp(A_log), _reorder_v_heads to the tiled order, conv1d squeeze; Q8_0 rounding);
  3. runs `qwenchat-cli logits --mtp` on a multi-token prompt and compares with transformers:
       - F32 GGUF vs transformers (float64 model) on the original weights,
       - Q8_0 GGUF vs transformers (float64 model) on the Q8_0-rounded weights,
       - the MTP block vs a torch MTP (QWEN35.md section 6: fc over [enorm(embed(t+1)) | hnorm(h)], one
         transformers decoder layer, mtp.norm, lm_head), fed our own hidden states;
     The tolerance is derived per case: transformers runs norms, RoPE and the delta rule in f32 even in a
     float64 model, so tol = 2 * max|T32 - T64| + 1e-6 (T32/T64: the transformers model in float32 /
     float64). A convention error is shown to be far above it (the "wrong head order" line).
  4. writes report.json and golden_qwen35.json (a few positions, top-k slices of transformers' logits,
     plus what CI needs to rebuild the checkpoint) into --out.

Needs torch, transformers (with qwen3_5), numpy, safetensors; no network. Run on the GPU machine:
    python3 tests/reference/compare_transformers.py --convert build/app/qwenchat-convert \
        --cli build/app/qwenchat-cli --out "$OUT"
Exit status 0 when every required check passes (backends beyond cpu-f64 are reported, not required).
"""
import argparse
import copy
import json
import math
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import time

import numpy as np
import torch

# ----------------------------------------------------------------------------------------------------
# Weights from a hash formula (same as tests/unit/test_reference_hf_golden.py, vectorised).

FNV_OFFSET, FNV_PRIME, M64 = 0xCBF29CE484222325, 0x100000001B3, (1 << 64) - 1


def fnv1a(s):
    h = FNV_OFFSET
    for b in s.encode():
        h = ((h ^ b) * FNV_PRIME) & M64
    return h


def splitmix64(x):
    """Vectorised splitmix64 over a uint64 array (numpy wraps uint64 arithmetic mod 2^64)."""
    x = x + np.uint64(0x9E3779B97F4A7C15)
    z = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


def hash_values(name, n, center, scale):
    """float32(center + scale * u), u = ((splitmix64(fnv1a(name) ^ i) >> 11) % 2001 - 1000) / 1000."""
    i = np.arange(n, dtype=np.uint64)
    h = splitmix64(np.uint64(fnv1a(name)) ^ i)
    u = (((h >> np.uint64(11)) % np.uint64(2001)).astype(np.int64) - 1000).astype(np.float64) / 1000.0
    return (center + scale * u).astype(np.float32)


def init_of(name, shape):
    """(center, scale) of a parameter: zero-centred norms, the GDN norm around 1, projections ~ 1/sqrt(in)."""
    leaf = name.split(".")[-2] if name.endswith(".weight") else name.split(".")[-1]
    if name.endswith("embed_tokens.weight"):
        return 0.0, 1.0
    if "linear_attn.norm" in name:
        return 1.0, 0.2
    if leaf in ("input_layernorm", "post_attention_layernorm", "norm", "q_norm", "k_norm",
                "pre_fc_norm_embedding", "pre_fc_norm_hidden"):
        return 0.0, 0.2
    if leaf == "conv1d":
        return 0.0, 0.6
    if leaf == "dt_bias":
        return 0.0, 1.0
    if leaf == "A_log":
        return 0.0, 0.7
    return 0.0, 1.0 / math.sqrt(shape[-1])


# ----------------------------------------------------------------------------------------------------
# Test cases. Sizes keep Q8_0 blocks inside one value head (Dv % 32 == 0), so Q8_0 rounding in HF layout
# equals rounding in GGUF layout (the GGUF check below verifies it).

CASES = [
    dict(name="untied", vocab=512, hidden=256, layers=8, interval=2, ff=512, heads=4, kv=2, head_dim=64,
         rope_dims=16, theta=1.0e7, nk=2, nv=6, dk=32, dv=64, conv=4, tied=False, tokens=24, seed=1),
    dict(name="tied", vocab=384, hidden=128, layers=6, interval=3, ff=384, heads=4, kv=1, head_dim=32,
         rope_dims=8, theta=1.0e4, nk=4, nv=8, dk=32, dv=32, conv=4, tied=True, tokens=20, seed=2),
]


def mrope_section(rope_dims):
    """What our generator writes for this many rotated dims (Qwen's [11, 11, 10] of 32, scaled)."""
    half = rope_dims // 2
    s1 = (half * 11 + 16) // 32
    return [s1, s1, half - 2 * s1]


def make_config(c, layers=None, layer_types=None, tied=None):
    from transformers import Qwen3_5TextConfig
    n = c["layers"] if layers is None else layers
    if layer_types is None:
        layer_types = ["full_attention" if (i + 1) % c["interval"] == 0 else "linear_attention" for i in range(n)]
    prf = c["rope_dims"] / c["head_dim"]
    cfg = Qwen3_5TextConfig(
        vocab_size=c["vocab"], hidden_size=c["hidden"], intermediate_size=c["ff"], num_hidden_layers=n,
        num_attention_heads=c["heads"], num_key_value_heads=c["kv"], head_dim=c["head_dim"],
        linear_conv_kernel_dim=c["conv"], linear_key_head_dim=c["dk"], linear_value_head_dim=c["dv"],
        linear_num_key_heads=c["nk"], linear_num_value_heads=c["nv"], layer_types=layer_types,
        rms_norm_eps=1e-6, tie_word_embeddings=c["tied"] if tied is None else tied, max_position_embeddings=4096,
        rope_parameters={"rope_type": "default", "rope_theta": c["theta"], "partial_rotary_factor": prf,
                         "mrope_section": mrope_section(c["rope_dims"]), "mrope_interleaved": True},
        partial_rotary_factor=prf,
    )
    cfg._attn_implementation = "eager"
    return cfg


def mtp_shapes(c):
    H, hd = c["hidden"], c["head_dim"]
    p = "mtp.layers.0."
    return {
        "mtp.fc.weight": [H, 2 * H],
        "mtp.pre_fc_norm_embedding.weight": [H],
        "mtp.pre_fc_norm_hidden.weight": [H],
        "mtp.norm.weight": [H],
        p + "input_layernorm.weight": [H],
        p + "post_attention_layernorm.weight": [H],
        p + "self_attn.q_proj.weight": [c["heads"] * hd * 2, H],
        p + "self_attn.k_proj.weight": [c["kv"] * hd, H],
        p + "self_attn.v_proj.weight": [c["kv"] * hd, H],
        p + "self_attn.o_proj.weight": [H, c["heads"] * hd],
        p + "self_attn.q_norm.weight": [hd],
        p + "self_attn.k_norm.weight": [hd],
        p + "mlp.gate_proj.weight": [c["ff"], H],
        p + "mlp.up_proj.weight": [c["ff"], H],
        p + "mlp.down_proj.weight": [H, c["ff"]],
    }


# ----------------------------------------------------------------------------------------------------
# A tiny byte-level BPE tokenizer.json (256 byte tokens, no merges, ChatML specials) with our qwen35
# pre-tokenizer regex; qwenchat-convert needs one, the comparisons feed token ids directly.

QWEN35_REGEX = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*"
                r"|\s*[\r\n]+|\s+(?!\S)|\s+")
SPECIALS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<think>", "</think>"]
CHAT_TEMPLATE = ("{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}"
                 "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}")


def bytes_to_unicode():
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return {b: chr(c) for b, c in zip(bs, cs)}


def write_tokenizer(folder):
    m = bytes_to_unicode()
    vocab = {m[b]: b for b in range(256)}
    added = [{"id": 256 + i, "content": s, "single_word": False, "lstrip": False, "rstrip": False,
              "normalized": False, "special": True} for i, s in enumerate(SPECIALS)]
    tok = {
        "version": "1.0", "truncation": None, "padding": None, "added_tokens": added,
        "normalizer": {"type": "NFC"},
        "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
            {"type": "Split", "pattern": {"Regex": QWEN35_REGEX}, "behavior": "Isolated", "invert": False},
            {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False, "use_regex": False}]},
        "post_processor": None,
        "decoder": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True},
        "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": "",
                  "end_of_word_suffix": "", "fuse_unk": False, "byte_fallback": False, "ignore_merges": False,
                  "vocab": vocab, "merges": []},
    }
    with open(os.path.join(folder, "tokenizer.json"), "w", encoding="utf-8") as f:
        json.dump(tok, f, ensure_ascii=False)
    with open(os.path.join(folder, "tokenizer_config.json"), "w", encoding="utf-8") as f:
        json.dump({"eos_token": "<|im_end|>", "pad_token": "<|endoftext|>", "chat_template": CHAT_TEMPLATE}, f)


# ----------------------------------------------------------------------------------------------------
# A minimal GGUF reader (v2/v3; F32 and Q8_0 tensors) to check what qwenchat-convert wrote.

_SCALAR = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?", 10: "<Q", 11: "<q", 12: "<d"}


def read_gguf(path):
    with open(path, "rb") as f:
        data = f.read()
    magic, version = struct.unpack_from("<II", data, 0)
    if magic != 0x46554747 or version not in (2, 3):
        raise ValueError(f"{path}: not a GGUF v2/v3 file")
    n_tensors, n_kv = struct.unpack_from("<QQ", data, 8)
    off = 24

    def string():
        nonlocal off
        (n,) = struct.unpack_from("<Q", data, off)
        s = data[off + 8:off + 8 + n].decode("utf-8", errors="replace")
        off += 8 + n
        return s

    def value(t):
        nonlocal off
        if t in _SCALAR:
            (v,) = struct.unpack_from(_SCALAR[t], data, off)
            off += struct.calcsize(_SCALAR[t])
            return v
        if t == 8:
            return string()
        if t == 9:
            (et, n) = struct.unpack_from("<IQ", data, off)
            off += 12
            return [value(et) for _ in range(n)]
        raise ValueError(f"{path}: unknown metadata type {t}")

    kv = {}
    for _ in range(n_kv):
        key = string()
        (t,) = struct.unpack_from("<I", data, off)
        off += 4
        kv[key] = value(t)
    tensors = {}
    for _ in range(n_tensors):
        name = string()
        (nd,) = struct.unpack_from("<I", data, off)
        ne = list(struct.unpack_from(f"<{nd}Q", data, off + 4))
        off += 4 + 8 * nd
        t, toff = struct.unpack_from("<IQ", data, off)
        off += 12
        tensors[name] = (ne, t, toff)
    align = kv.get("general.alignment", 32)
    start = (off + align - 1) // align * align
    return kv, tensors, data, start


def gguf_array(g, name):
    """The tensor as float32, numpy shape = reversed GGUF ne (row-major [out][in])."""
    kv, tensors, data, start = g
    ne, t, toff = tensors[name]
    n = int(np.prod(ne))
    shape = list(reversed(ne))
    if t == 0:
        return np.frombuffer(data, np.float32, n, start + toff).reshape(shape), "F32"
    if t == 8:
        blocks = np.frombuffer(data, np.uint8, n // 32 * 34, start + toff).reshape(-1, 34)
        d = blocks[:, :2].copy().view(np.float16).astype(np.float32)
        q = blocks[:, 2:].copy().view(np.int8).astype(np.float32)
        return (d * q).astype(np.float32).reshape(shape), "Q8_0"
    raise ValueError(f"{name}: GGUF type {t} not handled here")


# ----------------------------------------------------------------------------------------------------
# llama.cpp's conversion, re-implemented in numpy from convert_hf_to_gguf.py (independent of our C++).

def q8_0_roundtrip(x):
    """ggml's quantize_row_q8_0_ref then dequantize, along the last axis (a multiple of 32), in f32."""
    b = np.ascontiguousarray(x, dtype=np.float32).reshape(-1, 32)
    amax = np.max(np.abs(b), axis=1)
    d = (amax / np.float32(127.0)).astype(np.float32)
    inv = np.zeros_like(d)
    nz = d != 0
    inv[nz] = (np.float32(1.0) / d[nz]).astype(np.float32)
    v = (b * inv[:, None]).astype(np.float32).astype(np.float64)
    q = np.sign(v) * np.floor(np.abs(v) + 0.5)  # roundf: half away from zero (exact in float64)
    dh = d.astype(np.float16).astype(np.float32)
    return (dh[:, None] * q.astype(np.float32)).astype(np.float32).reshape(x.shape)


def reorder_v_heads(t, dim, nk, r, hd):
    """_reorder_v_heads: grouped (by key head) -> tiled value-head order along `dim`."""
    shape = list(t.shape)
    dim %= len(shape)
    t = t.reshape(shape[:dim] + [nk, r, hd] + shape[dim + 1:])
    perm = list(range(t.ndim))
    perm[dim], perm[dim + 1] = perm[dim + 1], perm[dim]
    return np.ascontiguousarray(t.transpose(perm)).reshape(shape)


def expected_gguf(hf, c, prefix, n_layer):
    """{gguf name: (float32 array, quantizable)} as llama.cpp's converter would write it (before Q8_0)."""
    nk, nv, dk, dv = c["nk"], c["nv"], c["dk"], c["dv"]
    r = nv // nk
    one = np.float32(1.0)
    out = {}

    def put(g, a, quant):
        out[g] = (np.ascontiguousarray(a, dtype=np.float32), quant)

    put("token_embd.weight", hf[prefix + "embed_tokens.weight"], True)
    put("output_norm.weight", one + hf[prefix + "norm.weight"], False)
    if not c["tied"]:
        put("output.weight", hf["lm_head.weight"], True)
    for L in range(n_layer + 1):
        mtp = L == n_layer
        p = "mtp.layers.0." if mtp else f"{prefix}layers.{L}."
        b = f"blk.{L}."
        put(b + "attn_norm.weight", one + hf[p + "input_layernorm.weight"], False)
        put(b + "post_attention_norm.weight", one + hf[p + "post_attention_layernorm.weight"], False)
        for g, h in (("ffn_gate", "mlp.gate_proj"), ("ffn_up", "mlp.up_proj"), ("ffn_down", "mlp.down_proj")):
            put(b + g + ".weight", hf[p + h + ".weight"], True)
        if mtp or (L + 1) % c["interval"] == 0:
            for g, h in (("attn_q", "q_proj"), ("attn_k", "k_proj"), ("attn_v", "v_proj"), ("attn_output", "o_proj")):
                put(b + g + ".weight", hf[p + "self_attn." + h + ".weight"], True)
            put(b + "attn_q_norm.weight", one + hf[p + "self_attn.q_norm.weight"], False)
            put(b + "attn_k_norm.weight", one + hf[p + "self_attn.k_norm.weight"], False)
        else:
            a = p + "linear_attn."
            qk = 2 * nk * dk
            qkv = hf[a + "in_proj_qkv.weight"]
            put(b + "attn_qkv.weight", np.concatenate([qkv[:qk], reorder_v_heads(qkv[qk:], 0, nk, r, dv)]), True)
            put(b + "attn_gate.weight", reorder_v_heads(hf[a + "in_proj_z.weight"], 0, nk, r, dv), True)
            put(b + "ssm_beta.weight", reorder_v_heads(hf[a + "in_proj_b.weight"], 0, nk, r, 1), False)
            put(b + "ssm_alpha.weight", reorder_v_heads(hf[a + "in_proj_a.weight"], 0, nk, r, 1), False)
            conv = hf[a + "conv1d.weight"].reshape(hf[a + "conv1d.weight"].shape[0], -1)  # squeeze [C,1,K]
            put(b + "ssm_conv1d.weight", np.concatenate([conv[:qk], reorder_v_heads(conv[qk:], 0, nk, r, dv)]), False)
            put(b + "ssm_dt.bias", reorder_v_heads(hf[a + "dt_bias"][:, None], 0, nk, r, 1)[:, 0], False)
            put(b + "ssm_a", reorder_v_heads(-np.exp(hf[a + "A_log"].astype(np.float32))[:, None], 0, nk, r, 1)[:, 0],
                False)
            put(b + "ssm_norm.weight", hf[a + "norm.weight"], False)
            put(b + "ssm_out.weight", reorder_v_heads(hf[a + "out_proj.weight"], 1, nk, r, dv), True)
        if mtp:
            put(b + "nextn.eh_proj.weight", hf["mtp.fc.weight"], True)
            put(b + "nextn.enorm.weight", one + hf["mtp.pre_fc_norm_embedding.weight"], False)
            put(b + "nextn.hnorm.weight", one + hf["mtp.pre_fc_norm_hidden.weight"], False)
            put(b + "nextn.shared_head_norm.weight", one + hf["mtp.norm.weight"], False)
    return out


def check_gguf(path, expected, q8):
    """Every tensor of our GGUF against the numpy conversion. Returns (ok, lines)."""
    g = read_gguf(path)
    lines, ok = [], True
    names = set(g[1])
    if names != set(expected):
        ok = False
        lines.append(f"tensor names differ: only ours {sorted(names - set(expected))[:5]}, "
                     f"only expected {sorted(set(expected) - names)[:5]}")
    worst_ssm_a = 0.0
    for name in sorted(names & set(expected)):
        arr, kind = gguf_array(g, name)
        want, quant = expected[name]
        want_kind = "Q8_0" if (q8 and quant) else "F32"
        if kind != want_kind:
            ok = False
            lines.append(f"{name}: type {kind}, expected {want_kind}")
            continue
        if want_kind == "Q8_0":
            want = q8_0_roundtrip(want)
        if list(arr.shape) != list(want.shape):
            ok = False
            lines.append(f"{name}: shape {list(arr.shape)}, expected {list(want.shape)}")
            continue
        if name.endswith("ssm_a"):
            # -exp in f32: numpy's and libm's expf may differ by one ulp.
            rel = float(np.max(np.abs(arr - want) / np.abs(want)))
            worst_ssm_a = max(worst_ssm_a, rel)
            if rel > 2.0 ** -22:
                ok = False
                lines.append(f"{name}: relative difference {rel:.3g}")
        elif not np.array_equal(arr, want):
            ok = False
            bad = np.argwhere(arr != want)[0]
            lines.append(f"{name}: differs at {bad.tolist()}: {arr[tuple(bad)]!r} vs {want[tuple(bad)]!r}")
    lines.append(f"{len(names)} tensors checked, ssm_a worst relative difference {worst_ssm_a:.2g}")
    return ok, lines


# ----------------------------------------------------------------------------------------------------
# Running our tools.

def run(cmd, what):
    t0 = time.time()
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(f"{what} failed (exit {p.returncode}): {' '.join(cmd)}\n{p.stderr.strip()[-2000:]}")
    return p, time.time() - t0


def our_logits(cli, model, tokens, backend, out, threads):
    run([cli, "logits", "--model", model, "--tokens", ",".join(map(str, tokens)), "--out", out,
         "--backend", backend, "--threads", str(threads), "--ctx", "256", "--mtp"], f"qwenchat-cli logits ({backend})")
    with open(out + ".json") as f:
        h = json.load(f)
    raw = np.fromfile(out, dtype=np.float32)
    n, V, H, m = h["n_tokens"], h["n_vocab"], h["n_embd"], h.get("n_mtp", 0)
    sizes = [n * V, n * H, m * V, m * H]
    if raw.size != sum(sizes):
        raise RuntimeError(f"{out}: {raw.size} floats, expected {sum(sizes)} from its header")
    parts = np.split(raw, np.cumsum(sizes)[:-1])
    return (parts[0].reshape(n, V), parts[1].reshape(n, H), parts[2].reshape(m, V), parts[3].reshape(m, H))


# ----------------------------------------------------------------------------------------------------
# transformers side.

def rmsnorm_hf(x, w, eps=1e-6):
    """Qwen3_5RMSNorm: computed in f32, weight used as (1 + w)."""
    try:
        from transformers.models.qwen3_5.modeling_qwen3_5 import Qwen3_5RMSNorm
        n = Qwen3_5RMSNorm(w.shape[0], eps=eps).to(x.dtype)
        with torch.no_grad():
            n.weight.copy_(w)
        return n(x)
    except ImportError:
        xf = x.float()
        y = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + eps)
        return (y * (1.0 + w.float())).to(x.dtype)


def transformers_logits(model, tokens):
    with torch.no_grad():
        ids = torch.tensor([tokens])
        return model(input_ids=ids, use_cache=False).logits[0].double().numpy()


def mtp_logits_torch(c, mtp, embed, head, hidden, next_tokens, dtype):
    """QWEN35.md section 6 in torch, with transformers' own decoder layer for the block: a 1-layer
    Qwen3_5ForCausalLM (full attention) holding mtp.layers.0 and mtp.norm, fed inputs_embeds
    fc([enorm(embed(t_{p+1})) | hnorm(h_p)]) at positions 0..n-1."""
    from transformers import Qwen3_5ForCausalLM
    cfg = make_config(c, layers=1, layer_types=["full_attention"], tied=False)
    shadow = Qwen3_5ForCausalLM(cfg).to(dtype).eval()
    sd = shadow.state_dict()
    new = {}
    for k in sd:
        if k.startswith("model.layers.0."):
            new[k] = mtp["mtp.layers.0." + k[len("model.layers.0."):]]
        elif k == "model.norm.weight":
            new[k] = mtp["mtp.norm.weight"]
        elif k == "lm_head.weight":
            new[k] = head
        elif k == "model.embed_tokens.weight":
            new[k] = embed
        else:
            new[k] = sd[k]
    missing = [n for n, _ in shadow.named_parameters() if n not in new]
    if missing:
        raise RuntimeError(f"MTP shadow model: no weights for {missing}")
    shadow.load_state_dict({k: torch.as_tensor(v).to(dtype) for k, v in new.items()}, strict=False)
    with torch.no_grad():
        e = torch.as_tensor(embed).to(dtype)[torch.tensor(next_tokens)]
        h = torch.as_tensor(hidden).to(dtype)
        x = torch.cat([rmsnorm_hf(e, torch.as_tensor(mtp["mtp.pre_fc_norm_embedding.weight"]).to(dtype)),
                       rmsnorm_hf(h, torch.as_tensor(mtp["mtp.pre_fc_norm_hidden.weight"]).to(dtype))], dim=-1)
        x = x @ torch.as_tensor(mtp["mtp.fc.weight"]).to(dtype).T
        return shadow(inputs_embeds=x[None], use_cache=False).logits[0].double().numpy()


def q8_names(hf):
    """HF tensors whose GGUF counterpart is Q8_0: the 2-D weights except in_proj_a/b (conv1d is 3-D). By
    shape, not by name: mtp.pre_fc_norm_embedding / _hidden are norms whose names do not end in norm.weight."""
    return {n for n, v in hf.items()
            if v.ndim == 2 and not n.endswith(("in_proj_a.weight", "in_proj_b.weight"))}


def wrong_head_order(hf, c, prefix):
    """The HF weights with value heads put in the tiled order but still read grouped: what an engine with
    the wrong convention computes. Used to show that the tolerance separates right from wrong."""
    nk, nv, dk, dv = c["nk"], c["nv"], c["dk"], c["dv"]
    r, qk = nv // nk, 2 * nk * dk
    w = dict(hf)
    for L in range(c["layers"]):
        if (L + 1) % c["interval"] == 0:
            continue
        a = f"{prefix}layers.{L}.linear_attn."
        qkv = hf[a + "in_proj_qkv.weight"]
        w[a + "in_proj_qkv.weight"] = np.concatenate([qkv[:qk], reorder_v_heads(qkv[qk:], 0, nk, r, dv)])
        w[a + "in_proj_z.weight"] = reorder_v_heads(hf[a + "in_proj_z.weight"], 0, nk, r, dv)
        for n in ("in_proj_a.weight", "in_proj_b.weight"):
            w[a + n] = reorder_v_heads(hf[a + n], 0, nk, r, 1)
        for n in ("A_log", "dt_bias"):
            w[a + n] = reorder_v_heads(hf[a + n][:, None], 0, nk, r, 1)[:, 0]
        conv = hf[a + "conv1d.weight"]
        flat = conv.reshape(conv.shape[0], -1)
        w[a + "conv1d.weight"] = np.concatenate([flat[:qk], reorder_v_heads(flat[qk:], 0, nk, r, dv)]).reshape(conv.shape)
        w[a + "out_proj.weight"] = reorder_v_heads(hf[a + "out_proj.weight"], 1, nk, r, dv)
    return w


def load_into(model, weights, saved_to_param, dtype):
    sd = {}
    for saved, param in saved_to_param.items():
        sd[param] = torch.as_tensor(weights[saved]).to(dtype)
    with torch.no_grad():
        for n, p in model.named_parameters():
            p.copy_(sd[n])


# ----------------------------------------------------------------------------------------------------

def golden_slice(logits, positions, k):
    out = []
    for p in positions:
        ids = [int(i) for i in np.argsort(-logits[p], kind="stable")[:k]]
        out.append({"pos": int(p), "ids": ids, "logits": [float(logits[p][i]) for i in ids]})
    return out


def max_abs(a, b):
    return float(np.max(np.abs(np.asarray(a, np.float64) - np.asarray(b, np.float64))))


def run_case(c, args, work):
    from safetensors.numpy import load_file as load_np
    from safetensors.numpy import save_file as save_np
    from transformers import Qwen3_5ForCausalLM

    res = {"case": c["name"], "checks": [], "info": {}}

    def check(name, ok, detail):
        res["checks"].append({"name": name, "ok": bool(ok), "detail": detail})
        print(f"  [{'PASS' if ok else 'FAIL'}] {name}: {detail}", flush=True)

    torch.manual_seed(0)
    cfg = make_config(c)
    model = Qwen3_5ForCausalLM(cfg).eval()  # float32
    with torch.no_grad():
        for name, p in model.named_parameters():
            center, scale = init_of(name, tuple(p.shape))
            p.copy_(torch.from_numpy(hash_values(name, p.numel(), center, scale).reshape(tuple(p.shape))))

    ck = os.path.join(work, c["name"] + "-hf")
    shutil.rmtree(ck, ignore_errors=True)
    model.save_pretrained(ck)
    main_files = sorted(f for f in os.listdir(ck) if f.endswith(".safetensors"))
    saved = {}
    weight_map = {}
    for f in main_files:
        for k, v in load_np(os.path.join(ck, f)).items():
            saved[k] = v
            weight_map[k] = f
    params = dict(model.named_parameters())
    saved_to_param = {}
    for k in saved:
        p = k if k in params else k.replace("model.language_model.", "model.")
        if p == "lm_head.weight" and p not in params and c["tied"]:
            p = "model.embed_tokens.weight"  # a tied head saved anyway: the converter ignores it
        if p not in params:
            raise RuntimeError(f"save_pretrained wrote {k}, which matches no parameter")
        if not np.array_equal(saved[k], params[p].detach().numpy()):
            raise RuntimeError(f"save_pretrained changed the values of {k}")
        saved_to_param[k] = p
    prefix = "model.language_model." if any(k.startswith("model.language_model.") for k in saved) else "model."
    res["info"]["saved_names"] = f"{len(saved)} tensors in {main_files}, text prefix {prefix!r}"

    # MTP weights the way Qwen3.5 checkpoints store them, in their own shard, plus an index.
    mtp = {n: hash_values(n, int(np.prod(s)), *init_of(n, s)).reshape(s) for n, s in mtp_shapes(c).items()}
    save_np(mtp, os.path.join(ck, "model-mtp.safetensors"), metadata={"format": "pt"})
    for n in mtp:
        weight_map[n] = "model-mtp.safetensors"
    with open(os.path.join(ck, "model.safetensors.index.json"), "w") as f:
        json.dump({"metadata": {"total_size": 0}, "weight_map": weight_map}, f, indent=1)
    with open(os.path.join(ck, "config.json")) as f:
        config_json = json.load(f)
    config_json["mtp_num_hidden_layers"] = 1
    config_json["mtp_use_dedicated_embeddings"] = False
    with open(os.path.join(ck, "config.json"), "w") as f:
        json.dump(config_json, f, indent=1)
    write_tokenizer(ck)
    hf = dict(saved)
    hf.update(mtp)

    # Convert and check every tensor against the numpy re-implementation of llama.cpp's conversion.
    expected = expected_gguf(hf, c, prefix, c["layers"])
    ggufs = {}
    for kind in ("f32", "q8_0"):
        out = os.path.join(work, f"{c['name']}-{kind}.gguf")
        p, secs = run([args.convert, ck, out, "--outtype", kind, "--quiet"], "qwenchat-convert")
        ggufs[kind] = out
        ok, lines = check_gguf(out, expected, q8=(kind == "q8_0"))
        check(f"convert {kind}: tensors equal llama.cpp's conversion (numpy)", ok, "; ".join(lines[-3:]))
    kv = read_gguf(ggufs["f32"])[0]
    check("metadata", kv.get("qwen35.nextn_predict_layers") == 1 and kv.get("qwen35.block_count") == c["layers"] + 1
          and kv.get("qwen35.ssm.time_step_rank") == c["nv"] and kv.get("qwen35.ssm.group_count") == c["nk"],
          f"block_count {kv.get('qwen35.block_count')}, nextn {kv.get('qwen35.nextn_predict_layers')}, "
          f"ssm groups {kv.get('qwen35.ssm.group_count')} / rank {kv.get('qwen35.ssm.time_step_rank')}")

    rng = np.random.default_rng(c["seed"])
    tokens = [int(t) for t in rng.integers(0, c["vocab"], size=c["tokens"])]
    T = len(tokens)

    # transformers: float64 (the comparison) and float32 (its own noise, for the tolerance).
    m64 = copy.deepcopy(model).to(torch.float64).eval()
    m32 = model
    t64 = transformers_logits(m64, tokens)
    t32 = transformers_logits(m32, tokens)
    noise = max_abs(t64, t32)
    tol = 2.0 * noise + 1e-6
    res["info"]["tolerance"] = {"f32_vs_f64_transformers": noise, "tol": tol, "max_abs_logit": float(np.max(np.abs(t64)))}
    print(f"  transformers f32 vs f64: max |dlogit| {noise:.3g} -> tolerance {tol:.3g} "
          f"(max |logit| {np.max(np.abs(t64)):.3g})", flush=True)
    wrong = copy.deepcopy(m64)
    load_into(wrong, wrong_head_order(hf, c, prefix), saved_to_param, torch.float64)
    sens = max_abs(transformers_logits(wrong, tokens), t64)
    check("sensitivity: a wrong value-head order is far above the tolerance", sens > 100 * tol,
          f"max |dlogit| {sens:.3g} vs tolerance {tol:.3g}")

    head_name = prefix + "embed_tokens.weight" if c["tied"] else "lm_head.weight"
    golden = {"name": c["name"], "tokens": tokens, "tolerance": tol}

    for kind in ("f32", "q8_0"):
        if kind == "f32":
            ref, hfw = t64, hf
        else:
            qn = q8_names(hf)
            hfw = {n: (q8_0_roundtrip(v) if n in qn else v) for n, v in hf.items()}
            mq = copy.deepcopy(m64)
            load_into(mq, hfw, saved_to_param, torch.float64)
            ref = transformers_logits(mq, tokens)
        for backend in args.backends:
            required = backend == "cpu-f64"
            try:
                logits, hidden, mtp_logits, _ = our_logits(args.cli, ggufs[kind], tokens, backend,
                                                           os.path.join(work, f"{c['name']}-{kind}-{backend}.bin"),
                                                           args.threads)
            except RuntimeError as e:
                if required:
                    check(f"{kind} {backend}: logits", False, str(e).splitlines()[0])
                else:
                    print(f"  [info] {kind} {backend}: not run: {str(e).splitlines()[0]}")
                continue
            d = max_abs(logits, ref)
            agree = int(np.sum(np.argmax(logits, 1) == np.argmax(ref, 1)))
            detail = f"max |dlogit| {d:.3g} (tolerance {tol:.3g}), argmax agrees at {agree}/{T} positions"
            if required:
                check(f"{kind} GGUF {backend} vs transformers", d <= tol, detail)
            else:
                res["info"][f"{kind}_{backend}"] = detail
                print(f"  [info] {kind} GGUF {backend} vs transformers: {detail}")
            # MTP: torch block fed our hidden states h_0..h_{T-2} and tokens t_1..t_{T-1}.
            mref = mtp_logits_torch(c, hfw, hfw[prefix + "embed_tokens.weight"], hfw[head_name],
                                    hidden[:T - 1].astype(np.float64), tokens[1:], torch.float64)
            dm = max_abs(mtp_logits, mref)
            agree_m = int(np.sum(np.argmax(mtp_logits, 1) == np.argmax(mref, 1)))
            detail = f"max |dlogit| {dm:.3g} (tolerance {tol:.3g}), argmax agrees at {agree_m}/{T - 1} positions"
            if required:
                check(f"{kind} MTP {backend} vs torch MTP", dm <= tol, detail)
                positions = sorted({0, T // 2, T - 1})
                golden[kind] = {"logits": golden_slice(ref, positions, args.topk),
                                "mtp_logits": golden_slice(mref, sorted({0, T - 2}), args.topk)}
            else:
                res["info"][f"{kind}_{backend}_mtp"] = detail
                print(f"  [info] {kind} MTP {backend} vs torch MTP: {detail}")

    # What CI needs to rebuild this checkpoint without torch (hash formula per tensor).
    golden["config"] = config_json
    golden["tensors"] = [
        {"file": weight_map[k], "name": k, "hash_name": saved_to_param.get(k, k), "shape": list(hf[k].shape),
         "center": init_of(saved_to_param.get(k, k), hf[k].shape)[0],
         "scale": init_of(saved_to_param.get(k, k), hf[k].shape)[1]}
        for k in sorted(weight_map)]
    return res, golden


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--convert", required=True, help="path to qwenchat-convert")
    ap.add_argument("--cli", required=True, help="path to qwenchat-cli")
    ap.add_argument("--out", default=os.environ.get("OUT", "reference_out"), help="report folder (default $OUT)")
    ap.add_argument("--work", default=None, help="scratch folder (default: a temporary one, removed)")
    ap.add_argument("--backends", default="cpu-f64,cpu",
                    help="comma list; cpu-f64 is required to pass, others (cpu, cuda) are reported")
    ap.add_argument("--threads", type=int, default=min(8, os.cpu_count() or 1))
    ap.add_argument("--topk", type=int, default=8)
    ap.add_argument("--cases", default=",".join(c["name"] for c in CASES))
    args = ap.parse_args()
    args.backends = [b for b in args.backends.split(",") if b]
    if "cpu-f64" not in args.backends:
        args.backends.insert(0, "cpu-f64")
    for tool in (args.convert, args.cli):
        if not os.access(tool, os.X_OK):
            print(f"compare_transformers: {tool} is not an executable", file=sys.stderr)
            return 2
    import transformers
    os.makedirs(args.out, exist_ok=True)
    work = args.work or tempfile.mkdtemp(prefix="qwenchat-ref-")
    os.makedirs(work, exist_ok=True)
    torch.set_num_threads(max(1, args.threads))
    report = {"format": "qwenchat-reference-report", "version": 1, "transformers": transformers.__version__,
              "torch": torch.__version__, "numpy": np.__version__, "date": time.strftime("%Y-%m-%d %H:%M:%S"),
              "cases": []}
    golden = {"format": "qwenchat-golden-logits", "version": 1,
              "producer": f"tests/reference/compare_transformers.py, transformers {transformers.__version__}, "
                          f"torch {torch.__version__}",
              "weights": "float32(center + scale * u), u = ((splitmix64(fnv1a(hash_name) ^ i) >> 11) % 2001 - 1000)"
                         " / 1000, i = flat index; files F32 safetensors; mtp.* in model-mtp.safetensors",
              "compare": "logits: transformers float64 model (f32 norms inside) on the token ids; q8_0: the same on "
                         "Q8_0-rounded weights; mtp_logits: torch MTP block fed our cpu-f64 hidden states of "
                         "positions 0..n-2 and tokens 1..n-1",
              "cases": []}
    failures = 0
    selected = [c for c in CASES if c["name"] in args.cases.split(",")]
    for c in selected:
        print(f"case {c['name']}: H={c['hidden']} layers={c['layers']} (interval {c['interval']}) "
              f"GDN {c['nk']}k/{c['nv']}v heads {c['heads']}/{c['kv']} tied={c['tied']}", flush=True)
        try:
            res, gold = run_case(c, args, work)
        except Exception as e:  # report and go on with the next case
            import traceback
            traceback.print_exc()
            res, gold = {"case": c["name"], "checks": [{"name": "run", "ok": False, "detail": repr(e)}]}, None
            print(f"  [FAIL] run: {e!r}")
        report["cases"].append(res)
        if gold is not None:
            golden["cases"].append(gold)
        failures += sum(1 for ch in res["checks"] if not ch["ok"])
    with open(os.path.join(args.out, "report.json"), "w") as f:
        json.dump(report, f, indent=1)
    with open(os.path.join(args.out, "golden_qwen35.json"), "w") as f:
        json.dump(golden, f, indent=1)
    if not args.work:
        shutil.rmtree(work, ignore_errors=True)
    n = sum(len(r["checks"]) for r in report["cases"])
    print(f"\n==== {n - failures}/{n} checks passed; report.json and golden_qwen35.json in {args.out} ====")
    return 0 if failures == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
