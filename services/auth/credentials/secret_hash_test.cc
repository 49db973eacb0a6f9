#include "services/auth/credentials/secret_hash.h"

#include <gtest/gtest.h>

namespace gpuaas::auth {
namespace {

TEST(SecretHash, KnownVector) {
  EXPECT_EQ(HashSecret("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(HashSecret("").size(), 64u);
}

TEST(SecretHash, Verify) {
  std::string stored = HashSecret("gpk_secret");
  EXPECT_TRUE(VerifySecret("gpk_secret", stored));
  EXPECT_FALSE(VerifySecret("gpk_secreT", stored));
  EXPECT_FALSE(VerifySecret("gpk_secret", stored.substr(1)));
  EXPECT_FALSE(VerifySecret("gpk_secret", ""));
}

}  // namespace
}  // namespace gpuaas::auth
