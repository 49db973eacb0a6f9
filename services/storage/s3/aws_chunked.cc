#include "services/storage/s3/aws_chunked.h"

#include <algorithm>
#include <cctype>
#include <limits>
#include <utility>

#include "services/storage/s3/sigv4.h"

namespace gpuaas::storage::s3 {
namespace {

// "10000;chunk-signature=" + 64 hex digits, with room for a long size.
constexpr size_t kMaxHeaderLine = 128;
constexpr std::string_view kSignatureField = ";chunk-signature=";

absl::Status Malformed(std::string_view why) {
  return absl::InvalidArgumentError(std::string("aws-chunked body: ") + std::string(why));
}

}  // namespace

ChunkSignatureChain::ChunkSignatureChain(std::string signing_key, std::string amz_date,
                                         std::string scope, std::string seed_signature)
    : signing_key_(std::move(signing_key)),
      amz_date_(std::move(amz_date)),
      scope_(std::move(scope)),
      previous_(std::move(seed_signature)) {}

bool ChunkSignatureChain::Verify(std::string_view chunk_sha256_hex, std::string_view signature) {
  std::string expected =
      Sign(signing_key_, ChunkStringToSign(amz_date_, scope_, previous_, chunk_sha256_hex));
  if (!ConstantTimeEquals(expected, signature)) {
    return false;
  }
  previous_ = std::move(expected);
  return true;
}

AwsChunkedDecoder::AwsChunkedDecoder(ChunkSignatureChain chain, int64_t decoded_length, Sink out)
    : chain_(std::move(chain)),
      decoded_length_(decoded_length),
      out_(std::move(out)),
      sha_(EVP_MD_CTX_new()) {}

AwsChunkedDecoder::AwsChunkedDecoder(int64_t decoded_length, Sink out)
    : decoded_length_(decoded_length), out_(std::move(out)), sha_(EVP_MD_CTX_new()) {}

AwsChunkedDecoder::~AwsChunkedDecoder() { EVP_MD_CTX_free(sha_); }

absl::Status AwsChunkedDecoder::Feed(std::string_view data) {
  while (!data.empty()) {
    switch (state_) {
      case State::kHeader:
      case State::kTrailer: {
        size_t newline = data.find('\n');
        size_t take = newline == std::string_view::npos ? data.size() : newline + 1;
        if (line_.size() + take > kMaxHeaderLine) {
          return Malformed("chunk header too long");
        }
        line_.append(data.substr(0, take));
        data.remove_prefix(take);
        if (newline != std::string_view::npos) {
          absl::Status status = state_ == State::kHeader ? ParseHeader() : ParseTrailer();
          if (!status.ok()) {
            return status;
          }
        }
        break;
      }
      case State::kData: {
        size_t take = static_cast<size_t>(std::min<int64_t>(remaining_, data.size()));
        std::string_view piece = data.substr(0, take);
        if (chain_) {
          EVP_DigestUpdate(sha_, piece.data(), piece.size());
        }
        absl::Status status = out_(piece);
        if (!status.ok()) {
          return status;
        }
        remaining_ -= static_cast<int64_t>(take);
        data.remove_prefix(take);
        if (remaining_ == 0) {
          status = EndChunk();
          if (!status.ok()) {
            return status;
          }
          state_ = State::kDataEnd;
        }
        break;
      }
      case State::kDataEnd: {
        line_.push_back(data[0]);
        data.remove_prefix(1);
        if (line_.size() == 2) {
          if (line_ != "\r\n") {
            return Malformed("chunk data not followed by CRLF");
          }
          line_.clear();
          state_ = State::kHeader;
        }
        break;
      }
      case State::kDone:
        return Malformed("data after the final chunk");
    }
  }
  return absl::OkStatus();
}

absl::Status AwsChunkedDecoder::ParseHeader() {
  if (line_.size() < 2 || line_[line_.size() - 2] != '\r') {
    return Malformed("chunk header not ended by CRLF");
  }
  std::string_view header(line_.data(), line_.size() - 2);
  size_t field = header.find(kSignatureField);
  size_t size_end = chain_ ? field : header.find(';');
  if (size_end == std::string_view::npos) {
    if (chain_) {
      return Malformed("chunk header without size and chunk-signature");
    }
    size_end = header.size();
  }
  if (size_end == 0 || size_end > 16) {
    return Malformed("chunk header without a size");
  }
  // Sixteen hex digits fill a uint64, not an int64: summed as one, then bounded.
  uint64_t size_bits = 0;
  for (char c : header.substr(0, size_end)) {
    int digit = HexValue(c);
    if (digit < 0) {
      return Malformed("chunk size not hex");
    }
    size_bits = size_bits * 16 + static_cast<uint64_t>(digit);
  }
  if (size_bits > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
    return Malformed("more data than x-amz-decoded-content-length");
  }
  const auto size = static_cast<int64_t>(size_bits);
  std::string_view signature;
  if (chain_) {
    signature = header.substr(field + kSignatureField.size());
    if (signature.size() != 64) {
      return Malformed("chunk-signature not 64 hex digits");
    }
  }
  if (size > decoded_length_ - decoded_) {
    return Malformed("more data than x-amz-decoded-content-length");
  }
  signature_ = std::string(signature);
  line_.clear();
  remaining_ = size;
  decoded_ += size;
  EVP_DigestInit_ex(sha_, EVP_sha256(), nullptr);
  if (size > 0) {
    state_ = State::kData;
    return absl::OkStatus();
  }
  // The final chunk: empty (signed), then trailing headers, if any, and an empty line.
  absl::Status status = EndChunk();
  if (!status.ok()) {
    return status;
  }
  state_ = State::kTrailer;
  return absl::OkStatus();
}

absl::Status AwsChunkedDecoder::ParseTrailer() {
  if (line_.size() < 2 || line_[line_.size() - 2] != '\r') {
    return Malformed("trailer not ended by CRLF");
  }
  std::string_view line(line_.data(), line_.size() - 2);
  if (line.empty()) {
    line_.clear();
    state_ = State::kDone;
    return absl::OkStatus();
  }
  size_t colon = line.find(':');
  if (chain_ || colon == std::string_view::npos || colon == 0) {
    // Signed trailers (x-amz-trailer-signature) are not supported.
    return Malformed("unexpected trailer");
  }
  std::string name(line.substr(0, colon));
  for (char& c : name) {
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  std::string_view value = line.substr(colon + 1);
  while (!value.empty() && value.front() == ' ') {
    value.remove_prefix(1);
  }
  trailers_[name] = std::string(value);
  line_.clear();
  return absl::OkStatus();
}

absl::Status AwsChunkedDecoder::EndChunk() {
  if (!chain_) {
    return absl::OkStatus();
  }
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_DigestFinal_ex(sha_, digest, &len);
  std::string hex = HexEncode(std::string_view(reinterpret_cast<char*>(digest), len));
  if (!chain_->Verify(hex, signature_)) {
    return absl::PermissionDeniedError("aws-chunked body: a chunk signature does not match");
  }
  return absl::OkStatus();
}

absl::Status AwsChunkedDecoder::Finish() {
  if (state_ != State::kDone || decoded_ != decoded_length_) {
    return Malformed("body ended before its final chunk");
  }
  return absl::OkStatus();
}

}  // namespace gpuaas::storage::s3
