#include "services/gateway/client_address.h"

#include <gtest/gtest.h>

#include "absl/strings/match.h"

namespace gpuaas::gateway {
namespace {

http::HttpRequest From(std::string peer, std::vector<std::pair<std::string, std::string>> h = {}) {
  http::HttpRequest req;
  req.remote_addr = std::move(peer);
  for (auto& [k, v] : h) req.headers.emplace(k, v);
  return req;
}

TEST(TrustedProxies, ParsesCidrsAndRefusesGarbage) {
  absl::StatusOr<TrustedProxies> t =
      TrustedProxies::Parse("--trusted-proxies", "10.0.0.0/8, 192.0.2.7,2001:db8::/32");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_TRUE(t->Contains("10.1.2.3"));
  EXPECT_TRUE(t->Contains("192.0.2.7"));
  EXPECT_FALSE(t->Contains("192.0.2.8"));
  EXPECT_TRUE(t->Contains("2001:db8:ffff::1"));
  EXPECT_TRUE(t->Contains("::ffff:10.9.9.9"));  // IPv4-mapped
  EXPECT_FALSE(t->Contains("11.0.0.1"));
  EXPECT_FALSE(t->Contains("not-an-ip"));
  for (const char* bad : {"10.0.0.0/33", "example.com", "10.0.0.0/x", "::/129"}) {
    absl::StatusOr<TrustedProxies> b = TrustedProxies::Parse("--trusted-proxies", bad);
    EXPECT_EQ(b.status().code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_TRUE(absl::StrContains(b.status().message(), "--trusted-proxies")) << bad;
  }
  EXPECT_FALSE(TrustedProxies().Contains("127.0.0.1"));
}

TEST(ClientAddressOf, HeadersFromAnUntrustedPeerAreIgnored) {
  const TrustedProxies none;
  EXPECT_EQ(ClientAddressOf(From("203.0.113.9", {{"X-Forwarded-For", "198.51.100.1"},
                                                 {"Forwarded", "for=198.51.100.2"}}),
                            none),
            "203.0.113.9");
}

TEST(ClientAddressOf, ATrustedProxyNamesTheClient) {
  TrustedProxies t = *TrustedProxies::Parse("f", "10.0.0.0/8");
  // The nearest untrusted hop is the client; what the client itself prepended is not believed.
  EXPECT_EQ(ClientAddressOf(From("10.0.0.1", {{"X-Forwarded-For", "1.1.1.1, 198.51.100.7"}}), t),
            "198.51.100.7");
  EXPECT_EQ(ClientAddressOf(From("10.0.0.1", {{"X-Forwarded-For", "198.51.100.7, 10.0.0.2"}}), t),
            "198.51.100.7");
  EXPECT_EQ(ClientAddressOf(From("10.0.0.1", {{"X-Forwarded-For", "1.1.1.1"},
                                              {"X-Forwarded-For", "198.51.100.8"}}),
                            t),
            "198.51.100.8");
  // Forwarded wins over X-Forwarded-For; ports and brackets are dropped.
  EXPECT_EQ(
      ClientAddressOf(From("10.0.0.1", {{"Forwarded", "for=\"[2001:db8::5]:4711\";proto=https"},
                                        {"X-Forwarded-For", "198.51.100.9"}}),
                      t),
      "2001:db8::5");
  EXPECT_EQ(ClientAddressOf(From("10.0.0.1", {{"Forwarded", "for=198.51.100.3:80"}}), t),
            "198.51.100.3");
  // A hop that is no address stops the walk at the last one known good.
  EXPECT_EQ(ClientAddressOf(From("10.0.0.1", {{"X-Forwarded-For", "198.51.100.7, unknown"}}), t),
            "10.0.0.1");
  EXPECT_EQ(ClientAddressOf(From("10.0.0.1"), t), "10.0.0.1");
}

}  // namespace
}  // namespace gpuaas::gateway
