// Channel credentials from settings alone; the TLS handshakes themselves run against a real
// server in libs/rpc/tls_test.cc, which dials through OpenChannel.
#include "libs/client/tls.h"

#include <gtest/gtest.h>

#include <fstream>

#include "libs/client/channel.h"
#include "libs/testing/status_matchers.h"
#include "libs/testing/temp_dir.h"

namespace gpuaas::client {
namespace {

using ::gpuaas::testing::StatusIs;
using ::gpuaas::testing::TempDir;

TEST(ChannelCredentialsTest, PlaintextWithoutACa) {
  EXPECT_OK(MakeChannelCredentials(TlsOptions{}));
  EXPECT_OK(OpenChannel("127.0.0.1:1", TlsOptions{}));
}

TEST(ChannelCredentialsTest, IncompleteSettingsAreInvalidNeverPlaintext) {
  TlsOptions cert_without_key{.ca_file = "/ca.crt", .cert_file = "/c.crt"};
  TlsOptions key_without_cert{.ca_file = "/ca.crt", .key_file = "/c.key"};
  TlsOptions cert_without_ca{.cert_file = "/c.crt", .key_file = "/c.key"};
  TlsOptions name_without_ca{.server_name_override = "auth"};
  for (const TlsOptions& tls :
       {cert_without_key, key_without_cert, cert_without_ca, name_without_ca}) {
    EXPECT_THAT(MakeChannelCredentials(tls), StatusIs(absl::StatusCode::kInvalidArgument));
    EXPECT_THAT(OpenChannel("127.0.0.1:1", tls), StatusIs(absl::StatusCode::kInvalidArgument));
  }
}

TEST(ChannelCredentialsTest, MissingOrEmptyFilesFailBeforeAnyCall) {
  TempDir dir;
  const std::string empty = (dir.path() / "empty.crt").string();
  std::ofstream{empty};
  for (const std::string& ca : {(dir.path() / "missing.crt").string(), empty}) {
    TlsOptions tls{.ca_file = ca};
    EXPECT_THAT(MakeChannelCredentials(tls), StatusIs(absl::StatusCode::kFailedPrecondition));
    EXPECT_THAT(OpenChannel("127.0.0.1:1", tls), StatusIs(absl::StatusCode::kFailedPrecondition));
  }
}

}  // namespace
}  // namespace gpuaas::client
