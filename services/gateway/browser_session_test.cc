#include "services/gateway/browser_session.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace gpuaas::gateway {
namespace {

using ::testing::HasSubstr;

http::HttpRequest Request(std::string method,
                          std::initializer_list<std::pair<std::string, std::string>> headers) {
  http::HttpRequest req;
  req.method = std::move(method);
  req.target = "/v1/instances";
  for (const auto& [k, v] : headers) req.headers.emplace(k, v);
  return req;
}

TEST(BrowserSessionTest, AnApiClientsAuthorizationIsUsedAsSent) {
  auto a = AuthorizationOf(Request("POST", {{"Authorization", "Bearer abc"},
                                            {"Cookie", "gpuaas_session=other"},
                                            {"Origin", "https://evil.example"}}),
                           false);
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(*a, "Bearer abc");
}

TEST(BrowserSessionTest, TheCookieNeedsTheCsrfTokenToChangeAnything) {
  const std::string csrf = CsrfTokenFor("tok");
  EXPECT_EQ(csrf.size(), 32u);
  auto get = AuthorizationOf(Request("GET", {{"Cookie", "a=b; gpuaas_session=tok"}}), false);
  ASSERT_TRUE(get.ok());
  EXPECT_EQ(*get, "Bearer tok");
  auto no_token = AuthorizationOf(Request("POST", {{"Cookie", "gpuaas_session=tok"}}), false);
  EXPECT_EQ(no_token.status().code(), absl::StatusCode::kPermissionDenied);
  EXPECT_THAT(no_token.status().message(), HasSubstr("X-CSRF-Token"));
  auto wrong = AuthorizationOf(
      Request("DELETE", {{"Cookie", "gpuaas_session=tok"}, {"X-CSRF-Token", CsrfTokenFor("x")}}),
      false);
  EXPECT_EQ(wrong.status().code(), absl::StatusCode::kPermissionDenied);
  auto right = AuthorizationOf(
      Request("DELETE", {{"Cookie", "gpuaas_session=tok"}, {"X-CSRF-Token", csrf}}), false);
  EXPECT_TRUE(right.ok());
}

TEST(BrowserSessionTest, AnotherSitesPageCannotUseTheCookieEvenToRead) {
  auto other = AuthorizationOf(Request("GET", {{"Cookie", "gpuaas_session=tok"},
                                               {"Host", "console.example"},
                                               {"Origin", "http://evil.example"}}),
                               false);
  EXPECT_EQ(other.status().code(), absl::StatusCode::kPermissionDenied);
  auto fetch = AuthorizationOf(
      Request("GET", {{"Cookie", "gpuaas_session=tok"}, {"Sec-Fetch-Site", "same-site"}}), false);
  EXPECT_EQ(fetch.status().code(), absl::StatusCode::kPermissionDenied);
  auto own = AuthorizationOf(Request("GET", {{"Cookie", "gpuaas_session=tok"},
                                             {"Host", "console.example"},
                                             {"Origin", "https://console.example"},
                                             {"Sec-Fetch-Site", "same-origin"}}),
                             true);
  EXPECT_TRUE(own.ok());
}

TEST(BrowserSessionTest, CookiesAreHttpOnlyStrictAndSecureOverTls) {
  auto cookies = SessionCookies("tok", "ref", {.secure = true});
  ASSERT_EQ(cookies.size(), 3u);
  EXPECT_THAT(cookies[0],
              HasSubstr("gpuaas_session=tok; HttpOnly; Path=/; SameSite=Strict; Secure"));
  EXPECT_THAT(cookies[1], HasSubstr("Path=/api/;"));  // reaches /api/session:refresh too
  EXPECT_THAT(cookies[2], HasSubstr("gpuaas_csrf=" + CsrfTokenFor("tok")));
  EXPECT_THAT(cookies[2], ::testing::Not(HasSubstr("HttpOnly")));
  EXPECT_THAT(SessionCookies("tok", "ref", {})[0], ::testing::Not(HasSubstr("Secure")));
}

}  // namespace
}  // namespace gpuaas::gateway
