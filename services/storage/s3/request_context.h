// One S3 request as the handlers see it: the HTTP exchange, what routing and authentication
// found, the bucket's volume, and helpers to answer.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "absl/time/time.h"
#include "libs/http/http_message.h"
#include "services/storage/backend.h"
#include "services/storage/s3/auth.h"
#include "services/storage/s3/body_reader.h"
#include "services/storage/s3/directory.h"
#include "services/storage/s3/operation.h"
#include "services/storage/s3/sigv4.h"

namespace gpuaas::storage::s3 {

class S3Metrics;

// A request's one log line (and its metrics), written when the last holder lets go: for a
// streamed GET that is after the body went out, so bytes and latency cover it.
struct RequestLog {
  ~RequestLog();

  std::string request_id;
  std::string method;
  std::string operation;
  std::string bucket;
  std::string caller;
  std::string error_code;
  int status = 0;
  int64_t bytes_in = 0;
  int64_t bytes_out = 0;
  bool aborted = false;  // the response body was cut short
  absl::Time start;
  S3Metrics* metrics = nullptr;
};

struct RequestContext {
  RequestContext(const http::HttpRequest& http_request, http::HttpResponse& http_response,
                 const http::ContentReader* body_reader)
      : http(http_request), res(http_response), body(body_reader) {}

  const http::HttpRequest& http;
  http::HttpResponse& res;
  const http::ContentReader* body;  // null when the request carries no body

  std::string request_id;
  std::string method;
  std::string decoded_path;  // "/bucket/key"
  std::string bucket;
  std::string key;
  QueryParams query;
  Operation op = Operation::kNotImplemented;
  Authenticated auth;
  Bucket bucket_info;
  std::shared_ptr<Volume> volume;
  absl::Time now;

  std::shared_ptr<RequestLog> log = std::make_shared<RequestLog>();
  bool body_consumed = false;

  const std::string* Param(std::string_view name) const;
  bool HasParam(std::string_view name) const { return Param(name) != nullptr; }
  // The first value of a header, or "".
  std::string Header(std::string_view name) const;
  bool HasHeader(std::string_view name) const;
  // Content-Length, or x-amz-decoded-content-length for an aws-chunked body: the payload's
  // length. MissingContentLength when neither is known.
  absl::StatusOr<int64_t> PayloadLength() const;
  // The flexible checksum the client sent (x-amz-checksum-* header or x-amz-trailer).
  ChecksumClaim Checksum() const;
};

// Answers with an XML document.
void SendXml(RequestContext& ctx, int status, std::string body);
// Answers with no body.
void SendEmpty(RequestContext& ctx, int status);

// S3's times: "2009-10-12T17:50:30.000Z" in XML, RFC 1123 in headers.
std::string XmlTime(absl::Time t);
std::string HttpTime(absl::Time t);

}  // namespace gpuaas::storage::s3
