#include "libs/service/validate.h"

#include <gtest/gtest.h>

#include "libs/testing/status_matchers.h"

namespace gpuaas::service {
namespace {

using ::gpuaas::testing::StatusIs;
using ::testing::HasSubstr;
using ::testing::StartsWith;

TEST(ValidateSlug, AcceptsAndRejects) {
  EXPECT_OK(ValidateSlug("tenant_id", "studio-a"));
  EXPECT_OK(ValidateSlug("tenant_id", "a00"));
  for (const char* bad : {"", "ab", "Studio", "1abc", "abc-", "ab_c", "ab.c"}) {
    EXPECT_THAT(ValidateSlug("tenant.tenant_id", bad),
                StatusIs(absl::StatusCode::kInvalidArgument, StartsWith("tenant.tenant_id: ")))
        << bad;
  }
  EXPECT_THAT(ValidateSlug("x", std::string(64, 'a')),
              StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST(ValidateSlug, ExtraCharactersOnlyWhenAllowed) {
  EXPECT_THAT(ValidateSlug("spec_name", "a100.1x"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("only lowercase")));
  EXPECT_OK(ValidateSlug("spec_name", "a100.1x", "."));
  EXPECT_THAT(ValidateSlug("spec_name", "a100_1x", "."),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("'.'")));
}

TEST(ValidateDisplayText, Utf8WithoutControls) {
  EXPECT_OK(ValidateDisplayText("display_name", ""));
  EXPECT_OK(ValidateDisplayText("display_name", "Studio Ä — 東京"));
  for (std::string bad : {std::string("tab\there"), std::string("\xff"), std::string("\xc3"),
                          std::string("\xc0\xaf"), std::string(257, 'a')}) {
    EXPECT_THAT(ValidateDisplayText("display_name", bad),
                StatusIs(absl::StatusCode::kInvalidArgument, StartsWith("display_name: ")));
  }
}

TEST(ValidateRequestId, OptionalPrintable) {
  EXPECT_OK(ValidateRequestId("request_id", ""));
  EXPECT_OK(ValidateRequestId("request_id", "retry-1/abc"));
  EXPECT_THAT(ValidateRequestId("request_id", "has space"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("printable")));
  EXPECT_THAT(ValidateRequestId("request_id", std::string(129, 'a')),
              StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST(ValidateNodeId, DnsNamesOnly) {
  EXPECT_OK(ValidateNodeId("node_id", "sim-a100-1"));
  EXPECT_OK(ValidateNodeId("node_id", "gpu-7.rack-2.example"));
  EXPECT_THAT(ValidateNodeId("node_id", "a b"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("node_id: a DNS name")));
  EXPECT_THAT(ValidateNodeId("node_id", ""), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(ValidateNodeId("node_id", "Node-1"), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(ValidateNodeId("node_id", "-node"), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(ValidateNodeId("node_id", std::string(254, 'a')),
              StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST(ValidateServerId, OurIdsOnly) {
  EXPECT_OK(ValidateServerId("user_id", "usr_0a9f"));
  EXPECT_THAT(ValidateServerId("user_id", ""),
              StatusIs(absl::StatusCode::kInvalidArgument, "user_id: required"));
  EXPECT_THAT(ValidateServerId("user_id", "usr-1"), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(ValidateServerId("user_id", std::string(65, 'a')),
              StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST(ValidateNonNegative, Bounds) {
  EXPECT_OK(ValidateNonNegative("quota.max_gpus", 0));
  EXPECT_THAT(ValidateNonNegative("quota.max_gpus", -1),
              StatusIs(absl::StatusCode::kInvalidArgument, "quota.max_gpus: must be >= 0"));
}

}  // namespace
}  // namespace gpuaas::service
