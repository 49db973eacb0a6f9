#include "libs/common/secret_box.h"

#include <gtest/gtest.h>

#include <fstream>

#include "libs/testing/status_matchers.h"
#include "libs/testing/temp_dir.h"

namespace gpuaas {
namespace {

using gpuaas::testing::IsOkAndHolds;
using gpuaas::testing::StatusIs;

SecretBox Box(char fill) { return *SecretBox::FromKey(std::string(SecretBox::kKeyBytes, fill)); }

TEST(SecretBoxTest, RoundTrips) {
  const SecretBox box = Box('k');
  const std::string secret = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY";
  ASSERT_OK_AND_ASSIGN(std::string sealed, box.Seal(secret, "GKAAAAAAAAAAAAAAAAAA"));
  EXPECT_EQ(sealed.size(), SecretBox::kNonceBytes + secret.size() + SecretBox::kTagBytes);
  EXPECT_EQ(sealed.find(secret), std::string::npos);
  ASSERT_OK_AND_ASSIGN(std::string opened, box.Open(sealed, "GKAAAAAAAAAAAAAAAAAA"));
  EXPECT_EQ(opened, secret);
  // Empty plaintexts seal too (only a tag).
  ASSERT_OK_AND_ASSIGN(std::string empty, box.Seal("", "aad"));
  EXPECT_THAT(box.Open(empty, "aad"), IsOkAndHolds(""));
}

TEST(SecretBoxTest, EachSealHasItsOwnNonce) {
  const SecretBox box = Box('k');
  ASSERT_OK_AND_ASSIGN(std::string a, box.Seal("same secret", "id"));
  ASSERT_OK_AND_ASSIGN(std::string b, box.Seal("same secret", "id"));
  EXPECT_NE(a.substr(0, SecretBox::kNonceBytes), b.substr(0, SecretBox::kNonceBytes));
  EXPECT_NE(a, b);
}

TEST(SecretBoxTest, TamperingIsDetected) {
  const SecretBox box = Box('k');
  ASSERT_OK_AND_ASSIGN(std::string sealed, box.Seal("the secret", "id"));
  for (size_t i = 0; i < sealed.size(); ++i) {
    std::string changed = sealed;
    changed[i] = static_cast<char>(changed[i] ^ 0x01);
    EXPECT_THAT(box.Open(changed, "id"), StatusIs(absl::StatusCode::kDataLoss)) << "byte " << i;
  }
  EXPECT_THAT(box.Open(sealed.substr(0, sealed.size() - 1), "id"),
              StatusIs(absl::StatusCode::kDataLoss));
  EXPECT_THAT(box.Open("short", "id"), StatusIs(absl::StatusCode::kDataLoss));
}

TEST(SecretBoxTest, AnotherKeyOrAadDoesNotOpen) {
  ASSERT_OK_AND_ASSIGN(std::string sealed, Box('k').Seal("the secret", "id-1"));
  EXPECT_THAT(Box('x').Open(sealed, "id-1"), StatusIs(absl::StatusCode::kDataLoss));
  EXPECT_THAT(Box('k').Open(sealed, "id-2"), StatusIs(absl::StatusCode::kDataLoss));
}

TEST(SecretBoxTest, KeysMustBe32Bytes) {
  EXPECT_THAT(SecretBox::FromKey(std::string(31, 'k')),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(SecretBox::FromKey(std::string(33, 'k')),
              StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST(SecretBoxTest, ReadsItsKeyFromAFile) {
  gpuaas::testing::TempDir dir;
  const std::string good = (dir.path() / "good.key").string();
  std::ofstream(good, std::ios::binary) << std::string(32, '\n');  // any 32 bytes, even newlines
  const std::string bad = (dir.path() / "bad.key").string();
  std::ofstream(bad, std::ios::binary) << "too short\n";
  ASSERT_OK_AND_ASSIGN(SecretBox box, SecretBox::FromKeyFile(good));
  ASSERT_OK_AND_ASSIGN(std::string sealed, box.Seal("s", "a"));
  EXPECT_THAT(Box('\n').Open(sealed, "a"), IsOkAndHolds("s"));
  EXPECT_THAT(SecretBox::FromKeyFile(bad), StatusIs(absl::StatusCode::kFailedPrecondition));
  EXPECT_THAT(SecretBox::FromKeyFile((dir.path() / "missing").string()),
              StatusIs(absl::StatusCode::kFailedPrecondition));
}

}  // namespace
}  // namespace gpuaas
