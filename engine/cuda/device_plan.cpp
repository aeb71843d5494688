#include "cuda/device_plan.h"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdio>

#include "cublaslt.h"
#include "model/cuda_weight_types.h"

namespace qc::cuda {

Result<DevicePlan> plan_on_device(const ModelConfig& config, const ModelWeights& weights, bool have_data,
                                  const CudaBackendOptions& options) {
  // The weight types first: a type no kernel reads can never run here, whatever the device (say so, not
  // "no device" or "does not fit").
  QC_TRY(check_cuda_weight_types(weights));
  int n_dev = 0;
  const cudaError_t de = cudaGetDeviceCount(&n_dev);
  if (de != cudaSuccess || n_dev == 0) {
    const std::string why = de != cudaSuccess
                                ? std::string(cudaGetErrorName(de)) + ": " + cudaGetErrorString(de)
                                : "the CUDA runtime reports 0 devices";
    (void)cudaGetLastError();
    return make_error("no CUDA device: " + why, "choose the CPU backend");
  }
  if (options.device < 0 || options.device >= n_dev)
    return make_error("CUDA device " + std::to_string(options.device) + " does not exist (" +
                      std::to_string(n_dev) + " found)");
  if (options.n_ctx < 1)
    return make_error("CUDA backend: n_ctx must be positive, got " + std::to_string(options.n_ctx));
  if (options.prefill_rows < 0 || options.prefill_rows > gpu::kMaxRows)
    return make_error("CUDA backend: prefill_rows must be in [0, " + std::to_string(gpu::kMaxRows) +
                      "], got " + std::to_string(options.prefill_rows));
  if (options.attention_rows != 0 && options.attention_rows != 64 && options.attention_rows != 128)
    return make_error("CUDA backend: attention_rows must be 0 (default), 64 or 128, got " +
                      std::to_string(options.attention_rows));
  if (options.attention_kv_ahead != 0 && options.attention_kv_ahead != 1 && options.attention_kv_ahead != 4)
    return make_error("CUDA backend: attention_kv_ahead must be 0 (default), 1 or 4, got " +
                      std::to_string(options.attention_kv_ahead));
  QC_CU(cudaSetDevice(options.device));
  cudaDeviceProp prop{};
  QC_CU(cudaGetDeviceProperties(&prop, options.device));
  DevicePlan d;
  d.device_name = prop.name;
  MemoryPlanRequest& req = d.req;
  req.config = &config;
  req.weights = &weights;
  req.have_data = have_data;
  req.n_ctx = options.n_ctx;
  req.sm_count = prop.multiProcessorCount;
  req.prefill_rows = options.prefill_rows;
  req.prefill_gemm = options.prefill_gemm;
  req.prefill_weights = options.prefill_weights;
  req.gdn_scan = options.gdn_scan;
  if (std::min(options.prefill_rows, options.n_ctx) > 0 && options.prefill_gemm != PrefillGemm::kInt8)
    req.cublaslt = gpu::cublaslt(&req.cublaslt_why) != nullptr;
  size_t free_b = 0, total_b = 0;
  QC_CU(cudaMemGetInfo(&free_b, &total_b));
  d.total = total_b;
  d.limited = options.memory_limit != 0;
  req.avail = options.memory_limit ? std::min<uint64_t>(options.memory_limit, free_b) : free_b;
  req.card = options.memory_limit ? std::min<uint64_t>(options.memory_limit, total_b) : total_b;
  QC_ASSIGN(d.plan, plan_memory(req));
  if (!d.plan.fits) {
    QC_ASSIGN(d.fit_ctx, largest_fitting_context(req));
    if (d.fit_ctx >= 512) d.fit_ctx = d.fit_ctx / 256 * 256;
  }
  return d;
}

Error DevicePlan::does_not_fit() const {
  char buf[400];
  std::snprintf(buf, sizeof buf, "%.2f GiB are free on %.200s%s (%.2f GiB total; %.2f GiB kept for the runtime)",
                gib(req.avail), device_name.c_str(), limited ? " under the memory limit" : "",
                gib(total), gib(kMemoryReserve));
  const std::string hint = fit_ctx > 0 ? "a context of up to " + std::to_string(fit_ctx) + " tokens fits (--ctx " +
                                             std::to_string(fit_ctx) +
                                             "); or close other programs using the GPU, or use a smaller model"
                                       : "the weights alone do not fit: use a smaller model or a smaller "
                                         "quantisation (Q4_K_M), or the CPU backend";
  return make_error("the model does not fit in GPU memory: it needs " + plan.mem.describe() + " but " + buf, hint);
}

}  // namespace qc::cuda
