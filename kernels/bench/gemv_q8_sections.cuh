// qwenchat-gemv-bench's Q8_0 sections (Bench members declared in gemv_bench.cuh; included once, by the
// driver gemv_bench.cu, as gemv_block_section.cuh is: the bench utilities are one translation unit's): per
// shape at M = 1 with the tile engines' sweep, the fused gate+up, the whole token's GEMVs, M = 2..4, and
// --variants.
#pragma once

#include "gemv_bench.cuh"

namespace qc::gemv_bench {

void Bench::shape_m1(const Shape& s) {
  Weights w;
  w.alloc(s.n, s.k, 256e6);
  std::printf("\n== %s: K=%d -> N=%d, %.1f MB of weights, %d copies rotated ==\n", s.name, s.k, s.n,
              w.bytes() / 1e6, w.copies);
  const std::vector<Variant> seeds = {{"h", GemvVariant::kH},
                                      {"hl", GemvVariant::kHL},
                                      {"hu", GemvVariant::kHU},
                                      {"hlu4", GemvVariant::kHLU4},
                                      {"h2", GemvVariant::kH2},
                                      {"hl2", GemvVariant::kHL2},
                                      {"sk4", GemvVariant::kSplitK, {}, 4},
                                      {"deq", GemvVariant::kDeq}};
  for (const Variant& v : seeds) {
    if (out_of_time(v.label.c_str())) break;
    results_.push_back(measure(s, v, w, 1, "graph_pdl"));
    print_result("", results_.back());
  }
  for (const Variant& v :
       {Variant{"tile", GemvVariant::kTile, auto_t()}, Variant{"tile_h", GemvVariant::kTileH, auto_t()}})
    for (const char* mode : {"events", "graph", "graph_pdl"}) {
      if (out_of_time(v.label.c_str())) break;
      results_.push_back(measure(s, v, w, 1, mode));
      print_result("", results_.back());
    }
  // The sweep (hl, graph + PDL).
  std::map<int, std::pair<double, TileTuning>> best;  // engine -> (us, schedule)
  for (const TileTuning& t : filtered(sweep_m1(opt_.quick, s.k))) {
    if (out_of_time("sweep")) break;
    Result r = measure(s, tile_variant(t), w, 1, "graph_pdl");
    print_result("sweep ", r);
    if (r.error.empty() && (!best.count(t.engine) || r.us < best[t.engine].first)) best[t.engine] = {r.us, t};
    sweep_.push_back(r);
  }
  // Explicit grid sizes around one and two blocks per SM for the best of engines 2 and 3: is an exactly even
  // split over fewer blocks than SMs (balanced_grid's choice) better than one block on every SM?
  const int sms = prop_.multiProcessorCount;
  for (int engine : {2, 3}) {
    if (!best.count(engine)) continue;
    for (int g : {sms - 4, sms, sms + 4, 2 * sms - 8, 2 * sms}) {
      if (out_of_time("grid")) break;
      TileTuning t = best[engine].second;
      t.grid = g;
      Result r = measure(s, tile_variant(t), w, 1, "graph_pdl");
      print_result("grid ", r);
      sweep_.push_back(r);
      if (r.error.empty() && r.us < best[engine].first) best[engine] = {r.us, t};
    }
  }
  // Each engine's best, also as plain launches and without PDL (the boundary overlap PDL buys).
  for (const auto& [engine, bt] : best) {
    for (const char* mode : {"events", "graph"}) {
      if (out_of_time("best modes")) break;
      Result r = measure(s, tile_variant(bt.second), w, 1, mode);
      print_result("best ", r);
      results_.push_back(r);
    }
    if (!best_us_.count(s.name) || bt.first < best_us_[s.name]) {
      best_us_[s.name] = bt.first;
      best_[s.name] = bt.second;
    }
  }
  w.release();
}

void Bench::gateup_section() {
  const Shape& s = shape_by_name("ffn gate/up");
  Weights w;
  w.alloc(s.n, s.k, 512e6);
  std::printf("\n== fused gate+up (+ quantised output) vs two launches: K=%d -> 2 x N=%d, %d copies ==\n",
              s.k, s.n, w.copies);
  const int L = 16;
  const double bytes = 2.0 * w.bytes();
  auto record = [&](const std::string& label, double t, const std::string& err) {
    Result r{s.name, label, "graph_pdl", s.k, 2 * s.n, 1, 0, 0, 0, err};
    if (t > 0) r = finish(r, t, L, bytes);
    print_result("", r);
    gateup_.push_back(r);
    return r;
  };
  const TileTuning best = best_.count(s.name) ? best_[s.name] : auto_t();
  for (const TileTuning& t : {best, auto_t()}) {
    std::string err;
    const Variant v = tile_variant(t);
    const double tt = graph_time(
        2 * L, [&](int i) { return launch(v, w, i, 1, true); }, err);
    record("2 launches " + v.label, tt, err);
  }
  double best_us = 1e30;
  for (const TileTuning& t : filtered(sweep_gateup())) {
    if (out_of_time("gate+up sweep")) break;
    std::string err;
    const double tt = graph_time(
        L, [&](int i) { return launch_gateup(t, w, i, 1, true); }, err);
    const Result r = record("fused " + tuning_label(t), tt, err);
    if (r.error.empty() && r.us < best_us) {
      best_us = r.us;
      best_gateup_ = t;
    }
  }
  w.release();
}

// Every Q8_0 GEMV of one 27B decode step, distinct weights, in one graph with PDL.
void Bench::token_section(int m, bool main) {
  struct Mat {
    const Shape* s;
    qc::gpu::Q8Weights w;
  };
  std::vector<Mat> mats;
  size_t qtot = 0, dtot = 0;
  std::vector<const Shape*> order;
  for (int l = 0; l < 64; ++l) {
    const bool attn = l % 4 == 3;
    order.push_back(&shape_by_name(attn ? "attn q+gate" : "gdn qkv+z"));
    order.push_back(&shape_by_name("attn/gdn out"));
    order.push_back(&shape_by_name("ffn gate/up"));  // gate
    order.push_back(&shape_by_name("ffn gate/up"));  // up
    order.push_back(&shape_by_name("ffn down"));
  }
  order.push_back(&shape_by_name("lm_head"));
  for (const Shape* s : order) {
    qtot += qc::gpu::q8_split_q_bytes(s->n, s->k);
    dtot += qc::gpu::q8_split_d_count(s->n, s->k);
  }
  int8_t* q = nullptr;
  uint16_t* d = nullptr;
  if (cudaMalloc(&q, qtot) != cudaSuccess || cudaMalloc(&d, dtot * 2) != cudaSuccess) {
    (void)cudaGetLastError();
    std::printf("!! token: could not allocate %.1f GB\n", (qtot + 2.0 * dtot) / 1e9);
    if (q) cudaFree(q);
    return;
  }
  fill(fill_int8, q, qtot, uint64_t{31337});
  fill(fill_scales, d, dtot, uint64_t{4242}, 1e-3f, 2e-2f);
  BENCH_CHECK(cudaDeviceSynchronize());
  size_t qo = 0, dof = 0;
  double bytes = 0;
  for (const Shape* s : order) {
    mats.push_back({s, qc::gpu::Q8Weights{q + qo, d + dof, s->n, s->k, qc::gpu::q8_row_stride(s->k)}});
    qo += qc::gpu::q8_split_q_bytes(s->n, s->k);
    dof += qc::gpu::q8_split_d_count(s->n, s->k);
    bytes += q8_bytes(s->n, s->k);
  }
  std::printf("\n== token, M=%d: %zu Q8_0 matrices, %.2f GB, one graph with PDL ==\n", m, mats.size(),
              bytes / 1e9);

  // tuning(s): schedule for a plain GEMV of shape s; gateup: fused schedule, or engine -1 = two launches.
  auto run = [&](const std::string& label, GemvVariant variant,
                 const std::function<TileTuning(const Shape&)>& tuning, bool fused, const TileTuning& gu) {
    if (out_of_time("token")) return;
    int launches = 0;
    auto body = [&](int) -> GpuStatus {
      launches = 0;
      for (size_t i = 0; i < mats.size(); ++i) {
        const Mat& mt = mats[i];
        const bool gate = std::strcmp(mt.s->name, "ffn gate/up") == 0 && i + 1 < mats.size() &&
                          std::strcmp(mats[i + 1].s->name, "ffn gate/up") == 0;
        if (gate && fused) {
          qc::gpu::GemvQ8GateUpArgs ga;
          ga.gate = mt.w;
          ga.up = mats[i + 1].w;
          ga.x = acts(mt.s->k).in();
          ga.out_q = acts(mt.s->n).out();
          ga.m = m;
          ga.tile = gu;
          ga.pdl = true;
          if (const GpuStatus st = qc::gpu::gemv_q8_gateup(ga, stream_); !st.ok()) return st;
          ++launches;
          ++i;
          continue;
        }
        qc::gpu::GemvQ8Args a;
        a.w = mt.w;
        a.x = acts(mt.s->k).in();
        a.y = y_;
        a.ld_y = mt.s->n;
        a.m = m;
        a.variant = variant;
        a.tile = tuning(*mt.s);
        a.pdl = true;
        if (const GpuStatus st = qc::gpu::gemv_q8(a, stream_); !st.ok()) return st;
        ++launches;
      }
      return GpuStatus::success();
    };
    std::string err;
    const double t = graph_time(1, body, err);
    Result r{"token", label, "graph_pdl", 0, static_cast<int>(mats.size()), m, 0, 0, 0, err};
    if (t > 0) r = finish(r, t, 1, bytes);
    if (r.error.empty())
      std::printf(
          "  token M=%d %-44s %8.3f ms %7.0f GB/s %5.1f%% of the read ceiling, %d launches -> %.0f tok/s "
          "(GEMVs only)\n",
          m, label.c_str(), r.us / 1e3, r.gbs, r.pct, launches, 1e6 / r.us);
    else
      std::printf("  token M=%d %-44s ERROR %s\n", m, label.c_str(), r.error.c_str());
    token_.push_back(r);
  };
  const auto autot = [&](const Shape&) { return auto_t(); };
  run("auto, fused gate+up", GemvVariant::kTile, autot, true, auto_t());
  if (main) {
    run("auto, gate and up separate", GemvVariant::kTile, autot, false, auto_t());
    run("auto tile_h, fused gate+up", GemvVariant::kTileH, autot, true, auto_t());
    const auto bestt = [&](const Shape& s) { return best_.count(s.name) ? best_[s.name] : auto_t(); };
    run("sweep best per shape, fused best", GemvVariant::kTile, bestt, true, best_gateup_);
    run("sweep best per shape, separate", GemvVariant::kTile, bestt, false, auto_t());
    run("seed hu, separate", GemvVariant::kHU, autot, false, auto_t());
  }
  BENCH_CHECK(cudaFree(q));
  BENCH_CHECK(cudaFree(d));
}

void Bench::mscale_section() {
  for (const Shape& s : kShapes) {
    if (out_of_time("M scaling")) break;
    Weights w;
    w.alloc(s.n, s.k, 256e6);
    std::printf("\n== M scaling, %s ==\n", s.name);
    for (int m = 2; m <= 4 && !out_of_time("M scaling"); ++m) {
      std::vector<TileTuning> list = filtered(sweep_mk());
      list.insert(list.begin(), auto_t());
      if (best_.count(s.name)) list.insert(list.begin() + 1, best_[s.name]);
      for (const TileTuning& t : list) {
        if (out_of_time("M scaling")) break;
        Result r = measure(s, tile_variant(t), w, m, "graph_pdl");
        print_result("", r);
        mscale_.push_back(r);
      }
    }
    w.release();
  }
}

// --variants: each named variant at M = 1..4 on every shape (graph + PDL), then one table. The tensor-core
// variants with each ring length and refill instead ("mma/4", "mma/8": TileTuning::unroll, a ring; "mma/b4",
// "mma/b8": refilled a batch at a time, TileTuning::engine 1; "mma/l4", "mma/l8": the batch with lean loads,
// engine 4; gemv_q8_mma.cu; "mma/s2", "mma/s3": 2 or 3 shared-memory stages, TileTuning::engine 2,
// gemv_q8_mma_staged.cu).
void Bench::variants_section() {
  std::vector<Variant> list;
  for (GemvVariant v : opt_.variants) {
    const std::string name = qc::gemv_variant_name(v);
    if (v != GemvVariant::kMma && v != GemvVariant::kMmaH) {
      list.push_back(Variant{name, v, qc::gemv_streaming(v) ? auto_t() : TileTuning{}});
      continue;
    }
    for (int engine : {3, 1, 4})
      for (int ring : {4, 8}) {
        TileTuning t;
        t.unroll = ring;
        t.engine = engine;
        const char* form = engine == 1 ? "/b" : engine == 4 ? "/l" : "/";
        list.push_back(Variant{name + form + std::to_string(ring), v, t});
      }
    for (int stages : {2, 3}) {
      TileTuning t;
      t.engine = 2;
      t.stages = stages;
      list.push_back(Variant{name + "/s" + std::to_string(stages), v, t});
    }
  }
  std::vector<Result> rs;
  for (const Shape& s : kShapes) {
    if (out_of_time("variants")) break;
    Weights w;
    w.alloc(s.n, s.k, 256e6);
    std::printf("\n== %s: K=%d -> N=%d ==\n", s.name, s.k, s.n);
    for (const Variant& var : list)
      for (int m = 1; m <= 4; ++m) {
        rs.push_back(measure(s, var, w, m, "graph_pdl"));
        print_result("", rs.back());
      }
    w.release();
  }
  std::printf(
      "\n==== variants: %% of the read ceiling (%.0f GB/s) at M = 1 / 2 / 3 / 4, and M's time over M = 1's\n",
      ceiling_gbs_);
  for (const Shape& s : kShapes)
    for (const Variant& var : list) {
      const Result* r1 = find(rs, s.name, var.label, "graph_pdl", 1);
      if (!r1) continue;
      std::printf("%-14s %-9s %7.2f us", s.name, var.label.c_str(), r1->us);
      for (int m = 1; m <= 4; ++m) {
        const Result* r = find(rs, s.name, var.label, "graph_pdl", m);
        if (r) std::printf("  M=%d %3.0f%% %.2fx", m, r->pct, r->us / r1->us);
      }
      std::printf("\n");
    }
  mscale_ = rs;
}

}  // namespace qc::gemv_bench
