// The CUDA backend's weight-type gate (model/cuda_weight_types.h), testable without a GPU: the kernels read
// every type the loader accepts, but the block-quantised ones are not yet released to users, so the
// engine's entry refuses a mixed K-quant model by tensor name and type with a pointer to the CPU backend
// while the backend itself (GPU tests, benchmark) accepts it; the F32 twin passes both. A type no kernel
// reads (a value outside DType, standing for a type added to the loader later) fails both.
#include <string>

#include <gtest/gtest.h>

#include "kquant_model_file.h"
#include "model/cuda_weight_types.h"
#include "model/model.h"
#include "temp_dir.h"

namespace qc {
namespace {

TEST(CudaWeightTypes, KQuantModelIsReadButNotReleased) {
  test::TempDir dir;
  const test::KQuantFiles files = test::write_kquant_model(dir.path().string(), 1);
  auto q = Model::load(files.quantised);
  ASSERT_TRUE(q.ok()) << q.error().describe();
  const Status kernels = check_cuda_weight_types((*q)->weights(), /*released_only=*/false);
  EXPECT_TRUE(kernels.ok()) << kernels.error().describe();
  const Status released = check_cuda_weight_types((*q)->weights(), /*released_only=*/true);
  ASSERT_FALSE(released.ok());
  EXPECT_EQ(released.error().message,
            "tensor token_embd.weight has type Q4_K; the CUDA backend runs F32/F16/BF16/Q8_0 so far (its "
            "Q4_0/Q5_0/Q4_K/Q5_K/Q6_K kernels await verification on a GPU)");
  EXPECT_NE(released.error().hint.find("CPU backend"), std::string::npos) << released.error().hint;

  auto f = Model::load(files.f32);
  ASSERT_TRUE(f.ok()) << f.error().describe();
  EXPECT_TRUE(check_cuda_weight_types((*f)->weights(), true).ok());
  EXPECT_TRUE(check_cuda_weight_types((*f)->weights(), false).ok());
  for (int i = 0; i < kDTypeCount; ++i) {
    const auto t = static_cast<DType>(i);
    EXPECT_TRUE(cuda_reads_matrix_type(t)) << dtype_name(t);
    const bool block = t == DType::kQ4_0 || t == DType::kQ5_0 || t == DType::kQ4_K || t == DType::kQ5_K ||
                       t == DType::kQ6_K;
    EXPECT_EQ(cuda_released_matrix_type(t), !block) << dtype_name(t);
  }
}

TEST(CudaWeightTypes, EveryMatrixIsChecked) {
  test::TempDir dir;
  const test::KQuantFiles files = test::write_kquant_model(dir.path().string(), 1);
  auto f = Model::load(files.f32);
  ASSERT_TRUE(f.ok()) << f.error().describe();
  const auto unknown = static_cast<DType>(kDTypeCount);
  EXPECT_FALSE(cuda_reads_matrix_type(unknown));
  EXPECT_FALSE(cuda_released_matrix_type(unknown));
  // One such matrix anywhere (here the MTP block's FFN, the last one walked) is enough.
  ModelWeights w = (*f)->weights();
  w.mtp->layer.ffn.down.type = unknown;
  for (const bool released_only : {false, true}) {
    const Status s = check_cuda_weight_types(w, released_only);
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.error().message.rfind("tensor blk.4.ffn_down.weight has type ", 0), 0u) << s.error().message;
    EXPECT_NE(s.error().hint.find("CPU backend"), std::string::npos) << s.error().hint;
  }
  w.mtp->layer.ffn.down.type = DType::kQ5_0;
  EXPECT_TRUE(check_cuda_weight_types(w, false).ok());
  const Status s = check_cuda_weight_types(w, true);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find("blk.4.ffn_down.weight has type Q5_0"), std::string::npos) << s.error().message;
  // Vectors are decoded to f32 on the host whatever their type: not refused.
  w = (*f)->weights();
  w.layers[0].attn_norm.type = unknown;
  EXPECT_TRUE(check_cuda_weight_types(w, true).ok());
}

}  // namespace
}  // namespace qc
