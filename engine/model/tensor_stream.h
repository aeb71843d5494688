// Writes a file's tensors in declaration order while the next one is being produced: tensor i's bytes go
// to the disk on a second thread while the caller's threads encode tensor i + 1 into the other of two
// buffers. Without it the writers (qwenchat-mkmodel) ran encode, write, encode, write: the write (a copy
// into the page cache, then the disk) was a serial tail on every tensor, idling every encoding thread; for
// the 27b preset in q4_k_m that is ~16 GB written by one thread.
//
// Cost: two buffers of the largest tensor's size (2 x 1.04 GB for the 27b preset, whose 248320 x 5120
// embedding is Q6_K), allocated once and left uninitialised, so pages are first touched by the encoding
// threads in parallel rather than zeroed by one.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "qwenchat/result.h"

namespace qc {
namespace gguf {
class Writer;
}

struct StreamedTensor {
  std::string name;     // as declared with Writer::add_tensor, in declaration order
  uint64_t nbytes = 0;  // its encoded size
};

// Fills `out` (exactly the tensor's nbytes) with tensor `index`'s bytes. Runs on the calling thread.
using ProduceTensor = std::function<Status(size_t index, std::span<uint8_t> out)>;

// Produces and writes every tensor into `writer` (begin() done, finish() left to the caller). `written`
// (may be empty) is called on the calling thread after tensor i is on its way to the disk, in order. The
// error returned is the first in file order: a write error of tensor i wins over a produce error of i + 1.
Status stream_tensors(gguf::Writer& writer, const std::vector<StreamedTensor>& tensors,
                      const ProduceTensor& produce, const std::function<void(size_t index)>& written);

}  // namespace qc
