#include "model/synthetic.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <span>
#include <vector>

#include "gguf/writer.h"
#include "model/kquant_quantize.h"
#include "model/row_parallel.h"
#include "model/tensor_stream.h"

namespace qc {
namespace {

// SplitMix64: a seeded, counter-friendly generator (one state word; fast enough to fill 27B weights).
struct SplitMix64 {
  uint64_t s;
  uint64_t next() {
    uint64_t z = (s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }  // [0,1)
  // Approximate standard normal: sum of 4 uniforms, scaled to unit variance (Irwin-Hall). Cheap and bounded
  // (|x| <= 3.46), which keeps random activations sane; exact normality does not matter here.
  float normal() {
    const double s4 = uniform() + uniform() + uniform() + uniform() - 2.0;
    return static_cast<float>(s4 * 1.7320508075688772);
  }
};

uint64_t name_hash(const std::string& s) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : s) h = (h ^ c) * 0x100000001b3ull;
  return h;
}

// Generator calls per value of a role (normal() takes four, the others one): value i of a tensor starts at
// state s0 + calls * i * increment, which lets any row range be generated on its own with the same values.
uint64_t calls_per_value(TensorRole role) {
  return role == TensorRole::kSsmA || role == TensorRole::kDtBias ? 1 : 4;
}

// How each tensor is initialised: values [first, first + out.size()) of the tensor. Values follow the shapes
// of a trained model closely enough that a forward pass neither explodes nor vanishes: projections
// ~ N(0, 1/in), norm weights near 1 (GGUF norms carry the +1), A_log in log([1,16]) as in the reference
// init, dt bias = softplus^-1 of dt in [1e-3, 1e-1].
void fill(const Qwen35Tensor& spec, uint64_t seed, uint64_t first, std::span<float> out) {
  SplitMix64 rng{(seed ^ name_hash(spec.name)) + calls_per_value(spec.role) * first * 0x9e3779b97f4a7c15ull};
  const double in = static_cast<double>(spec.shape[0]);
  for (float& v : out) {
    switch (spec.role) {
      case TensorRole::kProjection:
      case TensorRole::kSmallProjection:
        v = rng.normal() * static_cast<float>(1.0 / std::sqrt(in));
        break;
      case TensorRole::kEmbedding:
        v = rng.normal();
        break;
      case TensorRole::kNorm:
      case TensorRole::kSsmNorm:
        v = 1.0f + 0.1f * rng.normal();
        break;
      case TensorRole::kSsmA:
        v = -static_cast<float>(1.0 + 15.0 * rng.uniform());
        break;  // -exp(A_log), A_log in log[1,16]
      case TensorRole::kDtBias: {
        const double dt = std::exp(std::log(1e-3) + rng.uniform() * (std::log(1e-1) - std::log(1e-3)));
        v = static_cast<float>(dt + std::log(-std::expm1(-dt)));  // softplus^-1(dt)
        break;
      }
      case TensorRole::kConv:
        v = rng.normal() * 0.5f;
        break;
    }
  }
}

}  // namespace

Status write_synthetic_model(const SyntheticModelOptions& opts) {
  const ModelShape& s = opts.shape;
  QC_TRY(s.validate());
  gguf::Writer w;
  for (gguf::KeyValue& kv : qwen35_metadata(s, opts.mix)) w.set(std::move(kv.key), std::move(kv.value));
  if (opts.extra_metadata) opts.extra_metadata(w);

  // 2-D weights (ssm_alpha/beta included, as llama.cpp's converter and quantizer do) take the mix's types.
  const std::vector<Qwen35Tensor> specs = qwen35_tensor_layout(s);
  QC_ASSIGN(const std::vector<DType> types, qwen35_tensor_types(s, specs, opts.mix));
  for (size_t i = 0; i < specs.size(); ++i)
    QC_TRY(w.add_tensor(specs[i].name, ggml_type_id(types[i]), specs[i].shape));
  QC_TRY(w.begin(opts.out_path));
  const int threads = opts.n_threads > 0 ? opts.n_threads : default_writer_threads();
  auto rows_of = [](const Qwen35Tensor& t) {
    int64_t rows = 1;
    for (size_t d = 1; d < t.shape.size(); ++d) rows *= static_cast<int64_t>(t.shape[d]);
    return rows;
  };
  std::vector<StreamedTensor> streamed;
  for (size_t i = 0; i < specs.size(); ++i) {
    streamed.push_back(
        {specs[i].name, dtype_bytes(types[i], specs[i].shape[0]) * static_cast<uint64_t>(rows_of(specs[i]))});
  }
  auto produce = [&](size_t i, std::span<uint8_t> bytes) -> Status {
    const Qwen35Tensor& t = specs[i];
    const int64_t cols = static_cast<int64_t>(t.shape[0]);
    const int64_t rows = rows_of(t);
    const uint64_t row_bytes = dtype_bytes(types[i], static_cast<uint64_t>(cols));
    // Each range of rows is generated into its own buffer, at most kBufferValues at a time (one thread
    // may take a whole tensor, and the 27B embedding table is 5 GB of f32), and encoded straight into the
    // tensor's bytes. The buffer is left uninitialised: fill() writes every value before it is read.
    constexpr int64_t kBufferValues = int64_t{1} << 22;  // 16 MiB of f32 per thread
    const int64_t step = std::max<int64_t>(1, kBufferValues / cols);
    const Status st = for_row_chunks(rows, threads, [&](int64_t first, int64_t end) -> Status {
      const std::unique_ptr<float[]> values(
          new float[static_cast<size_t>(std::min(end - first, step) * cols)]);
      for (int64_t r0 = first; r0 < end; r0 += step) {
        const int64_t r1 = std::min(end, r0 + step);
        const std::span<float> part(values.get(), static_cast<size_t>((r1 - r0) * cols));
        fill(t, opts.seed, static_cast<uint64_t>(r0 * cols), part);
        for (int64_t r = r0; r < r1; ++r) {
          const Status e = encode_values(types[i], part.data() + (r - r0) * cols,
                                         bytes.data() + static_cast<uint64_t>(r) * row_bytes, cols);
          if (!e.ok()) return make_error("row " + std::to_string(r) + ": " + e.error().message);
        }
      }
      return Status{};
    });
    if (!st.ok()) return make_error(t.name + " (" + dtype_name(types[i]) + "): " + st.error().message);
    return Status{};
  };
  auto written = [&](size_t i) {
    if (opts.progress) opts.progress(i + 1, specs.size(), specs[i].name);
  };
  QC_TRY(stream_tensors(w, streamed, produce, written));
  return w.finish();
}

}  // namespace qc
