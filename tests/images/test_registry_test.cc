// The registry fixture works: every image it pushed is there by its digest, in the open registry
// without a login and in the other one with the fixture's login only (skopeo, as a node would
// pull it).
#include "tests/images/test_registry.h"

#include <gtest/gtest.h>

#include <fstream>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "libs/testing/status_matchers.h"
#include "libs/testing/temp_dir.h"
#include "tests/images/run_command.h"

namespace gpuaas::images_testing {
namespace {

constexpr std::string_view kImages[] = {"tiny", "jupyter", "webui-demo"};

class TestRegistryTest : public ::testing::Test {
 protected:
  // skopeo's auth file for `address` (the password stays off its command line).
  std::string AuthFile(const std::string& address, const std::string& login) {
    const std::string path = (dir_.path() / absl::StrCat("auth-", ++files_, ".json")).string();
    std::ofstream(path) << "{\"auths\":{\"" << address << "\":{\"auth\":\""
                        << absl::Base64Escape(login) << "\"}}}";
    return path;
  }

  // `skopeo inspect` of `reference`, with `auth_file` when not empty.
  CommandOutput Inspect(const std::string& reference, const std::string& auth_file = "") {
    std::vector<std::string> argv = {"/usr/bin/skopeo", "inspect", "--tls-verify=false", "--format",
                                     "{{.Digest}}"};
    if (!auth_file.empty()) argv.insert(argv.end(), {"--authfile", auth_file});
    argv.push_back("docker://" + reference);
    return RunCommand(argv, {"HOME=" + dir_.path().string()});
  }

  gpuaas::testing::TempDir dir_;
  int files_ = 0;
};

TEST_F(TestRegistryTest, OpenRegistryHoldsEveryImageByDigest) {
  ASSERT_OK_AND_ASSIGN(TestRegistry registry, OpenTestRegistry());
  for (std::string_view name : kImages) {
    ASSERT_OK_AND_ASSIGN(RegistryImage image, registry.Image(name));
    EXPECT_EQ(image.tag_reference.rfind(registry.address + "/gpuaas/", 0), 0u)
        << image.tag_reference;
    const CommandOutput r = Inspect(image.digest_reference);
    EXPECT_EQ(r.exit_code, 0) << image.digest_reference << ": " << r.err;
    EXPECT_EQ(r.out, image.digest + "\n");
  }
}

TEST_F(TestRegistryTest, LoginRegistryServesTheLoginOnly) {
  ASSERT_OK_AND_ASSIGN(TestRegistry registry, LoginTestRegistry());
  ASSERT_FALSE(registry.username.empty());
  const std::string right = AuthFile(registry.address, registry.username + ":" + registry.password);
  const std::string wrong =
      AuthFile(registry.address, registry.username + ":" + registry.password + "x");
  for (std::string_view name : kImages) {
    ASSERT_OK_AND_ASSIGN(RegistryImage image, registry.Image(name));
    const CommandOutput ok = Inspect(image.digest_reference, right);
    EXPECT_EQ(ok.exit_code, 0) << image.digest_reference << ": " << ok.err;
    EXPECT_EQ(ok.out, image.digest + "\n");

    const CommandOutput bad_password = Inspect(image.digest_reference, wrong);
    EXPECT_NE(bad_password.exit_code, 0) << bad_password.out;
    EXPECT_NE(bad_password.err.find("unauthorized"), std::string::npos) << bad_password.err;
    const CommandOutput no_login = Inspect(image.digest_reference);
    EXPECT_NE(no_login.exit_code, 0) << no_login.out;
    EXPECT_NE(no_login.err.find("unauthorized"), std::string::npos) << no_login.err;
  }
}

TEST_F(TestRegistryTest, AnImageTheRegistryLacksIsNotFound) {
  ASSERT_OK_AND_ASSIGN(TestRegistry registry, OpenTestRegistry());
  EXPECT_EQ(registry.Image("no-such-image").status().code(), absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace gpuaas::images_testing
