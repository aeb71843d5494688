#include "import/safetensors.h"
#include "qwenchat/json_depth.h"

#include <algorithm>
#include <cstring>
#include <functional>
#include <nlohmann/json.hpp>
#include <set>
#include <utility>

namespace qc::st {
namespace {

using nlohmann::json;

struct DtypeInfo {
  Dtype dtype;
  std::string_view name;
  uint32_t bits;
};

constexpr DtypeInfo kDtypes[] = {
    {Dtype::kF32, "F32", 32},        {Dtype::kF16, "F16", 16},        {Dtype::kBF16, "BF16", 16},
    {Dtype::kF64, "F64", 64},        {Dtype::kI8, "I8", 8},           {Dtype::kI16, "I16", 16},
    {Dtype::kI32, "I32", 32},        {Dtype::kI64, "I64", 64},        {Dtype::kU8, "U8", 8},
    {Dtype::kU16, "U16", 16},        {Dtype::kU32, "U32", 32},        {Dtype::kU64, "U64", 64},
    {Dtype::kBool, "BOOL", 8},       {Dtype::kF8_E4M3, "F8_E4M3", 8}, {Dtype::kF8_E5M2, "F8_E5M2", 8},
    {Dtype::kF8_E8M0, "F8_E8M0", 8}, {Dtype::kF6_E2M3, "F6_E2M3", 6}, {Dtype::kF6_E3M2, "F6_E3M2", 6},
    {Dtype::kF4, "F4", 4},           {Dtype::kC64, "C64", 64},
};

const DtypeInfo* find_dtype(std::string_view name) {
  for (const DtypeInfo& d : kDtypes) {
    if (d.name == name) return &d;
  }
  return nullptr;
}

std::string known_dtypes() {
  std::string s;
  for (const DtypeInfo& d : kDtypes) s += (s.empty() ? "" : ", ") + std::string(d.name);
  return s;
}

std::string range_str(const Tensor& t) {
  return "[" + std::to_string(t.begin) + ", " + std::to_string(t.end) + ")";
}

// Tracks object keys while nlohmann parses, to refuse duplicates (nlohmann would keep the last silently,
// hiding a second definition of a tensor). One key set per open object.
struct DuplicateKeyCheck {
  std::vector<std::set<std::string>> open;
  std::string duplicate;
  bool operator()(int /*depth*/, json::parse_event_t event, json& parsed) {
    switch (event) {
      case json::parse_event_t::object_start:
        open.emplace_back();
        break;
      case json::parse_event_t::object_end:
        if (!open.empty()) open.pop_back();
        break;
      case json::parse_event_t::key:
        if (!open.empty() && parsed.is_string() && !open.back().insert(parsed.get<std::string>()).second &&
            duplicate.empty()) {
          duplicate = parsed.get<std::string>();
        }
        break;
      default:
        break;
    }
    return true;
  }
};

}  // namespace

std::string_view dtype_name(Dtype d) {
  for (const DtypeInfo& i : kDtypes) {
    if (i.dtype == d) return i.name;
  }
  return "?";
}

uint32_t dtype_bits(Dtype d) {
  for (const DtypeInfo& i : kDtypes) {
    if (i.dtype == d) return i.bits;
  }
  return 0;
}

bool to_engine_dtype(Dtype d, DType* out) {
  switch (d) {
    case Dtype::kF32:
      *out = DType::kF32;
      return true;
    case Dtype::kF16:
      *out = DType::kF16;
      return true;
    case Dtype::kBF16:
      *out = DType::kBF16;
      return true;
    default:
      return false;
  }
}

uint64_t Tensor::n_elements() const {
  uint64_t n = 1;
  for (uint64_t d : shape) n *= d;  // checked for overflow when the file was parsed
  return n;
}

std::string Tensor::shape_str() const {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

Result<std::unique_ptr<File>> File::open(const std::string& path, const Limits& limits) {
  QC_ASSIGN(MappedBytes bytes, MappedBytes::map(path, "a safetensors file"));
  return adopt(std::move(bytes), path, limits);
}

Result<std::unique_ptr<File>> File::from_bytes(std::span<const uint8_t> bytes, std::string name,
                                               const Limits& limits) {
  return adopt(MappedBytes::copy(bytes), std::move(name), limits);
}

Result<std::unique_ptr<File>> File::adopt(MappedBytes bytes, std::string name, const Limits& limits) {
  std::unique_ptr<File> f(new File());
  f->path_ = std::move(name);
  f->bytes_ = std::move(bytes);
  QC_TRY(f->parse(limits));
  return f;
}

const Tensor* File::find(std::string_view name) const {
  const auto it = index_.find(std::string(name));
  return it == index_.end() ? nullptr : &tensors_[it->second];
}

Status File::parse(const Limits& limits) {
  const uint8_t* base = bytes_.data();
  const uint64_t size = bytes_.size();
  const auto bad = [&](const std::string& what) { return Status(make_error(path_ + ": " + what)); };
  if (size < 8) {
    return bad("file is " + std::to_string(size) + " bytes: too short for the 8-byte header length");
  }
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | base[i];  // little-endian
  if (n > limits.max_header_bytes) {
    return bad("header length " + std::to_string(n) + " exceeds the limit of " +
               std::to_string(limits.max_header_bytes) + " bytes (not a safetensors file?)");
  }
  if (n > size - 8) {
    return bad("header length " + std::to_string(n) + " exceeds the file: only " + std::to_string(size - 8) +
               " bytes follow the length field (truncated file?)");
  }
  if (n < 2 || base[8] != '{') return bad("header does not start with '{': not a safetensors JSON header");
  data_start_ = 8 + n;
  const uint64_t data_size = size - data_start_;

  const std::string_view text(reinterpret_cast<const char*>(base + 8), static_cast<size_t>(n));
  DuplicateKeyCheck dup;
  if (json_nesting_depth(text) > kMaxJsonFileDepth) {
    return bad("header nests deeper than " + std::to_string(kMaxJsonFileDepth) + " levels of arrays and objects");
  }
  json j = json::parse(text, std::ref(dup), /*allow_exceptions=*/false);
  if (j.is_discarded()) return bad("header is not valid JSON (or not UTF-8)");
  if (!dup.duplicate.empty()) return bad("header names \"" + dup.duplicate + "\" twice");
  if (!j.is_object()) return bad("header: expected a JSON object, got " + std::string(j.type_name()));

  for (auto& [key, value] : j.items()) {
    if (key == "__metadata__") {
      if (!value.is_object()) return bad("__metadata__: expected an object of strings");
      for (auto& [mk, mv] : value.items()) {
        if (!mv.is_string())
          return bad("__metadata__[\"" + mk + "\"]: expected a string, got " + mv.type_name());
        metadata_[mk] = mv.get<std::string>();
      }
      continue;
    }
    const std::string where = "tensor \"" + key + "\": ";
    if (!value.is_object()) return bad(where + "expected an object, got " + std::string(value.type_name()));
    Tensor t;
    t.name = key;
    const auto dt = value.find("dtype");
    if (dt == value.end() || !dt->is_string()) return bad(where + "\"dtype\" is missing or not a string");
    const DtypeInfo* info = find_dtype(dt->get<std::string>());
    if (!info) {
      return bad(where + "unknown dtype \"" + dt->get<std::string>() + "\" (expected one of " +
                 known_dtypes() + ")");
    }
    t.dtype = info->dtype;
    const auto sh = value.find("shape");
    if (sh == value.end() || !sh->is_array()) return bad(where + "\"shape\" is missing or not an array");
    if (sh->size() > limits.max_rank) {
      return bad(where + "shape has " + std::to_string(sh->size()) + " dimensions, more than " +
                 std::to_string(limits.max_rank));
    }
    uint64_t elems = 1;
    bool overflow = false;
    for (const json& d : *sh) {
      if (!d.is_number_unsigned()) return bad(where + "shape entries must be non-negative integers");
      t.shape.push_back(d.get<uint64_t>());
      overflow |= __builtin_mul_overflow(elems, t.shape.back(), &elems);
    }
    const auto off = value.find("data_offsets");
    if (off == value.end() || !off->is_array() || off->size() != 2 || !(*off)[0].is_number_unsigned() ||
        !(*off)[1].is_number_unsigned()) {
      return bad(where + "\"data_offsets\" must be [begin, end] of non-negative integers");
    }
    t.begin = (*off)[0].get<uint64_t>();
    t.end = (*off)[1].get<uint64_t>();
    uint64_t bits = 0;
    overflow |= __builtin_mul_overflow(elems, static_cast<uint64_t>(info->bits), &bits);
    if (overflow)
      return bad(where + "shape " + t.shape_str() + " is too large (byte size overflows 64 bits)");
    if (bits % 8 != 0) {
      return bad(where + std::string(info->name) + " " + t.shape_str() + " is not a whole number of bytes");
    }
    if (t.end < t.begin) return bad(where + "data_offsets " + range_str(t) + " end before they begin");
    if (t.end - t.begin != bits / 8) {
      return bad(where + std::string(info->name) + " " + t.shape_str() + " needs " +
                 std::to_string(bits / 8) + " bytes, data_offsets " + range_str(t) + " hold " +
                 std::to_string(t.end - t.begin));
    }
    if (t.end > data_size) {
      return bad(where + "data_offsets " + range_str(t) + " run past the data section (" +
                 std::to_string(data_size) + " bytes)");
    }
    tensors_.push_back(std::move(t));
  }

  // Tensors must tile the data section exactly, in offset order: an overlap means two tensors share bytes,
  // a hole or a tail means bytes nobody owns (both are signs of a corrupt or hand-edited file).
  std::sort(tensors_.begin(), tensors_.end(), [](const Tensor& a, const Tensor& b) {
    return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
  });
  uint64_t pos = 0;
  const Tensor* prev = nullptr;
  for (const Tensor& t : tensors_) {
    if (t.begin < pos) {
      return bad("tensors \"" + prev->name + "\" " + range_str(*prev) + " and \"" + t.name + "\" " +
                 range_str(t) + " overlap");
    }
    if (t.begin > pos) {
      return bad("bytes [" + std::to_string(pos) + ", " + std::to_string(t.begin) +
                 ") of the data section belong to no tensor (before \"" + t.name + "\")");
    }
    pos = t.end;
    prev = &t;
  }
  if (pos != data_size) {
    return bad("the data section has " + std::to_string(data_size) + " bytes but the tensors cover " +
               std::to_string(pos));
  }
  for (size_t i = 0; i < tensors_.size(); ++i) index_.emplace(tensors_[i].name, i);
  return {};
}

}  // namespace qc::st
