// An error the API server answers with: the HTTP status and OpenAI's error object
// ({"error": {"message", "type", "param", "code"}}), which every OpenAI client knows how to show.
#pragma once

#include <string>

namespace qc::server {

struct ApiError {
  int status = 400;
  std::string message;
  std::string type = "invalid_request_error";  // OpenAI's types: invalid_request_error, authentication_error,
                                               // not_found_error, server_error, ...
  std::string param;                           // the request field at fault; empty when none
  std::string code;                            // e.g. "context_length_exceeded"; empty when none
};

inline ApiError bad_request(std::string message, std::string param = {}, std::string code = {}) {
  return ApiError{400, std::move(message), "invalid_request_error", std::move(param), std::move(code)};
}

// {"error": {...}} as compact JSON.
std::string error_json(const ApiError& e);

}  // namespace qc::server
