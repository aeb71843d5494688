// Worker: everything that goes wrong comes back as an event and the worker keeps working.
#include <fstream>
#include <random>

#include <gtest/gtest.h>

#include "qwenchat/worker.h"
#include "temp_dir.h"
#include "worker_test_model.h"
#include "worker_test_util.h"

namespace qc::test {
namespace {

LoadModelCommand load(const std::string& path) {
  LoadModelCommand c;
  c.path = path;
  c.settings.n_ctx = 256;
  c.settings.n_threads = 1;
  return c;
}

const ModelLoadFailed* load_failure(Worker& w, const std::string& path) {
  w.post(load(path));
  static thread_local std::vector<WorkerEvent> events;  // keeps the returned pointer valid in the test
  events = collect_load(w);
  return find_event<ModelLoadFailed>(events);
}

TEST(WorkerErrors, GenerateWithoutModelFinishesWithAnError) {
  Worker w;
  w.post(greedy_request(5, "hello", 4));
  const auto events = collect_generation(w, 5);
  ASSERT_EQ(events.size(), 1u);  // no Started: nothing was encoded
  const auto& f = std::get<GenerationFinished>(events.back());
  EXPECT_EQ(f.stop_reason, StopReason::error);
  EXPECT_NE(f.error.find("no model is loaded"), std::string::npos) << f.error;
}

TEST(WorkerErrors, BrokenFilesFailTheLoadAndTheWorkerCarriesOn) {
  TempDir dir;
  Worker w;

  const auto* missing = load_failure(w, dir.file("absent.gguf"));
  ASSERT_NE(missing, nullptr);
  EXPECT_NE(missing->error.message.find("absent.gguf: no such file"), std::string::npos)
      << missing->error.message;

  // Seeded random bytes: not a GGUF at all.
  {
    std::ofstream f(dir.file("noise.gguf"), std::ios::binary);
    std::mt19937 rng(123);
    for (int i = 0; i < 4096; ++i) f.put(static_cast<char>(rng() & 0xff));
  }
  const auto* noise = load_failure(w, dir.file("noise.gguf"));
  ASSERT_NE(noise, nullptr);
  EXPECT_NE(noise->error.describe().find("noise.gguf"), std::string::npos) << noise->error.describe();

  // A real model cut in half: the header is fine, the tensor data runs past the end.
  const std::string good = dir.file("good.gguf");
  ASSERT_TRUE(write_tiny_chat_model(good).ok());
  std::string bytes;
  {
    std::ifstream f(good, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(f), {});
  }
  {
    std::ofstream f(dir.file("cut.gguf"), std::ios::binary);
    f.write(bytes.data(), static_cast<std::streamsize>(bytes.size() / 2));
  }
  const auto* cut = load_failure(w, dir.file("cut.gguf"));
  ASSERT_NE(cut, nullptr);
  EXPECT_NE(cut->error.describe().find("cut.gguf"), std::string::npos) << cut->error.describe();

  // A directory is not a model.
  const auto* folder = load_failure(w, dir.path().string());
  ASSERT_NE(folder, nullptr);

  // After all that the good file loads and generates.
  w.post(load(good));
  ASSERT_NE(find_event<ModelLoaded>(collect_load(w)), nullptr);
  w.post(greedy_request(6, "hello", 3));
  const auto gen = collect_generation(w, 6);
  EXPECT_NE(std::get<GenerationFinished>(gen.back()).stop_reason, StopReason::error);

  // A failed load keeps the model that was loaded (CPU weights are a mapping, nothing to free first).
  ASSERT_NE(load_failure(w, dir.file("noise.gguf")), nullptr);
  w.post(greedy_request(7, "hello", 3));
  const auto again = collect_generation(w, 7);
  EXPECT_NE(std::get<GenerationFinished>(again.back()).stop_reason, StopReason::error);
}

TEST(WorkerErrors, BadSettingsAndUnavailableBackendAreNotices) {
  TempDir dir;
  ASSERT_TRUE(write_tiny_chat_model(dir.file("m.gguf")).ok());
  Worker w;
  LoadModelCommand bad = load(dir.file("m.gguf"));
  bad.settings.n_ctx = 3;
  w.post(bad);
  const auto ev = collect_load(w);
  const auto* failed = find_event<ModelLoadFailed>(ev);
  ASSERT_NE(failed, nullptr);
  EXPECT_NE(failed->error.message.find("n_ctx must be in [16, 1048576], got 3"), std::string::npos);

  w.post(load(dir.file("m.gguf")));
  ASSERT_NE(find_event<ModelLoaded>(collect_load(w)), nullptr);
  if (!cuda_backend_compiled()) {
    w.post(SwitchBackendCommand{BackendKind::kCuda});
    const auto n =
        collect_until(w, [](const WorkerEvent& e) { return std::holds_alternative<WorkerNotice>(e); });
    EXPECT_FALSE(std::get<WorkerNotice>(n.back()).ok);
    EXPECT_NE(std::get<WorkerNotice>(n.back()).message.find("CUDA"), std::string::npos);
  }
  EngineSettings s;
  s.n_threads = -2;
  w.post(UpdateSettingsCommand{s});
  const auto n2 =
      collect_until(w, [](const WorkerEvent& e) { return std::holds_alternative<WorkerNotice>(e); });
  EXPECT_FALSE(std::get<WorkerNotice>(n2.back()).ok);
  s.n_threads = 0;
  s.gpu_memory_mb = -1;
  w.post(UpdateSettingsCommand{s});
  const auto n3 =
      collect_until(w, [](const WorkerEvent& e) { return std::holds_alternative<WorkerNotice>(e); });
  EXPECT_FALSE(std::get<WorkerNotice>(n3.back()).ok);
  EXPECT_NE(std::get<WorkerNotice>(n3.back()).message.find("gpu_memory_mb must be in [0, 4194304]"),
            std::string::npos)
      << std::get<WorkerNotice>(n3.back()).message;
  // The engine is untouched by these failures.
  w.post(greedy_request(8, "hello", 2));
  const auto gen = collect_generation(w, 8);
  EXPECT_EQ(std::get<GenerationFinished>(gen.back()).backend, "cpu-f32");
  EXPECT_NE(std::get<GenerationFinished>(gen.back()).stop_reason, StopReason::error);
}

TEST(WorkerErrors, PromptLongerThanTheContextIsAnError) {
  TempDir dir;
  ASSERT_TRUE(write_tiny_chat_model(dir.file("m.gguf")).ok());
  Worker w;
  LoadModelCommand c = load(dir.file("m.gguf"));
  c.settings.n_ctx = 32;
  w.post(c);
  ASSERT_NE(find_event<ModelLoaded>(collect_load(w)), nullptr);
  std::string long_text;
  for (int i = 0; i < 40; ++i) long_text += "many words here ";
  w.post(greedy_request(9, long_text, 4));
  const auto gen = collect_generation(w, 9);
  const auto& f = std::get<GenerationFinished>(gen.back());
  EXPECT_EQ(f.stop_reason, StopReason::error);
  EXPECT_NE(f.error.find("context holds 32"), std::string::npos) << f.error;
}

}  // namespace
}  // namespace qc::test
