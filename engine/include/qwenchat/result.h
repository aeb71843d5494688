// Error values for everything the engine does with outside input.
//
// The engine never exits or aborts on input it did not create: every failure travels back to the caller
// as an Error with a message that names the thing (file, field, tensor) and what was expected, plus an
// optional hint for the user. C++20 has no std::expected, so Result<T> is a small stand-in with the same
// shape; when the toolchain moves to C++23 it can become an alias.
#pragma once

#include <cassert>
#include <string>
#include <utility>
#include <variant>

namespace qc {

struct Error {
  std::string message;  // what went wrong, naming the thing and what was expected
  std::string hint;     // what the user can do about it (may be empty)

  // "message (hint)" for one-line reports (CLI, logs).
  std::string describe() const { return hint.empty() ? message : message + " (" + hint + ")"; }
};

inline Error make_error(std::string message, std::string hint = {}) {
  return Error{std::move(message), std::move(hint)};
}

template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}           // NOLINT(google-explicit-constructor)
  Result(Error error) : v_(std::move(error)) {}       // NOLINT(google-explicit-constructor)

  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }

  T& value() & { assert(ok()); return std::get<0>(v_); }
  const T& value() const& { assert(ok()); return std::get<0>(v_); }
  T&& value() && { assert(ok()); return std::get<0>(std::move(v_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T&& operator*() && { return std::move(*this).value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

  const Error& error() const { assert(!ok()); return std::get<1>(v_); }

 private:
  std::variant<T, Error> v_;
};

// Result without a value.
class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(Error error) : error_(std::move(error)), ok_(false) {}  // NOLINT(google-explicit-constructor)
  static Status success() { return Status(); }

  bool ok() const { return ok_; }
  explicit operator bool() const { return ok_; }
  const Error& error() const { assert(!ok_); return error_; }

 private:
  Error error_;
  bool ok_ = true;
};

}  // namespace qc

#define QC_CONCAT_INNER(a, b) a##b
#define QC_CONCAT(a, b) QC_CONCAT_INNER(a, b)

// Return the error of a Status or Result expression from the enclosing function.
#define QC_TRY(expr)                                 \
  do {                                               \
    auto&& qc_try_status_ = (expr);                  \
    if (!qc_try_status_.ok()) return qc_try_status_.error(); \
  } while (0)

// `QC_ASSIGN(auto x, f());` declares x from a Result, or returns its error.
#define QC_ASSIGN(lhs, expr) QC_ASSIGN_IMPL(QC_CONCAT(qc_assign_, __LINE__), lhs, expr)
#define QC_ASSIGN_IMPL(tmp, lhs, expr)       \
  auto tmp = (expr);                         \
  if (!tmp.ok()) return tmp.error();         \
  lhs = std::move(tmp).value()
