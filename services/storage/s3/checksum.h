// The additional checksums of S3's "flexible checksums" (x-amz-checksum-crc32, -crc32c, -sha1,
// -sha256), which newer AWS SDKs send with every upload: as a header, or as the trailer of an
// aws-chunked body (STREAMING-UNSIGNED-PAYLOAD-TRAILER). We verify the ones we know.
#pragma once

#include <memory>
#include <string>
#include <string_view>

namespace gpuaas::storage::s3 {

class PayloadChecksum {
 public:
  virtual ~PayloadChecksum() = default;
  // "crc32", "crc32c", "sha1" or "sha256" (any case); null for another algorithm.
  static std::unique_ptr<PayloadChecksum> For(std::string_view algorithm);
  virtual void Update(std::string_view data) = 0;
  // The digest as S3 writes it: base64 of the big-endian bytes.
  virtual std::string Base64() = 0;
};

}  // namespace gpuaas::storage::s3
