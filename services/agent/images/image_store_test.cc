// The image store against a real registry (Debian's docker-registry on loopback), images built
// with umoci from busybox-static and pushed with skopeo.
#include "services/agent/images/image_store.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <random>
#include <thread>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "libs/common/files.h"
#include "libs/testing/ci_skip.h"
#include "libs/testing/status_matchers.h"
#include "libs/testing/temp_dir.h"
#include "services/agent/images/testing/tar_builder.h"
#include "services/agent/images/testing/test_registry.h"

namespace gpuaas::agent {
namespace {

namespace fs = std::filesystem;
using ::gpuaas::agent::testing::Compression;
using ::gpuaas::agent::testing::PushImage;
using ::gpuaas::agent::testing::TarBuilder;
using ::gpuaas::agent::testing::TestImage;
using ::gpuaas::agent::testing::TestRegistry;
using ::gpuaas::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::SizeIs;

struct stat Lstat(const fs::path& path) {
  struct stat st {};
  ::lstat(path.c_str(), &st);
  return st;
}

std::string RandomBytes(size_t n) {
  std::mt19937_64 random(n);
  std::string bytes(n, '\0');
  for (char& c : bytes) {
    c = static_cast<char>(random());
  }
  return bytes;
}

class ImageStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    fs::create_directories(work_);
    auto registry = TestRegistry::Start((temp_.path() / "registry").string());
    ASSERT_OK(registry.status());
    registry_ = *std::move(registry);
    const absl::StatusOr<std::string> busybox = ReadFile("/bin/busybox");
    ASSERT_OK(busybox.status());
    base_ = Tar("base", TarBuilder()
                            .Dir("bin")
                            .File("bin/busybox", *busybox, 0755)
                            .Symlink("bin/sh", "busybox")
                            .Dir("etc")
                            .File("etc/hosts", "127.0.0.1 localhost\n")
                            .Dir("usr/share/doc")
                            .File("usr/share/doc/old", "old")
                            .Dir("home/app", 0700, 1000, 1000));
    // A whiteout for etc/hosts and an opaque usr/share/doc.
    changes_ = Tar("changes", TarBuilder()
                                  .File("etc/.wh.hosts", "")
                                  .File("usr/share/doc/.wh..wh..opq", "")
                                  .File("usr/share/doc/new", "new"));
  }

  std::string Tar(const std::string& name, const TarBuilder& tar) {
    const std::string path = (work_ / (name + ".tar")).string();
    EXPECT_OK(tar.Write(path, Compression::kNone).status());
    return path;
  }

  std::string Push(const std::string& repository, std::vector<std::string> layers,
                   const RegistryLogin* login = nullptr) {
    TestImage image{.layer_tars = std::move(layers)};
    image.config = {.env = {"GREETING=hello"},
                    .entrypoint = {"/bin/busybox"},
                    .cmd = {"sh"},
                    .working_dir = "/home/app",
                    .user = "1000",
                    .exposed_ports = {8080}};
    absl::StatusOr<std::string> reference =
        PushImage(*registry_, repository, image, (work_ / repository).string(), login);
    EXPECT_OK(reference.status());
    return reference.value_or("");
  }

  std::unique_ptr<ImageStore> OpenStore(int64_t limit = 50LL << 30,
                                        absl::Duration pull_timeout = absl::Minutes(30)) {
    absl::StatusOr<std::unique_ptr<ImageStore>> store =
        ImageStore::Open({.root = root_.string(),
                          .size_limit_bytes = limit,
                          .registries = *registry::RegistryPolicy::Create({}, {registry_->host()}),
                          .pull_timeout = pull_timeout,
                          .unpacker_path = GPUAAS_IMAGE_UNPACKER});
    EXPECT_OK(store.status());
    return store.ok() ? *std::move(store) : nullptr;
  }

  gpuaas::testing::TempDir temp_;
  const fs::path work_ = temp_.path() / "work";
  const fs::path root_ = temp_.path() / "store";
  std::unique_ptr<TestRegistry> registry_;
  std::string base_, changes_;
};

TEST_F(ImageStoreTest, PullsUnpacksAndConvertsWhiteouts) {
  const std::string reference = Push("tenant/app", {base_, changes_});
  auto store = OpenStore();
  std::vector<PullProgress> progress;
  absl::StatusOr<PulledImage> image =
      store->Pull(reference, nullptr, [&](const PullProgress& p) { progress.push_back(p); });
  ASSERT_OK(image.status());

  EXPECT_EQ(image->digest, reference.substr(reference.find('@') + 1));
  ASSERT_THAT(image->layer_dirs, SizeIs(2));
  const fs::path bottom = image->layer_dirs[0];
  const fs::path top = image->layer_dirs[1];
  EXPECT_EQ(Lstat(bottom / "bin/busybox").st_mode & 07777, 0755);
  EXPECT_EQ(fs::read_symlink(bottom / "bin/sh"), "busybox");
  EXPECT_EQ(Lstat(bottom / "home/app").st_uid, 1000u);
  EXPECT_TRUE(S_ISCHR(Lstat(top / "etc/hosts").st_mode));
  EXPECT_EQ(Lstat(top / "etc/hosts").st_rdev, makedev(0, 0));
  char opaque[4] = {};
  EXPECT_EQ(::getxattr((top / "usr/share/doc").c_str(), "trusted.overlay.opaque", opaque, 4), 1);
  EXPECT_EQ(opaque[0], 'y');
  EXPECT_GT(image->size_bytes, int64_t{1} << 20);  // busybox

  EXPECT_THAT(image->config.env, ElementsAre("GREETING=hello"));
  EXPECT_THAT(image->config.entrypoint, ElementsAre("/bin/busybox"));
  EXPECT_THAT(image->config.cmd, ElementsAre("sh"));
  EXPECT_EQ(image->config.working_dir, "/home/app");
  EXPECT_EQ(image->config.user, "1000");
  EXPECT_THAT(image->config.exposed_ports, ElementsAre(8080));

  ASSERT_THAT(progress, SizeIs(3));
  EXPECT_EQ(progress.front().layers_done, 0);
  EXPECT_EQ(progress.back().layers_done, 2);
  EXPECT_EQ(progress.back().layers_total, 2);
  EXPECT_EQ(progress.back().bytes_done, progress.back().bytes_total);
  EXPECT_GT(progress.back().bytes_total, 0);
  EXPECT_EQ(Lstat(root_).st_mode & 0777, 0700);
}

TEST_F(ImageStoreTest, SecondPullDownloadsAndUnpacksNothing) {
  const std::string reference = Push("tenant/app", {base_, changes_});
  auto store = OpenStore();
  absl::StatusOr<PulledImage> first = store->Pull(reference, nullptr, nullptr);
  ASSERT_OK(first.status());
  const int downloads = registry_->BlobDownloads();
  const struct stat busybox = Lstat(fs::path(first->layer_dirs[0]) / "bin/busybox");

  absl::StatusOr<PulledImage> again = store->Pull(reference, nullptr, nullptr);
  ASSERT_OK(again.status());
  EXPECT_EQ(again->layer_dirs, first->layer_dirs);
  // A restarted agent finds its cache too.
  store.reset();
  store = OpenStore();
  absl::StatusOr<PulledImage> restarted = store->Pull(reference, nullptr, nullptr);
  ASSERT_OK(restarted.status());
  EXPECT_EQ(restarted->layer_dirs, first->layer_dirs);
  EXPECT_EQ(restarted->size_bytes, first->size_bytes);

  EXPECT_EQ(registry_->BlobDownloads(), downloads);
  const struct stat now = Lstat(fs::path(first->layer_dirs[0]) / "bin/busybox");
  EXPECT_EQ(now.st_ino, busybox.st_ino);
  EXPECT_EQ(now.st_ctim.tv_nsec, busybox.st_ctim.tv_nsec);
}

TEST_F(ImageStoreTest, SharedBaseLayerIsDownloadedAndUnpackedOnce) {
  const std::string first_ref = Push("tenant/app", {base_, changes_});
  const std::string other = Tar("other", TarBuilder().File("srv/other", "other"));
  const std::string second_ref = Push("tenant/other", {base_, other});
  auto store = OpenStore();
  absl::StatusOr<PulledImage> first = store->Pull(first_ref, nullptr, nullptr);
  ASSERT_OK(first.status());
  const struct stat busybox = Lstat(fs::path(first->layer_dirs[0]) / "bin/busybox");
  const int downloads = registry_->BlobDownloads();

  absl::StatusOr<PulledImage> second = store->Pull(second_ref, nullptr, nullptr);
  ASSERT_OK(second.status());
  ASSERT_THAT(second->layer_dirs, SizeIs(2));
  EXPECT_EQ(second->layer_dirs[0], first->layer_dirs[0]);
  EXPECT_TRUE(fs::exists(fs::path(second->layer_dirs[1]) / "srv/other"));
  EXPECT_EQ(Lstat(fs::path(first->layer_dirs[0]) / "bin/busybox").st_ino, busybox.st_ino);
  // The config and the new layer; never the base layer again.
  EXPECT_EQ(registry_->BlobDownloads(), downloads + 2);
  EXPECT_EQ(second->size_bytes, first->size_bytes - 3 + 5);
}

TEST_F(ImageStoreTest, ConcurrentPullsOfOneImageShareOneDownload) {
  const std::string reference = Push("tenant/app", {base_, changes_});
  auto store = OpenStore();
  const int before = registry_->BlobDownloads();
  std::vector<absl::StatusOr<PulledImage>> results(4);
  std::vector<std::thread> threads;
  for (auto& result : results) {
    threads.emplace_back([&] { result = store->Pull(reference, nullptr, nullptr); });
  }
  for (std::thread& thread : threads) {
    thread.join();
  }
  for (const auto& result : results) {
    ASSERT_OK(result.status());
    EXPECT_EQ(result->layer_dirs, results[0]->layer_dirs);
  }
  EXPECT_EQ(registry_->BlobDownloads(), before + 3);  // config and two layers, once
}

// Each tenant's pull of an image is its own: its registry serves it the blobs (three downloads
// each), the unpacked layers are shared, and two tenants pulling at once both succeed.
TEST_F(ImageStoreTest, TwoTenantsPullingOneImageAtOnceEachDownloadItAndShareItsLayers) {
  const std::string reference = Push("tenant/app", {base_, changes_});
  auto store = OpenStore();
  const int before = registry_->BlobDownloads();
  absl::StatusOr<PulledImage> a, b;
  std::thread first([&] { a = store->Pull(reference, "tenant-a", nullptr, nullptr); });
  std::thread second([&] { b = store->Pull(reference, "tenant-b", nullptr, nullptr); });
  first.join();
  second.join();
  ASSERT_OK(a.status());
  ASSERT_OK(b.status());
  EXPECT_EQ(a->layer_dirs, b->layer_dirs);
  EXPECT_EQ(registry_->BlobDownloads(), before + 6);
  // Lent to both now: neither downloads again.
  ASSERT_OK(store->Pull(reference, "tenant-a", nullptr, nullptr).status());
  ASSERT_OK(store->Pull(reference, "tenant-b", nullptr, nullptr).status());
  EXPECT_EQ(registry_->BlobDownloads(), before + 6);
}

TEST_F(ImageStoreTest, ManifestListGivesTheLinuxAmd64Image) {
  const std::string arm = Tar("arm", TarBuilder().File("arch", "arm64"));
  const std::string amd = Tar("amd", TarBuilder().File("arch", "amd64"));
  absl::StatusOr<std::string> reference =
      testing::PushImageList(*registry_, "tenant/multi",
                             {{.architecture = "arm64", .image = {.layer_tars = {base_, arm}}},
                              {.architecture = "amd64", .image = {.layer_tars = {base_, amd}}}},
                             (work_ / "multi").string());
  ASSERT_OK(reference.status());
  auto store = OpenStore();
  std::vector<PullProgress> progress;
  absl::StatusOr<PulledImage> image =
      store->Pull(*reference, nullptr, [&](const PullProgress& p) { progress.push_back(p); });
  ASSERT_OK(image.status());
  // Known by the list's digest, the one the caller pinned.
  EXPECT_EQ(image->digest, reference->substr(reference->find('@') + 1));
  ASSERT_THAT(image->layer_dirs, SizeIs(2));
  EXPECT_EQ(ReadFile(image->layer_dirs[1] + "/arch").value_or(""), "amd64");
  EXPECT_EQ(progress.back().layers_done, 2);
  EXPECT_EQ(progress.back().layers_total, 2);
  EXPECT_OK(store->Pull(*reference, nullptr, nullptr).status());
}

TEST_F(ImageStoreTest, BadReferencesAreInvalidArgument) {
  auto store = OpenStore();
  const std::string digest = "sha256:" + std::string(64, 'a');
  for (const std::string& reference :
       {registry_->host() + "/tenant/app:latest", registry_->host() + "/tenant/app:v1@" + digest,
        "app@" + digest, registry_->host() + "/tenant/app@sha256:abc",
        registry_->host() + "/tenant/app@sha256:" + std::string(64, 'A')}) {
    EXPECT_THAT(store->Pull(reference, nullptr, nullptr),
                StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("image reference")))
        << reference;
  }
}

TEST_F(ImageStoreTest, MissingImageIsNotFound) {
  Push("tenant/app", {base_});
  auto store = OpenStore();
  const std::string digest = "@sha256:" + std::string(64, 'a');
  for (const char* repository : {"tenant/app", "tenant/nothing"}) {
    EXPECT_THAT(store->Pull(registry_->host() + "/" + repository + digest, nullptr, nullptr),
                StatusIs(absl::StatusCode::kNotFound, HasSubstr("image not found")))
        << repository;
  }
}

TEST_F(ImageStoreTest, UnreachableRegistryIsUnavailable) {
  auto store = OpenStore();
  const std::string host = registry_->host();
  registry_.reset();
  EXPECT_THAT(store->Pull(host + "/tenant/app@sha256:" + std::string(64, 'a'), nullptr, nullptr),
              StatusIs(absl::StatusCode::kUnavailable, HasSubstr("registry unreachable")));
}

// A tenant's own registry that accepts connections and never answers: its pull fails at the
// timeout, and meanwhile garbage collection does not wait for it, so it holds back no other
// tenant's pull.
TEST_F(ImageStoreTest, ASilentRegistryTimesOutAndHoldsBackNoOtherPull) {
  const std::string other = Push("tenant/other", {base_});
  const int silent = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  ASSERT_EQ(bind(silent, reinterpret_cast<sockaddr*>(&addr), len), 0);
  ASSERT_EQ(listen(silent, 16), 0);  // the kernel completes handshakes; nobody reads
  ASSERT_EQ(getsockname(silent, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  auto store = OpenStore(0, absl::Seconds(5));

  std::atomic<int> order{0};
  int silent_done = 0, other_done = 0;
  absl::Status silent_status;
  std::thread slow([&] {
    silent_status = store
                        ->Pull(absl::StrCat("127.0.0.1:", ntohs(addr.sin_port),
                                            "/evil/app@sha256:", std::string(64, 'e')),
                               nullptr, nullptr)
                        .status();
    silent_done = ++order;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // the slow pull is in flight
  std::thread gc([&] { EXPECT_OK(store->CollectGarbage({})); });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_OK(store->Pull(other, nullptr, nullptr).status());
  other_done = ++order;
  gc.join();
  slow.join();
  close(silent);
  EXPECT_THAT(silent_status, StatusIs(absl::StatusCode::kDeadlineExceeded, HasSubstr("timed out")));
  EXPECT_LT(other_done, silent_done) << "the other tenant's pull waited for the silent one";
}

TEST_F(ImageStoreTest, RegistryLoginIsNeededAndChecked) {
  const RegistryLogin login{.username = "tenant", .password = "right horse battery"};
  registry_.reset();
  auto registry = TestRegistry::Start((temp_.path() / "private").string(), login);
  ASSERT_OK(registry.status());
  registry_ = *std::move(registry);
  const std::string reference = Push("tenant/private", {base_}, &login);
  auto store = OpenStore();

  const RegistryLogin wrong{.username = "tenant", .password = "wrong"};
  EXPECT_THAT(store->Pull(reference, &wrong, nullptr),
              StatusIs(absl::StatusCode::kPermissionDenied, HasSubstr("unauthorized")));
  EXPECT_THAT(store->Pull(reference, nullptr, nullptr),
              StatusIs(absl::StatusCode::kPermissionDenied, HasSubstr("unauthorized")));
  EXPECT_OK(store->Pull(reference, &login, nullptr).status());
  // The auth file lived only while skopeo ran.
  EXPECT_TRUE(fs::is_empty(root_ / "tmp"));
}

TEST_F(ImageStoreTest, BlobThatDoesNotMatchItsDigestIsDataLoss) {
  const std::string reference = Push("tenant/app", {base_, changes_});
  // Corrupt the busybox layer in the registry's storage: the largest blob.
  fs::path largest;
  for (const auto& entry : fs::recursive_directory_iterator(
           temp_.path() / "registry/storage/docker/registry/v2/blobs")) {
    if (entry.path().filename() == "data" &&
        (largest.empty() || entry.file_size() > fs::file_size(largest))) {
      largest = entry.path();
    }
  }
  ASSERT_FALSE(largest.empty());
  {
    std::fstream blob(largest, std::ios::in | std::ios::out | std::ios::binary);
    blob.seekp(1000);
    blob.write("XXXX", 4);
  }
  auto store = OpenStore();
  EXPECT_THAT(store->Pull(reference, nullptr, nullptr),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("digest mismatch")));
  // The other layer may be unpacked (verified, and collected as garbage later); this one never.
  const std::string corrupt_hex = largest.parent_path().filename();
  EXPECT_FALSE(fs::exists(root_ / "layers" / corrupt_hex));
}

TEST_F(ImageStoreTest, CorruptCachedBlobIsDataLossAndDeleted) {
  const std::string reference = Push("tenant/app", {base_});
  auto store = OpenStore();
  absl::StatusOr<PulledImage> image = store->Pull(reference, nullptr, nullptr);
  ASSERT_OK(image.status());
  const std::string layer_hex = fs::path(image->layer_dirs[0]).filename();
  // The cached blob goes bad on disk and the unpacked layer is lost: the next pull of an image
  // with that layer must not unpack the bad bytes.
  fs::remove_all(image->layer_dirs[0]);
  fs::remove(root_ / "images" / (image->digest.substr(7) + ".json"));
  {
    std::fstream blob(root_ / "blobs/sha256" / layer_hex,
                      std::ios::in | std::ios::out | std::ios::binary);
    blob.seekp(100);
    blob.write("XXXX", 4);
  }
  store = OpenStore();
  EXPECT_THAT(store->Pull(reference, nullptr, nullptr),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("digest mismatch")));
  // Deleted; skopeo, still copying, may have downloaded the right bytes again since.
  const fs::path blob = root_ / "blobs/sha256" / layer_hex;
  if (fs::exists(blob)) {
    EXPECT_EQ(*testing::FileSha256(blob), layer_hex);
  }
  // The next pull downloads it again and succeeds.
  EXPECT_OK(store->Pull(reference, nullptr, nullptr).status());
}

TEST_F(ImageStoreTest, FullDiskIsResourceExhausted) {
  const std::string big = Tar("big", TarBuilder().File("big", RandomBytes(3 << 20)));
  const std::string reference = Push("tenant/big", {big});
  // 1 MiB: skopeo cannot store the blob; 5 MiB: the blob fits, its unpacked copy does not.
  for (const char* size : {"size=1m", "size=5m"}) {
    fs::create_directories(root_);
    if (::mount("tmpfs", root_.c_str(), "tmpfs", 0, size) != 0) {
      GPUAAS_SKIP_OR_FAIL_IN_CI() << "cannot mount a small tmpfs here (needs root)";
    }
    {
      auto store = OpenStore();
      EXPECT_THAT(store->Pull(reference, nullptr, nullptr),
                  StatusIs(absl::StatusCode::kResourceExhausted, HasSubstr("no space")))
          << size;
      EXPECT_TRUE(fs::is_empty(root_ / "layers")) << size;
    }
    ::umount2(root_.c_str(), MNT_DETACH);
  }
}

TEST_F(ImageStoreTest, GarbageCollectionRemovesLeastRecentlyUsedUnusedImages) {
  const std::string a = Push("tenant/a", {base_, changes_});
  const std::string b = Push("tenant/b", {base_, Tar("b", TarBuilder().File("b", "b"))});
  const std::string c = Push("tenant/c", {Tar("c", TarBuilder().File("c", RandomBytes(1000)))});
  auto store = OpenStore();
  absl::StatusOr<PulledImage> image_a = store->Pull(a, nullptr, nullptr);
  absl::StatusOr<PulledImage> image_b = store->Pull(b, nullptr, nullptr);
  absl::StatusOr<PulledImage> image_c = store->Pull(c, nullptr, nullptr);
  ASSERT_OK(image_a.status());
  ASSERT_OK(image_b.status());
  ASSERT_OK(image_c.status());
  ASSERT_OK(store->Pull(a, nullptr, nullptr).status());  // a is now the most recently used

  // Under the limit: nothing goes.
  store = OpenStore(store->SizeBytes());
  ASSERT_OK(store->CollectGarbage({}));
  EXPECT_TRUE(fs::exists(image_b->layer_dirs[1]));

  // Just over: the least recently used unused image (b; c is in use) goes, but not the base
  // layer that a shares.
  store = OpenStore(store->SizeBytes() - 1);
  ASSERT_OK(store->CollectGarbage({image_c->digest}));
  EXPECT_FALSE(fs::exists(image_b->layer_dirs[1]));
  EXPECT_TRUE(fs::exists(image_b->layer_dirs[0]));
  EXPECT_TRUE(fs::exists(image_a->layer_dirs[1]));
  EXPECT_TRUE(fs::exists(image_c->layer_dirs[0]));

  // Limit 0: every unused image goes; the in-use one and its layers stay.
  store = OpenStore(0);
  ASSERT_OK(store->CollectGarbage({image_c->digest}));
  EXPECT_FALSE(fs::exists(image_a->layer_dirs[0]));
  EXPECT_FALSE(fs::exists(image_a->layer_dirs[1]));
  EXPECT_TRUE(fs::exists(image_c->layer_dirs[0]));
  const int downloads = registry_->BlobDownloads();
  EXPECT_OK(store->Pull(c, nullptr, nullptr).status());
  EXPECT_EQ(registry_->BlobDownloads(), downloads);
  // Only c's blobs are left (manifest, config, layer).
  EXPECT_EQ(std::distance(fs::directory_iterator(root_ / "blobs/sha256"), fs::directory_iterator()),
            3);
  // b went: pulling it again downloads it.
  EXPECT_OK(store->Pull(b, nullptr, nullptr).status());
  EXPECT_GT(registry_->BlobDownloads(), downloads);
}

}  // namespace
}  // namespace gpuaas::agent
