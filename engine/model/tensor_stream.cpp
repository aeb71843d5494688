#include "model/tensor_stream.h"

#include <algorithm>
#include <future>
#include <memory>

#include "gguf/writer.h"

namespace qc {

Status stream_tensors(gguf::Writer& writer, const std::vector<StreamedTensor>& tensors,
                      const ProduceTensor& produce, const std::function<void(size_t index)>& written) {
  uint64_t largest = 0;
  for (const StreamedTensor& t : tensors) largest = std::max(largest, t.nbytes);
  // new[] without () leaves the bytes uninitialised; produce writes every byte of its span.
  std::unique_ptr<uint8_t[]> buffers[2] = {std::unique_ptr<uint8_t[]>(new uint8_t[largest]),
                                           std::unique_ptr<uint8_t[]>(new uint8_t[largest])};
  std::future<Status> pending;  // the write of tensor i - 1, which reads buffers[(i - 1) % 2]
  auto finish_pending = [&](size_t index) -> Status {
    if (!pending.valid()) return {};
    Status s = pending.get();
    if (s.ok() && written) written(index);
    return s;
  };
  for (size_t i = 0; i < tensors.size(); ++i) {
    const std::span<uint8_t> out(buffers[i % 2].get(), tensors[i].nbytes);
    const Status produced = produce(i, out);
    QC_TRY(finish_pending(i - 1));  // tensor i - 1's write error comes first in file order
    QC_TRY(produced);
    pending = std::async(std::launch::async,
                         [&writer, &t = tensors[i], out] { return writer.write_tensor(t.name, out); });
  }
  return finish_pending(tensors.size() - 1);
}

}  // namespace qc
