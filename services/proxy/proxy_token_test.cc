#include "services/proxy/proxy_token.h"

#include <gtest/gtest.h>

namespace gpuaas::proxy {
namespace {

namespace http = boost::beast::http;

TEST(SetProxyToken, ReplacesTheAuthorizationOfPrivatePortsOnly) {
  PortRoute route{.port = 8888, .proxy_token = "s3cret"};
  http::fields headers;
  headers.set(http::field::authorization, "token guessed");
  SetProxyToken(route, headers);
  EXPECT_EQ(headers[http::field::authorization], "token s3cret");
  EXPECT_EQ(headers.count(http::field::authorization), 1u);

  route.is_public = true;
  http::fields open;
  SetProxyToken(route, open);
  EXPECT_EQ(open.count(http::field::authorization), 0u) << "a public port could echo it back";

  http::fields unknown;
  SetProxyToken(PortRoute{.port = 8888}, unknown);
  EXPECT_EQ(unknown.count(http::field::authorization), 0u);
}

}  // namespace
}  // namespace gpuaas::proxy
