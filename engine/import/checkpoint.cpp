#include "import/checkpoint.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "qwenchat/json_depth.h"
#include "util/read_file.h"

namespace qc {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// A shard name from the index must stay inside the checkpoint folder.
bool plain_file_name(const std::string& s) {
  return !s.empty() && s != "." && s != ".." && s.find('/') == std::string::npos &&
         s.find('\\') == std::string::npos && s.find('\0') == std::string::npos;
}

}  // namespace

Status Checkpoint::add_file(const std::string& file_name) {
  QC_ASSIGN(auto f, st::File::open((fs::path(dir_) / file_name).string()));
  for (const st::Tensor& t : f->tensors()) {
    const auto [it, fresh] = tensors_.emplace(t.name, CheckpointTensor{f.get(), &t});
    if (!fresh) {
      return make_error(dir_ + ": tensor \"" + t.name + "\" is stored twice, in " + it->second.file->path() +
                        " and in " + f->path());
    }
  }
  files_.push_back(std::move(f));
  return {};
}

Result<std::unique_ptr<Checkpoint>> Checkpoint::open(const std::string& dir) {
  std::unique_ptr<Checkpoint> c(new Checkpoint());
  c->dir_ = dir;
  const std::string index_path = (fs::path(dir) / "model.safetensors.index.json").string();
  std::error_code ec;
  if (!fs::exists(index_path, ec)) {
    if (!fs::exists(fs::path(dir) / "model.safetensors", ec)) {
      return make_error(dir + ": no model.safetensors or model.safetensors.index.json",
                        "pass a Hugging Face checkpoint folder saved in the safetensors format");
    }
    QC_TRY(c->add_file("model.safetensors"));
    return c;
  }

  QC_ASSIGN(const std::string text, read_whole_file(index_path));
  QC_TRY(check_json_depth(text, index_path));
  const json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) return make_error(index_path + ": not a JSON object");
  const auto wm = j.find("weight_map");
  if (wm == j.end() || !wm->is_object() || wm->empty()) {
    return make_error(index_path + ": \"weight_map\" is missing or not a non-empty object of tensor -> file");
  }
  std::vector<std::string> shard_names;
  for (const auto& [name, file] : wm->items()) {
    if (!file.is_string() || !plain_file_name(file.get<std::string>())) {
      return make_error(index_path + ": weight_map[\"" + name +
                        "\"]: expected a file name inside the folder");
    }
    shard_names.push_back(file.get<std::string>());
  }
  std::sort(shard_names.begin(), shard_names.end());
  shard_names.erase(std::unique(shard_names.begin(), shard_names.end()), shard_names.end());
  for (const std::string& s : shard_names) QC_TRY(c->add_file(s));

  // Every mapped tensor must be where the index says.
  for (const auto& [name, file] : wm->items()) {
    const CheckpointTensor* t = c->find(name);
    const std::string want = (fs::path(dir) / file.get<std::string>()).string();
    if (!t) return make_error(index_path + ": tensor \"" + name + "\" is not in " + want);
    if (t->file->path() != want) {
      return make_error(index_path + ": tensor \"" + name + "\" is mapped to " + want + " but stored in " +
                        t->file->path());
    }
  }
  return c;
}

const CheckpointTensor* Checkpoint::find(std::string_view name) const {
  const auto it = tensors_.find(std::string(name));
  return it == tensors_.end() ? nullptr : &it->second;
}

std::vector<std::string> Checkpoint::names() const {
  std::vector<std::string> n;
  n.reserve(tensors_.size());
  for (const auto& [name, t] : tensors_) n.push_back(name);
  std::sort(n.begin(), n.end());
  return n;
}

Result<DType> checkpoint_dtype(const CheckpointTensor& t) {
  DType d;
  if (!st::to_engine_dtype(t.tensor->dtype, &d)) {
    return make_error(t.file->path() + ": tensor \"" + t.tensor->name + "\" has dtype " +
                          std::string(st::dtype_name(t.tensor->dtype)) + ": expected F32, F16 or BF16",
                      "quantized or integer checkpoints cannot be converted; use the BF16/F32 release");
  }
  return d;
}

Result<std::vector<float>> Checkpoint::read_f32(std::string_view name) const {
  const CheckpointTensor* t = find(name);
  if (!t) return make_error(dir_ + ": tensor \"" + std::string(name) + "\" is missing");
  QC_ASSIGN(const DType d, checkpoint_dtype(*t));
  const uint64_t n = t->tensor->n_elements();
  std::vector<float> out(static_cast<size_t>(n));
  decode_row(d, t->file->data(*t->tensor).data(), out.data(), static_cast<int64_t>(n));
  return out;
}

}  // namespace qc
