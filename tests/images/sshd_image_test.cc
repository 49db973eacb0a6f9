// The catalog's `sshd` image through gpuaasctl's tunnels, as a user's own OpenSSH client takes
// them: the member's key stored with `gpuaasctl users set-ssh-keys me`, then `ssh` with
// `ProxyCommand gpuaasctl instances tunnel %h 22` (what VS Code's Remote-SSH runs) with the
// command's exit status, `scp` to the instance through `port-forward`; a key the template adds
// trusted too, a viewer's stored key refused, a removed key refused from the next start.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "libs/testing/eventually.h"
#include "libs/testing/pg_test.h"
#include "libs/testing/temp_dir.h"
#include "tests/common/child_process.h"
#include "tests/images/image_stack.h"

namespace gpuaas::images_testing {
namespace {

namespace fs = std::filesystem;

std::string ReadFile(const fs::path& p) {
  std::ifstream in(p);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

class SshdImageTest : public gpuaas::testing::PgTest {
 protected:
  void SetUp() override {
    PgTest::SetUp();
    if (IsSkipped()) return;
    stack_ = std::make_unique<ImageStack>(dsn(), dir_.path(),
                                          std::vector<AgentSpec>{{"node-a", "1xA100-80GB"}});
    token_ = stack_->platform().CreateTenant("studio");
    stack_->platform().CreateSpecWithStocks("a100.1x", "A100-80GB", 1, 0, 1);
    stack_->platform().CreateStorage(token_, "home");
    for (const char* key : {"id", "viewer", "extra"}) {
      const CommandOutput made =
          RunCommand({"/usr/bin/ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", Key(key)}, {});
      ASSERT_EQ(made.exit_code, 0) << made.err;
    }
    // The tenant's gpuaasctl: its token in the environment, never on a command line.
    ctl_env_ = {"HOME=" + dir_.path().string(), "GPUAAS_TOKEN=" + token_,
                "GPUAAS_INSTANCE_ADDR=" + stack_->platform().instance().address(),
                "GPUAAS_AUTH_ADDR=" + stack_->platform().auth().address()};
  }
  void TearDown() override {
    stack_.reset();
    PgTest::TearDown();
  }

  std::string Key(const std::string& name) const { return (dir_.path() / name).string(); }

  // OpenSSH's client with `key`, no config or known hosts of the user's, then `args`.
  std::vector<std::string> Ssh(const std::string& program, const std::string& key,
                               std::vector<std::string> args) const {
    std::vector<std::string> argv = {program,
                                     "-F",
                                     "/dev/null",
                                     "-i",
                                     Key(key),
                                     "-o",
                                     "IdentitiesOnly=yes",
                                     "-o",
                                     "StrictHostKeyChecking=no",
                                     "-o",
                                     "UserKnownHostsFile=/dev/null",
                                     "-o",
                                     "BatchMode=yes",
                                     "-o",
                                     "LogLevel=ERROR"};
    argv.insert(argv.end(), args.begin(), args.end());
    return argv;
  }

  gpuaas::testing::TempDir dir_;
  std::unique_ptr<ImageStack> stack_;
  std::string token_;
  std::vector<std::string> ctl_env_;
};

TEST_F(SshdImageTest, SshScpWithStoredKeysThroughGpuaasctl) {
  // The member stores its key as a user would; a viewer of the tenant stores one too.
  CommandOutput r =
      RunCommand({GPUAAS_CTL_BINARY, "users", "set-ssh-keys", "me", Key("id") + ".pub"}, ctl_env_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find(" 1 "), std::string::npos) << r.out;  // the SSH KEYS column
  auth::testing::AuthStack& auth = stack_->platform().auth();
  auth.CreateUser("vic", "studio", common::v1::ROLE_VIEWER);
  const std::vector<std::string> viewer_env = {
      "HOME=" + dir_.path().string(),
      "GPUAAS_TOKEN=" + auth.Login("vic", auth::testing::AuthStack::PasswordOf("vic"), "studio"),
      "GPUAAS_AUTH_ADDR=" + auth.address()};
  r = RunCommand({GPUAAS_CTL_BINARY, "users", "set-ssh-keys", "me", Key("viewer") + ".pub"},
                 viewer_env);
  ASSERT_EQ(r.exit_code, 0) << r.err;

  instancepb::Template tmpl;
  instancepb::Env* keys = tmpl.add_envs();
  keys->set_name("SSH_AUTHORIZED_KEYS");
  keys->set_value(ReadFile(Key("extra") + ".pub"));
  const instancepb::Instance box = stack_->RunImage(token_, "box", "sshd", "home", tmpl);
  ASSERT_EQ(box.state(), instancepb::STATE_RUNNING);

  // ssh with the tunnel as its ProxyCommand: %h is the instance's id. sshd may still be making
  // its host key when the instance turns RUNNING (no probe): retried until it answers.
  const std::string proxy =
      absl::StrCat("ProxyCommand=", GPUAAS_CTL_BINARY, " instances tunnel %h 22");
  ASSERT_TRUE(gpuaas::testing::Eventually([&] {
    r = RunCommand(Ssh("/usr/bin/ssh", "id", {"-o", proxy, "dev@box", "id -un; exit 3"}), ctl_env_);
    return r.exit_code != 255;
  })) << r.err;
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_EQ(r.out, "dev\n");

  // The template's own key works beside the members'.
  r = RunCommand(Ssh("/usr/bin/ssh", "extra", {"-o", proxy, "dev@box", "true"}), ctl_env_);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  // A viewer's stored key: refused (a viewer may read instances, not run commands in them).
  r = RunCommand(Ssh("/usr/bin/ssh", "viewer", {"-o", proxy, "dev@box", "true"}), ctl_env_);
  EXPECT_EQ(r.exit_code, 255);
  EXPECT_NE(r.err.find("Permission denied"), std::string::npos) << r.err;

  // scp through a local port-forward (`ssh -p PORT localhost`), into the storage.
  std::string env_line;
  for (const std::string& e : ctl_env_) env_line += "'" + e + "' ";
  gpuaas::testing::ChildProcess forward(
      {"/bin/sh", "-c",
       absl::StrCat("exec env -i ", env_line, "'", GPUAAS_CTL_BINARY,
                    "' instances port-forward box 0:22")},
      Key("forward.log"));
  int port = 0;
  ASSERT_TRUE(gpuaas::testing::Eventually([&] {
    return std::sscanf(ReadFile(Key("forward.log")).c_str(), "Forwarding from 127.0.0.1:%d",
                       &port) == 1;
  })) << ReadFile(Key("forward.log"));
  std::ofstream(Key("notes.txt")) << "copied with scp\n";
  r = RunCommand(Ssh("/usr/bin/scp", "id",
                     {"-P", std::to_string(port), Key("notes.txt"), "dev@127.0.0.1:/data/"}),
                 {});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = RunCommand(Ssh("/usr/bin/ssh", "id",
                     {"-p", std::to_string(port), "dev@127.0.0.1", "cat /data/notes.txt"}),
                 {});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "copied with scp\n");

  // Keys are read at each start: the member's key removed, the next run no longer trusts it.
  r = RunCommand({GPUAAS_CTL_BINARY, "users", "set-ssh-keys", "me", "--clear"}, ctl_env_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  stack_->Stop(token_, "box");
  stack_->Start(token_, "box");
  ASSERT_TRUE(gpuaas::testing::Eventually([&] {
    r = RunCommand(Ssh("/usr/bin/ssh", "extra", {"-o", proxy, "dev@box", "true"}), ctl_env_);
    return r.exit_code == 0;
  })) << r.err;
  r = RunCommand(Ssh("/usr/bin/ssh", "id", {"-o", proxy, "dev@box", "true"}), ctl_env_);
  EXPECT_EQ(r.exit_code, 255);
  EXPECT_NE(r.err.find("Permission denied"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace gpuaas::images_testing
