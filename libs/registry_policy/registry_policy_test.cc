#include "libs/registry_policy/registry_policy.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>

namespace gpuaas::registry {
namespace {

TEST(IsPublicAddress, RefusesTheControlPlanesNeighbourhood) {
  for (const char* refused : {"127.0.0.1",
                              "127.1.2.3",
                              "0.0.0.0",
                              "10.1.2.3",
                              "172.16.0.1",
                              "172.31.255.255",
                              "192.168.1.1",
                              "169.254.169.254",
                              "100.64.0.1",
                              "100.127.255.254",
                              "224.0.0.1",
                              "255.255.255.255",
                              "::",
                              "::1",
                              "fe80::1",
                              "fc00::1",
                              "fd12:3456::1",
                              "ff02::1",
                              "::ffff:127.0.0.1",
                              "::ffff:10.0.0.1",
                              "64:ff9b::a9fe:a9fe",
                              "2002:7f00:1::1",
                              "not an address",
                              ""}) {
    EXPECT_FALSE(IsPublicAddress(refused)) << refused;
  }
  for (const char* ok : {"8.8.8.8", "172.32.0.1", "100.128.0.1", "192.169.0.1",
                         "2001:4860:4860::8888", "::ffff:8.8.8.8"}) {
    EXPECT_TRUE(IsPublicAddress(ok)) << ok;
  }
}

TEST(ParseRegistryAddress, SplitsHostAndPort) {
  absl::StatusOr<RegistryAddress> r = ParseRegistryAddress("Registry.Example.com");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->HostPort(), "registry.example.com:443");
  r = ParseRegistryAddress("[::1]:5000");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->host, "::1");
  EXPECT_EQ(r->HostPort(), "[::1]:5000");
  for (const char* bad : {"", "host:0", "host:70000", "[::1", "[nothost]:1", "a b:1", "h:x"}) {
    EXPECT_FALSE(ParseRegistryAddress(bad).ok()) << bad;
  }
}

TEST(RegistryPolicy, RefusesPrivateAddressesUnlessAllowed) {
  absl::StatusOr<RegistryPolicy> policy =
      RegistryPolicy::Create({"127.0.0.1:17050"}, {"127.0.0.1:17050"});
  ASSERT_TRUE(policy.ok()) << policy.status();
  const auto resolve = [&](const char* registry) {
    return policy->Resolve(*ParseRegistryAddress(registry)).status();
  };
  EXPECT_TRUE(resolve("127.0.0.1:17050").ok());
  EXPECT_TRUE(policy->Insecure(*ParseRegistryAddress("127.0.0.1:17050")));
  EXPECT_FALSE(policy->Insecure(*ParseRegistryAddress("127.0.0.1:5432")));
  for (const char* refused : {"127.0.0.1:5432", "localhost:17050", "[::1]:17050", "169.254.169.254",
                              "10.0.0.1:5000", "100.64.0.1:443"}) {
    const absl::Status s = resolve(refused);
    EXPECT_EQ(s.code(), absl::StatusCode::kPermissionDenied) << refused;
    EXPECT_EQ(s.message(), kNotAllowed) << refused;
  }

  sockaddr_in allowed{};
  allowed.sin_family = AF_INET;
  allowed.sin_port = htons(17050);
  inet_pton(AF_INET, "127.0.0.1", &allowed.sin_addr);
  EXPECT_TRUE(policy->MayConnect(reinterpret_cast<sockaddr*>(&allowed)));
  sockaddr_in other_port = allowed;
  other_port.sin_port = htons(5432);
  EXPECT_FALSE(policy->MayConnect(reinterpret_cast<sockaddr*>(&other_port)));
  sockaddr_in6 mapped{};
  mapped.sin6_family = AF_INET6;
  mapped.sin6_port = htons(5432);
  inet_pton(AF_INET6, "::ffff:127.0.0.1", &mapped.sin6_addr);
  EXPECT_FALSE(policy->MayConnect(reinterpret_cast<sockaddr*>(&mapped)));
}

TEST(RegistryPolicy, RefusesEntriesWithoutAPort) {
  EXPECT_EQ(RegistryPolicy::Create({"127.0.0.1"}, {}).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(RegistryPolicy::Create({}, {"[::1]"}).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(RegistryPolicy::Create({"[::1]:5000", "mirror.lan:5000"}, {}).ok());
}

}  // namespace
}  // namespace gpuaas::registry
