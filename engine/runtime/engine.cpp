#include "runtime/engine.h"

#include <algorithm>

#include "gguf/reader.h"
#include "model/config.h"
#include "model/model.h"
#include "reference/reference_backend.h"
#ifdef QWENCHAT_HAVE_CUDA_BACKEND
#include "cuda/make_cuda_backend.h"
#endif

namespace qc {

const char* backend_kind_name(BackendKind k) {
  switch (k) {
    case BackendKind::kCpu: return "cpu";
    case BackendKind::kCpuF64: return "cpu-f64";
    case BackendKind::kCuda: return "cuda";
  }
  return "?";
}

Result<BackendKind> parse_backend_kind(const std::string& s) {
  if (s == "cpu") return BackendKind::kCpu;
  if (s == "cpu-f64") return BackendKind::kCpuF64;
  if (s == "cuda") return BackendKind::kCuda;
  return make_error("unknown backend \"" + s + "\": expected cpu, cpu-f64 or cuda");
}

bool cuda_backend_compiled() {
#ifdef QWENCHAT_HAVE_CUDA_BACKEND
  return true;
#else
  return false;
#endif
}

Result<LoadEstimate> estimate_load(const EngineOptions& options) {
  QC_ASSIGN(std::unique_ptr<gguf::File> file, gguf::File::open(options.model_path));
  QC_ASSIGN(ModelConfig c, read_config(*file));
  // The vocabulary size comes from the embedding table, as Model::from_file takes it.
  if (const gguf::TensorInfo* embd = file->find_tensor("token_embd.weight");
      embd != nullptr && embd->ne[1] > 0 && embd->ne[1] <= (1u << 30)) {
    c.n_vocab = static_cast<int>(embd->ne[1]);
  }
  LoadEstimate e;
  e.file_bytes = file->file_size();
  e.n_ctx_train = c.n_ctx_train;
  e.n_ctx = options.n_ctx > 0 ? options.n_ctx : 1;
  if (c.n_ctx_train > 0) e.n_ctx = std::min(e.n_ctx, c.n_ctx_train);
  ReferenceOptions o;
  o.precision = options.backend == BackendKind::kCpuF64 ? RefPrecision::kDouble : RefPrecision::kFloat;
  o.n_ctx = e.n_ctx;
  e.state_bytes = reference_state_bytes(c, o);
  e.architecture = c.architecture;
  if (options.backend == BackendKind::kCuda) {
#ifdef QWENCHAT_HAVE_CUDA_BACKEND
    // The weights' views need the model's tensor table (a memory map, nothing read); the plan queries the
    // device and allocates nothing.
    CudaLoadOptions co;
    co.n_ctx = e.n_ctx;
    co.kernels = options.kernels;
    co.memory_limit = options.gpu_memory_limit;
    auto model = Model::from_file(std::move(file));
    Result<CudaLoadEstimate> d = model.ok() ? estimate_cuda_load((*model)->config(), (*model)->weights(), co)
                                            : Result<CudaLoadEstimate>(model.error());
    if (d.ok()) {
      e.device = d->device;
      e.device_bytes = d->needs;
      e.device_avail = d->avail;
      e.device_fits = d->fits;
      e.device_fit_ctx = d->fit_ctx;
    } else {
      e.device_error = d.error().message;
    }
#else
    e.device_error = "the CUDA backend is not available in this build";
#endif
  }
  return e;
}

Result<std::unique_ptr<Backend>> make_backend(BackendKind kind, const Model& model, const EngineOptions& options) {
  const ModelConfig& c = model.config();
  int n_ctx = options.n_ctx;
  if (n_ctx <= 0) return make_error("context length must be positive, got " + std::to_string(n_ctx));
  if (c.n_ctx_train > 0) n_ctx = std::min(n_ctx, c.n_ctx_train);
  switch (kind) {
    case BackendKind::kCpu:
    case BackendKind::kCpuF64: {
      ReferenceOptions o;
      o.precision = kind == BackendKind::kCpu ? RefPrecision::kFloat : RefPrecision::kDouble;
      o.n_threads = options.n_threads;
      o.n_ctx = n_ctx;
      QC_ASSIGN(std::unique_ptr<Backend> b, make_reference_backend(c, model.weights(), o));
      QC_TRY(b->set_kernel_config(options.kernels));  // of it the CPU takes the probes
      return b;
    }
    case BackendKind::kCuda: {
#ifdef QWENCHAT_HAVE_CUDA_BACKEND
      CudaLoadOptions o;
      o.n_ctx = n_ctx;
      o.kernels = options.kernels;
      o.memory_limit = options.gpu_memory_limit;
      o.progress = options.load_progress;
      return make_cuda_backend(c, model.weights(), o);
#else
      return make_error("the CUDA backend is not available in this build", "rebuild with nvcc installed");
#endif
    }
  }
  return make_error("unknown backend kind");
}

Result<std::unique_ptr<Engine>> Engine::open(const EngineOptions& options) {
  std::unique_ptr<Engine> e(new Engine());
  e->options_ = options;
  QC_ASSIGN(e->model_, Model::load(options.model_path));
  auto tok = load_tokenizer(e->model_->file());
  if (!tok.ok()) return make_error(tok.error().message, tok.error().hint);
  e->tokenizer_ = std::move(tok).value();
  if (e->tokenizer_->n_vocab() > e->model_->config().n_vocab) {
    return make_error(options.model_path + ": the tokenizer has " + std::to_string(e->tokenizer_->n_vocab()) +
                      " tokens but token_embd has only " + std::to_string(e->model_->config().n_vocab) + " rows");
  }
  QC_ASSIGN(e->backend_, make_backend(options.backend, *e->model_, options));
  return e;
}

Status Engine::switch_backend(BackendKind kind) {
  EngineOptions o = options_;
  o.backend = kind;
  QC_ASSIGN(auto b, make_backend(kind, *model_, o));
  backend_ = std::move(b);
  options_ = o;
  return {};
}

}  // namespace qc
