// The auth service's own input rules, without a database.
#include "services/auth/validate.h"

#include <gtest/gtest.h>

#include "libs/testing/status_matchers.h"

namespace gpuaas::auth {
namespace {

using ::gpuaas::testing::StatusIs;
using ::testing::StartsWith;

TEST(ValidateUserName, Rules) {
  EXPECT_OK(ValidateUserName("user_name", "alice.b-c_d"));
  for (const char* bad : {"", "ab", "Alice", "al ice", "al@ce"}) {
    EXPECT_THAT(ValidateUserName("user.user_name", bad),
                StatusIs(absl::StatusCode::kInvalidArgument, StartsWith("user.user_name: ")))
        << bad;
  }
}

TEST(ValidatePassword, Length) {
  EXPECT_OK(ValidatePassword("password", "12345678"));
  EXPECT_THAT(
      ValidatePassword("password", "1234567"),
      StatusIs(absl::StatusCode::kInvalidArgument, "password: must be at least 8 characters"));
  EXPECT_THAT(ValidatePassword("password", std::string(1025, 'x')),
              StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST(ValidateQuota, NamesTheLimit) {
  pb::Quota q;
  EXPECT_OK(ValidateQuota("tenant.quota", q));
  q.set_max_instances(-1);
  EXPECT_THAT(
      ValidateQuota("tenant.quota", q),
      StatusIs(absl::StatusCode::kInvalidArgument, "tenant.quota.max_instances: must be >= 0"));
}

TEST(ValidateRoles, TenantAndGlobal) {
  EXPECT_OK(ValidateTenantRole("role", common::v1::ROLE_VIEWER));
  EXPECT_THAT(ValidateTenantRole("role", common::v1::ROLE_UNSPECIFIED),
              StatusIs(absl::StatusCode::kInvalidArgument, StartsWith("role: required")));
  EXPECT_THAT(ValidateTenantRole("role", common::v1::ROLE_SERVICE),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_OK(ValidateGlobalRole("user.global_role", common::v1::ROLE_UNSPECIFIED));
  EXPECT_OK(ValidateGlobalRole("user.global_role", common::v1::ROLE_SERVICE));
  EXPECT_THAT(ValidateGlobalRole("user.global_role", common::v1::ROLE_TENANT_ADMIN),
              StatusIs(absl::StatusCode::kInvalidArgument, StartsWith("user.global_role: ")));
}

TEST(ParseIdSecret, Shapes) {
  std::optional<IdSecret> ok = ParseIdSecret("gak_1.s3cret");
  ASSERT_TRUE(ok.has_value());
  EXPECT_EQ(ok->id, "gak_1");
  EXPECT_EQ(ok->secret, "s3cret");
  for (const char* bad : {"", "nodot", ".secret", "id."}) {
    EXPECT_FALSE(ParseIdSecret(bad).has_value()) << bad;
  }
  EXPECT_FALSE(ParseIdSecret(std::string(65, 'a') + ".s").has_value());
}

}  // namespace
}  // namespace gpuaas::auth
