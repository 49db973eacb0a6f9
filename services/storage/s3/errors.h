// S3 error codes, carried inside absl::Status (as a payload) through the data plane, and the
// XML error document a client receives. Codes and HTTP statuses follow AWS's list
// (https://docs.aws.amazon.com/AmazonS3/latest/API/ErrorResponses.html). S3 has no standard
// code for a full volume; like Ceph RGW we answer 403 QuotaExceeded.
#pragma once

#include <string>
#include <string_view>

#include "absl/status/status.h"

namespace gpuaas::storage::s3 {

struct S3Error {
  int http_status = 500;
  std::string code;
  std::string message;
};

// A status that carries `code` (an S3 error code from the table in errors.cc); its canonical
// code is the nearest absl one.
absl::Status S3Status(std::string_view code, const std::string& message);
// Any string-like message (std:: or absl::string_view, literals).
template <typename Message>
absl::Status S3Status(std::string_view code, const Message& message) {
  return S3Status(code, std::string(message));
}

// The S3 error a status stands for: the code it carries, else one chosen by its canonical
// code, with NOT_FOUND as `not_found_code`. Unknown and internal errors become InternalError
// with a generic message (the caller logs the detail).
S3Error ToS3Error(const absl::Status& status, std::string_view not_found_code = "NoSuchKey");

// The S3 code a status carries, or "".
std::string S3Code(const absl::Status& status);

// <Error><Code/><Message/><Resource/><RequestId/></Error>
std::string ErrorDocument(const S3Error& error, std::string_view resource,
                          std::string_view request_id);

}  // namespace gpuaas::storage::s3
