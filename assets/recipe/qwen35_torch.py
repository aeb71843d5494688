"""Qwen3.5 hybrid text model + MTP block in plain PyTorch (no transformers), for training the embedded
default model on any torch >= 1.13 (Debian 12's python3-torch on the CPU, or a GPU machine's torch).

Parameter names and conventions are those of a Hugging Face `qwen3_5` checkpoint, so qwenchat-convert
reads the saved folder unchanged:
  - every RMSNorm is zero-centred, y = x_hat * (1 + w), except the GDN output norm (linear_attn.norm,
    y = x_hat * w, initialised to ones);
  - GDN: A_log (g = -exp(A_log) * softplus(a + dt_bias)), value heads grouped by key head (value head h
    reads key head h // (Nv / Nk)), conv1d weight (C, 1, K), in_proj_qkv rows q | k | v;
  - attention: q_proj rows per head [query hd | gate hd], q/k RMSNorm per head before RoPE, partial RoPE
    on the first rotary_dim dims with NeoX half-split pairs (i, i + rotary_dim/2), output * sigmoid(gate);
  - MTP (QWEN35.md section 6): mtp.fc over [pre_fc_norm_embedding(embed(t_{p+1})) | pre_fc_norm_hidden(h_p)],
    one full-attention decoder layer mtp.layers.0, mtp.norm, the shared (tied) lm_head.
The math follows QWEN35.md sections 2-4; check_against_engine.py compares this module's logits and MTP
logits with qwenchat-cli on the converted GGUF.
The GDN layer uses the chunked form of the gated delta rule (chunk C): within a chunk the WY factor
(I + tril(beta K K^T * decay, -1))^-1 comes from a triangular solve, so autograd needs no in-place loop.
"""
import json
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class Config:
    def __init__(self, **kw):
        self.vocab_size = 8192
        self.hidden_size = 256
        self.intermediate_size = 768
        self.num_hidden_layers = 8
        self.num_attention_heads = 4
        self.num_key_value_heads = 2
        self.head_dim = 64
        self.linear_num_key_heads = 2
        self.linear_num_value_heads = 4
        self.linear_key_head_dim = 64
        self.linear_value_head_dim = 64
        self.linear_conv_kernel_dim = 4
        self.full_attention_interval = 4
        self.rms_norm_eps = 1e-6
        self.rope_theta = 10000.0
        self.partial_rotary_factor = 0.25
        self.max_position_embeddings = 4096
        self.initializer_range = 0.02
        self.eos_token_id = None
        self.__dict__.update(kw)

    @property
    def layer_types(self):
        return ["full_attention" if (i + 1) % self.full_attention_interval == 0 else "linear_attention"
                for i in range(self.num_hidden_layers)]

    @property
    def rotary_dim(self):
        return int(self.head_dim * self.partial_rotary_factor)

    def to_hf_json(self):
        """config.json as a transformers qwen3_5_text checkpoint writes it (the fields hf_config.cpp reads)."""
        return {
            "architectures": ["Qwen3_5ForCausalLM"],
            "model_type": "qwen3_5_text",
            "vocab_size": self.vocab_size,
            "hidden_size": self.hidden_size,
            "intermediate_size": self.intermediate_size,
            "num_hidden_layers": self.num_hidden_layers,
            "num_attention_heads": self.num_attention_heads,
            "num_key_value_heads": self.num_key_value_heads,
            "head_dim": self.head_dim,
            "linear_num_key_heads": self.linear_num_key_heads,
            "linear_num_value_heads": self.linear_num_value_heads,
            "linear_key_head_dim": self.linear_key_head_dim,
            "linear_value_head_dim": self.linear_value_head_dim,
            "linear_conv_kernel_dim": self.linear_conv_kernel_dim,
            "layer_types": self.layer_types,
            "full_attention_interval": self.full_attention_interval,
            "rms_norm_eps": self.rms_norm_eps,
            "hidden_act": "silu",
            "max_position_embeddings": self.max_position_embeddings,
            "rope_parameters": {"rope_type": "default", "rope_theta": self.rope_theta,
                                "partial_rotary_factor": self.partial_rotary_factor},
            "partial_rotary_factor": self.partial_rotary_factor,
            "tie_word_embeddings": True,
            "attention_bias": False,
            "mtp_num_hidden_layers": 1,
            "mtp_use_dedicated_embeddings": False,
            "eos_token_id": self.eos_token_id,
            "torch_dtype": "float32",
        }


class RMSNorm(nn.Module):
    """Zero-centred: x_hat * (1 + w), computed in f32."""

    def __init__(self, dim, eps):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.zeros(dim))

    def forward(self, x):
        xf = x.float()
        y = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + self.eps)
        return (y * (1.0 + self.weight.float())).type_as(x)


class GatedRMSNorm(nn.Module):
    """GDN output norm: rmsnorm(o) * w * silu(z), w plain (initialised to ones)."""

    def __init__(self, dim, eps):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x, z):
        xf = x.float()
        y = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight.float()
        return (y * F.silu(z.float())).type_as(x)


def chunk_gated_delta_rule(q, k, v, g, beta, chunk=64):
    """q, k: (B, T, H, dk) L2-normalised, q already scaled; v: (B, T, H, dv); g, beta: (B, T, H).
    Per head: S_t = exp(g_t) S_{t-1} + k_t (beta_t (v_t - (exp(g_t) S_{t-1})^T k_t))^T, o_t = S_t^T q_t.
    Returns o (B, T, H, dv). f32 inside."""
    B, T, H, dk = k.shape
    dv = v.shape[-1]
    dtype = v.dtype
    q, k, v, g, beta = (x.transpose(1, 2).float() for x in (q, k, v, g, beta))  # (B, H, T, ...)
    pad = (chunk - T % chunk) % chunk
    if pad:
        q, k, v = (F.pad(x, (0, 0, 0, pad)) for x in (q, k, v))
        g, beta = (F.pad(x, (0, pad)) for x in (g, beta))
    n = (T + pad) // chunk
    q, k, v = (x.reshape(B, H, n, chunk, -1) for x in (q, k, v))
    g = g.reshape(B, H, n, chunk).cumsum(-1)          # log-decay from the chunk start, inclusive
    beta = beta.reshape(B, H, n, chunk)
    k_beta = k * beta.unsqueeze(-1)
    v_beta = v * beta.unsqueeze(-1)
    decay = (g.unsqueeze(-1) - g.unsqueeze(-2)).tril().exp().tril()  # exp(g_i - g_j), j <= i
    strict = torch.tril(torch.ones(chunk, chunk, dtype=torch.bool, device=q.device), -1)
    a = (k_beta @ k.transpose(-1, -2)) * decay * strict
    eye = torch.eye(chunk, dtype=a.dtype, device=a.device)
    w = torch.linalg.solve_triangular(eye + a, eye.expand_as(a).contiguous(), upper=False)  # (I + A)^-1
    u = w @ v_beta                                     # pseudo-values
    kc = w @ (k_beta * g.exp().unsqueeze(-1))          # decayed keys against the incoming state
    causal = torch.tril(torch.ones(chunk, chunk, dtype=torch.bool, device=q.device))
    S = torch.zeros(B, H, dk, dv, dtype=torch.float32, device=q.device)
    outs = []
    for i in range(n):
        qi, ki, gi = q[:, :, i], k[:, :, i], g[:, :, i]
        attn = (qi @ ki.transpose(-1, -2)) * decay[:, :, i] * causal
        v_new = u[:, :, i] - kc[:, :, i] @ S
        outs.append((qi * gi.exp().unsqueeze(-1)) @ S + attn @ v_new)
        g_last = gi[..., -1:]
        S = S * g_last.exp().unsqueeze(-1) + (ki * (g_last - gi).exp().unsqueeze(-1)).transpose(-1, -2) @ v_new
    o = torch.stack(outs, 2).reshape(B, H, n * chunk, dv)[:, :, :T]
    return o.transpose(1, 2).to(dtype)


class GatedDeltaNet(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.nk, self.nv = c.linear_num_key_heads, c.linear_num_value_heads
        self.dk, self.dv = c.linear_key_head_dim, c.linear_value_head_dim
        self.key_dim, self.value_dim = self.nk * self.dk, self.nv * self.dv
        conv_dim = 2 * self.key_dim + self.value_dim
        self.kernel = c.linear_conv_kernel_dim
        self.conv1d = nn.Conv1d(conv_dim, conv_dim, self.kernel, groups=conv_dim, bias=False,
                                padding=self.kernel - 1)
        self.dt_bias = nn.Parameter(torch.ones(self.nv))
        self.A_log = nn.Parameter(torch.empty(self.nv).uniform_(1.0, 16.0).log())
        self.norm = GatedRMSNorm(self.dv, c.rms_norm_eps)
        self.out_proj = nn.Linear(self.value_dim, c.hidden_size, bias=False)
        self.in_proj_qkv = nn.Linear(c.hidden_size, conv_dim, bias=False)
        self.in_proj_z = nn.Linear(c.hidden_size, self.value_dim, bias=False)
        self.in_proj_b = nn.Linear(c.hidden_size, self.nv, bias=False)
        self.in_proj_a = nn.Linear(c.hidden_size, self.nv, bias=False)

    def forward(self, x):
        B, T, _ = x.shape
        qkv = self.in_proj_qkv(x).transpose(1, 2)                     # (B, C, T)
        qkv = F.silu(self.conv1d(qkv)[..., :T]).transpose(1, 2)       # causal depthwise conv
        q, k, v = torch.split(qkv, [self.key_dim, self.key_dim, self.value_dim], -1)
        q = q.reshape(B, T, self.nk, self.dk)
        k = k.reshape(B, T, self.nk, self.dk)
        v = v.reshape(B, T, self.nv, self.dv)
        rep = self.nv // self.nk
        q = F.normalize(q.float(), dim=-1, eps=1e-6) * (1.0 / math.sqrt(self.dk))
        k = F.normalize(k.float(), dim=-1, eps=1e-6)
        q = q.repeat_interleave(rep, dim=2)                             # value head h reads key head h // rep
        k = k.repeat_interleave(rep, dim=2)
        beta = torch.sigmoid(self.in_proj_b(x).float())
        g = -self.A_log.float().exp() * F.softplus(self.in_proj_a(x).float() + self.dt_bias.float())
        with torch.autocast(device_type=x.device.type, enabled=False):  # the recurrence stays f32
            o = chunk_gated_delta_rule(q, k, v.float(), g, beta)
        z = self.in_proj_z(x).reshape(B, T, self.nv, self.dv)
        y = self.norm(o, z).reshape(B, T, self.value_dim).type_as(x)
        return self.out_proj(y)


def rope_cos_sin(c, T, device, offset=0):
    rd = c.rotary_dim
    inv = 1.0 / (c.rope_theta ** (torch.arange(0, rd, 2, dtype=torch.float32, device=device) / rd))
    pos = torch.arange(offset, offset + T, dtype=torch.float32, device=device)
    f = torch.outer(pos, inv)
    emb = torch.cat([f, f], -1)
    return emb.cos(), emb.sin()


def apply_rope(x, cos, sin):
    """x: (B, H, T, hd); rotates the first rotary dims with half-split pairs."""
    rd = cos.shape[-1]
    xr, xp = x[..., :rd], x[..., rd:]
    x1, x2 = xr[..., : rd // 2], xr[..., rd // 2:]
    rot = torch.cat([-x2, x1], -1)
    return torch.cat([xr * cos + rot * sin, xp], -1)


def causal_attention(q, k, v):
    """softmax(q k^T / sqrt(hd)) v over positions <= the query's; SDPA where torch has it (>= 2.0)."""
    if hasattr(F, "scaled_dot_product_attention"):
        return F.scaled_dot_product_attention(q, k, v, is_causal=True)
    T = q.shape[-2]
    s = (q @ k.transpose(-1, -2)) * (1.0 / math.sqrt(q.shape[-1]))
    mask = torch.ones(T, T, dtype=torch.bool, device=q.device).triu(1)
    return torch.softmax(s.masked_fill(mask, float("-inf")).float(), -1).type_as(v) @ v


class Attention(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.h, self.kv, self.hd = c.num_attention_heads, c.num_key_value_heads, c.head_dim
        self.q_proj = nn.Linear(c.hidden_size, self.h * self.hd * 2, bias=False)
        self.k_proj = nn.Linear(c.hidden_size, self.kv * self.hd, bias=False)
        self.v_proj = nn.Linear(c.hidden_size, self.kv * self.hd, bias=False)
        self.o_proj = nn.Linear(self.h * self.hd, c.hidden_size, bias=False)
        self.q_norm = RMSNorm(self.hd, c.rms_norm_eps)
        self.k_norm = RMSNorm(self.hd, c.rms_norm_eps)

    def forward(self, x, cos, sin):
        B, T, _ = x.shape
        qg = self.q_proj(x).view(B, T, self.h, 2 * self.hd)
        q, gate = qg[..., : self.hd], qg[..., self.hd:]
        q = self.q_norm(q).transpose(1, 2)
        k = self.k_norm(self.k_proj(x).view(B, T, self.kv, self.hd)).transpose(1, 2)
        v = self.v_proj(x).view(B, T, self.kv, self.hd).transpose(1, 2)
        q, k = apply_rope(q, cos, sin).type_as(v), apply_rope(k, cos, sin).type_as(v)
        rep = self.h // self.kv
        k = k.repeat_interleave(rep, dim=1)
        v = v.repeat_interleave(rep, dim=1)
        o = causal_attention(q, k, v)
        o = o.transpose(1, 2).reshape(B, T, self.h * self.hd)
        o = o * torch.sigmoid(gate.reshape(B, T, self.h * self.hd))
        return self.o_proj(o)


class MLP(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.gate_proj = nn.Linear(c.hidden_size, c.intermediate_size, bias=False)
        self.up_proj = nn.Linear(c.hidden_size, c.intermediate_size, bias=False)
        self.down_proj = nn.Linear(c.intermediate_size, c.hidden_size, bias=False)

    def forward(self, x):
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


class DecoderLayer(nn.Module):
    def __init__(self, c, kind):
        super().__init__()
        self.kind = kind
        if kind == "linear_attention":
            self.linear_attn = GatedDeltaNet(c)
        else:
            self.self_attn = Attention(c)
        self.mlp = MLP(c)
        self.input_layernorm = RMSNorm(c.hidden_size, c.rms_norm_eps)
        self.post_attention_layernorm = RMSNorm(c.hidden_size, c.rms_norm_eps)

    def forward(self, x, cos, sin):
        h = self.input_layernorm(x)
        h = self.linear_attn(h) if self.kind == "linear_attention" else self.self_attn(h, cos, sin)
        x = x + h
        return x + self.mlp(self.post_attention_layernorm(x))


class TextModel(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.embed_tokens = nn.Embedding(c.vocab_size, c.hidden_size)
        self.layers = nn.ModuleList([DecoderLayer(c, t) for t in c.layer_types])
        self.norm = RMSNorm(c.hidden_size, c.rms_norm_eps)


class Mtp(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.fc = nn.Linear(2 * c.hidden_size, c.hidden_size, bias=False)
        self.pre_fc_norm_embedding = RMSNorm(c.hidden_size, c.rms_norm_eps)
        self.pre_fc_norm_hidden = RMSNorm(c.hidden_size, c.rms_norm_eps)
        self.layers = nn.ModuleList([DecoderLayer(c, "full_attention")])
        self.norm = RMSNorm(c.hidden_size, c.rms_norm_eps)


class Qwen35(nn.Module):
    """state_dict() keys: model.* and mtp.* exactly as a Qwen3.5 checkpoint (lm_head tied, not stored)."""

    def __init__(self, c):
        super().__init__()
        self.config = c
        self.model = TextModel(c)
        self.mtp = Mtp(c)
        std = c.initializer_range
        for name, p in self.named_parameters():
            if p.dim() == 2:
                nn.init.normal_(p, std=std)
        # residual-branch outputs scaled down with depth (GPT-2 style), for a stable start
        for name, p in self.named_parameters():
            if name.endswith(("out_proj.weight", "o_proj.weight", "down_proj.weight")):
                nn.init.normal_(p, std=std / math.sqrt(2 * c.num_hidden_layers))

    def hidden(self, ids):
        """Post-final-norm hidden states (B, T, H)."""
        c = self.config
        x = self.model.embed_tokens(ids)
        cos, sin = rope_cos_sin(c, ids.shape[1], ids.device)
        for layer in self.model.layers:
            x = layer(x, cos, sin)
        return self.model.norm(x)

    def logits(self, h):
        return F.linear(h, self.model.embed_tokens.weight)

    def mtp_hidden(self, next_ids, h):
        """MTP at positions 0..n-1: next_ids = t_{p+1}, h = h_p (post-norm). Returns the normed output."""
        c = self.config
        m = self.mtp
        e = self.model.embed_tokens(next_ids)
        x = m.fc(torch.cat([m.pre_fc_norm_embedding(e), m.pre_fc_norm_hidden(h)], -1))
        cos, sin = rope_cos_sin(c, x.shape[1], x.device)
        x = m.layers[0](x, cos, sin)
        return m.norm(x)

    def losses(self, x):
        """x: (B, T+1) ids. (main CE over t_{p+1}, MTP CE over t_{p+2})."""
        h = self.hidden(x)
        lg = self.logits(h[:, :-1]).float()
        main = F.cross_entropy(lg.reshape(-1, lg.shape[-1]), x[:, 1:].reshape(-1))
        z = self.mtp_hidden(x[:, 1:-1], h[:, :-2])
        ml = self.logits(z).float()
        extra = F.cross_entropy(ml.reshape(-1, ml.shape[-1]), x[:, 2:].reshape(-1))
        return main, extra

    def checkpoint_tensors(self):
        return {k: v for k, v in self.state_dict().items()}


def save_hf_checkpoint(model, out_dir, shard_bytes=15 << 20, extra_meta=None):
    """config.json + sharded safetensors (2-D weights F16, the rest F32) + index. Needs `safetensors` or
    falls back to a minimal writer of the same format."""
    import os
    tensors = {}
    for k, v in model.checkpoint_tensors().items():
        t = v.detach().float().cpu()
        tensors[k] = (t.half() if t.dim() == 2 else t).contiguous()
    shards, cur, size = [], {}, 0
    for k in sorted(tensors):
        nb = tensors[k].numel() * tensors[k].element_size()
        if cur and size + nb > shard_bytes:
            shards.append(cur)
            cur, size = {}, 0
        cur[k] = tensors[k]
        size += nb
    shards.append(cur)
    weight_map = {}
    meta = {"format": "pt"}
    meta.update({k: str(v) for k, v in (extra_meta or {}).items()})
    for i, s in enumerate(shards):
        name = f"model-{i + 1:05d}-of-{len(shards):05d}.safetensors"
        tmp = os.path.join(out_dir, "tmp.partial")
        write_safetensors(s, tmp, meta)
        os.replace(tmp, os.path.join(out_dir, name))
        for k in s:
            weight_map[k] = name
    for name, obj in (("model.safetensors.index.json", {"metadata": {}, "weight_map": weight_map}),
                      ("config.json", model.config.to_hf_json())):
        tmp = os.path.join(out_dir, "tmp.partial")
        with open(tmp, "w") as f:
            json.dump(obj, f, indent=1)
        os.replace(tmp, os.path.join(out_dir, name))


def write_safetensors(tensors, path, metadata):
    """The safetensors format: u64 header length, JSON header {name: {dtype, shape, data_offsets}}, data."""
    import struct
    names = sorted(tensors)
    header = {"__metadata__": metadata}
    off = 0
    blobs = []
    for n in names:
        t = tensors[n]
        b = t.numpy().tobytes()
        header[n] = {"dtype": {torch.float16: "F16", torch.float32: "F32"}[t.dtype], "shape": list(t.shape),
                     "data_offsets": [off, off + len(b)]}
        off += len(b)
        blobs.append(b)
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * ((8 - len(h) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)))
        f.write(h)
        for b in blobs:
            f.write(b)


def read_safetensors(path):
    """name -> tensor for F16 / BF16 / F32 safetensors files (the inverse of write_safetensors)."""
    import struct
    import numpy as np
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
        data = f.read()
    out = {}
    for name, e in header.items():
        if name == "__metadata__":
            continue
        a, b = e["data_offsets"]
        raw = data[a:b]
        if e["dtype"] == "F16":
            t = torch.from_numpy(np.frombuffer(raw, dtype=np.float16).copy())
        elif e["dtype"] == "F32":
            t = torch.from_numpy(np.frombuffer(raw, dtype=np.float32).copy())
        elif e["dtype"] == "BF16":
            u = np.frombuffer(raw, dtype=np.uint16).astype(np.uint32) << 16
            t = torch.from_numpy(u.view(np.float32).copy())
        else:
            raise ValueError(f"{path}: {name}: dtype {e['dtype']} not handled")
        out[name] = t.reshape(e["shape"])
    return out
