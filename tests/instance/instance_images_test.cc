// OCI images against a real registry (docker-registry behind a login, pushed by umoci and
// skopeo), real PostgreSQL and ImageService over loopback gRPC: a tag pinned to its digest at
// create, the errors of a missing tag, a refused login and an unreachable registry; an instance
// runs the pinned bytes with its image's login, its spec's limits and its image's egress
// policy in the Workload its agent gets; PULLING progress becomes (deduplicated) events; an
// OOM kill and a failed pull fail the instance with their reason.
#include <gtest/gtest.h>

#include "libs/authz/grpc_jwks_source.h"
#include "libs/authz/verifier.h"
#include "libs/client/channel.h"
#include "libs/rpc/server.h"
#include "libs/testing/status_matchers.h"
#include "services/instance/grpc_service.h"
#include "services/instance/instances.h"
#include "tests/common/child_process.h"
#include "tests/common/image_pin_wait.h"
#include "tests/common/login_registry.h"
#include "tests/instance/reconciler_test_base.h"

namespace gpuaas::instance::testing {
namespace {

using ::gpuaas::auth::testing::AuthStack;
using ::gpuaas::testing::LoginRegistry;
using ::testing::HasSubstr;

class InstanceImagesTest : public ReconcilerTest {
 protected:
  int Nodes() override { return 1; }
  int Stocks() override { return 1; }

  void SetUp() override {
    ReconcilerTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    SetQuota("alpha", /*max_gpus=*/8, /*max_instances=*/100);
    registry_ = std::make_unique<LoginRegistry>(dir_.path() / "registry");
    auto channel = client::OpenChannel(stack_->address(), {});
    ASSERT_OK(channel);
    authenticator_ = authz::NewJwksAuthenticator(authz::NewGrpcJwksSource(*channel), clock_);
    // The operator allows the test's loopback registry (plain HTTP); every other loopback
    // address stays refused.
    absl::StatusOr<registry::RegistryPolicy> policy =
        registry::RegistryPolicy::Create({registry_->host()}, {registry_->host()});
    ASSERT_OK(policy);
    pinner_ = NewRegistryPinner({.policy = *policy, .timeout = absl::Seconds(5)});
    pins_ = std::make_unique<ImagePinQueue>(*pool_, *pinner_, &box_, ImagePinQueueOptions{});
    pins_->Start();
    images_ = std::make_unique<Images>(*pool_, *pins_, &box_);
    instances_ = std::make_unique<Instances>(
        *pool_, Peers{*auth_client_, *stock_client_, *storage_client_}, *images_, nullptr);
    image_server_ = std::make_unique<rpc::Server>(
        rpc::ServerOptions{.name = "images",
                           .listen_address = "127.0.0.1:0",
                           .metrics_address = "",
                           .worker_threads = 4},
        authz::NewJwksAuthenticator(authz::NewGrpcJwksSource(*channel), clock_));
    image_service_ = std::make_unique<ImageServiceImpl>(*images_, image_server_->handler());
    image_server_->AddService(image_service_.get());
    ASSERT_OK(image_server_->Start());
    image_stub_ = pb::ImageService::NewStub(
        *client::OpenChannel("127.0.0.1:" + std::to_string(image_server_->port()), {}));
  }
  void TearDown() override {
    agent_.reset();
    if (image_server_) image_server_->Shutdown();
    image_service_.reset();
    image_server_.reset();
    instances_.reset();
    images_.reset();
    pins_.reset();
    registry_.reset();
    ReconcilerTest::TearDown();
  }

  // CreateImage over gRPC as alpha's member, with the registry's login unless `password` is "",
  // then GetImage until it is pinned (FAILED_PRECONDITION with its reason when the pin failed).
  grpc::Status CreateImage(const std::string& name, const std::string& oci_reference,
                           const std::string& password, pb::Image& out) {
    pb::CreateImageRequest req;
    req.mutable_image()->set_name(name);
    req.mutable_image()->set_version("1");
    req.mutable_image()->set_oci_reference(oci_reference);
    req.mutable_image()->set_deny_egress(true);
    if (!password.empty()) {
      req.mutable_registry_credentials()->set_username(LoginRegistry::kUser);
      req.mutable_registry_credentials()->set_password(password);
    }
    return gpuaas::testing::CreateImageAndWait(
        *image_stub_, [&] { return AuthStack::Ctx(member_); }, req, out);
  }

  absl::StatusOr<pb::Instance> CreateInstance(const std::string& id, const std::string& image) {
    pb::CreateInstanceRequest req;
    req.set_instance_id(id);
    req.set_spec_name(kSpec);
    req.set_image(image);
    req.mutable_template_()->set_cmd("exec sleep 3600");
    absl::StatusOr<authz::Principal> p = authenticator_->Authenticate("Bearer " + member_);
    if (!p.ok()) return p.status();
    pb::Instance out;
    absl::Status s = instances_->CreateInstance(
        *p,
        client::CallerCredentials{.authorization = "Bearer " + member_,
                                  .deadline = absl::Now() + absl::Seconds(20)},
        req, out);
    if (!s.ok()) return s;
    return out;
  }

  std::vector<pb::Event> Events(const std::string& id) {
    absl::StatusOr<authz::Principal> p = authenticator_->Authenticate("Bearer " + member_);
    pb::GetInstanceRequest req;
    req.set_instance_id(id);
    pb::Instance out;
    EXPECT_OK(instances_->GetInstance(*p, req, out));
    return {out.events().begin(), out.events().end()};
  }

  // The workload of `id`'s first run, once the agent got it.
  pb::Workload WorkloadOf(const std::string& id) {
    EXPECT_TRUE(WaitFor(id, [](const WorkRow& r) { return r.published; }));
    const std::string workload_id = id + ".1";
    for (int i = 0; i < 200; ++i) {
      std::optional<pb::WorkloadSet> set = agent_->last_set();
      if (set) {
        for (const pb::Workload& w : set->workloads()) {
          if (w.workload_id() == workload_id) return w;
        }
      }
      absl::SleepFor(absl::Milliseconds(50));
    }
    ADD_FAILURE() << "no workload " << workload_id;
    return {};
  }

  std::unique_ptr<LoginRegistry> registry_;
  std::unique_ptr<authz::Authenticator> authenticator_;
  ImagePinnerPtr pinner_;
  std::unique_ptr<ImagePinQueue> pins_;
  std::unique_ptr<Images> images_;
  std::unique_ptr<Instances> instances_;
  std::unique_ptr<rpc::Server> image_server_;
  std::unique_ptr<ImageServiceImpl> image_service_;
  std::unique_ptr<pb::ImageService::Stub> image_stub_;
  std::unique_ptr<FakeAgent> agent_;
};

TEST_F(InstanceImagesTest, ATagIsPinnedAtCreateAndInstancesRunThoseBytesWithTheirLimits) {
  const std::string first = registry_->Push("acme/app:1", "first");
  ASSERT_FALSE(first.empty());
  pb::Image image;
  grpc::Status s =
      CreateImage("app", registry_->host() + "/acme/app:1", LoginRegistry::kPassword, image);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(image.oci_digest_reference(), registry_->host() + "/acme/app@" + first);
  EXPECT_EQ(image.tenant_id(), "alpha");
  EXPECT_EQ(image.registry_username(), LoginRegistry::kUser);
  EXPECT_TRUE(image.registry_password_set());
  EXPECT_EQ(image.SerializeAsString().find(LoginRegistry::kPassword), std::string::npos);

  // The tag moves on; the image and its instances stay on the bytes it was pinned to.
  const std::string second = registry_->Push("acme/app:1", "second");
  ASSERT_NE(second, first);
  agent_ = Agent("node-0", {.auto_run = false});
  StartReconciler();
  ASSERT_OK(CreateInstance("web", "app:1"));
  const pb::Workload w = WorkloadOf("web");
  EXPECT_EQ(w.image_reference(), image.oci_digest_reference());
  EXPECT_EQ(w.registry_credentials().username(), LoginRegistry::kUser);
  EXPECT_EQ(w.registry_credentials().password(), LoginRegistry::kPassword)
      << "only the node's agent gets the login, in its tenant's workload";
  // MakeSpec's defaults: cpu "8", memory "32Gi", disk "100Gi".
  EXPECT_EQ(w.limits().cpu_millis(), 8000);
  EXPECT_EQ(w.limits().memory_bytes(), int64_t{32} << 30);
  EXPECT_EQ(w.limits().ephemeral_disk_bytes(), int64_t{100} << 30);
  EXPECT_EQ(w.limits().pids(), 4096);
  EXPECT_EQ(w.limits().open_files(), 65536);
  EXPECT_TRUE(w.deny_egress());

  // The same create again is answered from the row, pinned as it was; another password is not
  // the same image.
  pb::Image again;
  s = CreateImage("app", registry_->host() + "/acme/app:1", LoginRegistry::kPassword, again);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(again.oci_digest_reference(), image.oci_digest_reference());
  s = CreateImage("app", registry_->host() + "/acme/app:1", "another-password", again);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::ALREADY_EXISTS) << s.error_message();
}

TEST_F(InstanceImagesTest, AReferenceByDigestIsKeptAndBadReferencesNameTheField) {
  const std::string digest = registry_->Push("acme/app:1", "x");
  ASSERT_FALSE(digest.empty());
  pb::Image image;
  const std::string pinned = registry_->host() + "/acme/app@" + digest;
  grpc::Status s = CreateImage("bydigest", pinned, "", image);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(image.oci_digest_reference(), pinned);

  s = CreateImage("missing", registry_->host() + "/acme/app:nope", LoginRegistry::kPassword, image);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::FAILED_PRECONDITION) << s.error_message();
  EXPECT_EQ(image.state(), pb::IMAGE_STATE_FAILED);
  EXPECT_THAT(s.error_message(), HasSubstr("image.oci_reference"));
  EXPECT_THAT(s.error_message(), HasSubstr("not found"));

  s = CreateImage("wrong", registry_->host() + "/acme/app:1", "wrong-password", image);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::FAILED_PRECONDITION) << s.error_message();
  EXPECT_THAT(s.error_message(), HasSubstr("registry_credentials"));
  EXPECT_THAT(s.error_message(), ::testing::Not(HasSubstr("wrong-password")));

  s = CreateImage("nologin", registry_->host() + "/acme/app:1", "", image);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::FAILED_PRECONDITION) << s.error_message();
  EXPECT_THAT(s.error_message(), HasSubstr("registry_credentials"));
  // A FAILED image is refused for instances, naming it.
  absl::StatusOr<pb::Instance> refused = CreateInstance("from-failed", "nologin:1");
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kFailedPrecondition) << refused.status();
  EXPECT_THAT(std::string(refused.status().message()), HasSubstr("image"));

  // A loopback port the operator did not allow is refused before any connection.
  const int closed = gpuaas::testing::FreePort();
  s = CreateImage("away", "127.0.0.1:" + std::to_string(closed) + "/acme/app:1", "", image);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::FAILED_PRECONDITION) << s.error_message();
  EXPECT_EQ(s.error_message(), "registry address not allowed");

  s = CreateImage("bad", "Not A Reference", "", image);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << s.error_message();
  EXPECT_THAT(s.error_message(), HasSubstr("image.oci_reference"));
}

TEST_F(InstanceImagesTest, PullProgressBecomesEventsAndAFailedPullFailsTheInstance) {
  pb::Image image;
  const std::string digest = registry_->Push("acme/app:1", "x");
  grpc::Status s = CreateImage("app", registry_->host() + "/acme/app@" + digest, "", image);
  ASSERT_TRUE(s.ok()) << s.error_message();
  agent_ = Agent("node-0", {.auto_run = false});
  StartReconciler();
  ASSERT_OK(CreateInstance("web", "app"));
  const pb::Workload w = WorkloadOf("web");
  const auto pulling = [&](const std::string& message) {
    pb::WorkloadStatus st = FakeAgent::StatusOf(w, pb::WORKLOAD_STATE_PULLING);
    st.set_message(message);
    return st;
  };
  // Repeated progress (every report repeats it) is one event.
  ASSERT_TRUE(agent_->Report({pulling("layer 1/2: 1 MB")}).ok());
  ASSERT_TRUE(agent_->Report({pulling("layer 1/2: 1 MB")}).ok());
  ASSERT_TRUE(agent_->Report({pulling("layer 2/2: 3 MB")}).ok());
  std::vector<std::string> pulls;
  for (const pb::Event& e : Events("web")) {
    if (e.message().rfind("pulling the image: ", 0) == 0) pulls.push_back(e.message());
    EXPECT_EQ(e.state(), pb::STATE_PENDING);
  }
  EXPECT_EQ(pulls, (std::vector<std::string>{"pulling the image: layer 1/2: 1 MB",
                                             "pulling the image: layer 2/2: 3 MB"}));
  EXPECT_EQ(Row("web").state, pb::STATE_PENDING) << "progress changes no state";

  pb::WorkloadStatus failed = FakeAgent::StatusOf(w, pb::WORKLOAD_STATE_FAILED);
  failed.set_reason(pb::REASON_IMAGE_PULL_FAILED);
  failed.set_message("unauthorized: the registry refused the login");
  ASSERT_TRUE(agent_->Report({failed}).ok());
  ASSERT_TRUE(WaitForState("web", pb::STATE_FAILED));
  const WorkRow r = Row("web");
  EXPECT_EQ(r.reason, pb::REASON_IMAGE_PULL_FAILED);
  EXPECT_EQ(r.message, "unauthorized: the registry refused the login");
  // Final for this start: no retry publishes it again.
  absl::SleepFor(absl::Seconds(1));
  EXPECT_FALSE(Row("web").published);
  EXPECT_EQ(Row("web").state, pb::STATE_FAILED);
}

TEST_F(InstanceImagesTest, AnOomKillFailsTheInstanceWithItsReason) {
  agent_ = Agent("node-0");  // runs what it gets: STARTED, RUNNING
  StartReconciler();
  ASSERT_OK(CreateInstance("hog", ""));
  ASSERT_TRUE(WaitForState("hog", pb::STATE_RUNNING));
  const pb::Workload w = WorkloadOf("hog");
  EXPECT_TRUE(w.image_reference().empty()) << "no image: the process runtime";
  pb::WorkloadStatus oom = FakeAgent::StatusOf(w, pb::WORKLOAD_STATE_FAILED);
  oom.set_reason(pb::REASON_OOM_KILLED);
  oom.set_message("killed: used more than its 32Gi of memory");
  ASSERT_TRUE(agent_->Report({oom}).ok());
  ASSERT_TRUE(WaitForState("hog", pb::STATE_FAILED));
  EXPECT_EQ(Row("hog").reason, pb::REASON_OOM_KILLED);
  const std::vector<pb::Event> events = Events("hog");
  ASSERT_FALSE(events.empty());
  EXPECT_EQ(events.back().reason(), pb::REASON_OOM_KILLED);
  EXPECT_EQ(events.back().message(), "killed: used more than its 32Gi of memory");
}

}  // namespace
}  // namespace gpuaas::instance::testing
