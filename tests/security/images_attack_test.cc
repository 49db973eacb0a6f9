// Attacks on tenants' own images (issue 23): a tenant registers an image from its registry with
// a login; another tenant tries to read, list, use, delete or replace it, to read the login
// back, or to ride on it by naming the same registry. The real services (no agent: who may use
// an image is decided at create), a real registry behind a login (docker-registry), real gRPC.
#include <gtest/gtest.h>

#include "absl/strings/match.h"
#include "libs/db/db.h"
#include "libs/db/rows.h"
#include "libs/testing/pg_test.h"
#include "libs/testing/temp_dir.h"
#include "tests/common/image_pin_wait.h"
#include "tests/common/login_registry.h"
#include "tests/platform/platform_stack.h"

namespace gpuaas::platform_testing {
namespace {

using gpuaas::testing::LoginRegistry;

class ImagesAttackTest : public gpuaas::testing::PgTest {
 protected:
  void SetUp() override {
    PgTest::SetUp();
    if (IsSkipped()) return;
    registry_ = std::make_unique<LoginRegistry>(dir_.path() / "registry");
    PlatformOptions options;
    options.agents = {};
    options.registries = {registry_->host()};
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
    grpc::Status s = stack_->stock_stub().CreateSpec(
        PlatformStack::Ctx(stack_->admin_token()).get(), spec, &made);
    ASSERT_TRUE(s.ok()) << s.error_message();

    digest_ = registry_->Push("victim/model:1", "victim");
    ASSERT_FALSE(digest_.empty());
    instancepb::CreateImageRequest req = ImageRequest("model", LoginRegistry::kPassword);
    s = CreateImage(victim_, req, image_);
    ASSERT_TRUE(s.ok()) << s.error_message();
  }
  void TearDown() override {
    stack_.reset();
    registry_.reset();
    PgTest::TearDown();
  }

  instancepb::CreateImageRequest ImageRequest(const std::string& name,
                                              const std::string& password) {
    instancepb::CreateImageRequest req;
    req.mutable_image()->set_name(name);
    req.mutable_image()->set_version("1");
    req.mutable_image()->set_oci_reference(registry_->host() + "/victim/model:1");
    if (!password.empty()) {
      req.mutable_registry_credentials()->set_username(LoginRegistry::kUser);
      req.mutable_registry_credentials()->set_password(password);
    }
    return req;
  }
  // CreateImage, then GetImage until it is pinned (FAILED_PRECONDITION with its reason when the
  // pin failed).
  grpc::Status CreateImage(const std::string& token, const instancepb::CreateImageRequest& req,
                           instancepb::Image& out) {
    return gpuaas::testing::CreateImageAndWait(
        stack_->images(), [&] { return PlatformStack::Ctx(token); }, req, out);
  }
  grpc::Status CreateInstance(const std::string& token, const std::string& id,
                              instancepb::Instance& out) {
    instancepb::CreateInstanceRequest req;
    req.set_instance_id(id);
    req.set_spec_name("p.1x");
    req.set_image("model:1");
    req.mutable_template_()->set_cmd("exec sleep 3600");
    return stack_->instances().CreateInstance(PlatformStack::Ctx(token).get(), req, &out);
  }
  static bool Leaks(const google::protobuf::Message& m) {
    return absl::StrContains(m.SerializeAsString(), LoginRegistry::kPassword);
  }

  gpuaas::testing::TempDir dir_;
  std::unique_ptr<LoginRegistry> registry_;
  std::unique_ptr<PlatformStack> stack_;
  std::string victim_;
  std::string mallory_;
  std::string digest_;
  instancepb::Image image_;
};

TEST_F(ImagesAttackTest, AnotherTenantCannotGetListUseOrDeleteATenantsImage) {
  auto& images = stack_->images();
  instancepb::GetImageRequest get;
  get.set_image("model:1");
  instancepb::Image got;
  EXPECT_EQ(images.GetImage(PlatformStack::Ctx(mallory_).get(), get, &got).error_code(),
            grpc::StatusCode::NOT_FOUND);
  get.set_tenant_id("victim");  // naming the tenant, as a global role would
  EXPECT_EQ(images.GetImage(PlatformStack::Ctx(mallory_).get(), get, &got).error_code(),
            grpc::StatusCode::NOT_FOUND);

  instancepb::ListImagesRequest list;
  instancepb::ListImagesResponse listed;
  ASSERT_TRUE(images.ListImages(PlatformStack::Ctx(mallory_).get(), list, &listed).ok());
  EXPECT_EQ(listed.images_size(), 0);
  list.set_tenant_id("victim");
  EXPECT_EQ(images.ListImages(PlatformStack::Ctx(mallory_).get(), list, &listed).error_code(),
            grpc::StatusCode::NOT_FOUND);

  instancepb::Instance instance;
  grpc::Status s = CreateInstance(mallory_, "stolen", instance);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::NOT_FOUND) << s.error_message();

  instancepb::DeleteImageRequest del;
  del.set_image("model:1");
  instancepb::DeleteImageResponse deleted;
  EXPECT_EQ(images.DeleteImage(PlatformStack::Ctx(mallory_).get(), del, &deleted).error_code(),
            grpc::StatusCode::NOT_FOUND);

  // The same name in the attacker's tenant is the attacker's own image, not a replacement.
  instancepb::Image own;
  s = CreateImage(mallory_, ImageRequest("model", ""), own);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::FAILED_PRECONDITION)
      << "naming the victim's registry does not lend it the victim's login: " << s.error_message();
  EXPECT_TRUE(absl::StrContains(s.error_message(), "registry_credentials")) << s.error_message();

  // The owner still has it, uses it, and its instance runs the pinned bytes.
  get.clear_tenant_id();
  ASSERT_TRUE(images.GetImage(PlatformStack::Ctx(victim_).get(), get, &got).ok());
  EXPECT_EQ(got.oci_digest_reference(), registry_->host() + "/victim/model@" + digest_);
  s = CreateInstance(victim_, "mine", instance);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(instance.image_reference(), got.oci_digest_reference());
}

TEST_F(ImagesAttackTest, TheRegistryLoginIsInNoAnswerLogOrTable) {
  EXPECT_FALSE(Leaks(image_));
  EXPECT_EQ(image_.registry_username(), LoginRegistry::kUser);
  EXPECT_TRUE(image_.registry_password_set());
  auto& images = stack_->images();
  instancepb::GetImageRequest get;
  get.set_image("model:1");
  instancepb::Image got;
  ASSERT_TRUE(images.GetImage(PlatformStack::Ctx(victim_).get(), get, &got).ok());
  EXPECT_FALSE(Leaks(got));
  instancepb::ListImagesRequest list;
  instancepb::ListImagesResponse listed;
  ASSERT_TRUE(images.ListImages(PlatformStack::Ctx(victim_).get(), list, &listed).ok());
  ASSERT_EQ(listed.images_size(), 1);
  EXPECT_FALSE(Leaks(listed));
  // The platform admin reads the tenant's image, but not its login either.
  get.set_tenant_id("victim");
  ASSERT_TRUE(images.GetImage(PlatformStack::Ctx(stack_->admin_token()).get(), get, &got).ok());
  EXPECT_FALSE(Leaks(got));
  instancepb::Instance instance;
  ASSERT_TRUE(CreateInstance(victim_, "mine", instance).ok());
  EXPECT_FALSE(Leaks(instance));
  // A retry with another password is refused without echoing either.
  instancepb::Image again;
  grpc::Status s = CreateImage(victim_, ImageRequest("model", "guess-1234"), again);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::ALREADY_EXISTS);
  EXPECT_FALSE(absl::StrContains(s.error_message(), "guess-1234"));

  // Not in the service's log (every call is logged), not in plain text in its tables.
  EXPECT_FALSE(absl::StrContains(stack_->instance().Log(), LoginRegistry::kPassword));
  absl::StatusOr<std::unique_ptr<db::Pool>> pool = MakePool(1);
  ASSERT_TRUE(pool.ok()) << pool.status();
  absl::StatusOr<std::vector<std::string>> sealed = (*pool)->Read<std::vector<std::string>>(
      "test.sealed", [](db::Tx& tx) -> absl::StatusOr<std::vector<std::string>> {
        return tx
            .Exec(
                "SELECT registry_secret FROM instance.images WHERE registry_secret <> '' "
                "UNION ALL SELECT registry_secret FROM instance.instances "
                "WHERE registry_secret <> ''")
            .Map([](const db::Row& r) { return r.GetBytes(0); });
      });
  ASSERT_TRUE(sealed.ok()) << sealed.status();
  EXPECT_EQ(sealed->size(), 2u) << "the image's and the instance's";
  for (const std::string& s : *sealed) {
    EXPECT_FALSE(absl::StrContains(s, LoginRegistry::kPassword));
  }
}

}  // namespace
}  // namespace gpuaas::platform_testing
