#include "services/storage/s3/checksum.h"

#include <gtest/gtest.h>

namespace gpuaas::storage::s3 {
namespace {

std::string Of(std::string_view algorithm, std::string_view data) {
  auto sum = PayloadChecksum::For(algorithm);
  EXPECT_NE(sum, nullptr) << algorithm;
  // In two pieces, as bodies arrive.
  sum->Update(data.substr(0, data.size() / 2));
  sum->Update(data.substr(data.size() / 2));
  return sum->Base64();
}

TEST(ChecksumTest, StandardCheckValues) {
  EXPECT_EQ(Of("crc32", "123456789"), "y/Q5Jg==");   // 0xCBF43926
  EXPECT_EQ(Of("CRC32C", "123456789"), "4waSgw==");  // 0xE3069283
  EXPECT_EQ(Of("sha256", ""), "47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=");
  EXPECT_EQ(Of("sha1", "abc"), "qZk+NkcGgWq6PiVxeFDCbJzQ2J0=");
  EXPECT_EQ(PayloadChecksum::For("crc64nvme"), nullptr);
}

}  // namespace
}  // namespace gpuaas::storage::s3
