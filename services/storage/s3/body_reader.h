// Pulls a request body through the transport's http::ContentReader and hands its payload on in
// pieces of at most 1 MiB, never holding more: the SHA-256 the signature covers is checked at the
// end (XAmzContentSHA256Mismatch), an aws-chunked body is decoded with every chunk signature
// checked, and the payload must be exactly the announced length. The caller commits nothing
// until Read returns OK.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "libs/http/http_message.h"
#include "services/storage/s3/auth.h"

namespace gpuaas::storage::s3 {

using PayloadSink = std::function<absl::Status(std::string_view)>;

// A flexible checksum the client claims for the payload.
struct ChecksumClaim {
  std::string algorithm;  // "crc32", "crc32c", "sha1", "sha256", ...; empty: none
  std::string expected;   // base64, from an x-amz-checksum-* header
  std::string trailer;    // or the trailer that will carry it ("x-amz-checksum-crc32")
};

// `reader` is null for a request without a body. `payload_length` is the decoded length
// (Content-Length, or x-amz-decoded-content-length for aws-chunked). Sets `*consumed` once
// the whole body has been read off the connection. Errors: XAmzContentSHA256Mismatch,
// SignatureDoesNotMatch (a chunk), IncompleteBody (cut or short), InvalidRequest (framing),
// BadDigest (the flexible checksum, when we know its algorithm), or the sink's status.
absl::Status ReadBody(const http::ContentReader* reader, const PayloadCheck& check,
                      const ChecksumClaim& checksum, int64_t payload_length,
                      const PayloadSink& sink, bool* consumed);

// A small body (XML) into memory; EntityTooLarge past `limit` bytes.
absl::StatusOr<std::string> ReadSmallBody(const http::ContentReader* reader,
                                          const PayloadCheck& check, const ChecksumClaim& checksum,
                                          int64_t payload_length, size_t limit, bool* consumed);

}  // namespace gpuaas::storage::s3
