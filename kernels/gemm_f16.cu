// gemm_f16 (gemm_f16.h): Q8_0 -> f16 dequantisation, f32 -> f16 activations, and the cuBLASLt GEMM.
#include "gemm_f16.h"

#include <cuda_fp16.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

#include "common.cuh"
#include "cublaslt.h"

namespace qc::gpu {
namespace {

constexpr int kThreads = 256;

int grid_for(size_t items) {
  const size_t blocks = (items + kThreads - 1) / kThreads;
  return static_cast<int>(std::min<size_t>(std::max<size_t>(blocks, 1), 65535u * 4u));
}

__device__ __forceinline__ uint32_t pack_f16(float a, float b) {
  return static_cast<uint32_t>(__half_as_ushort(__float2half_rn(a))) |
         (static_cast<uint32_t>(__half_as_ushort(__float2half_rn(b))) << 16);
}


// 8 elements per thread: two float4 loads, one 16-byte store.
__global__ void rows_to_f16_kernel(const float* __restrict__ x, int ld_x, int m, int k, float scale,
                                   uint16_t* __restrict__ out, int ld_out) {
  const int per_row = k / 8;
  const size_t total = static_cast<size_t>(m) * per_row;
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    const size_t row = i / per_row, c = (i % per_row) * 8;
    const float4* src = reinterpret_cast<const float4*>(x + row * ld_x + c);
    const float4 a = src[0], b = src[1];
    uint4 o;
    o.x = pack_f16(saturate_f16(a.x * scale), saturate_f16(a.y * scale));
    o.y = pack_f16(saturate_f16(a.z * scale), saturate_f16(a.w * scale));
    o.z = pack_f16(saturate_f16(b.x * scale), saturate_f16(b.y * scale));
    o.w = pack_f16(saturate_f16(b.z * scale), saturate_f16(b.w * scale));
    *reinterpret_cast<uint4*>(out + row * ld_out + c) = o;
  }
}

// 8 weights per thread: one 8-byte load of q, the block's scale, one 16-byte store. q * d is exact in f32.
__global__ void dequant_q8_f16_kernel(const int8_t* __restrict__ q, const uint16_t* __restrict__ d, int k,
                                      int stride, int rows, uint16_t* __restrict__ out, int ld_out) {
  const int per_row = k / 8, kb = k / kQBlock;
  const size_t total = static_cast<size_t>(rows) * per_row;
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    const size_t row = i / per_row;
    const int c = static_cast<int>(i % per_row) * 8;
    const uint2 v = __ldg(reinterpret_cast<const uint2*>(q + row * stride + c));
    const float s = h2f(__ldg(d + row * kb + c / kQBlock));
    const int8_t* b = reinterpret_cast<const int8_t*>(&v);
    uint4 o;
    o.x = pack_f16(static_cast<float>(b[0]) * s, static_cast<float>(b[1]) * s);
    o.y = pack_f16(static_cast<float>(b[2]) * s, static_cast<float>(b[3]) * s);
    o.z = pack_f16(static_cast<float>(b[4]) * s, static_cast<float>(b[5]) * s);
    o.w = pack_f16(static_cast<float>(b[6]) * s, static_cast<float>(b[7]) * s);
    *reinterpret_cast<uint4*>(out + row * ld_out + c) = o;
  }
}

// The largest power of two (<= 256) dividing an address: cuBLASLt's heuristic needs the alignment the
// calls will have.
uint32_t alignment(const void* p) {
  const uintptr_t a = reinterpret_cast<uintptr_t>(p);
  uint32_t al = 256;
  while (al > 1 && a % al) al /= 2;
  return al;
}

}  // namespace

GpuStatus rows_to_f16(const float* x, int ld_x, int m, int k, int shift, uint16_t* out, int ld_out,
                      cudaStream_t stream) {
  QC_GPU_REQUIRE(x && out, "rows_to_f16: null pointer");
  QC_GPU_REQUIRE(m >= 1 && k >= 8 && k % 8 == 0, "rows_to_f16: expected M >= 1 and K a positive multiple of 8, got M " +
                                                     std::to_string(m) + ", K " + std::to_string(k));
  QC_GPU_REQUIRE(ld_x >= k && ld_x % 4 == 0 && ld_out >= k && ld_out % 8 == 0,
                 "rows_to_f16: ld_x (" + std::to_string(ld_x) + ") must be >= K and a multiple of 4, ld_out (" +
                     std::to_string(ld_out) + ") >= K and a multiple of 8");
  QC_GPU_REQUIRE(aligned16(x) && aligned16(out), "rows_to_f16: x and out must be 16-byte aligned");
  QC_GPU_REQUIRE(shift >= -24 && shift <= 24, "rows_to_f16: shift must be in [-24, 24], got " + std::to_string(shift));
  const size_t items = static_cast<size_t>(m) * (k / 8);
  rows_to_f16_kernel<<<grid_for(items), kThreads, 0, stream>>>(x, ld_x, m, k, std::ldexp(1.0f, -shift), out, ld_out);
  QC_CUDA_CHECK(cudaGetLastError());
  return GpuStatus::success();
}

GpuStatus dequant_q8_f16(const Q8Weights& w, int row0, int rows, uint16_t* out, int ld_out, cudaStream_t stream) {
  QC_GPU_REQUIRE(w.q && w.d && out, "dequant_q8_f16: null pointer");
  QC_GPU_REQUIRE(w.cols > 0 && w.cols % kQBlock == 0 && w.row_stride >= w.cols && w.row_stride % 16 == 0,
                 "dequant_q8_f16: expected K a positive multiple of 32 and a row stride >= K, multiple of 16; got K " +
                     std::to_string(w.cols) + ", stride " + std::to_string(w.row_stride));
  QC_GPU_REQUIRE(row0 >= 0 && rows >= 1 && row0 + rows <= w.rows,
                 "dequant_q8_f16: rows [" + std::to_string(row0) + ", " + std::to_string(row0 + rows) +
                     ") outside the matrix's " + std::to_string(w.rows));
  QC_GPU_REQUIRE(ld_out >= w.cols && ld_out % 8 == 0 && aligned16(out),
                 "dequant_q8_f16: ld_out must be >= K and a multiple of 8, out 16-byte aligned");
  const int8_t* q = w.q + static_cast<size_t>(row0) * w.row_stride;
  const uint16_t* d = w.d + static_cast<size_t>(row0) * (w.cols / kQBlock);
  const size_t items = static_cast<size_t>(rows) * (w.cols / 8);
  dequant_q8_f16_kernel<<<grid_for(items), kThreads, 0, stream>>>(q, d, w.cols, w.row_stride, rows, out, ld_out);
  QC_CUDA_CHECK(cudaGetLastError());
  return GpuStatus::success();
}

// ---- cuBLASLt ----
struct GemmF16::Impl {
  const CublasLtApi* api = nullptr;
  cublasLtHandle_t handle = nullptr;
  cublasLtMatmulDesc_t desc = nullptr;
  void* workspace = nullptr;
  int plan_rows = 0;
  // (n, k, ld_w, ld_x, ld_y, ld_residual or -1, alignments of w, x, y) -> algorithm
  using Key = std::tuple<int, int, int, int, int, int, uint32_t, uint32_t, uint32_t>;
  std::map<Key, cublasLtMatmulAlgo_t> plans;

  std::string lt_error(const char* what, cublasStatus_t st) const {
    return std::string("cuBLASLt ") + what + " failed: " + api->status_string(st) + " (" +
           std::to_string(static_cast<int>(st)) + ")";
  }

  // Layouts of one call (column-major view: D[N][M] = W^T[N][K] x X[K][M]); destroyed with the object.
  struct Layouts {
    const CublasLtApi* api;
    cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr, d = nullptr;
    ~Layouts() {
      for (cublasLtMatrixLayout_t l : {a, b, c, d})
        if (l) api->layout_destroy(l);
    }
  };
  GpuStatus make_layouts(const GemmF16Args& g, int m, Layouts& l) const {
    cublasStatus_t st = api->layout_create(&l.a, CUDA_R_16F, g.k, g.n, g.ld_w);
    if (st == CUBLAS_STATUS_SUCCESS) st = api->layout_create(&l.b, CUDA_R_16F, g.k, m, g.ld_x);
    if (st == CUBLAS_STATUS_SUCCESS)
      st = api->layout_create(&l.c, CUDA_R_32F, g.n, m, g.residual ? g.ld_residual : g.ld_y);
    if (st == CUBLAS_STATUS_SUCCESS) st = api->layout_create(&l.d, CUDA_R_32F, g.n, m, g.ld_y);
    if (st != CUBLAS_STATUS_SUCCESS) return GpuStatus::invalid(lt_error("matrix layout", st));
    return GpuStatus::success();
  }

  Key key(const GemmF16Args& g) const {
    return Key{g.n, g.k, g.ld_w, g.ld_x, g.ld_y, g.residual ? g.ld_residual : -1, alignment(g.w),
               alignment(g.x), std::min(alignment(g.y), g.residual ? alignment(g.residual) : 256u)};
  }

  GpuStatus plan(const GemmF16Args& g, const cublasLtMatmulAlgo_t** out) {
    const Key k = key(g);
    auto it = plans.find(k);
    if (it != plans.end()) {
      *out = &it->second;
      return GpuStatus::success();
    }
    Layouts l{api};
    QC_GPU_TRY(make_layouts(g, plan_rows, l));
    cublasLtMatmulPreference_t pref = nullptr;
    cublasStatus_t st = api->pref_create(&pref);
    if (st != CUBLAS_STATUS_SUCCESS) return GpuStatus::invalid(lt_error("preference", st));
    const uint64_t ws = kWorkspaceBytes;
    const uint32_t no_reduction = CUBLASLT_REDUCTION_SCHEME_NONE;
    const uint32_t al_w = std::get<6>(k), al_x = std::get<7>(k), al_y = std::get<8>(k);
    api->pref_set(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof(ws));
    api->pref_set(pref, CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK, &no_reduction, sizeof(no_reduction));
    api->pref_set(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, &al_w, sizeof(al_w));
    api->pref_set(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, &al_x, sizeof(al_x));
    api->pref_set(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, &al_y, sizeof(al_y));
    api->pref_set(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, &al_y, sizeof(al_y));
    cublasLtMatmulHeuristicResult_t res[8] = {};
    int found = 0;
    st = api->heuristic(handle, desc, l.a, l.b, l.c, l.d, pref, 8, res, &found);
    api->pref_destroy(pref);
    if (st != CUBLAS_STATUS_SUCCESS || found == 0)
      return GpuStatus::invalid(lt_error("heuristic", st == CUBLAS_STATUS_SUCCESS ? CUBLAS_STATUS_NOT_SUPPORTED : st) +
                                " for N " + std::to_string(g.n) + ", K " + std::to_string(g.k));
    // The first valid result; split-K is pinned to 1 in case a result carries a split (the mask should
    // already exclude them): a split would tie a row's bits to the number of K slices.
    for (int i = 0; i < found; ++i) {
      if (res[i].state != CUBLAS_STATUS_SUCCESS) continue;
      cublasLtMatmulAlgo_t algo = res[i].algo;
      int32_t split = 1;
      size_t written = 0;
      api->algo_get(&algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, &split, sizeof(split), &written);
      if (written == sizeof(split) && split > 1) continue;
      *out = &plans.emplace(k, algo).first->second;
      return GpuStatus::success();
    }
    return GpuStatus::invalid("cuBLASLt heuristic: no algorithm without split-K for N " + std::to_string(g.n) +
                              ", K " + std::to_string(g.k));
  }
};

GemmF16::GemmF16(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

GemmF16::~GemmF16() {
  if (impl_ && impl_->api) {
    if (impl_->desc) impl_->api->desc_destroy(impl_->desc);
    if (impl_->handle) impl_->api->destroy(impl_->handle);
  }
}

std::unique_ptr<GemmF16> GemmF16::create(int plan_rows, void* workspace, std::string* why) {
  std::string reason;
  const CublasLtApi* api = cublaslt(&reason);
  auto fail = [&](std::string w) -> std::unique_ptr<GemmF16> {
    if (why) *why = std::move(w);
    return nullptr;
  };
  if (!api) return fail(reason);
  if (plan_rows < 1 || plan_rows > kGemmF16MaxRows)
    return fail("gemm_f16: plan rows must be in 1.." + std::to_string(kGemmF16MaxRows) + ", got " +
                std::to_string(plan_rows));
  if (!workspace) return fail("gemm_f16: no workspace");
  auto impl = std::make_unique<Impl>();
  impl->api = api;
  impl->workspace = workspace;
  impl->plan_rows = plan_rows;
  cublasStatus_t st = api->create(&impl->handle);
  if (st != CUBLAS_STATUS_SUCCESS) return fail(impl->lt_error("create", st));
  std::unique_ptr<GemmF16> g(new GemmF16(std::move(impl)));  // owns the handle from here
  Impl& I = *g->impl_;
  st = api->desc_create(&I.desc, CUBLAS_COMPUTE_32F, CUDA_R_32F);
  if (st != CUBLAS_STATUS_SUCCESS) return fail(I.lt_error("matmul descriptor", st));
  const cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
  api->desc_set(I.desc, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof(ta));
  api->desc_set(I.desc, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof(tb));
  return g;
}

namespace {
GpuStatus check_args(const GemmF16Args& a) {
  QC_GPU_REQUIRE(a.w && a.x && a.y, "gemm_f16: null pointer");
  QC_GPU_REQUIRE(a.n >= 1 && a.k >= 8 && a.k % 8 == 0,
                 "gemm_f16: expected N >= 1 and K a positive multiple of 8, got N " + std::to_string(a.n) + ", K " +
                     std::to_string(a.k));
  QC_GPU_REQUIRE(a.m >= 1 && a.m <= kGemmF16MaxRows,
                 "gemm_f16: M must be in 1.." + std::to_string(kGemmF16MaxRows) + ", got " + std::to_string(a.m));
  QC_GPU_REQUIRE(a.ld_w >= a.k && a.ld_x >= a.k && a.ld_y >= a.n && (!a.residual || a.ld_residual >= a.n),
                 "gemm_f16: a leading dimension is smaller than its row");
  QC_GPU_REQUIRE(!a.residual || a.residual != a.y || a.ld_residual == a.ld_y,
                 "gemm_f16: a residual that aliases y needs the same leading dimension");
  return GpuStatus::success();
}
}  // namespace

GpuStatus GemmF16::run(const GemmF16Args& a, cudaStream_t stream) {
  QC_GPU_TRY(check_args(a));
  Impl& I = *impl_;
  const cublasLtMatmulAlgo_t* algo = nullptr;
  QC_GPU_TRY(I.plan(a, &algo));
  Impl::Layouts l{I.api};
  QC_GPU_TRY(I.make_layouts(a, a.m, l));
  const float beta = a.residual ? 1.0f : 0.0f;
  const float* c = a.residual ? a.residual : a.y;
  const cublasStatus_t st = I.api->matmul(I.handle, I.desc, &a.alpha, a.w, l.a, a.x, l.b, &beta, c, l.c, a.y, l.d,
                                          algo, I.workspace, kWorkspaceBytes, stream);
  if (st != CUBLAS_STATUS_SUCCESS)
    return GpuStatus::invalid(I.lt_error("matmul", st) + " (N " + std::to_string(a.n) + ", K " + std::to_string(a.k) +
                              ", M " + std::to_string(a.m) + ")");
  return GpuStatus::success();
}

std::string GemmF16::describe(const GemmF16Args& a) {
  Impl& I = *impl_;
  const cublasLtMatmulAlgo_t* algo = nullptr;
  const GpuStatus st = I.plan(a, &algo);
  if (!st.ok()) return st.describe();
  std::string out;
  const std::pair<cublasLtMatmulAlgoConfigAttributes_t, const char*> attrs[] = {
      {CUBLASLT_ALGO_CONFIG_ID, "algo"},          {CUBLASLT_ALGO_CONFIG_TILE_ID, "tile"},
      {CUBLASLT_ALGO_CONFIG_STAGES_ID, "stages"}, {CUBLASLT_ALGO_CONFIG_SPLITK_NUM, "splitk"},
      {CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID, "cluster"}};
  for (const auto& [attr, name] : attrs) {
    size_t size = 0;  // the attribute's size first (a size query), then its value into a zeroed word
    if (I.api->algo_get(algo, attr, nullptr, 0, &size) != CUBLAS_STATUS_SUCCESS || size == 0 || size > 8) continue;
    uint64_t v = 0;
    size_t written = 0;
    if (I.api->algo_get(algo, attr, &v, size, &written) != CUBLAS_STATUS_SUCCESS) continue;
    if (!out.empty()) out += ' ';
    out += std::string(name) + " " + std::to_string(v);
  }
  return out + " (picked for " + std::to_string(I.plan_rows) + " rows)";
}

}  // namespace qc::gpu
