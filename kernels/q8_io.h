// The operands every Q8_0-weights x int8-activations kernel takes the same way (gemm_q8.cu's Params, the
// mma GEMV's MmaParams, gemv_q8/gemv_q8_mma_step.cuh): one fill from the launch arguments, so the two
// families cannot drift in what they read. A template over the parameter struct, not a shared base struct:
// each kernel keeps its own flat struct (a base struct was measured to change nvcc's register allocation of
// unchanged kernels, 2026-12-06; persistent_launch.cuh).
#pragma once

namespace qc::gpu::detail {

// Args: GemmQ8Args or GemvQ8Args (w, x, m, y, ld_y, residual, ld_residual); Params: a struct with the
// fields below.
template <class Params, class Args>
void fill_q8_io(const Args& a, Params& p) {
  p.wq = a.w.q;
  p.wd = a.w.d;
  p.n = a.w.rows;
  p.k = a.w.cols;
  p.w_stride = a.w.row_stride;
  p.xh = a.x.hi;
  p.xl = a.x.lo;  // null for format h
  p.xs = a.x.scale;
  p.ld_x = a.x.ld;
  p.ld_s = a.x.ld_scale;
  p.m = a.m;
  p.y = a.y;
  p.ld_y = a.ld_y;
  p.res = a.residual;  // may alias y
  p.ld_res = a.ld_residual;
}

}  // namespace qc::gpu::detail
