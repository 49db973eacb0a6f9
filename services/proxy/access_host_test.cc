#include "services/proxy/access_host.h"

#include <gtest/gtest.h>

namespace gpuaas::proxy {
namespace {

constexpr std::string_view kDomain = "gpuaas.localhost";

TEST(ParseAccessHost, SplitsTheFirstLabelAtItsLastDash) {
  std::optional<AccessHost> h = ParseAccessHost("my-web-1-8080.gpuaas.localhost", kDomain);
  ASSERT_TRUE(h.has_value());
  EXPECT_EQ(h->instance_id, "my-web-1");
  EXPECT_EQ(h->port, 8080);
}

TEST(ParseAccessHost, IgnoresCaseTheHostsPortAndATrailingDot) {
  for (std::string_view host :
       {"Web-1-8080.GPUAAS.localhost", "web-1-8080.gpuaas.localhost:8443",
        "web-1-8080.gpuaas.localhost.", "web-1-8080.gpuaas.localhost.:80"}) {
    std::optional<AccessHost> h = ParseAccessHost(host, "gpuaas.LOCALHOST");
    ASSERT_TRUE(h.has_value()) << host;
    EXPECT_EQ(h->instance_id, "web-1") << host;
    EXPECT_EQ(h->port, 8080) << host;
  }
}

TEST(ParseAccessHost, RejectsEverythingElse) {
  for (std::string_view host : {
           "",
           "gpuaas.localhost",
           ".gpuaas.localhost",
           "web-8080.other.localhost",
           "web-8080.gpuaas.localhost.evil.com",
           "web-8080.xgpuaas.localhost",
           "a.web-8080.gpuaas.localhost",  // deeper than one label
           "web8080.gpuaas.localhost",     // no dash
           "web-.gpuaas.localhost",        // no port
           "-8080.gpuaas.localhost",       // no id
           "web-0.gpuaas.localhost",
           "web-65536.gpuaas.localhost",
           "web-080.gpuaas.localhost",  // one port, one host
           "web-+80.gpuaas.localhost",
           "web--8080.gpuaas.localhost",  // id ends with '-'
           "1web-8080.gpuaas.localhost",  // id starts with a digit
           "we_b-8080.gpuaas.localhost",
           "web-8080.gpuaas.localhost:",  // empty Host port
           "web-8080.gpuaas.localhost:x",
           "web-8080.gpuaas.localhost:1:2",
           "web-8080.gpuaas.localhost:99999",
           "[::1]:8080",
       }) {
    EXPECT_FALSE(ParseAccessHost(host, kDomain).has_value()) << "'" << host << "'";
  }
}

TEST(ParseAccessHost, AnIdOfSixtyFourCharactersIsNoInstance) {
  const std::string id63 = "a" + std::string(62, 'b');
  EXPECT_TRUE(ParseAccessHost(id63 + "-80.gpuaas.localhost", kDomain).has_value());
  EXPECT_FALSE(ParseAccessHost(id63 + "b-80.gpuaas.localhost", kDomain).has_value());
}

TEST(HostWithoutPort, DropsThePortAndLowercases) {
  EXPECT_EQ(HostWithoutPort("Example.COM:8080"), "example.com");
  EXPECT_EQ(HostWithoutPort("[::1]:80"), "[::1]");
  EXPECT_EQ(HostWithoutPort("a:b"), "");
}

}  // namespace
}  // namespace gpuaas::proxy
