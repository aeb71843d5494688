// The engine as the worker and the tools use it: one loaded model with its tokenizer and a backend to run
// it on. An object, not a global: the GUI's worker owns one and can replace it at run time. Internal (it
// hands out Model, Tokenizer and Backend); the app talks to the worker (qwenchat/worker.h) instead.
#pragma once

#include <memory>

#include "generate/backend.h"
#include "model/model.h"
#include "qwenchat/engine.h"
#include "qwenchat/result.h"
#include "tokenizer/tokenizer.h"

namespace qc {

class Engine {
 public:
  // Loads the model file and its tokenizer and builds the backend. Errors say which step failed.
  static Result<std::unique_ptr<Engine>> open(const EngineOptions& options);

  const EngineOptions& options() const { return options_; }
  const Model& model() const { return *model_; }
  const Tokenizer& tokenizer() const { return *tokenizer_; }
  Backend& backend() { return *backend_; }
  const Backend& backend() const { return *backend_; }

  // Replaces the backend (e.g. CPU <-> CUDA) keeping the model; the context is emptied.
  Status switch_backend(BackendKind kind);

 private:
  Engine() = default;
  EngineOptions options_;
  std::unique_ptr<Model> model_;
  std::unique_ptr<Tokenizer> tokenizer_;
  std::unique_ptr<Backend> backend_;
};

// Builds a backend of the given kind for a loaded model (the model must outlive it).
Result<std::unique_ptr<Backend>> make_backend(BackendKind kind, const Model& model, const EngineOptions& options);

}  // namespace qc
