// A tenant's own registry attacks the node that pulls from it (issue 32): every byte it serves
// is hostile. The registry is a small HTTP server of the attacker's (hostile_registry.py) serving
// what each test writes; the node's side is the agent's real image store, with skopeo and the
// sandboxed gpuaas-image-unpacker as processes. Before the unpacker and the caps, the deeply
// nested index below killed the agent (the store's process: a stack overflow in the JSON copy of
// the index's platform), and with it every tenant's starts, stops and logs on the node.
#include <linux/capability.h>
#include <sys/statvfs.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "libs/common/files.h"
#include "libs/testing/eventually.h"
#include "libs/testing/status_matchers.h"
#include "libs/testing/temp_dir.h"
#include "services/agent/images/image_store.h"
#include "services/agent/images/testing/tar_builder.h"
#include "services/agent/images/testing/test_registry.h"
#include "tests/common/hostile_registry.h"

namespace gpuaas::agent {
namespace {

namespace fs = std::filesystem;
using ::gpuaas::agent::testing::Compression;
using ::gpuaas::agent::testing::PushImage;
using ::gpuaas::agent::testing::TarBuilder;
using ::gpuaas::agent::testing::TestRegistry;
using ::gpuaas::registry::RegistryPolicy;
using ::gpuaas::testing::Eventually;
using ::gpuaas::testing::HostileRegistry;
using ::gpuaas::testing::StatusIs;
using ::testing::HasSubstr;

constexpr char kManifestType[] = "application/vnd.oci.image.manifest.v1+json";

std::string RandomBytes(size_t n) {
  std::mt19937_64 random(42);
  std::string out(n, '\0');
  for (char& c : out) c = static_cast<char>(random());
  return out;
}

using Layer = HostileRegistry::Layer;

class RegistryAttackTest : public ::testing::Test {
 protected:
  void SetUp() override {
    fs::create_directories(temp_.path() / "work");
    registry_ = std::make_unique<HostileRegistry>(temp_.path() / "hostile");
    ASSERT_TRUE(Eventually([&] { return registry_->Answers(); }, absl::Seconds(10)));
    store_ = OpenStore("store", Limits());
  }

  // Small limits, so that each attack crosses one with a few MiB.
  static UnpackLimits Limits() {
    return UnpackLimits{.max_layer_bytes = 16 << 20,
                        .max_image_bytes = 24 << 20,
                        .max_layer_entries = 5000,
                        .max_image_entries = 8000,
                        .max_ratio = 50,
                        .ratio_floor_bytes = 4 << 20,
                        .min_free_bytes = 0};
  }

  // The store speaks plain HTTP to the hostile registry and to `more_registries`, as the agent
  // does to the registries its operator names insecure.
  std::unique_ptr<ImageStore> OpenStore(const std::string& name, const UnpackLimits& limits,
                                        std::vector<std::string> more_registries = {}) {
    more_registries.push_back(registry_->host());
    absl::StatusOr<std::unique_ptr<ImageStore>> store =
        ImageStore::Open({.root = (temp_.path() / name).string(),
                          .registries = *RegistryPolicy::Create({}, more_registries),
                          .pull_timeout = absl::Minutes(2),
                          .unpacker_path = GPUAAS_IMAGE_UNPACKER,
                          .limits = limits});
    EXPECT_OK(store.status());
    return store.ok() ? *std::move(store) : nullptr;
  }

  // A gzip layer of `tar` on the attacker's registry.
  Layer AddLayer(const std::string& name, const TarBuilder& tar) {
    const std::string path = (temp_.path() / "work" / (name + ".tar.gz")).string();
    EXPECT_OK(tar.Write(path, Compression::kGzip).status());
    const std::string bytes = ReadFile(path).value_or("");
    return Layer{.hex = registry_->Blob(bytes), .size = static_cast<int64_t>(bytes.size())};
  }

  std::string AddImage(const std::string& repository, const std::vector<Layer>& layers) {
    return registry_->Image(repository, layers);
  }

  // The store still pulls an ordinary image from the same registry: the attack cost one pull.
  void ExpectTheNextPullWorks(ImageStore& store) {
    const std::string fine = AddImage(
        "mallory/fine", {AddLayer("fine", TarBuilder().Dir("etc").File("etc/motd", "hi"))});
    absl::StatusOr<PulledImage> image = store.Pull(fine, "mallory", nullptr, nullptr);
    ASSERT_OK(image.status());
    EXPECT_EQ(ReadFile(image->layer_dirs.at(0) + "/etc/motd").value_or(""), "hi");
  }

  gpuaas::testing::TempDir temp_;
  std::unique_ptr<HostileRegistry> registry_;
  std::unique_ptr<ImageStore> store_;
};

// Metadata the JSON parser chokes on: an index nested a million and a half deep (3 MB, under
// skopeo's 4 MiB cap; this killed the agent), a config nested 5000 deep (under Go's own limit,
// so skopeo copies it), a 5 MiB manifest. Each pull fails with its reason; the store goes on.
TEST_F(RegistryAttackTest, HostileManifestsIndexesAndConfigsFailTheirPullNotTheAgent) {
  EXPECT_THAT(
      store_->Pull(registry_->Manifest("mallory/deep-index", HostileRegistry::DeepIndex(1'500'000),
                                       HostileRegistry::kIndexType),
                   "mallory", nullptr, nullptr),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("nested deeper")));

  const std::string deep_config =
      absl::StrCat(R"({"architecture":"amd64","os":"linux","config":{"Cmd":)",
                   std::string(5000, '['), std::string(5000, ']'), "}}");
  const absl::StatusOr<PulledImage> config_pull =
      store_->Pull(registry_->Image("mallory/deep-config",
                                    {AddLayer("small", TarBuilder().File("a", "a"))}, deep_config),
                   "mallory", nullptr, nullptr);
  EXPECT_FALSE(config_pull.ok());
  EXPECT_THAT(config_pull.status().message(), HasSubstr("image config"));

  const std::string huge =
      absl::StrCat(R"({"schemaVersion":2,"mediaType":")", kManifestType,
                   R"(","annotations":{"x":")", std::string(5 << 20, 'a'), R"("},"layers":[]})");
  EXPECT_FALSE(
      store_->Pull(registry_->Manifest("mallory/huge", huge), "mallory", nullptr, nullptr).ok());
  ExpectTheNextPullWorks(*store_);
}

// Layers that would fill the node's disk or its inodes: a decompression bomb, a file larger
// than a layer may be, a tar of many empty files, an image whose layers are each allowed but
// not together, a blob larger than its manifest says. Each stops at its limit.
TEST_F(RegistryAttackTest, LayerBombsStopAtTheirLimits) {
  const auto expect_limit = [&](const std::string& name, const std::vector<Layer>& layers,
                                const std::string& why) {
    EXPECT_THAT(store_->Pull(AddImage("mallory/" + name, layers), "mallory", nullptr, nullptr),
                StatusIs(absl::StatusCode::kResourceExhausted, HasSubstr(why)))
        << name;
  };
  expect_limit("bomb", {AddLayer("bomb", TarBuilder().File("zeros", std::string(12 << 20, '\0')))},
               "compressed more than 50 to 1");
  expect_limit("large", {AddLayer("large", TarBuilder().File("noise", RandomBytes(17 << 20)))},
               "more than 16777216 bytes in one layer");
  TarBuilder many;
  for (int i = 0; i < 6000; ++i) many.File(absl::StrCat("f", i), "");
  expect_limit("many", {AddLayer("many", many)}, "more than 5000 entries");
  expect_limit("sum",
               {AddLayer("sum-1", TarBuilder().File("a", RandomBytes(10 << 20))),
                AddLayer("sum-2", TarBuilder().File("b", RandomBytes(10 << 20) + "b")),
                AddLayer("sum-3", TarBuilder().File("c", RandomBytes(10 << 20) + "c"))},
               "unpack limit");

  Layer lying = AddLayer("lying", TarBuilder().File("a", RandomBytes(1 << 20)));
  lying.size /= 2;
  EXPECT_FALSE(store_->Pull(AddImage("mallory/lying", {lying}), "mallory", nullptr, nullptr).ok());

  // Nothing of the refused images stays on the node's disk once garbage is collected (the
  // layers of "sum" that were within the limits unpacked before the last one crossed it).
  ASSERT_OK(store_->CollectGarbage({}));
  for (const auto& entry : fs::directory_iterator(temp_.path() / "store" / "layers")) {
    ADD_FAILURE() << "left behind: " << entry.path();
  }
  ExpectTheNextPullWorks(*store_);
}

// The free space of the cache's file system is checked as a layer unpacks: a store that must
// leave more free than the disk has refuses to unpack at all.
TEST_F(RegistryAttackTest, AnUnpackStopsBeforeTheDiskReserve) {
  struct statvfs fs_info;
  ASSERT_EQ(::statvfs(temp_.path().c_str(), &fs_info), 0);
  UnpackLimits limits = Limits();
  limits.min_free_bytes = static_cast<int64_t>(fs_info.f_bavail * fs_info.f_frsize) + (1LL << 30);
  std::unique_ptr<ImageStore> tight = OpenStore("tight", limits);
  ASSERT_NE(tight, nullptr);
  const std::string image = AddImage("mallory/any", {AddLayer("any", TarBuilder().File("a", "a"))});
  EXPECT_THAT(tight->Pull(image, "mallory", nullptr, nullptr),
              StatusIs(absl::StatusCode::kResourceExhausted, HasSubstr("reserve")));
}

// The unpacker caught while it reads a layer the registry trickles: it runs as nobody, with no
// new privileges, a seccomp filter, its limits, and none of the capabilities that would reach
// the agent (kill, ptrace, setuid, network administration).
TEST_F(RegistryAttackTest, TheUnpackerRunsSandboxed) {
  const Layer slow = AddLayer("slow", TarBuilder().File("noise", RandomBytes(3 << 20)));
  registry_->Slow(slow.hex);
  const std::string image = AddImage("mallory/slow", {slow});
  std::thread pull([&] { EXPECT_OK(store_->Pull(image, "mallory", nullptr, nullptr).status()); });
  std::string status;
  ASSERT_TRUE(Eventually(
      [&] {
        for (const auto& proc : fs::directory_iterator("/proc")) {
          std::error_code ec;
          if (fs::read_symlink(proc.path() / "exe", ec).filename() != "gpuaas-image-unpacker") {
            continue;
          }
          const std::string cmdline = ReadFile((proc.path() / "cmdline").string()).value_or("");
          if (absl::StrContains(cmdline, (temp_.path() / "store").string())) {
            // Once its sandbox is whole (the filter comes last), before it reads the layer.
            status = ReadFile((proc.path() / "status").string()).value_or("");
            if (absl::StrContains(status, "Seccomp:\t2")) return true;
          }
        }
        return false;
      },
      absl::Seconds(30)));
  pull.join();
  const auto field = [&](const std::string& name) -> std::string {
    for (absl::string_view line : absl::StrSplit(status, '\n')) {
      if (absl::ConsumePrefix(&line, name + ":"))
        return std::string(absl::StripAsciiWhitespace(line));
    }
    return "";
  };
  EXPECT_EQ(field("Uid"), "65534\t65534\t65534\t65534") << status;
  EXPECT_EQ(field("Groups"), "") << status;
  EXPECT_EQ(field("NoNewPrivs"), "1") << status;
  EXPECT_EQ(field("Seccomp"), "2") << status;
  uint64_t effective = 0;
  ASSERT_TRUE(absl::SimpleHexAtoi(field("CapEff"), &effective)) << status;
  for (int cap : {CAP_KILL, CAP_SYS_PTRACE, CAP_SETUID, CAP_SETGID, CAP_NET_ADMIN, CAP_NET_RAW,
                  CAP_SYS_MODULE, CAP_SYS_RAWIO}) {
    EXPECT_EQ(effective & (1ULL << cap), 0u) << "capability " << cap << " in " << status;
  }
}

// Mallory names the digest of a layer the victim pulled on this node (from a registry mallory
// cannot read) in an image of her own, on a registry of her own that refuses to serve that blob.
// The cache used to lend it on the digest alone (skopeo skips a blob already in the shared blob
// dir); now only blobs a tenant's own registry served to that tenant are lent, so the pull asks
// her registry for the blob and fails. Pulling the victim's public image from its registry as
// herself still works.
TEST_F(RegistryAttackTest, ACachedLayerIsNotLentToATenantWhoseRegistryRefusesIt) {
  absl::StatusOr<std::unique_ptr<TestRegistry>> victims_registry =
      TestRegistry::Start((temp_.path() / "victims-registry").string());
  ASSERT_OK(victims_registry.status());
  store_.reset();
  store_ = OpenStore("store", Limits(), {(*victims_registry)->host()});
  const std::string tar = (temp_.path() / "work" / "victim.tar").string();
  ASSERT_OK(
      TarBuilder().File("secret", "the victim's weights").Write(tar, Compression::kNone).status());
  absl::StatusOr<std::string> victims_image =
      PushImage(**victims_registry, "victim/model", {.layer_tars = {tar}},
                (temp_.path() / "work" / "victim").string());
  ASSERT_OK(victims_image.status());
  absl::StatusOr<PulledImage> pulled = store_->Pull(*victims_image, "victim", nullptr, nullptr);
  ASSERT_OK(pulled.status());
  const std::string layer_hex = fs::path(pulled->layer_dirs.at(0)).filename();

  const int64_t size =
      registry_->BlobFile(layer_hex, temp_.path() / "store" / "blobs" / "sha256" / layer_hex);
  registry_->Refuse(layer_hex);
  const std::string stolen = AddImage("mallory/stolen", {{.hex = layer_hex, .size = size}});
  EXPECT_THAT(store_->Pull(stolen, "mallory", nullptr, nullptr),
              StatusIs(absl::StatusCode::kPermissionDenied, HasSubstr("unauthorized")));
  // Her registry was asked for the blob, for her.
  EXPECT_THAT(registry_->Requests(), HasSubstr("/blobs/sha256:" + layer_hex));

  // The legitimate path beside it: the same public image pulled by mallory from its registry,
  // which serves it to her; the victim's cached pull downloads nothing.
  const int downloads = (*victims_registry)->BlobDownloads();
  absl::StatusOr<PulledImage> again = store_->Pull(*victims_image, "mallory", nullptr, nullptr);
  ASSERT_OK(again.status());
  EXPECT_GT((*victims_registry)->BlobDownloads(), downloads);
  EXPECT_EQ(ReadFile(again->layer_dirs.at(0) + "/secret").value_or(""), "the victim's weights");
  const int after = (*victims_registry)->BlobDownloads();
  ASSERT_OK(store_->Pull(*victims_image, "victim", nullptr, nullptr).status());
  ASSERT_OK(store_->Pull(*victims_image, "mallory", nullptr, nullptr).status());
  EXPECT_EQ((*victims_registry)->BlobDownloads(), after);
}

}  // namespace
}  // namespace gpuaas::agent
