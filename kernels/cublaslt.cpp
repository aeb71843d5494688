#include "cublaslt.h"

#include <dlfcn.h>

namespace qc::gpu {
namespace {

struct Loaded {
  CublasLtApi api;
  bool ok = false;
  std::string why;
};

template <typename F>
bool resolve(void* lib, const char* name, F& out, std::string& why) {
  out = reinterpret_cast<F>(dlsym(lib, name));
  if (!out && why.empty()) why = std::string("libcublasLt has no symbol ") + name;
  return out != nullptr;
}

Loaded load() {
  Loaded l;
  // The toolkit's soname through the loader's search path first (the ABI these declarations come from),
  // then the toolkit's default install directory, which a runfile install leaves off that path.
  void* lib = nullptr;
  std::string first_error;
  for (const char* name : {"libcublasLt.so.13", "/usr/local/cuda/lib64/libcublasLt.so.13"}) {
    lib = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (lib) break;
    if (first_error.empty())
      if (const char* e = dlerror()) first_error = e;
  }
  if (!lib) {
    const char* e = first_error.empty() ? nullptr : first_error.c_str();
    l.why = std::string("cuBLASLt not found (") + (e ? e : "dlopen failed") +
            "); install the CUDA Toolkit's libcublasLt.so.13 or add its directory to LD_LIBRARY_PATH";
    return l;
  }
  CublasLtApi& a = l.api;
  std::string& w = l.why;
  bool ok = resolve(lib, "cublasLtCreate", a.create, w);
  ok &= resolve(lib, "cublasLtDestroy", a.destroy, w);
  ok &= resolve(lib, "cublasLtGetVersion", a.version, w);
  ok &= resolve(lib, "cublasLtGetStatusString", a.status_string, w);
  ok &= resolve(lib, "cublasLtMatmulDescCreate", a.desc_create, w);
  ok &= resolve(lib, "cublasLtMatmulDescDestroy", a.desc_destroy, w);
  ok &= resolve(lib, "cublasLtMatmulDescSetAttribute", a.desc_set, w);
  ok &= resolve(lib, "cublasLtMatrixLayoutCreate", a.layout_create, w);
  ok &= resolve(lib, "cublasLtMatrixLayoutDestroy", a.layout_destroy, w);
  ok &= resolve(lib, "cublasLtMatmulPreferenceCreate", a.pref_create, w);
  ok &= resolve(lib, "cublasLtMatmulPreferenceDestroy", a.pref_destroy, w);
  ok &= resolve(lib, "cublasLtMatmulPreferenceSetAttribute", a.pref_set, w);
  ok &= resolve(lib, "cublasLtMatmulAlgoGetHeuristic", a.heuristic, w);
  ok &= resolve(lib, "cublasLtMatmulAlgoConfigSetAttribute", a.algo_set, w);
  ok &= resolve(lib, "cublasLtMatmulAlgoConfigGetAttribute", a.algo_get, w);
  ok &= resolve(lib, "cublasLtMatmulAlgoCheck", a.algo_check, w);
  ok &= resolve(lib, "cublasLtMatmul", a.matmul, w);
  if (ok && a.version() / 10000 < CUBLAS_VER_MAJOR) {
    ok = false;
    w = "cuBLASLt " + std::to_string(a.version()) + " is older than the headers it was built with (" +
        std::to_string(CUBLAS_VER_MAJOR) + ".x)";
  }
  l.ok = ok;
  return l;
}

}  // namespace

const CublasLtApi* cublaslt(std::string* why) {
  static const Loaded loaded = load();
  if (why) *why = loaded.why;
  return loaded.ok ? &loaded.api : nullptr;
}

}  // namespace qc::gpu
