// The CUDA backend's weight-type check (model/cuda_weight_types.h), testable without a GPU: a K-quant
// model is refused by tensor name and type with a pointer to the CPU backend; the F32 twin passes.
#include <string>

#include <gtest/gtest.h>

#include "kquant_model_file.h"
#include "model/model.h"
#include "model/cuda_weight_types.h"
#include "temp_dir.h"

namespace qc {
namespace {

TEST(CudaWeightTypes, KQuantModelIsRefusedByNameAndType) {
  test::TempDir dir;
  const test::KQuantFiles files = test::write_kquant_model(dir.path().string(), 1);
  auto q = Model::load(files.quantised);
  ASSERT_TRUE(q.ok()) << q.error().describe();
  const Status s = check_cuda_weight_types((*q)->weights());
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().message,
            "tensor token_embd.weight has type Q4_K; the CUDA backend reads F32/F16/BF16/Q8_0 so far");
  EXPECT_NE(s.error().hint.find("CPU backend"), std::string::npos) << s.error().hint;

  auto f = Model::load(files.f32);
  ASSERT_TRUE(f.ok()) << f.error().describe();
  EXPECT_TRUE(check_cuda_weight_types((*f)->weights()).ok());
}

TEST(CudaWeightTypes, EveryMatrixIsChecked) {
  test::TempDir dir;
  const test::KQuantFiles files = test::write_kquant_model(dir.path().string(), 1);
  auto f = Model::load(files.f32);
  ASSERT_TRUE(f.ok()) << f.error().describe();
  // One non-CUDA matrix anywhere (here the MTP block's FFN, the last one walked) is enough.
  ModelWeights w = (*f)->weights();
  w.mtp->layer.ffn.down.type = DType::kQ5_0;
  const Status s = check_cuda_weight_types(w);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find("blk.4.ffn_down.weight has type Q5_0"), std::string::npos)
      << s.error().message;
  // Vectors are decoded to f32 on the host whatever their type: not refused.
  w = (*f)->weights();
  w.layers[0].attn_norm.type = DType::kQ8_0;
  EXPECT_TRUE(check_cuda_weight_types(w).ok());
  for (DType t : {DType::kF32, DType::kF16, DType::kBF16, DType::kQ8_0})
    EXPECT_TRUE(cuda_reads_matrix_type(t));
  for (DType t : {DType::kQ4_0, DType::kQ5_0, DType::kQ4_K, DType::kQ5_K, DType::kQ6_K})
    EXPECT_FALSE(cuda_reads_matrix_type(t));
}

}  // namespace
}  // namespace qc
