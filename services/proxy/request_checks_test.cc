#include "services/proxy/request_checks.h"

#include <gtest/gtest.h>

namespace gpuaas::proxy {
namespace {

TEST(HasSafeFraming, OnlyASingleFinalChunkedOrContentLength) {
  EXPECT_TRUE(HasSafeFraming(std::nullopt, false, 11));
  EXPECT_TRUE(HasSafeFraming(std::nullopt, true, 11));
  EXPECT_TRUE(HasSafeFraming("chunked", false, 11));
  EXPECT_TRUE(HasSafeFraming(" Chunked ", false, 11));
  EXPECT_FALSE(HasSafeFraming("chunked", true, 11));
  EXPECT_FALSE(HasSafeFraming("chunked", false, 10));
  EXPECT_FALSE(HasSafeFraming("identity, chunked", false, 11));
  EXPECT_FALSE(HasSafeFraming("chunked, chunked", false, 11));
  EXPECT_FALSE(HasSafeFraming("chunked,chunked", false, 11));
  EXPECT_FALSE(HasSafeFraming("gzip", false, 11));
  EXPECT_FALSE(HasSafeFraming("gzip, chunked", false, 11));
  EXPECT_FALSE(HasSafeFraming("identity", false, 11));
  EXPECT_FALSE(HasSafeFraming("", false, 11));
}

TEST(FromOwnOriginIfUnsafe, RefusesOtherOriginsOnlyForUnsafeRequests) {
  const std::string_view own = "http://a-1.gpuaas.localhost";
  auto ok = [&](std::string_view method, std::string_view origin, std::string_view site,
                bool upgrade = false) {
    return FromOwnOriginIfUnsafe({.method = method,
                                  .upgrade = upgrade,
                                  .origin = origin,
                                  .fetch_site = site,
                                  .own_origin = own});
  };
  EXPECT_TRUE(ok("GET", "http://b-1.gpuaas.localhost", "same-site"));
  EXPECT_TRUE(ok("HEAD", "", "cross-site"));
  EXPECT_TRUE(ok("POST", own, "same-origin"));
  EXPECT_TRUE(ok("POST", "HTTP://A-1.gpuaas.localhost", ""));
  EXPECT_TRUE(ok("POST", "", "none"));
  EXPECT_TRUE(ok("POST", "", ""));
  EXPECT_FALSE(ok("POST", "http://b-1.gpuaas.localhost", ""));
  EXPECT_FALSE(ok("POST", "http://a-1.gpuaas.localhost:8080", ""));
  EXPECT_FALSE(ok("POST", "null", ""));
  EXPECT_FALSE(ok("POST", own, "same-site"));
  EXPECT_FALSE(ok("PUT", "", "cross-site"));
  EXPECT_FALSE(ok("GET", "http://b-1.gpuaas.localhost", "", true));
  EXPECT_FALSE(ok("GET", "", "same-site", true));
}

}  // namespace
}  // namespace gpuaas::proxy
