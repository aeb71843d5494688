#include "model_panel.h"

#include <imgui.h>
#include <imgui_stdlib.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "common/default_model.h"
#include "format.h"
#include "widgets.h"

namespace qc::gui {
namespace {

void row(const char* key, const std::string& value) {
  ImGui::TableNextRow();
  ImGui::TableSetColumnIndex(0);
  ImGui::TextUnformatted(key);
  ImGui::TableSetColumnIndex(1);
  ImGui::TextWrapped("%s", value.c_str());
}

// An indeterminate bar: a block sliding back and forth, for stages without a measurable fraction.
void busy_bar(double t, float width, float height, const char* overlay) {
  const ImVec2 p = ImGui::GetCursorScreenPos();
  ImDrawList* dl = ImGui::GetWindowDrawList();
  dl->AddRectFilled(p, ImVec2(p.x + width, p.y + height), ImGui::GetColorU32(ImGuiCol_FrameBg), 3.0f);
  const float block = width * 0.25f;
  const float phase = static_cast<float>(std::fabs(std::fmod(t * 0.8, 2.0) - 1.0));  // 0..1..0
  const float x = p.x + phase * (width - block);
  dl->AddRectFilled(ImVec2(x, p.y), ImVec2(x + block, p.y + height),
                    ImGui::GetColorU32(ImGuiCol_PlotHistogram), 3.0f);
  const ImVec2 ts = ImGui::CalcTextSize(overlay);
  dl->AddText(ImVec2(p.x + (width - ts.x) * 0.5f, p.y + (height - ts.y) * 0.5f),
              ImGui::GetColorU32(ImGuiCol_Text), overlay);
  ImGui::Dummy(ImVec2(width, height));
}

}  // namespace

void ModelPanel::load(UiContext& ctx, const std::string& typed) {
  // Absolute, so the recent list and the replies' model field mean the same file from any folder.
  std::error_code ec;
  const std::filesystem::path abs = std::filesystem::absolute(typed, ec);
  const std::string path = ec ? typed : abs.lexically_normal().string();
  auto kind = parse_backend_kind(ctx.config.backend);
  ctx.engine.load(path, kind.ok() ? *kind : BackendKind::kCpu, ctx.config.settings.engine);
  // The recent list takes it when it has loaded (App::remember_model_events): a failed path is not kept.
  ctx.config.use_remote = false;
  ctx.requests.save_config = true;
}

void ModelPanel::connect(UiContext& ctx) {
  RemoteEndpoint e;
  e.url = ctx.config.remote_url;
  e.model = ctx.config.remote_model;
  e.api_key = remote_key_;
  if (e.api_key.empty()) {
    if (const char* env = std::getenv("QWENCHAT_REMOTE_API_KEY")) e.api_key = env;
  }
  ctx.engine.connect(e);
  ctx.config.use_remote = true;
  ctx.requests.save_config = true;
}

void ModelPanel::draw(UiContext& ctx) {
  if (!path_initialised_) {
    if (ctx.model.facts && !ctx.model.facts->remote) {  // a remote model's path is its URL
      path_ = ctx.model.facts->path;
    } else if (ctx.model.facts && !ctx.config.recent_models.empty()) {
      path_ = ctx.config.recent_models.front();
    } else if (ctx.model.loading) {
      path_ = ctx.model.loading_path;
    } else if (!ctx.config.recent_models.empty()) {
      path_ = ctx.config.recent_models.front();
    }
    path_initialised_ = !path_.empty();
  }
  file_section(ctx);
  ImGui::Spacing();
  backend_section(ctx);
  ImGui::Spacing();
  remote_section(ctx);
  ImGui::Spacing();
  progress(ctx);
  facts(ctx);
}

void ModelPanel::file_section(UiContext& ctx) {
  ImGui::PushFont(ctx.fonts.bold);
  ImGui::TextUnformatted("Model file (GGUF)");
  ImGui::PopFont();
  ImGui::SetNextItemWidth(-ctx.em() * 9.5f);
  const bool enter =
      ImGui::InputTextWithHint("##path", "/path/to/model.gguf", &path_, ImGuiInputTextFlags_EnterReturnsTrue);
  ImGui::SameLine();
  ImGui::BeginDisabled(ctx.model.loading || chooser_.is_open());
  if (ImGui::Button("Browse…", ImVec2(ctx.em() * 4.5f, 0))) open_chooser(ctx);
  ImGui::EndDisabled();
  item_tooltip("choose a .gguf file (Ctrl+O); a file dropped on the window loads too");
  ImGui::SameLine();
  ImGui::BeginDisabled(ctx.model.loading || path_.empty());
  if (ImGui::Button("Load", ImVec2(-1, 0)) || (enter && !path_.empty())) load(ctx, path_);
  ImGui::EndDisabled();
  // What a load would cost, from the file's header (no weight is read): the file is memory-mapped, plus
  // the backend's caches for the configured context.
  std::error_code ec;
  if (!path_.empty() && std::filesystem::is_regular_file(path_, ec)) {
    estimate(ctx);
  } else if (!path_.empty() && std::filesystem::is_directory(path_, ec)) {
    text_wrapped_colored(ctx.theme.warning, "is a directory, expected a .gguf file (type the path of one inside it)");
  } else if (!path_.empty() && std::filesystem::exists(path_, ec)) {
    text_wrapped_colored(ctx.theme.warning, "not a regular file, expected a .gguf file");
  } else if (!path_.empty()) {
    text_wrapped_colored(ctx.theme.warning, "no such file");
  }
  if (const std::string w = chooser_.waiting_text(); !w.empty())
    text_wrapped_colored(ctx.theme.text_muted, "%s", w.c_str());
  // A refused drop or pick; not when the estimate line above already says why the path cannot load.
  if (!choose_error_.empty() && choose_error_path_ != path_)
    text_wrapped_colored(ctx.theme.error, "%s", choose_error_.c_str());
  if (ctx.model.facts && !ctx.model.loading) {
    if (ImGui::Button("Unload")) ctx.engine.unload();
    item_tooltip("frees its memory (the GPU's too); load one again to chat");
  }
  if (ImGui::CollapsingHeader("Recent models", ImGuiTreeNodeFlags_DefaultOpen)) {
    if (ctx.config.recent_models.empty()) text_wrapped_colored(ctx.theme.text_muted, "none yet");
    for (size_t i = 0; i < ctx.config.recent_models.size(); ++i) {
      const std::string& p = ctx.config.recent_models[i];
      ImGui::PushID(static_cast<int>(i));
      if (ImGui::Selectable(std::filesystem::path(p).filename().string().c_str(), p == path_,
                            ImGuiSelectableFlags_AllowDoubleClick)) {
        path_ = p;
        if (ImGui::IsMouseDoubleClicked(ImGuiMouseButton_Left) && !ctx.model.loading) load(ctx, p);
      }
      item_tooltip("%s\n(double-click loads)", p.c_str());
      ImGui::PopID();
    }
    auto def = app::default_model_path();
    ImGui::BeginDisabled(ctx.model.loading);
    if (def.ok() && ImGui::SmallButton("Load the bundled default model")) {
      path_ = *def;
      load(ctx, path_);
    }
    ImGui::EndDisabled();
  }
}

void ModelPanel::open_chooser(UiContext& ctx) {
  if (ctx.model.loading) {
    ctx.notices.info("a model is loading; open another one when it is done");
    return;
  }
  chooser_.open(files::ChooserMode::kOpenFile, path_, "Open a model file (GGUF)");
}

void ModelPanel::draw_chooser(UiContext& ctx) {
  if (std::optional<std::string> p = chooser_.draw(ctx)) choose(ctx, *p, "Chosen");
}

void ModelPanel::on_drop(UiContext& ctx, const std::vector<std::string>& paths) {
  const files::DropChoice d = files::choose_dropped(paths);
  if (d.path.empty()) {
    choose_error_ = "Dropped: " + d.error;
    choose_error_path_.clear();
    ctx.notices.error(choose_error_);
    return;
  }
  if (!d.note.empty()) ctx.notices.info(d.note);
  choose(ctx, d.path, "Dropped");
}

void ModelPanel::choose(UiContext& ctx, const std::string& path, const std::string& how) {
  const std::string name = files::escape_name(std::filesystem::path(path).filename().string());
  if (ctx.model.loading) {
    choose_error_ = how + " " + name + ": a model is loading; try again when it is done";
    choose_error_path_.clear();
    ctx.notices.error(choose_error_);
    return;
  }
  path_ = path;
  path_initialised_ = true;
  EngineOptions o;
  o.model_path = path;
  o.n_ctx = ctx.config.settings.engine.n_ctx;
  // Only whether the file is a model this app runs and its host-side size: the CPU estimate, which reads
  // the header and opens no device (the CUDA part is the panel's, off this thread; the load re-plans).
  auto kind = parse_backend_kind(ctx.config.backend);
  const bool cuda = kind.ok() && *kind == BackendKind::kCuda;
  o.backend = kind.ok() && !cuda ? *kind : BackendKind::kCpu;
  const Result<LoadEstimate> e = estimate_load(o);
  if (!e.ok()) {  // not a GGUF, or one of an architecture this app does not run: the previous model stays
    choose_error_ = how + " " + name + ": not a model this app can load: " + e.error().message;
    choose_error_path_ = path;
    ctx.notices.error(choose_error_);
    return;
  }
  choose_error_.clear();
  ctx.notices.info(how + " " + name + ": loading " +
                   (cuda ? "onto the GPU (" + format_bytes(e->file_bytes) + " file)"
                         : "(memory estimate " + format_bytes(e->total_bytes()) + ")"));
  load(ctx, path);
}

void ModelPanel::estimate(UiContext& ctx) {
  const EngineSettings& s = ctx.config.settings.engine;
  EngineOptions o;
  o.model_path = path_;
  o.n_ctx = s.n_ctx;
  o.kernels = s.kernels;
  o.gpu_memory_limit = static_cast<uint64_t>(s.gpu_memory_mb) << 20;
  auto kind = parse_backend_kind(ctx.config.backend);
  o.backend = kind.ok() ? *kind : BackendKind::kCpu;
  const bool cuda = o.backend == BackendKind::kCuda;
  std::error_code ec;
  const auto mtime = std::filesystem::last_write_time(path_, ec);
  // The CUDA part asks the device for its free memory: once per file, context, backend and limit, not per
  // frame (a load elsewhere on the card changes it: the load itself re-plans).
  const std::string key = path_ + "|" + std::to_string(o.n_ctx) + "|" + ctx.config.backend + "|" +
                          std::to_string(s.gpu_memory_mb) + "|" +
                          std::to_string(ec ? 0 : mtime.time_since_epoch().count());
  if (pending_.valid() && pending_.wait_for(std::chrono::seconds(0)) == std::future_status::ready) {
    estimate_ = pending_.get();
    estimate_key_ = pending_key_;
  }
  if (key != estimate_key_ && !pending_.valid()) {  // the header is parsed once per file, context and backend
    pending_key_ = key;
    pending_ = std::async(std::launch::async, [o] { return estimate_load(o); });
  }
  if (key != estimate_key_) {
    text_wrapped_colored(ctx.theme.text_muted, cuda ? "Memory estimate: asking the GPU..." : "Memory estimate: ...");
    return;
  }
  if (!estimate_ || !estimate_->ok()) {
    text_wrapped_colored(ctx.theme.warning, "not a model this app can load: %s",
                         estimate_ ? estimate_->error().message.c_str() : "?");
    return;
  }
  const LoadEstimate& e = **estimate_;
  text_wrapped_colored(ctx.theme.text_muted, "Memory estimate: %s = %s weights (the file, memory-mapped) + %s "
                       "caches for a %d-token context%s",
                       format_bytes(e.total_bytes()).c_str(), format_bytes(e.file_bytes).c_str(),
                       format_bytes(e.state_bytes).c_str(), e.n_ctx, cuda ? " on the CPU" : "");
  item_tooltip("Read from the file's header before loading; the CPU backend allocates exactly these caches "
               "(key/value caches of the attention layers, Gated DeltaNet states, scratch). Context length is "
               "in Settings > Engine%s.",
               e.n_ctx_train > 0 ? (" (this model was trained for " + std::to_string(e.n_ctx_train) + ")").c_str() : "");
  if (cuda) device_estimate(ctx, e);
}

// The CUDA load's own plan (engine.h LoadEstimate's device part): what it puts on the card against what is
// free there, and where it would not fit, the largest context that does, one click away.
void ModelPanel::device_estimate(UiContext& ctx, const LoadEstimate& e) {
  if (e.device.empty()) {
    text_wrapped_colored(ctx.theme.text_muted, "GPU: %s", e.device_error.c_str());
    return;
  }
  if (e.device_fits) {
    text_wrapped_colored(ctx.theme.text_muted, "GPU (%s): the load takes %s of the %s free: fits", e.device.c_str(),
                         format_bytes(e.device_bytes).c_str(), format_bytes(e.device_avail).c_str());
    return;
  }
  text_wrapped_colored(ctx.theme.warning, "GPU (%s): the load would take %s but %s are free: %s", e.device.c_str(),
                       format_bytes(e.device_bytes).c_str(), format_bytes(e.device_avail).c_str(),
                       e.device_fit_ctx > 0 ? ("a context of up to " + std::to_string(e.device_fit_ctx) + " tokens fits")
                                                  .c_str()
                                            : "the weights alone do not fit (a smaller quantisation, or the CPU backend)");
  if (e.device_fit_ctx > 0 && ImGui::Button("Use that context")) {
    ctx.config.settings.engine.n_ctx = e.device_fit_ctx;
    ctx.config.settings.clamp();
    ctx.requests.save_config = true;
    if (ctx.model.facts) ctx.engine.rebuild(ctx.config.settings.engine);  // a loaded model
    ctx.notices.info("context length set to " + std::to_string(e.device_fit_ctx) + " tokens (Settings > Engine)");
  }
}

void ModelPanel::remote_section(UiContext& ctx) {
  const bool open_by_default = ctx.config.use_remote;
  if (!ImGui::CollapsingHeader("Remote endpoint (OpenAI-compatible)",
                               open_by_default ? ImGuiTreeNodeFlags_DefaultOpen : 0)) {
    return;
  }
  text_wrapped_colored(ctx.theme.text_muted,
                       "A server runs the model instead: vLLM or SGLang on several GPUs, llama-server, or "
                       "another qwenchat-server. Replies, history, export and diagnostics work the same.");
  ImGui::SetNextItemWidth(-ctx.em() * 4.5f);
  if (ImGui::InputTextWithHint("URL", "http://127.0.0.1:8000/v1", &ctx.config.remote_url)) {
    ctx.requests.save_config = true;
  }
  ImGui::SetNextItemWidth(-ctx.em() * 4.5f);
  if (ImGui::InputTextWithHint("Model", "(the first one it serves)", &ctx.config.remote_model)) {
    ctx.requests.save_config = true;
  }
  ImGui::SetNextItemWidth(-ctx.em() * 4.5f);
  ImGui::InputTextWithHint("API key", "(none, or QWENCHAT_REMOTE_API_KEY)", &remote_key_,
                           ImGuiInputTextFlags_Password);
  ImGui::BeginDisabled(ctx.model.loading || ctx.config.remote_url.empty());
  if (ImGui::Button("Connect")) connect(ctx);
  ImGui::EndDisabled();
  item_tooltip("The key is kept for this session only; it is never written to the config file.");
}

void ModelPanel::backend_section(UiContext& ctx) {
  ImGui::PushFont(ctx.fonts.bold);
  ImGui::TextUnformatted("Backend");
  ImGui::PopFont();
  const std::string current = ctx.config.backend;
  auto choose = [&](const char* name, const char* label) {
    if (ImGui::RadioButton(label, current == name)) {
      ctx.config.backend = name;
      ctx.requests.save_config = true;
      auto kind = parse_backend_kind(name);
      if (ctx.model.facts && kind.ok()) ctx.engine.switch_backend(*kind);
    }
  };
  choose("cpu", "CPU (f32)");
  ImGui::SameLine();
  choose("cpu-f64", "CPU f64 oracle");
  ImGui::SameLine();
  const bool cuda = cuda_backend_compiled();
  ImGui::BeginDisabled(!cuda);
  choose("cuda", "CUDA");
  ImGui::EndDisabled();
  if (!cuda) {
    text_wrapped_colored(ctx.theme.text_muted,
                         "CUDA: this build has no CUDA backend (rebuild with nvcc installed).");
  } else {
    text_wrapped_colored(ctx.theme.text_muted, "CUDA: a load or switch reports when no device is present.");
  }
}

void ModelPanel::progress(UiContext& ctx) {
  const ModelStatus& m = ctx.model;
  if (m.loading) {
    ImGui::TextWrapped("Loading %s", m.loading_path.c_str());
    char overlay[96];
    std::snprintf(overlay, sizeof overlay, "%s… %.1f s", m.stage.c_str(), ctx.now_s - m.loading_since_s);
    if (m.fraction >= 0) {
      ImGui::ProgressBar(static_cast<float>(m.fraction), ImVec2(-1, 0), overlay);
    } else {
      busy_bar(ctx.now_s, ImGui::GetContentRegionAvail().x, ImGui::GetFrameHeight(), overlay);
    }
  }
  if (m.error) {
    ImGui::PushStyleColor(ImGuiCol_Text, ctx.theme.error);
    ImGui::TextWrapped("Load failed: %s", m.error->message.c_str());
    ImGui::PopStyleColor();
    if (!m.error->hint.empty()) ImGui::TextWrapped("Hint: %s", m.error->hint.c_str());
    if (m.facts) text_wrapped_colored(ctx.theme.text_muted, "The previous model stays loaded.");
  }
}

void ModelPanel::facts(UiContext& ctx) {
  if (!ctx.model.facts) {
    if (!ctx.model.loading) text_wrapped_colored(ctx.theme.text_muted, "No model loaded.");
    return;
  }
  const ModelFacts& f = *ctx.model.facts;
  ImGui::PushFont(ctx.fonts.bold);
  ImGui::TextUnformatted(f.remote ? "Remote model" : "Loaded model");
  ImGui::PopFont();
  if (f.remote) {
    if (ImGui::BeginTable("facts", 2, ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerV)) {
      ImGui::TableSetupColumn("key", ImGuiTableColumnFlags_WidthFixed, ctx.em() * 8);
      ImGui::TableSetupColumn("value", ImGuiTableColumnFlags_WidthStretch);
      row("Model", f.name);
      row("Endpoint", f.path);
      row("Context", f.n_ctx > 0 ? std::to_string(f.n_ctx) + " (as the endpoint lists it)" : "not listed");
      row("Figures", "tokens/s and time to first token measured here, over the network; token counts as "
                     "the endpoint reports them");
      ImGui::EndTable();
    }
    return;
  }
  int gdn = 0;
  for (bool r : f.layer_is_recurrent) gdn += r ? 1 : 0;
  char buf[256];
  if (ImGui::BeginTable("facts", 2, ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerV)) {
    ImGui::TableSetupColumn("key", ImGuiTableColumnFlags_WidthFixed, ctx.em() * 8);
    ImGui::TableSetupColumn("value", ImGuiTableColumnFlags_WidthStretch);
    row("Name", f.name.empty() ? "(unnamed)" : f.name);
    row("File", f.path);
    row("Architecture", f.architecture);
    std::snprintf(buf, sizeof buf, "%.1f M", static_cast<double>(f.n_params) / 1e6);
    row("Parameters", buf);
    row("Quantization", f.quantization);
    std::snprintf(buf, sizeof buf, "%d (%d Gated DeltaNet, %d attention)", f.n_layer, gdn, f.n_layer - gdn);
    row("Layers", buf);
    std::snprintf(buf, sizeof buf, "%d hidden, %d vocabulary rows", f.n_embd, f.n_vocab);
    row("Width", buf);
    std::snprintf(buf, sizeof buf, "%d in use (trained %d)", f.n_ctx, f.n_ctx_train);
    row("Context", buf);
    row("MTP block", f.n_mtp > 0 ? "present (speculative decoding available)" : "absent");
    row("Tokenizer", f.tokenizer);
    row("Backend", f.backend.name + " · " + f.backend.device);
    if (f.backend_kind == BackendKind::kCuda) {
      row("GPU memory", format_bytes(f.backend.memory_bytes) + " (weights, caches, scratch)");
      row("Host", format_bytes(f.file_bytes) + " file mapping");
      row("Kernels", f.kernel_variant());
    } else {
      row("Memory", format_bytes(f.memory_bytes()) + " in all");
      row("  weights", format_bytes(f.file_bytes) + " (memory-mapped file)");
      row("  state", format_bytes(f.backend.memory_bytes) + " (caches and scratch)");
    }
    row("Bytes/token", format_bytes(f.bytes_per_token) + " of weights read per decoded token");
    if (f.backend.read_ceiling_gbs > 0) {
      std::snprintf(buf, sizeof buf, "%.0f GB/s read ceiling measured at load", f.backend.read_ceiling_gbs);
      row("Bandwidth", buf);
    }
    ImGui::EndTable();
  }
  if (!f.backend.note.empty()) text_wrapped_colored(ctx.theme.warning, "%s", f.backend.note.c_str());
}

}  // namespace qc::gui
