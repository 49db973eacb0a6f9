// Attacks through image references (issue 32, "a slow registry holds nothing shared"): a tenant
// names a registry that accepts connections and never answers, to stall other tenants' calls;
// names the control plane's own ports and the cloud's metadata address, to scan them through
// the pinner's error messages; and runs a registry of its own that redirects (or sends its
// token realm) into the control plane. The real services over real gRPC, a real registry the
// operator allowed beside them (docker-registry behind a login), hostile registries the test
// runs (a held socket, a small HTTP server).
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fstream>
#include <set>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "libs/db/dsn.h"
#include "libs/testing/pg_test.h"
#include "libs/testing/temp_dir.h"
#include "tests/common/child_process.h"
#include "tests/common/image_pin_wait.h"
#include "tests/common/login_registry.h"
#include "tests/platform/platform_stack.h"

namespace gpuaas::platform_testing {
namespace {

using gpuaas::testing::LoginRegistry;

constexpr char kNotAllowed[] = "registry address not allowed";
constexpr char kUnreachable[] = "registry unreachable or not an OCI registry";

// What a hostile registry puts in every answer: it must reach no tenant.
constexpr char kBanner[] = "BANNER-of-the-thing-that-answered";

// A registry of the attacker's: every request is answered as argv[2] says. "redirect": 307 to
// argv[3] (a URL); "realm": 401 with a token realm at argv[3]; "garbage": 500 with kBanner.
constexpr char kHostileRegistry[] = R"(
import http.server, sys
port, mode, target, banner = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]

class Hostile(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        if mode == "redirect":
            self.send_response(307)
            self.send_header("Location", target + self.path)
            self.send_header("Content-Length", "0")
            self.end_headers()
        elif mode == "realm":
            self.send_response(401)
            self.send_header("WWW-Authenticate",
                             'Bearer realm="%s",service="x",error="%s"' % (target, banner))
            self.send_header("Content-Length", "0")
            self.end_headers()
        else:
            body = banner.encode() * 8
            self.send_response(500, banner)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
    def log_message(self, *args):
        pass

http.server.ThreadingHTTPServer(("127.0.0.1", port), Hostile).serve_forever()
)";

// A socket that accepts connections (the kernel completes them into the backlog) and never
// answers: a registry that holds whoever asks it.
class HeldSocket final {
 public:
  HeldSocket() {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    EXPECT_EQ(::listen(fd_, 128), 0);
    socklen_t len = sizeof a;
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
  }
  ~HeldSocket() { ::close(fd_); }
  int port() const { return port_; }

 private:
  int fd_ = -1;
  int port_ = 0;
};

class RegistryPolicyAttackTest : public gpuaas::testing::PgTest {
 protected:
  void SetUp() override {
    PgTest::SetUp();
    if (IsSkipped()) return;
    registry_ = std::make_unique<LoginRegistry>(dir_.path() / "registry");
    hostile_port_ = gpuaas::testing::FreePort();
    PlatformOptions options;
    options.agents = {};
    // The operator allows the real registry, the held one and the attacker's HTTP server (as
    // it would a LAN registry): what goes through them must still not reach anything else.
    options.registries = {registry_->host(), absl::StrCat("127.0.0.1:", held_.port()),
                          absl::StrCat("127.0.0.1:", hostile_port_)};
    options.instance_flags = {"--registry-timeout-seconds=2"};
    stack_ = std::make_unique<PlatformStack>(dsn(), dir_.path(), options);
    victim_ = stack_->CreateTenant("victim");
    mallory_ = stack_->CreateTenant("mallory");
    stockpb::CreateSpecRequest spec;
    spec.mutable_spec()->set_spec_name("p.1x");
    spec.mutable_spec()->set_gpu_type("A100-80GB");
    spec.mutable_spec()->set_gpu_num(1);
    spec.mutable_spec()->set_cpu("2");
    spec.mutable_spec()->set_memory("4Gi");
    spec.mutable_spec()->set_disk("10Gi");
    spec.mutable_spec()->mutable_price()->set_micros_per_hour(1000000);
    spec.mutable_spec()->mutable_price()->set_currency("USD");
    stockpb::Spec made;
    const grpc::Status s = stack_->stock_stub().CreateSpec(
        PlatformStack::Ctx(stack_->admin_token()).get(), spec, &made);
    ASSERT_TRUE(s.ok()) << s.error_message();
  }
  grpc::Status CreateInstance(const std::string& token, const std::string& id,
                              const std::string& image) {
    instancepb::CreateInstanceRequest req;
    req.set_instance_id(id);
    req.set_spec_name("p.1x");
    req.set_image(image);
    req.mutable_template_()->set_cmd("exec sleep 3600");
    instancepb::Instance out;
    return stack_->instances().CreateInstance(PlatformStack::Ctx(token).get(), req, &out);
  }
  void TearDown() override {
    hostile_.reset();
    stack_.reset();
    registry_.reset();
    PgTest::TearDown();
  }

  static instancepb::CreateImageRequest ImageRequest(const std::string& name,
                                                     const std::string& reference) {
    instancepb::CreateImageRequest req;
    req.mutable_image()->set_name(name);
    req.mutable_image()->set_version("1");
    req.mutable_image()->set_oci_reference(reference);
    return req;
  }
  // CreateImage, then GetImage until pinned: OK when READY, FAILED_PRECONDITION with its reason
  // when FAILED.
  grpc::Status CreateAndWait(const std::string& token, const instancepb::CreateImageRequest& req,
                             instancepb::Image& out) {
    return gpuaas::testing::CreateImageAndWait(
        stack_->images(), [&] { return PlatformStack::Ctx(token); }, req, out);
  }
  // A context with a short deadline of its own: the call must be answered within it.
  static std::unique_ptr<grpc::ClientContext> ShortCtx(const std::string& token) {
    auto ctx = std::make_unique<grpc::ClientContext>();
    ctx->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(2));
    ctx->AddMetadata("authorization", "Bearer " + token);
    return ctx;
  }
  void StartHostile(const std::string& mode, const std::string& target) {
    const std::filesystem::path script = dir_.path() / "hostile_registry.py";
    std::ofstream(script) << kHostileRegistry;
    hostile_ = std::make_unique<gpuaas::testing::ChildProcess>(
        std::vector<std::string>{"/usr/bin/python3", script.string(), std::to_string(hostile_port_),
                                 mode, target, kBanner},
        (dir_.path() / "hostile_registry.log").string());
    // Up once it answers (any answer).
    for (int i = 0; i < 100; ++i) {
      const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
      sockaddr_in a{};
      a.sin_family = AF_INET;
      a.sin_port = htons(static_cast<uint16_t>(hostile_port_));
      a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
      const bool up = ::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
      ::close(fd);
      if (up) return;
      usleep(100000);
    }
    ADD_FAILURE() << "the hostile registry did not come up";
  }

  gpuaas::testing::TempDir dir_;
  HeldSocket held_;
  int hostile_port_ = 0;
  std::unique_ptr<LoginRegistry> registry_;
  std::unique_ptr<PlatformStack> stack_;
  std::unique_ptr<gpuaas::testing::ChildProcess> hostile_;
  std::string victim_;
  std::string mallory_;
};

// Mallory creates more images naming the held registry than the pin queue has workers. Each
// create answers at once, PENDING; meanwhile the victim's ordinary calls answer within their
// own 2 s deadlines and the victim's own image is pinned while mallory's still wait (one
// tenant's pins take one worker at a time). Mallory's images end FAILED with the one message.
// Before issue 32 each create held one of the service's call threads for skopeo's 30 s, and
// the victim's ListInstances waited out its whole deadline.
TEST_F(RegistryPolicyAttackTest, ASlowRegistryHoldsNoOtherTenantsCalls) {
  constexpr int kSlowImages = 8;
  std::vector<instancepb::Image> slow(kSlowImages);
  for (int i = 0; i < kSlowImages; ++i) {
    const grpc::Status s = stack_->images().CreateImage(
        ShortCtx(mallory_).get(),
        ImageRequest(absl::StrCat("slow-", i), absl::StrCat("127.0.0.1:", held_.port(), "/m/x:1")),
        &slow[i]);
    ASSERT_TRUE(s.ok()) << "CreateImage answers at once: " << s.error_message();
    EXPECT_EQ(slow[i].state(), instancepb::IMAGE_STATE_PENDING);
  }
  for (int i = 0; i < 5; ++i) {
    instancepb::ListInstancesRequest list;
    instancepb::ListInstancesResponse listed;
    grpc::Status s = stack_->instances().ListInstances(ShortCtx(victim_).get(), list, &listed);
    ASSERT_TRUE(s.ok()) << "another tenant's ListInstances: " << s.error_message();
    instancepb::ListImagesRequest images;
    instancepb::ListImagesResponse images_listed;
    s = stack_->images().ListImages(ShortCtx(victim_).get(), images, &images_listed);
    ASSERT_TRUE(s.ok()) << "another tenant's ListImages: " << s.error_message();
    instancepb::GetImageRequest get;
    get.set_image("slow-0:1");
    instancepb::Image got;
    s = stack_->images().GetImage(ShortCtx(mallory_).get(), get, &got);
    ASSERT_TRUE(s.ok()) << "GetImage of a pinning image: " << s.error_message();
  }

  // The victim's image from the allowed registry is pinned beside mallory's queue.
  const std::string digest = registry_->Push("victim/app:1", "v");
  ASSERT_FALSE(digest.empty());
  instancepb::CreateImageRequest own = ImageRequest("app", registry_->host() + "/victim/app:1");
  own.mutable_registry_credentials()->set_username(LoginRegistry::kUser);
  own.mutable_registry_credentials()->set_password(LoginRegistry::kPassword);
  instancepb::Image pinned;
  grpc::Status s = CreateAndWait(victim_, own, pinned);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(pinned.oci_digest_reference(), registry_->host() + "/victim/app@" + digest);
  instancepb::ListImagesRequest list;
  instancepb::ListImagesResponse mallorys;
  ASSERT_TRUE(stack_->images().ListImages(ShortCtx(mallory_).get(), list, &mallorys).ok());
  int pending = 0;
  for (const instancepb::Image& i : mallorys.images()) {
    pending += i.state() == instancepb::IMAGE_STATE_PENDING ? 1 : 0;
  }
  EXPECT_GT(pending, 0) << "the victim's pin waited for all of mallory's";

  // A PENDING image makes no instance yet, and says why.
  s = CreateInstance(mallory_, "early", absl::StrCat("slow-", kSlowImages - 1, ":1"));
  EXPECT_EQ(s.error_code(), grpc::StatusCode::FAILED_PRECONDITION) << s.error_message();
  EXPECT_TRUE(absl::StrContains(s.error_message(), "image")) << s.error_message();
  // The pinned one does.
  s = CreateInstance(victim_, "mine", "app:1");
  EXPECT_TRUE(s.ok()) << s.error_message();

  // Mallory's images end FAILED, with the one message, and make no instance either.
  for (instancepb::Image& image : slow) {
    s = gpuaas::testing::AwaitImage(
        stack_->images(), [&] { return PlatformStack::Ctx(mallory_); }, image);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::FAILED_PRECONDITION) << s.error_message();
    EXPECT_EQ(image.state(), instancepb::IMAGE_STATE_FAILED);
    EXPECT_EQ(image.state_reason(), kUnreachable);
  }
  s = CreateInstance(mallory_, "late", "slow-0:1");
  EXPECT_EQ(s.error_code(), grpc::StatusCode::FAILED_PRECONDITION) << s.error_message();
}

// Images naming the control plane's PostgreSQL, the instance service's own gRPC port, a closed
// port, the cloud's metadata address, a private, a CGNAT and an IPv6 loopback address: each
// FAILED with the same one message, no connection made, nothing of what listens there in it.
// Before issue 32 each failed with a message of its own, one quoting the gRPC server's bytes.
TEST_F(RegistryPolicyAttackTest, TheControlPlanesPortsAreRefusedWithOneMessage) {
  const std::string pg_port = db::DsnParam(dsn(), "port").value_or("5432");
  const int closed = gpuaas::testing::FreePort();
  const std::string instance_port =
      stack_->instance().address().substr(stack_->instance().address().rfind(':') + 1);
  const std::vector<std::string> targets = {
      "127.0.0.1:" + pg_port,
      "127.0.0.1:" + instance_port,
      "localhost:" + instance_port,
      absl::StrCat("127.0.0.1:", closed),
      "169.254.169.254",
      "169.254.169.254:80",
      "10.1.2.3:5000",
      "100.64.0.1:5000",
      "[::1]:" + pg_port,
      "[::ffff:127.0.0.1]:" + pg_port,
      "0.0.0.0:" + instance_port,
  };
  std::set<std::string> messages;
  int n = 0;
  for (const std::string& target : targets) {
    instancepb::Image image;
    const grpc::Status s =
        CreateAndWait(mallory_, ImageRequest(absl::StrCat("scan-", n++), target + "/x/y:1"), image);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::FAILED_PRECONDITION) << target;
    EXPECT_EQ(image.state_reason(), kNotAllowed) << target;
    messages.insert(image.state_reason());
  }
  EXPECT_EQ(messages.size(), 1u) << "one message for every refused address";

  // The registry the operator allowed still pins (the legitimate path beside the attack).
  const std::string digest = registry_->Push("mallory/app:1", "m");
  instancepb::CreateImageRequest own = ImageRequest("own", registry_->host() + "/mallory/app:1");
  own.mutable_registry_credentials()->set_username(LoginRegistry::kUser);
  own.mutable_registry_credentials()->set_password(LoginRegistry::kPassword);
  instancepb::Image image;
  const grpc::Status s = CreateAndWait(mallory_, own, image);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(image.oci_digest_reference(), registry_->host() + "/mallory/app@" + digest);
}

// Mallory's own registry (allowed, as a LAN registry would be) redirects every request, the
// manifest's and the blobs', to the control plane's PostgreSQL; then it sends its token realm
// there. Each hop is checked at the socket: the image is FAILED, not allowed. A registry that
// answers with garbage and its banner gets the one unreachable message, no banner in it.
TEST_F(RegistryPolicyAttackTest, ARegistryCannotRedirectIntoTheControlPlane) {
  const std::string pg_port = db::DsnParam(dsn(), "port").value_or("5432");
  const std::string reference = absl::StrCat("127.0.0.1:", hostile_port_, "/m/app:1");
  instancepb::Image image;

  StartHostile("redirect", "http://127.0.0.1:" + pg_port);
  grpc::Status s = CreateAndWait(mallory_, ImageRequest("redirected", reference), image);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::FAILED_PRECONDITION) << s.error_message();
  EXPECT_EQ(image.state_reason(), kNotAllowed);
  hostile_.reset();

  StartHostile("realm", "http://127.0.0.1:" + pg_port + "/token");
  s = CreateAndWait(mallory_, ImageRequest("realm", reference), image);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::FAILED_PRECONDITION) << s.error_message();
  EXPECT_EQ(image.state_reason(), kNotAllowed);
  hostile_.reset();

  StartHostile("garbage", "");
  s = CreateAndWait(mallory_, ImageRequest("garbage", reference), image);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::FAILED_PRECONDITION) << s.error_message();
  EXPECT_EQ(image.state_reason(), kUnreachable);
  EXPECT_FALSE(absl::StrContains(image.SerializeAsString(), kBanner));
  hostile_.reset();

  // The registry the operator allowed still pins, and the pinned image makes an instance.
  const std::string digest = registry_->Push("mallory/app:1", "m");
  instancepb::CreateImageRequest own = ImageRequest("own", registry_->host() + "/mallory/app:1");
  own.mutable_registry_credentials()->set_username(LoginRegistry::kUser);
  own.mutable_registry_credentials()->set_password(LoginRegistry::kPassword);
  s = CreateAndWait(mallory_, own, image);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(image.state(), instancepb::IMAGE_STATE_READY);
  EXPECT_EQ(image.oci_digest_reference(), registry_->host() + "/mallory/app@" + digest);
}

}  // namespace
}  // namespace gpuaas::platform_testing
