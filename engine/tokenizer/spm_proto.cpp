#include "tokenizer/spm_proto.h"

#include <cstring>

namespace qc {
namespace {

// ---- writing ----

void put_varint(std::string* out, uint64_t v) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>((v & 0x7F) | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}
void put_tag(std::string* out, uint32_t field, uint32_t wire) {
  put_varint(out, (uint64_t{field} << 3) | wire);
}
void put_int(std::string* out, uint32_t field, int64_t v) {  // int32/enum/bool: negatives take 10 bytes
  put_tag(out, field, 0);
  put_varint(out, static_cast<uint64_t>(v));
}
void put_bytes(std::string* out, uint32_t field, std::string_view s) {
  put_tag(out, field, 2);
  put_varint(out, s.size());
  out->append(s);
}
void put_float(std::string* out, uint32_t field, float f) {
  put_tag(out, field, 5);
  uint32_t u = 0;
  std::memcpy(&u, &f, 4);
  for (int i = 0; i < 4; ++i) out->push_back(static_cast<char>((u >> (8 * i)) & 0xFF));
}

// ---- reading ----

struct Field {
  uint32_t number = 0;
  uint32_t wire = 0;
  uint64_t value = 0;      // varint, fixed32, fixed64
  std::string_view bytes;  // length-delimited
};

class Reader {
 public:
  explicit Reader(std::string_view b) : b_(b) {}
  bool done() const { return i_ >= b_.size(); }
  bool next(Field* f) {
    uint64_t key = 0;
    if (!varint(&key) || (key >> 3) == 0 || (key >> 3) > 0x1FFFFFFF) return false;
    f->number = static_cast<uint32_t>(key >> 3);
    f->wire = static_cast<uint32_t>(key & 7);
    switch (f->wire) {
      case 0:
        return varint(&f->value);
      case 1:
        return fixed(8, &f->value);
      case 5:
        return fixed(4, &f->value);
      case 2: {
        uint64_t n = 0;
        if (!varint(&n) || n > b_.size() - i_) return false;
        f->bytes = b_.substr(i_, n);
        i_ += n;
        return true;
      }
      default:
        return false;  // groups (3, 4) are not used by sentencepiece
    }
  }

 private:
  bool varint(uint64_t* v) {
    *v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (i_ >= b_.size()) return false;
      const auto c = static_cast<uint8_t>(b_[i_++]);
      *v |= uint64_t{c & 0x7Fu} << shift;
      if (c < 0x80) return true;
    }
    return false;
  }
  bool fixed(size_t n, uint64_t* v) {
    if (b_.size() - i_ < n) return false;
    *v = 0;
    for (size_t k = 0; k < n; ++k) *v |= uint64_t{static_cast<uint8_t>(b_[i_ + k])} << (8 * k);
    i_ += n;
    return true;
  }
  std::string_view b_;
  size_t i_ = 0;
};

int32_t as_int32(uint64_t v) {
  return static_cast<int32_t>(static_cast<int64_t>(v));
}

}  // namespace

std::string build_spm_model_proto(const SpmVocab& v) {
  std::string out;
  bool byte_pieces = false;
  for (size_t i = 0; i < v.pieces.size(); ++i) {
    std::string p;
    put_bytes(&p, 1, v.pieces[i]);
    put_float(&p, 2, v.scores.empty() ? 0.0f : v.scores[i]);
    const int32_t type = v.types.empty() ? 1 : v.types[i];
    byte_pieces = byte_pieces || type == static_cast<int32_t>(TokenType::kByte);
    put_int(&p, 3, type);
    put_bytes(&out, 1, p);
  }
  const auto piece_or = [&](int32_t id, std::string_view fallback) {
    return id >= 0 && static_cast<size_t>(id) < v.pieces.size()
               ? std::string_view(v.pieces[static_cast<size_t>(id)])
               : fallback;
  };
  int32_t unk = -1;
  for (size_t i = 0; i < v.types.size() && unk < 0; ++i) {
    if (v.types[i] == static_cast<int32_t>(TokenType::kUnknown)) unk = static_cast<int32_t>(i);
  }
  std::string t;
  put_int(&t, 3, v.unigram ? 1 : 2);
  put_int(&t, 4, static_cast<int64_t>(v.pieces.size()));
  put_int(&t, 35, byte_pieces ? 1 : 0);
  put_int(&t, 40, unk);
  put_int(&t, 41, v.bos);
  put_int(&t, 42, v.eos);
  put_int(&t, 43, v.pad);
  put_bytes(&t, 45, piece_or(unk, "<unk>"));
  put_bytes(&t, 46, piece_or(v.bos, "<s>"));
  put_bytes(&t, 47, piece_or(v.eos, "</s>"));
  put_bytes(&t, 48, piece_or(v.pad, "<pad>"));
  put_bytes(&out, 2, t);
  std::string n;
  put_bytes(&n, 1, "identity");
  put_int(&n, 3, v.add_space_prefix ? 1 : 0);
  put_int(&n, 4, v.remove_extra_whitespaces ? 1 : 0);
  put_int(&n, 5, 1);
  put_bytes(&out, 3, n);
  return out;
}

Result<SpmVocab> parse_spm_model_proto(std::string_view bytes, const std::string& src,
                                       std::string* normalizer) {
  SpmVocab v;
  v.unigram = true;  // the proto default
  v.bos = 1, v.eos = 2, v.pad = -1;
  v.add_space_prefix = true, v.remove_extra_whitespaces = true;
  const auto bad = [&](const std::string& what) {
    return make_error(src + ": not a SentencePiece model: " + what);
  };
  Reader top(bytes);
  Field f;
  while (!top.done()) {
    if (!top.next(&f)) return bad("malformed protobuf");
    if (f.number == 1 && f.wire == 2) {
      std::string piece;
      float score = 0.0f;
      int32_t type = 1;
      Reader r(f.bytes);
      Field g;
      while (!r.done()) {
        if (!r.next(&g)) return bad("malformed piece " + std::to_string(v.pieces.size()));
        if (g.number == 1 && g.wire == 2) piece = std::string(g.bytes);
        if (g.number == 2 && g.wire == 5) {
          const auto u = static_cast<uint32_t>(g.value);
          std::memcpy(&score, &u, 4);
        }
        if (g.number == 3 && g.wire == 0) type = as_int32(g.value);
      }
      if (type < 1 || type > 6) return bad("piece \"" + piece + "\" has type " + std::to_string(type));
      v.pieces.push_back(std::move(piece));
      v.scores.push_back(score);
      v.types.push_back(type);
    } else if (f.number == 2 && f.wire == 2) {
      Reader r(f.bytes);
      Field g;
      while (!r.done()) {
        if (!r.next(&g)) return bad("malformed trainer_spec");
        if (g.wire != 0) continue;
        if (g.number == 3) v.unigram = g.value == 1;
        if (g.number == 41) v.bos = as_int32(g.value);
        if (g.number == 42) v.eos = as_int32(g.value);
        if (g.number == 43) v.pad = as_int32(g.value);
      }
    } else if (f.number == 3 && f.wire == 2) {
      Reader r(f.bytes);
      Field g;
      while (!r.done()) {
        if (!r.next(&g)) return bad("malformed normalizer_spec");
        if (g.number == 1 && g.wire == 2 && normalizer) *normalizer = std::string(g.bytes);
        if (g.number == 3 && g.wire == 0) v.add_space_prefix = g.value != 0;
        if (g.number == 4 && g.wire == 0) v.remove_extra_whitespaces = g.value != 0;
      }
    }
  }
  if (v.pieces.empty()) return bad("no pieces");
  const auto n = static_cast<int32_t>(v.pieces.size());
  for (int32_t* id : {&v.bos, &v.eos, &v.pad}) {
    if (*id >= n) *id = -1;
  }
  return v;
}

}  // namespace qc
