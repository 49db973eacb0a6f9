// A tenant's own image attacks the node that pulls it: its layers are tars the tenant wrote,
// aimed at the agent's file system (the agent unpacks them as root).
#include <sys/stat.h>
#include <sys/xattr.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "libs/common/files.h"
#include "libs/testing/status_matchers.h"
#include "libs/testing/temp_dir.h"
#include "services/agent/images/image_store.h"
#include "services/agent/images/testing/tar_builder.h"
#include "services/agent/images/testing/test_registry.h"

namespace gpuaas::agent {
namespace {

namespace fs = std::filesystem;
using ::gpuaas::agent::testing::Compression;
using ::gpuaas::agent::testing::PushImage;
using ::gpuaas::agent::testing::TarBuilder;
using ::gpuaas::agent::testing::TestRegistry;
using ::gpuaas::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

class ImageLayerAttackTest : public ::testing::Test {
 protected:
  void SetUp() override {
    fs::create_directories(outside_);
    fs::create_directories(temp_.path() / "work");
    std::ofstream(outside_ / "secret") << "secret";
    auto registry = TestRegistry::Start((temp_.path() / "registry").string());
    ASSERT_OK(registry.status());
    registry_ = *std::move(registry);
    // As the agent runs it: every layer unpacked by the sandboxed unpacker.
    auto store = ImageStore::Open(
        {.root = (temp_.path() / "store").string(),
         .registries = *gpuaas::registry::RegistryPolicy::Create({}, {registry_->host()}),
         .unpacker_path = GPUAAS_IMAGE_UNPACKER});
    ASSERT_OK(store.status());
    store_ = *std::move(store);
  }

  // Pushes an image whose only layer is `tar` (written verbatim by umoci) and returns its
  // pinned reference.
  std::string PushLayer(const std::string& name, const TarBuilder& tar) {
    const std::string path = (temp_.path() / "work" / (name + ".tar")).string();
    EXPECT_OK(tar.Write(path, Compression::kNone).status());
    absl::StatusOr<std::string> reference =
        PushImage(*registry_, "tenant/" + name, {.layer_tars = {path}},
                  (temp_.path() / "work" / name).string());
    EXPECT_OK(reference.status());
    return reference.value_or("");
  }

  void ExpectOutsideUntouched() {
    std::vector<std::string> names;
    for (const auto& entry : fs::directory_iterator(outside_)) {
      names.push_back(entry.path().filename());
    }
    EXPECT_THAT(names, ElementsAre("secret"));
    EXPECT_EQ(ReadFile((outside_ / "secret").string()).value_or(""), "secret");
    struct stat st {};
    ::stat((outside_ / "secret").c_str(), &st);
    EXPECT_EQ(st.st_nlink, 1u);
  }

  gpuaas::testing::TempDir temp_;
  const fs::path outside_ = temp_.path() / "outside";  // beside the store: what the tars aim at
  std::unique_ptr<TestRegistry> registry_;
  std::unique_ptr<ImageStore> store_;
};

TEST_F(ImageLayerAttackTest, ALayerCannotWriteOutsideTheLayerStore) {
  // From store/layers/<hex>.tmp-XXXXXX, three levels up is the directory holding `outside`.
  const std::string pwned = (outside_ / "pwned").string();
  const std::vector<std::pair<std::string, TarBuilder>> attacks = {
      {"absolute", TarBuilder().File("ok", "ok").File(pwned, "pwned")},
      {"dotdot", TarBuilder().File("../../../outside/pwned", "pwned")},
      {"symlink", TarBuilder().Symlink("escape", outside_.string()).File("escape/pwned", "pwned")},
      {"relative-symlink",
       TarBuilder().Symlink("escape", "../../../outside").File("escape/pwned", "pwned")},
      {"hardlink", TarBuilder().Hardlink("leak", (outside_ / "secret").string())},
      {"symlink-then-hardlink",
       TarBuilder().Symlink("out", outside_.string()).Hardlink("leak", "out/secret")},
  };
  for (const auto& [name, tar] : attacks) {
    EXPECT_THAT(store_->Pull(PushLayer(name, tar), nullptr, nullptr),
                StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("unsafe layer")))
        << name;
    ExpectOutsideUntouched();
  }
  // The legitimate path still works.
  EXPECT_OK(store_
                ->Pull(PushLayer("fine", TarBuilder().Dir("etc").File("etc/motd", "hi")), nullptr,
                       nullptr)
                .status());
}

TEST_F(ImageLayerAttackTest, ALayerCannotSteerOverlayfsOrMakeDevices) {
  absl::StatusOr<PulledImage> image = store_->Pull(
      PushLayer("steer", TarBuilder()
                             .FileWithXattr("etc", "x", "trusted.overlay.redirect", "/")
                             .FileWithXattr("meta", "x", "trusted.overlay.metacopy", "")
                             .CharDevice("dev/mem", 1, 1)
                             .File("ok", "ok")),
      nullptr, nullptr);
  ASSERT_OK(image.status());
  const fs::path layer = image->layer_dirs[0];
  char value[16];
  EXPECT_LT(::lgetxattr((layer / "etc").c_str(), "trusted.overlay.redirect", value, sizeof(value)),
            0);
  EXPECT_LT(::lgetxattr((layer / "meta").c_str(), "trusted.overlay.metacopy", value, sizeof(value)),
            0);
  EXPECT_FALSE(fs::exists(fs::symlink_status(layer / "dev/mem")));
  EXPECT_EQ(ReadFile((layer / "ok").string()).value_or(""), "ok");
}

}  // namespace
}  // namespace gpuaas::agent
