#include "libs/service/paging.h"

#include <gtest/gtest.h>

#include "gpuaas/auth/v1/auth.pb.h"
#include "libs/testing/status_matchers.h"

namespace gpuaas::service {
namespace {

using ::gpuaas::testing::IsOkAndHolds;
using ::gpuaas::testing::StatusIs;

TEST(ParsePage, SizeDefaultsAndCaps) {
  EXPECT_EQ(ParsePage(0, "")->limit, kDefaultPageSize);
  EXPECT_EQ(ParsePage(7, "")->limit, 7);
  EXPECT_EQ(ParsePage(100000, "")->limit, kMaxPageSize);
  EXPECT_THAT(ParsePage(-1, ""),
              StatusIs(absl::StatusCode::kInvalidArgument, "page_size: must be >= 0"));
}

TEST(ParsePage, TokenRoundTripsAndRejectsForeignTokens) {
  PageRequest page{.after = "", .limit = 2};
  const std::string token = NextPageToken(page, 2, "usr_b");
  ASSERT_FALSE(token.empty());
  absl::StatusOr<PageRequest> next = ParsePage(2, token);
  ASSERT_OK(next.status());
  EXPECT_EQ(next->after, "usr_b");
  EXPECT_THAT(ParsePage(2, "usr_b"),
              StatusIs(absl::StatusCode::kInvalidArgument, "page_token: invalid"));
  EXPECT_THAT(ParsePage(2, "!!!"), StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST(FillPage, ShortPageHasNoNextToken) {
  auth::v1::ListTenantsResponse out;
  std::vector<auth::v1::Tenant> rows(1);
  rows[0].set_tenant_id("alpha");
  FillPage(PageRequest{.limit = 2}, rows, *out.mutable_tenants(), *out.mutable_next_page_token(),
           [](const auth::v1::Tenant& t) { return t.tenant_id(); });
  EXPECT_EQ(out.tenants_size(), 1);
  EXPECT_EQ(out.next_page_token(), "");
}

TEST(FillPage, FullPageNamesItsLastKey) {
  auth::v1::ListTenantsResponse out;
  std::vector<auth::v1::Tenant> rows(2);
  rows[0].set_tenant_id("alpha");
  rows[1].set_tenant_id("beta");
  const PageRequest page{.limit = 2};
  FillPage(page, rows, *out.mutable_tenants(), *out.mutable_next_page_token(),
           [](const auth::v1::Tenant& t) { return t.tenant_id(); });
  ASSERT_EQ(out.tenants_size(), 2);
  EXPECT_THAT(ParsePage(2, out.next_page_token()),
              IsOkAndHolds(::testing::Field(&PageRequest::after, "beta")));
}

}  // namespace
}  // namespace gpuaas::service
