// The real gpuaas-auth binary: restarts keep data, PostgreSQL restarts are survived without a
// service restart, mutual TLS refuses strangers, and reflection lists the services.
#include <gmock/gmock.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "gpuaas/auth/v1/auth.grpc.pb.h"
#include "grpc/reflection/v1alpha/reflection.grpc.pb.h"
#include "libs/testing/pg_test.h"
#include "libs/testing/scoped_pg_cluster.h"
#include "libs/testing/service_dsn.h"
#include "tests/common/child_process.h"

namespace gpuaas::auth {
namespace {

namespace pb = ::gpuaas::auth::v1;
namespace fs = std::filesystem;
using gpuaas::testing::ChildProcess;
using gpuaas::testing::FreePort;
using gpuaas::testing::WaitServing;
using ::testing::Contains;
using ::testing::IsSupersetOf;

constexpr std::string_view kPassword = "process-test-admin-password";

std::unique_ptr<grpc::ClientContext> Ctx(const std::string& token = "", int seconds = 5) {
  auto ctx = std::make_unique<grpc::ClientContext>();
  ctx->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(seconds));
  if (!token.empty()) ctx->AddMetadata("authorization", "Bearer " + token);
  return ctx;
}

std::string ReadFile(const fs::path& p) {
  std::ifstream in(p);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// A temp dir with the bootstrap password file and the service's log.
class AuthProcess {
 public:
  AuthProcess(std::string dsn, std::vector<std::string> extra = {})
      : dsn_(gpuaas::testing::ServiceDsn(dsn, "auth")),
        extra_(std::move(extra)),
        port_(FreePort()) {
    dir_ = fs::temp_directory_path() /
           ("auth-process-" + std::to_string(getpid()) + "-" + std::to_string(port_));
    fs::create_directories(dir_);
    std::ofstream(dir_ / "admin-password") << kPassword << "\n";
  }
  ~AuthProcess() {
    child_.reset();
    fs::remove_all(dir_);
  }

  void Start() {
    std::vector<std::string> argv = {
        GPUAAS_AUTH_BINARY, "--listen=127.0.0.1:" + std::to_string(port_),
        "--metrics-listen=127.0.0.1:0", "--db-dsn=" + dsn_,
        "--bootstrap-admin-password-file=" + (dir_ / "admin-password").string()};
    argv.insert(argv.end(), extra_.begin(), extra_.end());
    child_ = std::make_unique<ChildProcess>(argv, (dir_ / "auth.log").string());
  }
  // SIGTERM; the service must drain and exit 0 (its log is printed when it does not).
  void Stop() { EXPECT_EQ(child_->Terminate(), 0) << "SIGTERM must shut down cleanly\n" << log(); }
  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }
  std::string log() const { return ReadFile(dir_ / "auth.log"); }
  const fs::path& dir() const { return dir_; }

 private:
  std::string dsn_;
  std::vector<std::string> extra_;
  int port_;
  fs::path dir_;
  std::unique_ptr<ChildProcess> child_;
};

std::unique_ptr<pb::AuthService::Stub> Stub(const std::string& address) {
  return pb::AuthService::NewStub(grpc::CreateChannel(address, grpc::InsecureChannelCredentials()));
}

std::string AdminLogin(pb::AuthService::Stub& stub) {
  pb::LoginRequest req;
  req.set_user_name("admin");
  req.set_password(std::string(kPassword));
  pb::LoginResponse resp;
  grpc::Status s = stub.Login(Ctx().get(), req, &resp);
  EXPECT_TRUE(s.ok()) << s.error_message();
  return resp.access_token();
}

class AuthProcessTest : public gpuaas::testing::PgTest {};

TEST_F(AuthProcessTest, RestartKeepsDataAndSigningKeys) {
  AuthProcess auth(dsn());
  auth.Start();
  ASSERT_TRUE(WaitServing(auth.address())) << auth.log();
  auto stub = Stub(auth.address());
  std::string admin = AdminLogin(*stub);
  pb::CreateTenantRequest create;
  create.mutable_tenant()->set_tenant_id("durable");
  create.mutable_tenant()->mutable_quota()->set_max_gpus(7);
  pb::Tenant tenant;
  ASSERT_TRUE(stub->CreateTenant(Ctx(admin).get(), create, &tenant).ok());
  auth.Stop();

  auth.Start();
  ASSERT_TRUE(WaitServing(auth.address())) << auth.log();
  // The token issued before the restart still verifies: the keys live in PostgreSQL.
  pb::GetTenantRequest get;
  get.set_tenant_id("durable");
  pb::Tenant again;
  grpc::Status s = stub->GetTenant(Ctx(admin).get(), get, &again);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(again.quota().max_gpus(), 7);
  auth.Stop();
}

TEST_F(AuthProcessTest, ReflectionListsTheServicesLikeGrpcurl) {
  AuthProcess auth(dsn());
  auth.Start();
  ASSERT_TRUE(WaitServing(auth.address())) << auth.log();
  auto reflection = grpc::reflection::v1alpha::ServerReflection::NewStub(
      grpc::CreateChannel(auth.address(), grpc::InsecureChannelCredentials()));
  auto ctx = Ctx();
  auto stream = reflection->ServerReflectionInfo(ctx.get());
  grpc::reflection::v1alpha::ServerReflectionRequest list;
  list.set_list_services("");
  ASSERT_TRUE(stream->Write(list));
  grpc::reflection::v1alpha::ServerReflectionResponse resp;
  ASSERT_TRUE(stream->Read(&resp));
  std::vector<std::string> names;
  for (const auto& s : resp.list_services_response().service()) names.push_back(s.name());
  EXPECT_THAT(names, IsSupersetOf({"gpuaas.auth.v1.AuthService", "grpc.health.v1.Health"}));

  // grpcurl's next step: the file that defines the service, to describe and call it.
  grpc::reflection::v1alpha::ServerReflectionRequest file;
  file.set_file_containing_symbol("gpuaas.auth.v1.AuthService");
  ASSERT_TRUE(stream->Write(file));
  ASSERT_TRUE(stream->Read(&resp));
  ASSERT_GT(resp.file_descriptor_response().file_descriptor_proto_size(), 0);
  google::protobuf::FileDescriptorProto proto;
  ASSERT_TRUE(proto.ParseFromString(resp.file_descriptor_response().file_descriptor_proto(0)));
  EXPECT_EQ(proto.package(), "gpuaas.auth.v1");
  stream->WritesDone();
  auth.Stop();
}

TEST_F(AuthProcessTest, LogsNeverContainSecrets) {
  AuthProcess auth(dsn());
  auth.Start();
  ASSERT_TRUE(WaitServing(auth.address())) << auth.log();
  auto stub = Stub(auth.address());
  pb::LoginRequest req;
  req.set_user_name("admin");
  req.set_password(std::string(kPassword));
  pb::LoginResponse tokens;
  ASSERT_TRUE(stub->Login(Ctx().get(), req, &tokens).ok());
  pb::WhoAmIResponse me;
  ASSERT_TRUE(stub->WhoAmI(Ctx(tokens.access_token()).get(), {}, &me).ok());
  req.set_password("wrong-password-xyz");
  (void)stub->Login(Ctx().get(), req, &tokens);
  auth.Stop();
  std::string log = auth.log();
  EXPECT_THAT(log, ::testing::HasSubstr("WhoAmI"));  // one line per call
  EXPECT_EQ(log.find(kPassword), std::string::npos);
  EXPECT_EQ(log.find("wrong-password-xyz"), std::string::npos);
  EXPECT_EQ(log.find(tokens.access_token().substr(0, 40)), std::string::npos);
  EXPECT_EQ(log.find(tokens.refresh_token()), std::string::npos);
}

TEST_F(AuthProcessTest, MutualTlsRefusesClientsWithoutACertificateFromTheCa) {
  fs::path certs = fs::temp_directory_path() / ("auth-certs-" + std::to_string(getpid()));
  fs::path strangers = certs / "strangers";
  ASSERT_EQ(std::system(
                ("'" GPUAAS_GEN_CERTS "' '" + certs.string() + "' auth client >/dev/null").c_str()),
            0);
  ASSERT_EQ(std::system(
                ("'" GPUAAS_GEN_CERTS "' '" + strangers.string() + "' client >/dev/null").c_str()),
            0);
  AuthProcess auth(dsn(), {"--tls-cert=" + (certs / "auth.crt").string(),
                           "--tls-key=" + (certs / "auth.key").string(),
                           "--tls-ca=" + (certs / "ca.crt").string(), "--tls-require-client-cert"});
  auth.Start();

  auto call = [&](const std::string& cert_dir, bool with_cert) {
    grpc::SslCredentialsOptions opts;
    opts.pem_root_certs = ReadFile(certs / "ca.crt");
    if (with_cert) {
      opts.pem_cert_chain = ReadFile(fs::path(cert_dir) / "client.crt");
      opts.pem_private_key = ReadFile(fs::path(cert_dir) / "client.key");
    }
    auto stub =
        pb::AuthService::NewStub(grpc::CreateChannel(auth.address(), grpc::SslCredentials(opts)));
    pb::GetJwksResponse jwks;
    return stub->GetJwks(Ctx("", 3).get(), {}, &jwks);
  };
  // Wait for the server with the good client; then try the others.
  grpc::Status good;
  for (int i = 0; i < 100 && !(good = call(certs.string(), true)).ok(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  ASSERT_TRUE(good.ok()) << good.error_message() << "\n" << auth.log();
  EXPECT_FALSE(call(certs.string(), false).ok()) << "no client certificate";
  EXPECT_FALSE(call(strangers.string(), true).ok()) << "certificate from another CA";
  auto plain = Stub(auth.address());
  pb::GetJwksResponse jwks;
  EXPECT_FALSE(plain->GetJwks(Ctx("", 3).get(), {}, &jwks).ok()) << "plaintext";
  auth.Stop();
  fs::remove_all(certs);
}

TEST(AuthPostgresRestartTest, CallsFailUnavailableThenRecoverWithoutServiceRestart) {
  auto cluster = gpuaas::testing::ScopedPgCluster::Create();
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  gpuaas::testing::ScopedPgCluster& pg = **cluster;
  AuthProcess auth(pg.dsn(), {"--db-wait-seconds=0"});
  auth.Start();
  ASSERT_TRUE(WaitServing(auth.address())) << auth.log();
  auto stub = Stub(auth.address());
  std::string admin = AdminLogin(*stub);
  pb::GetTenantRequest get;
  get.set_tenant_id("nope-missing");
  auto code = [&] {
    pb::Tenant t;
    return stub->GetTenant(Ctx(admin).get(), get, &t).error_code();
  };
  ASSERT_EQ(code(), grpc::StatusCode::NOT_FOUND);  // the database answered

  ASSERT_TRUE(pg.Stop().ok());
  grpc::StatusCode down = grpc::StatusCode::OK;
  for (int i = 0; i < 50 && (down = code()) != grpc::StatusCode::UNAVAILABLE; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_EQ(down, grpc::StatusCode::UNAVAILABLE);

  ASSERT_TRUE(pg.Start().ok());
  grpc::StatusCode up = grpc::StatusCode::UNAVAILABLE;
  for (int i = 0; i < 100 && (up = code()) != grpc::StatusCode::NOT_FOUND; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_EQ(up, grpc::StatusCode::NOT_FOUND) << auth.log();
  auth.Stop();
}

}  // namespace
}  // namespace gpuaas::auth
