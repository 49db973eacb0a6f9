#include "services/proxy/access_cookie.h"

#include <gtest/gtest.h>

namespace gpuaas::proxy {
namespace {

const absl::Time kNow = absl::FromUnixSeconds(1'800'000'000);

authz::WorkloadGrant Grant() {
  return {.instance_id = "web-1", .port = 8080, .tenant_id = "ten-a", .user_id = "usr_1"};
}

TEST(AccessCookie, RoundTrips) {
  AccessCookieSigner signer(std::string(32, 'k'));
  absl::StatusOr<std::string> value = signer.Sign(Grant(), kNow + absl::Hours(12));
  ASSERT_TRUE(value.ok()) << value.status();
  absl::StatusOr<authz::WorkloadGrant> grant = signer.Verify(*value, kNow);
  ASSERT_TRUE(grant.ok()) << grant.status();
  EXPECT_EQ(grant->instance_id, "web-1");
  EXPECT_EQ(grant->port, 8080);
  EXPECT_EQ(grant->tenant_id, "ten-a");
  EXPECT_EQ(grant->user_id, "usr_1");
}

TEST(AccessCookie, ExpiredIsRefused) {
  AccessCookieSigner signer(std::string(32, 'k'));
  std::string value = *signer.Sign(Grant(), kNow + absl::Hours(1));
  EXPECT_TRUE(signer.Verify(value, kNow + absl::Minutes(59)).ok());
  EXPECT_EQ(signer.Verify(value, kNow + absl::Hours(1)).status().code(),
            absl::StatusCode::kUnauthenticated);
}

TEST(AccessCookie, AnotherKeyOrAnyChangedByteIsRefused) {
  AccessCookieSigner signer(std::string(32, 'k'));
  AccessCookieSigner other(std::string(32, 'x'));
  const std::string value = *signer.Sign(Grant(), kNow + absl::Hours(1));
  EXPECT_EQ(other.Verify(value, kNow).status().code(), absl::StatusCode::kUnauthenticated);
  for (size_t i = 0; i < value.size(); ++i) {
    std::string forged = value;
    forged[i] = forged[i] == 'A' ? 'B' : 'A';
    EXPECT_FALSE(signer.Verify(forged, kNow).ok()) << i;
  }
  for (std::string_view junk : {"", ".", "abc", "abc.def", "..."}) {
    EXPECT_FALSE(signer.Verify(junk, kNow).ok()) << junk;
  }
}

TEST(AccessCookie, AnotherGrantCannotBeSpliced) {
  AccessCookieSigner signer(std::string(32, 'k'));
  authz::WorkloadGrant wide = Grant();
  wide.instance_id = "web-1|8080";
  EXPECT_EQ(signer.Sign(wide, kNow).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(CookieHeader, FindsAndStripsOnlyTheNamedCookie) {
  const std::string header = "a=1; gpuaas_access=v.m;gpuaas_access_x=2 ;b=3";
  EXPECT_EQ(FindCookie(header, kAccessCookieName), "v.m");
  EXPECT_EQ(FindCookie("a=1", kAccessCookieName), "");
  EXPECT_EQ(WithoutCookie(header, kAccessCookieName), "a=1; gpuaas_access_x=2; b=3");
  EXPECT_EQ(WithoutCookie("gpuaas_access=v", kAccessCookieName), "");
}

}  // namespace
}  // namespace gpuaas::proxy
