// Hand-made S3 requests over a plain socket, for the cases real clients never send: wrong
// secrets, skewed clocks, expired URLs, aws-chunked bodies, uploads cut off mid-body, and paths
// exactly as written. Signs with sigv4.h (which AWS's published examples pin down).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "services/storage/s3/testing/test_stack.h"

namespace gpuaas::storage::s3::testing {

struct HttpReply {
  int status = 0;
  std::multimap<std::string, std::string> headers;  // lower-case names
  std::string body;
  // False when the connection broke before the whole reply came (no reply, a reset, or a body
  // shorter than its Content-Length): what an SDK sends again.
  bool complete = false;
  std::string Header(const std::string& name) const;
  // <Code> of an error document, or "".
  std::string ErrorCode() const;
};

struct RawRequest {
  std::string method = "GET";
  std::string path = "/";  // as sent: already percent-encoded
  std::string query;       // as sent, without '?'
  std::vector<std::pair<std::string, std::string>> headers;
  // Sent but never signed (what an attacker adds to a signed request or presigned URL).
  std::vector<std::pair<std::string, std::string>> unsigned_headers;
  std::string body;
  // Sign with this key (nullopt: unsigned). Extra headers are signed too.
  std::optional<TestKey> key;
  absl::Time time = absl::Now();
  // "": the body's SHA-256. Else sent as is (UNSIGNED-PAYLOAD, a wrong hash...).
  std::string payload_hash;
  // Send the body aws-chunked (STREAMING-AWS4-HMAC-SHA256-PAYLOAD) in chunks of this size.
  size_t chunk_size = 0;
  // Corrupt the n-th chunk's signature (1-based; 0: none).
  int bad_chunk = 0;
  // With chunk_size: STREAMING-UNSIGNED-PAYLOAD-TRAILER instead, the body's CRC-32 (or this
  // value, when set) in an x-amz-checksum-crc32 trailer.
  bool unsigned_trailer = false;
  std::string trailer_crc32;
  // Send only this many bytes of the request, then close (a cut connection).
  std::optional<size_t> cut_after;
  std::string region = "us-east-1";
};

// Sends `request` to 127.0.0.1:port over one connection and reads the reply.
HttpReply Send(int port, const RawRequest& request);

// The query string of a presigned GET/PUT URL for `path` (as sent), signing `extra_query`
// ("name=value&...", already encoded, e.g. response-content-disposition) with it.
std::string PresignQuery(int port, const std::string& method, const std::string& path,
                         const TestKey& key, absl::Time time, absl::Duration expires,
                         const std::string& extra_query = "");

}  // namespace gpuaas::storage::s3::testing
