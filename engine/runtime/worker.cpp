#include "qwenchat/worker.h"

#include <exception>
#include <filesystem>

#include "remote/openai_remote.h"
#include "runtime/model_facts.h"
#include "runtime/prefix_cache.h"
#include "runtime/worker_generate.h"

namespace qc {

// Owned by the worker thread alone.
struct Worker::State {
  std::unique_ptr<Engine> engine;
  std::optional<RemoteModel> remote;  // set instead of `engine` when an endpoint runs the model
  EngineSettings settings;  // settings.kernels = the kernel config in use (set_kernel_config included)
  // Kept states of engine's backend. Declared after it, so destroyed first (CUDA snapshots are device
  // memory of that backend); emptied whenever the backend or its kernels change.
  PrefixCache cache{0};

  void drop_cache() { cache.clear(); }
  void new_cache(const EngineSettings& s) {
    cache.clear();
    cache = PrefixCache(static_cast<uint64_t>(s.state_cache_mb) << 20);
  }
};

namespace {

template <class... F>
struct Overloaded : F... {
  using F::operator()...;
};
template <class... F>
Overloaded(F...) -> Overloaded<F...>;

// Checks the cheap things first so the common mistakes get a plain message (Engine::open would also
// fail, with the reader's wording).
Status check_model_path(const std::string& path) {
  if (path.empty()) return make_error("no model file given", "type the path of a .gguf file");
  std::error_code ec;
  const auto st = std::filesystem::status(path, ec);
  if (ec || !std::filesystem::exists(st)) return make_error(path + ": no such file");
  if (std::filesystem::is_directory(st)) return make_error(path + ": is a directory, expected a .gguf file");
  if (!std::filesystem::is_regular_file(st)) return make_error(path + ": not a regular file, expected a .gguf file");
  return {};
}

bool same_except_probes(KernelConfig a, const KernelConfig& b) {
  a.probes = b.probes;
  return a == b;
}

}  // namespace

Worker::Worker(WorkerOptions options) : options_(std::move(options)), thread_([this] { run(); }) {}

Worker::~Worker() {
  {
    std::lock_guard<std::mutex> lock(queue_mutex_);
    quit_ = true;
    queue_.clear();
    stop_before_.store(next_seq_, std::memory_order_release);
  }
  queue_cv_.notify_all();
  thread_.join();
}

void Worker::post(WorkerCommand command) {
  if (const auto* k = std::get_if<SetKernelConfigCommand>(&command)) {
    // Also queued (it applies before the next command when no reply runs), but a reply in progress
    // picks it up at its next token boundary.
    std::lock_guard<std::mutex> lock(kernels_mutex_);
    pending_kernels_ = k->kernels;
    kernels_pending_.store(true, std::memory_order_release);
  }
  {
    std::lock_guard<std::mutex> lock(queue_mutex_);
    queue_.push_back({next_seq_++, std::move(command)});
  }
  queue_cv_.notify_one();
}

void Worker::stop() {
  std::lock_guard<std::mutex> lock(queue_mutex_);
  stop_before_.store(next_seq_, std::memory_order_release);
}

void Worker::cancel(uint64_t generation_id) {
  std::lock_guard<std::mutex> lock(queue_mutex_);
  bool known = running_generation_ == generation_id;
  for (const Queued& q : queue_) {
    if (const auto* g = std::get_if<GenerateCommand>(&q.command); g && g->id == generation_id) known = true;
  }
  if (known) cancelled_ids_.insert(generation_id);
}

size_t Worker::queued() const {
  std::lock_guard<std::mutex> lock(queue_mutex_);
  return queue_.size();
}

bool Worker::generation_cancelled(uint64_t seq, uint64_t generation_id) const {
  if (cancelled(seq)) return true;
  std::lock_guard<std::mutex> lock(queue_mutex_);
  return cancelled_ids_.count(generation_id) != 0;
}

bool Worker::busy() const {
  std::lock_guard<std::mutex> lock(queue_mutex_);
  return running_command_ || !queue_.empty();
}

std::vector<WorkerEvent> Worker::drain() {
  std::deque<WorkerEvent> taken;
  {
    std::lock_guard<std::mutex> lock(events_mutex_);
    taken.swap(events_);
  }
  return {std::make_move_iterator(taken.begin()), std::make_move_iterator(taken.end())};
}

std::optional<WorkerEvent> Worker::wait_event(std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(events_mutex_);
  if (!events_cv_.wait_for(lock, timeout, [this] { return !events_.empty(); })) return std::nullopt;
  WorkerEvent e = std::move(events_.front());
  events_.pop_front();
  return e;
}

void Worker::emit(WorkerEvent event) {
  // The hook sees the event after it is queued; a copy only when there is a hook.
  WorkerEvent event_copy_for_hook = options_.on_event ? event : WorkerEvent{};
  {
    std::lock_guard<std::mutex> lock(events_mutex_);
    events_.push_back(std::move(event));
  }
  events_cv_.notify_all();
  if (options_.on_event) options_.on_event(event_copy_for_hook);
}

void Worker::run() {
  State state;
  while (true) {
    Queued q;
    {
      std::unique_lock<std::mutex> lock(queue_mutex_);
      queue_cv_.wait(lock, [this] { return quit_ || !queue_.empty(); });
      if (quit_) return;
      q = std::move(queue_.front());
      queue_.pop_front();
      running_command_ = true;
      if (const auto* g = std::get_if<GenerateCommand>(&q.command)) running_generation_ = g->id;
    }
    apply_pending_kernels(state, "before the next command");
    execute(state, q);
    std::lock_guard<std::mutex> lock(queue_mutex_);
    running_command_ = false;
    if (running_generation_) cancelled_ids_.erase(*running_generation_);
    running_generation_.reset();
  }
}

void Worker::apply_pending_kernels(State& state, const std::string& when) {
  if (!kernels_pending_.load(std::memory_order_acquire)) return;
  KernelConfig k;
  {
    std::lock_guard<std::mutex> lock(kernels_mutex_);
    k = pending_kernels_;
    kernels_pending_.store(false, std::memory_order_release);
  }
  Status s;
  if (state.engine) {
    try {
      s = state.engine->backend().set_kernel_config(k);  // validates (Backend::set_kernel_config)
    } catch (const std::exception& e) {
      s = make_error(std::string("kernel config: ") + e.what());
    }
  } else if (const std::string bad = k.validate(); !bad.empty()) {
    s = make_error("kernel config: " + bad);  // no backend to check it: kept for the next load only if valid
  }
  // Kept states were computed with the old kernels: a reply must not mix them (same input, same bits).
  // Probes only read the residual stream, so switching them alone keeps the states.
  if (s.ok() && !same_except_probes(k, state.settings.kernels)) state.drop_cache();
  if (s.ok()) state.settings.kernels = k;
  std::string message = std::string("GEMV ") + gemv_variant_name(k.gemv) + " applied " + when;
  if (!state.engine) message = std::string("GEMV ") + gemv_variant_name(k.gemv) + " kept for the next load";
  emit(WorkerNotice{"kernels", s.ok(), s.ok() ? message : s.error().describe()});
  if (s.ok() && state.engine) emit(ModelLoaded{describe_model(*state.engine, state.settings.kernels)});
}

EngineOptions Worker::engine_options(const std::string& path, BackendKind backend, const EngineSettings& s) {
  EngineOptions o;
  o.model_path = path;
  o.backend = backend;
  o.n_ctx = s.n_ctx;
  o.n_threads = s.n_threads;
  o.gpu_memory_limit = static_cast<uint64_t>(s.gpu_memory_mb) << 20;
  o.kernels = s.kernels;
  // The CUDA backend reports its weight upload; one event per percent is plenty for a progress bar.
  auto last_percent = std::make_shared<int>(-1);
  o.load_progress = [this, path, last_percent](uint64_t done, uint64_t total, const std::string& tensor) {
    if (total == 0) return;
    const int percent = static_cast<int>(done * 100 / total);
    if (percent == *last_percent) return;
    *last_percent = percent;
    emit(ModelLoading{path, "uploading " + tensor, static_cast<double>(done) / static_cast<double>(total)});
  };
  return o;
}

void Worker::execute(State& state, const Queued& q) {
  auto notice = [this](std::string what, const Status& s, std::string ok_message) {
    emit(WorkerNotice{std::move(what), s.ok(), s.ok() ? std::move(ok_message) : s.error().describe()});
  };
  // Rebuilds the engine from `o`; on success replaces the current one and reports the new facts.
  auto reopen = [&](const EngineOptions& o) -> Status {
    state.drop_cache();
    QC_ASSIGN(auto engine, Engine::open(o));
    state.engine = std::move(engine);
    emit(ModelLoaded{describe_model(*state.engine, o.kernels)});
    return {};
  };

  std::visit(
      Overloaded{
          [&](const LoadModelCommand& c) {
            if (c.remote) {
              emit(ModelLoading{c.remote->url, "connecting to the endpoint", -1.0});
              auto connected = connect_remote(*c.remote);
              if (!connected.ok()) {
                emit(ModelLoadFailed{c.remote->url, connected.error()});
                return;
              }
              state.drop_cache();
              state.engine.reset();  // the endpoint replaces the local model (and frees its memory)
              state.remote = std::move(*connected);
              emit(ModelLoaded{describe_remote(*state.remote)});
              return;
            }
            emit(ModelLoading{
                c.path,
                std::string("mapping, validating, building the ") + backend_kind_name(c.backend) + " backend",
                -1.0});
            Status s = check_model_path(c.path);
            if (s.ok()) s = c.settings.validate();
            // Weights on the CPU are a file mapping, so the old model can stay until the new one works;
            // a GPU backend copies them into device memory, where two models may not fit.
            if (s.ok() && c.backend == BackendKind::kCuda) {
              state.drop_cache();
              state.engine.reset();
            }
            if (s.ok()) {
              try {
                s = reopen(engine_options(c.path, c.backend, c.settings));
              } catch (const std::exception& e) {
                s = make_error(c.path + ": " + e.what());
              }
            }
            if (s.ok()) {
              state.remote.reset();
              state.settings = c.settings;  // ModelLoaded was emitted by reopen()
              state.new_cache(c.settings);
            } else {
              emit(ModelLoadFailed{c.path, s.error()});
            }
          },
          [&](const GenerateCommand& c) {
            if (generation_cancelled(q.seq, c.id)) {  // cancelled while it waited: never started
              GenerationFinished f;
              f.id = c.id;
              f.stop_reason = StopReason::cancelled;
              emit(std::move(f));
              return;
            }
            GenerationContext ctx;
            ctx.engine = state.engine.get();
            ctx.kernels = &state.settings.kernels;
            ctx.cancelled = [this, seq = q.seq, id = c.id] { return generation_cancelled(seq, id); };
            ctx.emit = [this](WorkerEvent e) { emit(std::move(e)); };
            ctx.cache = &state.cache;
            ctx.at_token = [this, &state](int index) {
              if (kernels_pending_.load(std::memory_order_acquire))
                apply_pending_kernels(state, "at token " + std::to_string(index + 1) + " of the reply");
            };
            try {
              if (state.remote) {
                run_remote_generation(c, *state.remote, ctx);
              } else {
                run_generation(c, ctx);
              }
            } catch (const std::exception& e) {
              GenerationFinished f;
              f.id = c.id;
              f.stop_reason = StopReason::error;
              f.error = std::string("generation failed: ") + e.what();
              emit(std::move(f));
              state.drop_cache();
              if (state.engine) state.engine->backend().reset();
            }
          },
          [&](const SwitchBackendCommand& c) {
            Status s;
            if (state.remote) {
              s = make_error("the model runs on a remote endpoint", "the backend is the endpoint's");
            } else if (!state.engine) {
              s = make_error("no model is loaded", "the backend is chosen when a model loads");
            } else {
              try {
                state.drop_cache();
                s = state.engine->switch_backend(c.backend);
                if (s.ok()) s = state.engine->backend().set_kernel_config(state.settings.kernels);
                if (s.ok()) emit(ModelLoaded{describe_model(*state.engine, state.settings.kernels)});
              } catch (const std::exception& e) {
                s = make_error(std::string("switching the backend failed: ") + e.what());
              }
            }
            notice("switch backend", s, std::string("backend is now ") + backend_kind_name(c.backend));
          },
          [&](const UpdateSettingsCommand& c) {
            Status s = c.settings.validate();
            if (s.ok() && state.engine) {
              try {
                const EngineOptions& old = state.engine->options();
                s = reopen(engine_options(old.model_path, old.backend, c.settings));
              } catch (const std::exception& e) {
                s = make_error(std::string("applying the settings failed: ") + e.what());
              }
            }
            if (s.ok()) {
              state.settings = c.settings;
              state.new_cache(c.settings);
            }
            notice("settings", s,
                   state.engine ? "engine rebuilt with the new settings" : "settings kept for the next load");
          },
          [&](const UnloadModelCommand&) {
            state.drop_cache();
            state.engine.reset();
            state.remote.reset();
            notice("unload", Status(), "model unloaded");
          },
          [&](const SetKernelConfigCommand&) {
            // Applied by apply_pending_kernels() before this ran (or at a token boundary of the reply
            // before it); nothing left to do.
          },
      },
      q.command);
}

}  // namespace qc
