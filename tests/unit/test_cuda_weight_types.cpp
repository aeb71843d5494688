// The CUDA backend's weight-type check (model/cuda_weight_types.h), testable without a GPU: the kernels read
// every type the loader accepts, so a mixed K-quant model and its F32 twin pass; a type no kernel reads (a
// value outside DType, standing for a type added to the loader later) is refused by tensor name and type
// with a pointer to the CPU backend, wherever the matrix sits; vectors are not matrices and pass.
#include <string>

#include <gtest/gtest.h>

#include "kquant_model_file.h"
#include "model/cuda_weight_types.h"
#include "model/model.h"
#include "temp_dir.h"

namespace qc {
namespace {

TEST(CudaWeightTypes, KQuantModelIsRead) {
  test::TempDir dir;
  const test::KQuantFiles files = test::write_kquant_model(dir.path().string(), 1);
  auto q = Model::load(files.quantised);
  ASSERT_TRUE(q.ok()) << q.error().describe();
  const Status kernels = check_cuda_weight_types((*q)->weights());
  EXPECT_TRUE(kernels.ok()) << kernels.error().describe();
  auto f = Model::load(files.f32);
  ASSERT_TRUE(f.ok()) << f.error().describe();
  EXPECT_TRUE(check_cuda_weight_types((*f)->weights()).ok());
  for (int i = 0; i < kDTypeCount; ++i) EXPECT_TRUE(cuda_reads_matrix_type(static_cast<DType>(i)));
}

TEST(CudaWeightTypes, EveryMatrixIsChecked) {
  test::TempDir dir;
  const test::KQuantFiles files = test::write_kquant_model(dir.path().string(), 1);
  auto f = Model::load(files.f32);
  ASSERT_TRUE(f.ok()) << f.error().describe();
  const auto unknown = static_cast<DType>(kDTypeCount);
  EXPECT_FALSE(cuda_reads_matrix_type(unknown));
  // One such matrix anywhere (here the MTP block's FFN, the last one walked) is enough.
  ModelWeights w = (*f)->weights();
  w.mtp->layer.ffn.down.type = unknown;
  {
    const Status s = check_cuda_weight_types(w);
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.error().message.rfind("tensor blk.4.ffn_down.weight has type ", 0), 0u) << s.error().message;
    EXPECT_NE(s.error().hint.find("CPU backend"), std::string::npos) << s.error().hint;
  }
  w.mtp->layer.ffn.down.type = DType::kQ5_0;
  EXPECT_TRUE(check_cuda_weight_types(w).ok());
  // Vectors are decoded to f32 on the host whatever their type: not refused.
  w = (*f)->weights();
  w.layers[0].attn_norm.type = unknown;
  EXPECT_TRUE(check_cuda_weight_types(w).ok());
}

}  // namespace
}  // namespace qc
