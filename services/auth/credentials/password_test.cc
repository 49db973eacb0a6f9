#include "services/auth/credentials/password.h"

#include <gtest/gtest.h>

namespace gpuaas::auth {
namespace {

// Cheap parameters keep the suite fast; one test runs the production cost.
constexpr ScryptParams kCheap{.n = 1024, .r = 8, .p = 1};

TEST(Password, HashAndVerify) {
  std::string encoded = HashPassword("correct horse", kCheap);
  EXPECT_EQ(encoded.rfind("scrypt$1024$8$1$", 0), 0u) << encoded;
  EXPECT_TRUE(VerifyPassword("correct horse", encoded));
  EXPECT_FALSE(VerifyPassword("correct horsE", encoded));
  EXPECT_FALSE(VerifyPassword("", encoded));
}

TEST(Password, DefaultCostIsSelfDescribing) {
  std::string encoded = HashPassword("pw");
  EXPECT_EQ(encoded.rfind("scrypt$16384$8$1$", 0), 0u) << encoded;
  EXPECT_TRUE(VerifyPassword("pw", encoded));
}

TEST(Password, SaltMakesEveryHashDifferent) {
  EXPECT_NE(HashPassword("same", kCheap), HashPassword("same", kCheap));
}

TEST(Password, EmptyAndBinaryPasswords) {
  std::string empty = HashPassword("", kCheap);
  EXPECT_TRUE(VerifyPassword("", empty));
  EXPECT_FALSE(VerifyPassword("x", empty));
  std::string binary("a\0b", 3);
  std::string encoded = HashPassword(binary, kCheap);
  EXPECT_TRUE(VerifyPassword(binary, encoded));
  EXPECT_FALSE(VerifyPassword("a", encoded));
}

TEST(Password, MalformedEncodingsAreFalse) {
  std::string good = HashPassword("pw", kCheap);
  const std::string salt_and_hash = good.substr(std::string_view("scrypt$1024$8$1$").size());
  const std::string kBad[] = {
      "",
      "pw",
      "scrypt",
      "bcrypt$1024$8$1$" + salt_and_hash,
      "scrypt$1000$8$1$" + salt_and_hash,     // N not a power of two
      "scrypt$01024$8$1$" + salt_and_hash,    // leading zero
      "scrypt$1024$0$1$" + salt_and_hash,     // r = 0
      "scrypt$1024$8$0$" + salt_and_hash,     // p = 0
      "scrypt$4194304$8$1$" + salt_and_hash,  // N beyond the bound
      "scrypt$1024$8$1$$" + salt_and_hash,    // extra field
      "scrypt$1024$8$-1$" + salt_and_hash,
      "scrypt$1024$8$1$!!!!$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
      "scrypt$1024$8$1$AAAAAAAAAAAAAAAAAAAAAA$AAAA",  // hash too short
      good + "$",
      good.substr(0, good.size() - 1),
  };
  for (const std::string& encoded : kBad) {
    EXPECT_FALSE(VerifyPassword("pw", encoded)) << encoded;
  }
}

}  // namespace
}  // namespace gpuaas::auth
