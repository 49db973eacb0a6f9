// The aws-chunked body of a STREAMING-AWS4-HMAC-SHA256-PAYLOAD upload:
//   <hex size>;chunk-signature=<64 hex>\r\n<data>\r\n ... 0;chunk-signature=<64 hex>\r\n\r\n
// decoded as it streams in, in pieces of any size, with every chunk's signature checked
// against the chain that starts at the request's own (seed) signature.
// https://docs.aws.amazon.com/AmazonS3/latest/API/sigv4-streaming.html
#pragma once

#include <openssl/evp.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/status.h"

namespace gpuaas::storage::s3 {

// Verifies a chain of chunk signatures: each signs its chunk's SHA-256 and the signature
// before it.
class ChunkSignatureChain final {
 public:
  ChunkSignatureChain(std::string signing_key, std::string amz_date, std::string scope,
                      std::string seed_signature);
  // True (and the chain moves on) when `signature` is the next link for a chunk whose SHA-256
  // is `chunk_sha256_hex`.
  bool Verify(std::string_view chunk_sha256_hex, std::string_view signature);

 private:
  std::string signing_key_;
  std::string amz_date_;
  std::string scope_;
  std::string previous_;
};

// Hands the decoded bytes to `out` as they arrive (before their chunk's signature can be
// checked: the caller commits nothing until Finish is OK). Errors: INVALID_ARGUMENT for
// malformed framing or more data than `decoded_length`; PERMISSION_DENIED for a chunk whose
// signature does not match; whatever `out` returns.
class AwsChunkedDecoder final {
 public:
  using Sink = std::function<absl::Status(std::string_view)>;
  AwsChunkedDecoder(ChunkSignatureChain chain, int64_t decoded_length, Sink out);
  ~AwsChunkedDecoder();
  AwsChunkedDecoder(const AwsChunkedDecoder&) = delete;
  AwsChunkedDecoder& operator=(const AwsChunkedDecoder&) = delete;

  absl::Status Feed(std::string_view data);
  // OK when the final (empty, signed) chunk and its CRLF arrived and exactly `decoded_length`
  // bytes were decoded. INVALID_ARGUMENT for a body cut short.
  absl::Status Finish();

 private:
  enum class State { kHeader, kData, kDataEnd, kFinalEnd, kDone };

  absl::Status ParseHeader();
  absl::Status EndChunk();

  ChunkSignatureChain chain_;
  int64_t decoded_length_;
  int64_t decoded_ = 0;
  Sink out_;
  State state_ = State::kHeader;
  std::string line_;       // header line or CRLF being collected
  int64_t remaining_ = 0;  // data bytes left in the current chunk
  std::string signature_;  // of the current chunk
  EVP_MD_CTX* sha_ = nullptr;
};

}  // namespace gpuaas::storage::s3
