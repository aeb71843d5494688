// qwenchat-gemv-bench --blocks TYPES: gemv_block (llama.cpp's block formats, #16) on the 27B shapes,
// M = 1..4, in its activation forms hl (dp4a on the words decode uses by default) and h on its two engines
// with their schedule options (registers: rows per warp, pipelined loads, shared activation sums, warps per
// row; stream: rows per warp, consumer warps, chunk, ring stages), and f32; each point L
// launches over rotated weight copies (>= 256 MB, so L2 never holds a matrix) captured in a CUDA graph
// with programmatic dependent launch (what decode runs), median of replays;
// GB/s counts the bytes the file holds for the matrix (rows x blocks x block bytes), against the read
// ceiling measured in the same run. Random bytes with finite f16 scale fields: the kernel's time does
// not depend on the values.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "block_quant.h"
#include "gemv_block.h"
#include "gemv_bench_util.cuh"

namespace qc::bench {

struct BlockShape {
  const char* key;  // for --block-shapes
  const char* name;
  int k, n;
};
inline const BlockShape kBlockShapes[] = {
    {"gateup", "ffn gate/up", 5120, 17408}, {"down", "ffn down", 17408, 5120},
    {"qkvz", "gdn qkv+z", 5120, 16384},     {"out", "attn/gdn out", 6144, 5120},
    {"qgate", "attn q+gate", 5120, 12288},  {"lmhead", "lm_head", 5120, 248320}};

struct BlockResult {
  std::string type, shape, form;
  int m = 1;
  double us = 0, gbs = 0, pct = 0;
  std::string error;
};

// Random bytes with each block's f16 scale fields (block_d_offset, block_dmin_offset) made small and finite.
inline void fill_block_matrix(uint8_t* p, size_t blocks, qc::gpu::BlockType t, uint64_t seed) {
  const int bb = qc::gpu::block_bytes(t);
  fill(fill_bytes, reinterpret_cast<uint32_t*>(p), blocks * bb / 4, seed);
  fill(fill_block_scales, p, blocks, bb, qc::gpu::block_d_offset(t), seed + 1, 1e-4f, 2e-4f);
  if (qc::gpu::block_dmin_offset(t) >= 0)
    fill(fill_block_scales, p, blocks, bb, qc::gpu::block_dmin_offset(t), seed + 2, 1e-4f, 2e-4f);
}

// Times gemv_block for every type in `types`, shape and M; prints as it goes.
// `form_filter` / `shape_filter`: comma-separated form names / shape keys to run (empty: all).
inline std::vector<BlockResult> block_section(const std::vector<qc::gpu::BlockType>& types, cudaStream_t stream,
                                              double ceiling_gbs, bool quick, const std::string& form_filter,
                                              const std::string& shape_filter) {
  std::vector<BlockResult> out;
  constexpr int kMaxK = 17408;
  float *x = nullptr, *y = nullptr, *scale = nullptr;
  int8_t *hi = nullptr, *lo = nullptr;
  BENCH_CHECK(cudaMalloc(&x, sizeof(float) * 4 * kMaxK));
  BENCH_CHECK(cudaMalloc(&y, sizeof(float) * 4 * 248320));
  BENCH_CHECK(cudaMalloc(&hi, size_t{4} * kMaxK));
  BENCH_CHECK(cudaMalloc(&lo, size_t{4} * kMaxK));
  BENCH_CHECK(cudaMalloc(&scale, sizeof(float) * 4 * (kMaxK / 32)));
  fill(fill_normal, x, size_t{4} * kMaxK, uint64_t{91}, 0.0f, 1.0f);
  fill(fill_bytes, reinterpret_cast<uint32_t*>(hi), size_t{kMaxK}, uint64_t{92});
  fill(fill_bytes, reinterpret_cast<uint32_t*>(lo), size_t{kMaxK}, uint64_t{93});
  fill(fill_normal, scale, size_t{4} * (kMaxK / 32), uint64_t{94}, 0.0f, 0.01f);
  // Activation form (hl: words hi+lo, h: hi only, f32), rows per warp (1, 2), "p" two pieces per lane in
  // flight (pipeline), "s" the min term's activation sums formed once per block (Q4_K / Q5_K; elsewhere
  // the same kernel as without), "w2" two warps per row (else the launcher's choice); "auto" the launcher's
  // choice of all of them: the register engine. "hls" / "hs": the stream engine with its launcher's choices
  // (what the tile variants run on sm_90), "_rR" R rows per warp, "_cC" C consumer warps, "_kP" P pieces of
  // a row per stage, "_sS" S ring stages, "_wW" W warps per row, "_g" the activation words read from global
  // memory (else staged in shared memory where they fit), "full" a block takes all of an SM's shared memory
  // (else half, so the next kernel's block fits beside it). "hlpick" / "hpick": the launcher's choice of the
  // engine too (BlockEngine::kAuto, gemv_block.h block_engine_for: what the decode path runs by default).
  struct Form {
    const char* name;
    qc::ActFormat f;
    int rpw, pipe, sums, wpr;
    qc::gpu::BlockEngine engine = qc::gpu::BlockEngine::kRegisters;
    int warps = 0, chunk = 0, stages = 0, smem = 0, acts = -1;
  };
  using E = qc::gpu::BlockEngine;
  constexpr qc::ActFormat HL = qc::ActFormat::kHL, H = qc::ActFormat::kH;
  const Form all_forms[] = {
      {"hlauto", HL, 0, -1, -1, 0}, {"hauto", H, 0, -1, -1, 0},        {"hl2psw2", HL, 2, 1, 1, 2},
      {"h2psw2", H, 2, 1, 1, 2},    {"hl1", HL, 1, 0, 0, 0},           {"hl1s", HL, 1, 0, 1, 0},
      {"hl1p", HL, 1, 1, 0, 0},     {"hl1ps", HL, 1, 1, 1, 0},         {"hl1w2", HL, 1, 0, 0, 2},
      {"hl1psw2", HL, 1, 1, 1, 2},  {"hl2", HL, 2, 0, 0, 0},           {"hl2ps", HL, 2, 1, 1, 0},
      {"h1", H, 1, 0, 0, 0},        {"h1ps", H, 1, 1, 1, 0},           {"h2ps", H, 2, 1, 1, 0},
      {"f32", qc::ActFormat::kF32, 0, 0, 0, 0},
      {"hls", HL, 0, -1, -1, 0, E::kStream},
      {"hs", H, 0, -1, -1, 0, E::kStream},
      {"hls_r1", HL, 1, -1, -1, 0, E::kStream},
      {"hls_r4", HL, 4, -1, -1, 0, E::kStream},
      {"hs_r1", H, 1, -1, -1, 0, E::kStream},
      {"hs_r4", H, 4, -1, -1, 0, E::kStream},
      {"hls_c4", HL, 0, -1, -1, 0, E::kStream, 4},
      {"hls_c12", HL, 0, -1, -1, 0, E::kStream, 12},
      {"hls_c12r1", HL, 1, -1, -1, 0, E::kStream, 12},
      {"hls_c4r4", HL, 4, -1, -1, 0, E::kStream, 4},
      {"hls_k256", HL, 0, -1, -1, 0, E::kStream, 0, 256},
      {"hls_s2", HL, 0, -1, -1, 0, E::kStream, 0, 0, 2},
      {"hls_w1", HL, 0, -1, -1, 1, E::kStream},
      {"hls_w2", HL, 0, -1, -1, 2, E::kStream},
      {"hls_w8", HL, 0, -1, -1, 8, E::kStream, 8},
      {"hls_g", HL, 0, -1, -1, 0, E::kStream, 0, 0, 0, 0, 0},            // activations from global memory
      {"hls_full", HL, 0, -1, -1, 0, E::kStream, 0, 0, 0, 220 * 1024},  // one block per SM, all its smem
      {"hls_c12full", HL, 0, -1, -1, 0, E::kStream, 12, 0, 0, 220 * 1024},
      {"hs_full", H, 0, -1, -1, 0, E::kStream, 0, 0, 0, 220 * 1024},
      {"hls_c8", HL, 0, -1, -1, 0, E::kStream, 8},
      {"hls_c15", HL, 0, -1, -1, 0, E::kStream, 15},
      {"hs_c15", H, 0, -1, -1, 0, E::kStream, 15},
      {"hls_c15r1", HL, 1, -1, -1, 0, E::kStream, 15},
      {"hls_half", HL, 0, -1, -1, 0, E::kStream, 0, 0, 0, 110 * 1024},
      {"hls_c15s2", HL, 0, -1, -1, 0, E::kStream, 15, 0, 2},
      // The segment engine (Q4_K / Q5_K; other types report its refusal): "hlg" / "hg" its launcher's
      // choices, "_rR" R rows per warp, "p0" / "p1" the next window's loads in flight or not, "_wW" W warps
      // per row.
      {"hlg", HL, 0, -1, -1, 0, E::kSegments},
      {"hg", H, 0, -1, -1, 0, E::kSegments},
      {"hlg_r2p0", HL, 2, 0, -1, 0, E::kSegments},
      {"hlg_r2p1", HL, 2, 1, -1, 0, E::kSegments},
      {"hlg_r4p0", HL, 4, 0, -1, 0, E::kSegments},
      {"hlg_r4p1", HL, 4, 1, -1, 0, E::kSegments},
      {"hlg_w1", HL, 0, -1, -1, 1, E::kSegments},
      {"hlg_w2", HL, 0, -1, -1, 2, E::kSegments},
      {"hlg_w4", HL, 0, -1, -1, 4, E::kSegments},
      {"hlg_w8", HL, 0, -1, -1, 8, E::kSegments},
      {"hg_r4p0", H, 4, 0, -1, 0, E::kSegments},
      {"hg_r4p1", H, 4, 1, -1, 0, E::kSegments},
      {"hlpick", HL, 0, -1, -1, 0, E::kAuto},
      {"hpick", H, 0, -1, -1, 0, E::kAuto}};
  std::vector<Form> forms;
  for (const Form& f : all_forms)
    if (form_filter.empty() || ("," + form_filter + ",").find(std::string(",") + f.name + ",") != std::string::npos)
      forms.push_back(f);
  for (const qc::gpu::BlockType t : types) {
    for (const BlockShape& s : kBlockShapes) {
      if (!shape_filter.empty() && ("," + shape_filter + ",").find(std::string(",") + s.key + ",") == std::string::npos)
        continue;
      const size_t row = qc::gpu::block_row_bytes(t, s.k), bytes = row * static_cast<size_t>(s.n);
      const int copies = std::max(2, static_cast<int>(std::ceil(256e6 / static_cast<double>(bytes))));
      uint8_t* w = nullptr;
      BENCH_CHECK(cudaMalloc(&w, bytes * copies));
      fill_block_matrix(w, bytes * copies / qc::gpu::block_bytes(t), t, uint64_t{3000} + s.n + s.k);
      BENCH_CHECK(cudaDeviceSynchronize());
      std::printf("\n== %s %s: K=%d -> N=%d, %.1f MB, %d copies ==\n", qc::gpu::block_type_name(t), s.name, s.k,
                  s.n, bytes / 1e6, copies);
      for (const auto& form : forms)
      for (int m = 1; m <= 4; ++m) {
        BlockResult r{qc::gpu::block_type_name(t), s.name, form.name, m, 0, 0, 0, {}};
        auto launch = [&](int i, bool pdl) {
          qc::gpu::GemvBlockArgs a;
          a.w = qc::gpu::BlockWeights{w + static_cast<size_t>(i % copies) * bytes, t, s.n, s.k};
          a.format = form.f;
          a.rows_per_warp = form.rpw;
          a.pipeline = form.pipe;
          a.act_sums = form.sums;
          a.warps_per_row = form.wpr;
          a.engine = form.f == qc::ActFormat::kF32 ? qc::gpu::BlockEngine::kRegisters : form.engine;
          a.stream_warps = form.warps;
          a.stream_chunk = form.chunk;
          a.stream_stages = form.stages;
          a.stream_smem = form.smem;
          a.stream_acts = form.acts;
          a.x = x;
          a.ld_x = s.k;
          a.xq = qc::gpu::QActIn{hi, lo, scale, s.k, s.k / 32};
          a.y = y;
          a.ld_y = s.n;
          a.m = m;
          a.pdl = pdl;
          return qc::gpu::gemv_block(a, stream);
        };
        const int L = std::clamp(static_cast<int>(std::ceil(1.5e-3 / (bytes / 3.0e12))), 4, 256);
        const double t = graph_time(stream, quick ? 5 : 9, L, [&](int i) { return launch(i, i > 0); }, r.error);
        if (t > 0) {
          r.us = t / L * 1e6;
          r.gbs = bytes / (t / L) / 1e9;
          r.pct = ceiling_gbs > 0 ? 100.0 * r.gbs / ceiling_gbs : 0.0;
        }
        if (r.error.empty())
          std::printf("  %-7s M=%d %9.2f us %7.0f GB/s %5.1f%%\n", form.name, m, r.us, r.gbs, r.pct);
        else
          std::printf("  %-7s M=%d ERROR %s\n", form.name, m, r.error.c_str());
        out.push_back(r);
      }
      BENCH_CHECK(cudaFree(w));
    }
  }
  std::printf("\n==== gemv_block summary: GB/s (%% of the read ceiling %.0f GB/s), graph+PDL ====\n", ceiling_gbs);
  std::printf("%-5s %-13s %-7s %14s %14s %14s %14s\n", "type", "shape", "form", "M=1", "M=2", "M=3", "M=4");
  for (size_t i = 0; i < out.size(); i += 4) {
    std::printf("%-5s %-13s %-7s", out[i].type.c_str(), out[i].shape.c_str(), out[i].form.c_str());
    for (size_t j = i; j < i + 4 && j < out.size(); ++j)
      std::printf(" %7.0f (%3.0f%%)", out[j].gbs, out[j].pct);
    std::printf("\n");
  }
  BENCH_CHECK(cudaFree(x));
  BENCH_CHECK(cudaFree(y));
  BENCH_CHECK(cudaFree(hi));
  BENCH_CHECK(cudaFree(lo));
  BENCH_CHECK(cudaFree(scale));
  return out;
}

}  // namespace qc::bench
