#!/usr/bin/env python3
"""Golden logits from Hugging Face transformers' `qwen3_5` for test_reference_hf.cpp.

Builds a tiny Qwen3.5 text model (value heads != key heads, key head dim != value head dim, GQA, partial
RoPE, GDN and attention layers) whose every weight comes from a hash formula that the C++ test
reproduces bit for bit, runs it in transformers on the CPU, and prints the logits as a C++ array.
The C++ side converts the same HF weights to the GGUF conventions (norm +1 except linear_attn.norm,
ssm_a = -exp(A_log), llama.cpp's tiled value-head order) and runs the reference backend on them.

Needs torch + transformers with qwen3_5 (the GPU machine has them). Run:
    python3 tests/unit/test_reference_hf_golden.py > golden.txt
"""
import math
import sys

import torch
import transformers
from transformers import Qwen3_5ForCausalLM, Qwen3_5TextConfig

M64 = (1 << 64) - 1

# Keep in step with test_reference_hf.cpp.
V, H, FF, LAYERS = 64, 64, 96, 4
N_HEAD, N_KV, HEAD_DIM, ROPE_DIMS, THETA = 4, 2, 32, 8, 10000.0
NK, NV, DK, DV, KCONV = 2, 6, 16, 32, 4
TOKENS = [3, 17, 42, 5, 60, 8, 33, 21]


def splitmix64(x):
    x = (x + 0x9E3779B97F4A7C15) & M64
    z = x
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
    return z ^ (z >> 31)


def fnv1a(s):
    h = 0xCBF29CE484222325
    for b in s.encode():
        h = ((h ^ b) * 0x100000001B3) & M64
    return h


def values(name, n, center, scale):
    """n float32 values center + scale * u, u in [-1, 1] from (name, index)."""
    base = fnv1a(name)
    out = []
    for i in range(n):
        h = splitmix64(base ^ i)
        u = ((h >> 11) % 2001 - 1000) / 1000.0
        out.append(center + scale * u)
    return torch.tensor(out, dtype=torch.float32)


def init_of(name, shape):
    """(center, scale) of each HF parameter."""
    leaf = name.split(".")[-2] if name.endswith(".weight") else name.split(".")[-1]
    if name == "model.embed_tokens.weight":
        return 0.0, 1.0
    if "linear_attn.norm" in name:
        return 1.0, 0.2  # gated output norm: used as stored, no +1
    if leaf in ("input_layernorm", "post_attention_layernorm", "norm", "q_norm", "k_norm"):
        return 0.0, 0.2  # zero-centred: the model multiplies by (1 + w)
    if leaf == "conv1d":
        return 0.0, 0.6
    if leaf == "dt_bias":
        return 0.0, 1.0
    if leaf == "A_log":
        return 0.0, 0.7
    return 0.0, 1.0 / math.sqrt(shape[-1])  # projections [out][in]


def main():
    config = Qwen3_5TextConfig(
        vocab_size=V, hidden_size=H, intermediate_size=FF, num_hidden_layers=LAYERS,
        num_attention_heads=N_HEAD, num_key_value_heads=N_KV, head_dim=HEAD_DIM,
        linear_conv_kernel_dim=KCONV, linear_key_head_dim=DK, linear_value_head_dim=DV,
        linear_num_key_heads=NK, linear_num_value_heads=NV,
        layer_types=["linear_attention", "full_attention", "linear_attention", "full_attention"],
        rms_norm_eps=1e-6, tie_word_embeddings=False,
        rope_parameters={"rope_type": "default", "rope_theta": THETA,
                         "partial_rotary_factor": ROPE_DIMS / HEAD_DIM,
                         "mrope_section": [2, 1, 1], "mrope_interleaved": True},
        partial_rotary_factor=ROPE_DIMS / HEAD_DIM,
    )
    config._attn_implementation = "eager"
    model = Qwen3_5ForCausalLM(config).to(torch.float64).eval()
    with torch.no_grad():
        for name, p in model.named_parameters():
            center, scale = init_of(name, tuple(p.shape))
            p.copy_(values(name, p.numel(), center, scale).reshape(p.shape).to(torch.float64))
        ids = torch.tensor([TOKENS])
        logits = model(input_ids=ids, use_cache=False).logits[0]
    print(f"// transformers {transformers.__version__}, torch {torch.__version__}, float64 model")
    for name, p in model.named_parameters():
        print(f"// {name} {list(p.shape)}")
    print(f"constexpr double kHfLogits[{len(TOKENS)}][{V}] = {{")
    for row in logits.tolist():
        print("    {" + ", ".join(repr(x) for x in row) + "},")
    print("};")
    return 0


if __name__ == "__main__":
    sys.exit(main())
