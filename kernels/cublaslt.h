// cuBLASLt, loaded at run time.
//
// Why dlopen instead of linking: the programs link the CUDA runtime statically so that they need only the
// NVIDIA driver (CMakeLists.txt), and the Debian packages depend on Debian libraries only; the toolkit has
// no static cuBLASLt and no Debian package provides libcublasLt.so.13. So cuBLASLt is an accelerator that
// is used where the toolkit's library is installed (the prefill GEMM, gemm_f16.h) and not a dependency:
// without it the prompt path stays on gemm_q8 and says why (load notes).
//
// Only the few entry points gemm_f16 uses are resolved, with the toolkit header's own types.
#pragma once

#include <cublasLt.h>

#include <string>

namespace qc::gpu {

struct CublasLtApi {
  decltype(&cublasLtCreate) create = nullptr;
  decltype(&cublasLtDestroy) destroy = nullptr;
  decltype(&cublasLtGetVersion) version = nullptr;
  decltype(&cublasLtGetStatusString) status_string = nullptr;
  decltype(&cublasLtMatmulDescCreate) desc_create = nullptr;
  decltype(&cublasLtMatmulDescDestroy) desc_destroy = nullptr;
  decltype(&cublasLtMatmulDescSetAttribute) desc_set = nullptr;
  decltype(&cublasLtMatrixLayoutCreate) layout_create = nullptr;
  decltype(&cublasLtMatrixLayoutDestroy) layout_destroy = nullptr;
  decltype(&cublasLtMatmulPreferenceCreate) pref_create = nullptr;
  decltype(&cublasLtMatmulPreferenceDestroy) pref_destroy = nullptr;
  decltype(&cublasLtMatmulPreferenceSetAttribute) pref_set = nullptr;
  decltype(&cublasLtMatmulAlgoGetHeuristic) heuristic = nullptr;
  decltype(&cublasLtMatmulAlgoConfigSetAttribute) algo_set = nullptr;
  decltype(&cublasLtMatmulAlgoConfigGetAttribute) algo_get = nullptr;
  decltype(&cublasLtMatmulAlgoCheck) algo_check = nullptr;
  decltype(&cublasLtMatmul) matmul = nullptr;
};

// The library's entry points, resolved once (thread-safe); null when libcublasLt.so.13 (or .so) cannot be
// loaded or lacks one of them, with the reason in *why (when given). The library stays loaded until exit.
const CublasLtApi* cublaslt(std::string* why = nullptr);

}  // namespace qc::gpu
