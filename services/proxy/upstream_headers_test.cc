#include "services/proxy/upstream_headers.h"

#include <gtest/gtest.h>

#include "services/proxy/gpuaas_credential.h"

namespace gpuaas::proxy {
namespace {

namespace http = boost::beast::http;

TEST(IsGpuaasCredential, OursByIssuerOrIdPrefix) {
  // {"iss":"gpuaas-auth","sub":"usr_1"} and {"iss":"someone-else"}, base64url.
  EXPECT_TRUE(IsGpuaasCredential("Bearer h.eyJpc3MiOiJncHVhYXMtYXV0aCIsInN1YiI6InVzcl8xIn0.s"));
  EXPECT_TRUE(IsGpuaasCredential("bearer   h.eyJpc3MiOiJncHVhYXMtYXV0aCIsInN1YiI6InVzcl8xIn0.s"));
  EXPECT_FALSE(IsGpuaasCredential("Bearer h.eyJpc3MiOiJzb21lb25lLWVsc2UifQ.s"));
  EXPECT_TRUE(IsGpuaasCredential("Bearer gak_abc.secret"));
  EXPECT_TRUE(IsGpuaasCredential("Bearer grt_abc.secret"));
  EXPECT_FALSE(IsGpuaasCredential("Basic dXNlcjpwdw=="));
  EXPECT_FALSE(IsGpuaasCredential("Bearer the-apps-own-token"));
  EXPECT_FALSE(IsGpuaasCredential("Bearer a.not-base64!.c"));
  EXPECT_FALSE(IsGpuaasCredential(""));
}

TEST(PrepareUpstreamHeaders, StripsOnlyWhatIsOurs) {
  http::fields f;
  f.insert(http::field::authorization, "Bearer gak_abc.secret");
  f.insert(http::field::authorization, "Basic dXNlcjpwdw==");
  f.insert(http::field::cookie, "a=1; gpuaas_access=v");
  f.insert(http::field::cookie, "b=2");
  f.insert(http::field::expect, "100-continue");
  f.insert("X-Forwarded-For", "10.0.0.1");
  const PortRoute route{.is_public = true};
  PrepareUpstreamHeaders(
      f, {.client_ip = "127.0.0.1", .tls = true, .host = "a-1.example", .route = route});
  EXPECT_EQ(JoinedField(f, "Authorization", "|"), "Basic dXNlcjpwdw==");
  EXPECT_EQ(JoinedField(f, "Cookie", "|"), "a=1; b=2");
  EXPECT_EQ(f.count(http::field::expect), 0u);
  EXPECT_EQ(f["X-Forwarded-For"], "10.0.0.1, 127.0.0.1");
  EXPECT_EQ(f["X-Forwarded-Proto"], "https");
  EXPECT_EQ(f["X-Forwarded-Host"], "a-1.example");

  http::fields only_ours;
  only_ours.insert(http::field::cookie, "gpuaas_access=v");
  PrepareUpstreamHeaders(only_ours, {.client_ip = "127.0.0.1", .route = route});
  EXPECT_EQ(only_ours.count(http::field::cookie), 0u);
}

}  // namespace
}  // namespace gpuaas::proxy
