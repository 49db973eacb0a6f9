#include "services/storage/s3/body_reader.h"

#include <openssl/evp.h>

#include <memory>
#include <optional>
#include <utility>

#include "services/storage/s3/aws_chunked.h"
#include "services/storage/s3/checksum.h"
#include "services/storage/s3/errors.h"
#include "services/storage/s3/sigv4.h"

namespace gpuaas::storage::s3 {
namespace {

constexpr size_t kFlushSize = 1 << 20;

struct MdDeleter {
  void operator()(EVP_MD_CTX* ctx) const { EVP_MD_CTX_free(ctx); }
};

// Gathers small network reads into larger writes.
class Coalescer final {
 public:
  explicit Coalescer(const PayloadSink& sink) : sink_(sink) { buffer_.reserve(kFlushSize); }

  absl::Status Add(std::string_view data) {
    delivered_ += static_cast<int64_t>(data.size());
    if (buffer_.empty() && data.size() >= kFlushSize) {
      return sink_(data);
    }
    while (!data.empty()) {
      size_t take = std::min(kFlushSize - buffer_.size(), data.size());
      buffer_.append(data.data(), take);
      data.remove_prefix(take);
      if (buffer_.size() == kFlushSize) {
        absl::Status status = Flush();
        if (!status.ok()) {
          return status;
        }
      }
    }
    return absl::OkStatus();
  }

  absl::Status Flush() {
    if (buffer_.empty()) {
      return absl::OkStatus();
    }
    absl::Status status = sink_(buffer_);
    buffer_.clear();
    return status;
  }

  int64_t delivered() const { return delivered_; }

 private:
  const PayloadSink& sink_;
  std::string buffer_;
  int64_t delivered_ = 0;
};

absl::Status MapDecoderError(const absl::Status& status) {
  if (!S3Code(status).empty()) {
    return status;
  }
  if (status.code() == absl::StatusCode::kPermissionDenied) {
    return S3Status("SignatureDoesNotMatch", status.message());
  }
  return S3Status("InvalidRequest", status.message());
}

}  // namespace

absl::Status ReadBody(const http::ContentReader* reader, const PayloadCheck& check,
                      const ChecksumClaim& checksum, int64_t payload_length,
                      const PayloadSink& sink, bool* consumed) {
  std::unique_ptr<PayloadChecksum> sum =
      checksum.algorithm.empty() ? nullptr : PayloadChecksum::For(checksum.algorithm);
  PayloadSink summed = [&sum, &sink](std::string_view data) {
    if (sum) {
      sum->Update(data);
    }
    return sink(data);
  };
  Coalescer coalescer(summed);
  std::unique_ptr<EVP_MD_CTX, MdDeleter> sha;
  if (check.kind == PayloadCheck::Kind::kSha256) {
    sha.reset(EVP_MD_CTX_new());
    EVP_DigestInit_ex(sha.get(), EVP_sha256(), nullptr);
  }
  std::optional<AwsChunkedDecoder> decoder;
  auto to_coalescer = [&coalescer](std::string_view data) { return coalescer.Add(data); };
  if (check.kind == PayloadCheck::Kind::kStreaming) {
    decoder.emplace(
        ChunkSignatureChain(check.signing_key, check.amz_date, check.scope, check.seed_signature),
        payload_length, to_coalescer);
  } else if (check.kind == PayloadCheck::Kind::kStreamingUnsigned) {
    decoder.emplace(payload_length, to_coalescer);
  }
  int64_t wire_bytes = 0;
  absl::Status failure;
  if (reader != nullptr) {
    bool complete = (*reader)([&](const char* data, size_t size) {
      std::string_view piece(data, size);
      wire_bytes += static_cast<int64_t>(size);
      if (sha) {
        EVP_DigestUpdate(sha.get(), data, size);
      }
      if (decoder) {
        failure = decoder->Feed(piece);
        if (!failure.ok()) {
          failure = MapDecoderError(failure);
        }
      } else if (coalescer.delivered() + static_cast<int64_t>(size) > payload_length) {
        failure = S3Status("IncompleteBody", "more data than announced");
      } else {
        failure = coalescer.Add(piece);
      }
      return failure.ok();
    });
    if (!failure.ok()) {
      return failure;
    }
    if (!complete) {
      return S3Status("IncompleteBody", "the connection ended before the body did");
    }
  }
  *consumed = true;
  if (decoder) {
    absl::Status status = decoder->Finish();
    if (!status.ok()) {
      return MapDecoderError(status);
    }
  }
  if (coalescer.delivered() != payload_length) {
    return S3Status("IncompleteBody",
                    "You did not provide the number of bytes specified by the Content-Length "
                    "HTTP header.");
  }
  if (sha) {
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned int len = 0;
    EVP_DigestFinal_ex(sha.get(), digest, &len);
    if (HexEncode(std::string_view(reinterpret_cast<char*>(digest), len)) != check.sha256_hex) {
      return S3Status("XAmzContentSHA256Mismatch",
                      "The provided 'x-amz-content-sha256' header does not match what was "
                      "computed.");
    }
  }
  absl::Status flushed = coalescer.Flush();
  if (!flushed.ok() || !sum) {
    return flushed;
  }
  std::string expected = checksum.expected;
  if (!checksum.trailer.empty()) {
    auto trailer = decoder ? decoder->trailers().find(checksum.trailer)
                           : std::map<std::string, std::string>::const_iterator();
    if (!decoder || trailer == decoder->trailers().end()) {
      return S3Status("InvalidRequest", "the body lacks the trailer x-amz-trailer announced");
    }
    expected = trailer->second;
  }
  if (sum->Base64() != expected) {
    return S3Status("BadDigest", "The " + checksum.algorithm +
                                     " you specified did not match the calculated checksum.");
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> ReadSmallBody(const http::ContentReader* reader,
                                          const PayloadCheck& check, const ChecksumClaim& checksum,
                                          int64_t payload_length, size_t limit, bool* consumed) {
  if (payload_length < 0 || static_cast<size_t>(payload_length) > limit) {
    return S3Status("EntityTooLarge", "the request body is too large");
  }
  std::string body;
  absl::Status status = ReadBody(
      reader, check, checksum, payload_length,
      [&body](std::string_view data) {
        body.append(data);
        return absl::OkStatus();
      },
      consumed);
  if (!status.ok()) {
    return status;
  }
  return body;
}

}  // namespace gpuaas::storage::s3
