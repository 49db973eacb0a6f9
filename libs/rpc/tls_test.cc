// TLS and mutual TLS with certificates from tools/gen-certs, over real loopback connections:
// rpc::Server's credentials on one side, libs/client's channels on the other.
#include <gtest/gtest.h>
#include <prometheus/registry.h>
#include <stdlib.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "libs/client/channel.h"
#include "libs/common/files.h"
#include "libs/rpc/cert_expiry.h"
#include "libs/rpc/echo_test_service.h"
#include "libs/rpc/server.h"

namespace gpuaas::rpc {
namespace {

using test::EchoService;
using test::pb::EchoRequest;
using test::pb::EchoResponse;

std::string MakeTempDir() {
  std::string pattern = (std::filesystem::temp_directory_path() / "gpuaas-tls-XXXXXX").string();
  char* dir = mkdtemp(pattern.data());
  return dir == nullptr ? "" : std::string(dir);
}

bool GenCerts(const std::string& dir, const std::string& services) {
  std::string cmd = absl::StrCat(GPUAAS_GEN_CERTS, " '", dir, "' ", services, " >/dev/null");
  return std::system(cmd.c_str()) == 0;
}

class TlsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    root_ = new std::string(MakeTempDir());
    ASSERT_FALSE(root_->empty());
    ASSERT_TRUE(GenCerts(Dir("pki"), "auth client"));
    ASSERT_TRUE(GenCerts(Dir("other"), "client"));  // a second, unrelated CA
  }

  static void TearDownTestSuite() {
    std::filesystem::remove_all(*root_);
    delete root_;
    root_ = nullptr;
  }

  static std::string Dir(const std::string& name) { return absl::StrCat(*root_, "/", name); }
  static std::string File(const std::string& dir, const std::string& name) {
    return absl::StrCat(Dir(dir), "/", name);
  }

  void TearDown() override { server_.reset(); }

  absl::Status StartServer(bool require_client_cert) {
    ServerOptions options;
    options.name = "tls";
    options.listen_address = "127.0.0.1:0";
    options.metrics_address = "";
    options.worker_threads = 1;
    options.tls.cert_file = File("pki", "auth.crt");
    options.tls.key_file = File("pki", "auth.key");
    options.tls.ca_file = File("pki", "ca.crt");
    options.tls.require_client_cert = require_client_cert;
    server_ = std::make_unique<Server>(options, nullptr);
    echo_ = std::make_unique<EchoService>(server_->handler());
    server_->AddService(echo_.get());
    return server_->Start();
  }

  // A PublicEcho through a fresh channel with `tls`; returns the call's status.
  grpc::StatusCode Call(const client::TlsOptions& tls, const std::string& host = "127.0.0.1") {
    absl::StatusOr<std::shared_ptr<grpc::Channel>> channel =
        client::OpenChannel(absl::StrCat(host, ":", server_->port()), tls);
    if (!channel.ok()) {
      ADD_FAILURE() << channel.status();
      return grpc::StatusCode::UNKNOWN;
    }
    auto stub = test::pb::EchoService::NewStub(*channel);
    EchoRequest req;
    req.set_message("over tls");
    EchoResponse resp;
    auto ctx = test::NewClientContext(absl::Seconds(10));
    grpc::Status s = stub->PublicEcho(ctx.get(), req, &resp);
    if (s.ok()) {
      EXPECT_EQ(resp.message(), "over tls");
    }
    return s.error_code();
  }

  static client::TlsOptions Trusting(const std::string& ca_dir) {
    client::TlsOptions tls;
    tls.ca_file = File(ca_dir, "ca.crt");
    return tls;
  }

  static client::TlsOptions ClientCert(const std::string& trust_dir, const std::string& cert_dir) {
    client::TlsOptions tls = Trusting(trust_dir);
    tls.cert_file = File(cert_dir, "client.crt");
    tls.key_file = File(cert_dir, "client.key");
    return tls;
  }

  static std::string* root_;
  std::unique_ptr<EchoService> echo_;
  std::unique_ptr<Server> server_;
};

std::string* TlsTest::root_ = nullptr;

TEST_F(TlsTest, ClientTrustingTheCaConnectsByIpAndByName) {
  ASSERT_TRUE(StartServer(false).ok());
  EXPECT_EQ(Call(Trusting("pki")), grpc::StatusCode::OK);
  EXPECT_EQ(Call(Trusting("pki"), "localhost"), grpc::StatusCode::OK);
}

TEST_F(TlsTest, ServerNameOverrideMustMatchTheCertificate) {
  ASSERT_TRUE(StartServer(false).ok());
  client::TlsOptions tls = Trusting("pki");
  tls.server_name_override = "auth";
  EXPECT_EQ(Call(tls), grpc::StatusCode::OK);
  tls.server_name_override = "stock";
  EXPECT_EQ(Call(tls), grpc::StatusCode::UNAVAILABLE);
}

TEST_F(TlsTest, ClientTrustingAnotherCaIsRefused) {
  ASSERT_TRUE(StartServer(false).ok());
  EXPECT_EQ(Call(Trusting("other")), grpc::StatusCode::UNAVAILABLE);
}

TEST_F(TlsTest, PlaintextClientIsRefused) {
  ASSERT_TRUE(StartServer(false).ok());
  EXPECT_EQ(Call(client::TlsOptions{}), grpc::StatusCode::UNAVAILABLE);
}

TEST_F(TlsTest, MutualTlsAcceptsACaSignedClientCertificate) {
  ASSERT_TRUE(StartServer(true).ok());
  EXPECT_EQ(Call(ClientCert("pki", "pki")), grpc::StatusCode::OK);
}

TEST_F(TlsTest, MutualTlsRefusesAClientWithoutCertificate) {
  ASSERT_TRUE(StartServer(true).ok());
  EXPECT_EQ(Call(Trusting("pki")), grpc::StatusCode::UNAVAILABLE);
}

TEST_F(TlsTest, MutualTlsRefusesAClientCertificateFromAnotherCa) {
  ASSERT_TRUE(StartServer(true).ok());
  EXPECT_EQ(Call(ClientCert("pki", "other")), grpc::StatusCode::UNAVAILABLE);
}

TEST_F(TlsTest, UnreadableCertificateFailsStart) {
  ServerOptions options;
  options.listen_address = "127.0.0.1:0";
  options.metrics_address = "";
  options.tls.cert_file = File("pki", "missing.crt");
  options.tls.key_file = File("pki", "auth.key");
  Server server(options, nullptr);
  EXPECT_EQ(server.Start().code(), absl::StatusCode::kFailedPrecondition);
}

TEST_F(TlsTest, RequireClientCertWithoutCaIsInvalid) {
  TlsOptions tls;
  tls.cert_file = File("pki", "auth.crt");
  tls.key_file = File("pki", "auth.key");
  tls.require_client_cert = true;
  EXPECT_EQ(MakeServerCredentials(tls).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(TlsTest, ClientWithUnreadableCaGetsAnError) {
  client::TlsOptions tls;
  tls.ca_file = File("pki", "missing.crt");
  EXPECT_EQ(client::OpenChannel("127.0.0.1:1", tls).status().code(),
            absl::StatusCode::kFailedPrecondition);
}

TEST_F(TlsTest, GenCertsKeepsAnExistingCa) {
  std::string before;
  {
    absl::StatusOr<std::string> ca = ReadNonEmptyFile(File("pki", "ca.crt"));
    ASSERT_TRUE(ca.ok());
    before = *ca;
  }
  ASSERT_TRUE(GenCerts(Dir("pki"), "auth client storage"));
  absl::StatusOr<std::string> after = ReadNonEmptyFile(File("pki", "ca.crt"));
  ASSERT_TRUE(after.ok());
  EXPECT_EQ(*after, before);
  EXPECT_TRUE(std::filesystem::exists(File("pki", "storage.crt")));
}

// The notAfter as openssl(1) prints it, read apart from our OpenSSL calls.
absl::Time OpensslNotAfter(const std::string& cert_file) {
  std::string cmd =
      absl::StrCat("openssl x509 -noout -enddate -dateopt iso_8601 -in '", cert_file, "'");
  FILE* out = popen(cmd.c_str(), "r");
  char line[128] = {};
  const bool read = out != nullptr && fgets(line, sizeof line, out) != nullptr;
  if (out != nullptr) pclose(out);
  absl::Time t = absl::InfinitePast();
  std::string error;
  absl::string_view text = absl::StripAsciiWhitespace(line);
  if (!read || !absl::ConsumePrefix(&text, "notAfter=") ||
      !absl::ParseTime("%Y-%m-%d %H:%M:%SZ", text, absl::UTCTimeZone(), &t, &error)) {
    ADD_FAILURE() << "openssl printed \"" << line << "\": " << error;
  }
  return t;
}

TEST_F(TlsTest, TheServingCertificatesExpiryIsOnMetrics) {
  ASSERT_TRUE(StartServer(false).ok());
  const absl::Time want = OpensslNotAfter(File("pki", "auth.crt"));
  EXPECT_GT(want, absl::Now());
  bool found = false;
  for (const prometheus::MetricFamily& f : server_->metrics_registry().Collect()) {
    if (f.name != "gpuaas_tls_certificate_not_after_seconds") continue;
    ASSERT_EQ(f.metric.size(), 1u);
    EXPECT_EQ(f.metric[0].gauge.value, static_cast<double>(absl::ToUnixSeconds(want)));
    found = true;
  }
  EXPECT_TRUE(found) << "no gpuaas_tls_certificate_not_after_seconds";
}

TEST_F(TlsTest, AFileWithoutACertificateFailsStart) {
  ServerOptions options;
  options.listen_address = "127.0.0.1:0";
  options.metrics_address = "";
  options.tls.cert_file = File("pki", "auth.key");  // a key, no certificate
  options.tls.key_file = File("pki", "auth.key");
  Server server(options, nullptr);
  EXPECT_EQ(server.Start().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(CertificateNotAfter("not a certificate").status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace gpuaas::rpc
