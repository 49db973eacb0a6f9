// Volumes with their own file system (--volume-filesystem=loop-ext4): the kernel stops every
// writer at the size, S3 writes and files written through the mount alike. Real loop devices
// and mounts; every test checks that none is left behind.
#include <errno.h>
#include <fcntl.h>
#include <sys/mount.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "absl/strings/match.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "libs/testing/eventually.h"
#include "services/storage/local/local_test_util.h"
#include "services/storage/local/loop_filesystem.h"

namespace gpuaas::storage::local {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using testing::IsOkAndHolds;
using testing::StatusIs;

constexpr int64_t kSize = 16 << 20;
constexpr VolumeLimits kLimits{kSize, 1000};

// The loop devices whose image lies under `dir`.
std::vector<std::string> LoopDevicesUnder(const fs::path& dir) {
  std::vector<std::string> found;
  const std::string prefix = fs::canonical(dir).string();
  for (const fs::directory_entry& entry : fs::directory_iterator("/sys/block")) {
    std::ifstream in(entry.path() / "loop" / "backing_file");
    std::string backing;
    if (std::getline(in, backing) && backing.rfind(prefix, 0) == 0) {
      found.push_back(entry.path().filename().string() + " " + backing);
    }
  }
  return found;
}

// Writes `bytes` of zeros to a new file through the file system, as a workload would; the
// errno that stopped it (0 when everything was written).
int WriteThroughMount(const fs::path& path, int64_t bytes) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return errno;
  const std::string chunk(1 << 20, '\0');
  int err = 0;
  for (int64_t done = 0; done < bytes && err == 0;) {
    const ssize_t n = ::write(fd, chunk.data(), std::min<int64_t>(chunk.size(), bytes - done));
    if (n < 0) {
      err = errno;
    } else {
      done += n;
    }
  }
  if (err == 0 && ::fsync(fd) != 0) err = errno;
  ::close(fd);
  return err;
}

int64_t BytesUnder(const fs::path& dir) {
  int64_t total = 0;
  for (const fs::directory_entry& entry : fs::recursive_directory_iterator(dir)) {
    if (entry.is_regular_file()) total += static_cast<int64_t>(entry.file_size());
  }
  return total;
}

class LoopVolumeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_OK(CheckLoopFilesystemUsable());
    OpenBackend();
    ASSERT_OK(backend_->CreateVolume("vol", kLimits));
    AgeTheFileSystem();
    ASSERT_OK_AND_ASSIGN(volume_, backend_->OpenVolume("vol", kLimits));
    ASSERT_OK_AND_ASSIGN(MountSource source, backend_->MountSourceFor("vol", "node"));
    data_ = source.host_path;
  }

  void TearDown() override {
    volume_.reset();
    backend_.reset();
    EXPECT_FALSE(IsMountPoint((DataRoot() / "volumes" / "vol").string()));
    EXPECT_TRUE(LoopDevicesGone()) << LoopDevicesUnder(temp_.path()).size() << " left";
  }

  // The kernel lets an autoclear loop device go after the last unmount, not at once (a busy
  // node takes longer): wait a little for it.
  bool LoopDevicesGone() {
    return gpuaas::testing::Eventually([&] { return LoopDevicesUnder(temp_.path()).empty(); },
                                       absl::Seconds(5));
  }

  // A volume that has lived a while was mounted after its file system's last check (mkfs, in
  // the same second only for a young one): as if made long ago, so that no test depends on the
  // second its SetUp runs in (resize2fs wants such a file system checked first).
  void AgeTheFileSystem() {
    backend_.reset();  // unmounts
    ASSERT_TRUE(LoopDevicesGone());
    const std::string image = (DataRoot() / "images" / "vol.img").string();
    ASSERT_EQ(std::system(("/sbin/tune2fs -T 20200101 " + image + " >/dev/null").c_str()), 0);
    OpenBackend();
  }

  void OpenBackend() {
    ASSERT_OK_AND_ASSIGN(backend_,
                         NewLocalBackend({.data_root = DataRoot().string(),
                                          .sync_writes = false,
                                          .volume_filesystem = VolumeFilesystem::kLoopExt4}));
  }

  fs::path DataRoot() const { return temp_.path() / "data"; }

  gpuaas::testing::TempDir temp_;
  std::unique_ptr<Backend> backend_;
  std::shared_ptr<Volume> volume_;
  fs::path data_;  // what a workload mounts
};

TEST_F(LoopVolumeTest, AWorkloadSeesOnlyItsFilesOnAFileSystemOfTheSize) {
  EXPECT_EQ(data_, DataRoot() / "volumes" / "vol" / "data");
  EXPECT_TRUE(IsMountPoint((DataRoot() / "volumes" / "vol").string()));
  EXPECT_THAT(LoopDevicesUnder(temp_.path()), ::testing::SizeIs(1));
  struct statvfs st;
  ASSERT_EQ(::statvfs(data_.c_str(), &st), 0);
  EXPECT_LE(static_cast<int64_t>(st.f_blocks * st.f_frsize), kSize);
  ASSERT_OK(Put(*volume_, "a/b.txt", "hello"));
  EXPECT_EQ(ReadHostFile(data_ / "a" / "b.txt"), "hello");
  EXPECT_EQ(std::distance(fs::directory_iterator(data_), fs::directory_iterator()), 1);
}

TEST_F(LoopVolumeTest, AWriteThroughTheMountStopsAtTheSize) {
  EXPECT_EQ(WriteThroughMount(data_ / "big", 4 * kSize), ENOSPC);
  EXPECT_LE(BytesUnder(data_), kSize);
  // What the tenant may legitimately do still works once there is room again.
  fs::remove(data_ / "big");
  EXPECT_EQ(WriteThroughMount(data_ / "small", kSize / 4), 0);
  EXPECT_EQ(fs::file_size(data_ / "small"), kSize / 4);
}

TEST_F(LoopVolumeTest, AnS3WriteIntoAFullFileSystemIsRefusedWithoutAPartialObject) {
  // The counters do not know what the workload wrote; the file system does.
  ASSERT_EQ(WriteThroughMount(data_ / "filler", 4 * kSize), ENOSPC);
  EXPECT_THAT(Put(*volume_, "late", std::string(4 << 20, 'x')),
              StatusIs(absl::StatusCode::kResourceExhausted));
  EXPECT_FALSE(fs::exists(data_ / "late"));
  EXPECT_TRUE(fs::is_empty(DataRoot() / "volumes" / "vol" / ".staging"));
  fs::remove(data_ / "filler");
  EXPECT_OK(Put(*volume_, "late", std::string(4 << 20, 'x')));
}

TEST_F(LoopVolumeTest, MultipartUploadsStayInsideTheVolumesFileSystem) {
  ASSERT_OK_AND_ASSIGN(UploadInfo upload, volume_->CreateUpload("mp", ""));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<ObjectWriter> part,
                       volume_->CreatePart(upload.upload_id, 1, 3));
  ASSERT_OK(part->Write("abc"));
  ASSERT_OK_AND_ASSIGN(ObjectInfo info, part->Commit());
  ASSERT_OK(volume_->CompleteUpload(upload.upload_id,
                                    {PartInfo{.part_number = 1, .size = 3, .etag = info.etag}}));
  EXPECT_EQ(ReadHostFile(data_ / "mp"), "abc");
  ASSERT_OK(volume_->Copy("mp", "mp2"));
  EXPECT_EQ(ReadHostFile(data_ / "mp2"), "abc");
}

TEST_F(LoopVolumeTest, ARestartMountsTheVolumeAgainWithItsFiles) {
  ASSERT_OK(Put(*volume_, "kept", "data"));
  volume_.reset();
  backend_.reset();
  EXPECT_FALSE(IsMountPoint((DataRoot() / "volumes" / "vol").string()));
  EXPECT_TRUE(LoopDevicesGone());
  OpenBackend();
  ASSERT_OK_AND_ASSIGN(volume_, backend_->OpenVolume("vol", kLimits));
  EXPECT_EQ(ReadHostFile(data_ / "kept"), "data");
  EXPECT_EQ(volume_->Usage().bytes, 4);
  EXPECT_OK(backend_->CreateVolume("vol", kLimits));  // idempotent, content kept
  EXPECT_EQ(ReadHostFile(data_ / "kept"), "data");
}

TEST_F(LoopVolumeTest, AnImageThatDoesNotMountKeepsOnlyItsOwnVolumeDown) {
  ASSERT_OK(backend_->CreateVolume("other", kLimits));
  volume_.reset();
  backend_.reset();
  {
    std::ofstream broken(DataRoot() / "images" / "vol.img", std::ios::binary | std::ios::trunc);
    broken << std::string(1 << 20, 'x');
  }
  OpenBackend();
  EXPECT_FALSE(backend_->OpenVolume("vol", kLimits).ok());
  ASSERT_OK_AND_ASSIGN(std::shared_ptr<Volume> other, backend_->OpenVolume("other", kLimits));
  EXPECT_OK(Put(*other, "k", "v"));
}

TEST_F(LoopVolumeTest, DeleteUnmountsAndRemovesTheImage) {
  ASSERT_OK(Put(*volume_, "gone", "data"));
  ASSERT_OK(backend_->DeleteVolume("vol"));
  EXPECT_THAT(backend_->OpenVolume("vol", kLimits), StatusIs(absl::StatusCode::kNotFound));
  EXPECT_FALSE(fs::exists(DataRoot() / "volumes" / "vol"));
  EXPECT_TRUE(fs::is_empty(DataRoot() / "images"));
  volume_.reset();  // the last open file of the detached file system
  EXPECT_TRUE(LoopDevicesGone());
  // A storage made again under the same identity starts empty.
  ASSERT_OK(backend_->CreateVolume("vol", kLimits));
  ASSERT_OK_AND_ASSIGN(volume_, backend_->OpenVolume("vol", kLimits));
  EXPECT_FALSE(fs::exists(data_ / "gone"));
}

TEST_F(LoopVolumeTest, AVolumeAllowedManyFilesGetsTheInodesForThem) {
  ASSERT_OK(backend_->CreateVolume("many", {kSize, 20'000}));
  ASSERT_OK_AND_ASSIGN(MountSource source, backend_->MountSourceFor("many", "node"));
  struct statvfs st;
  ASSERT_EQ(::statvfs(source.host_path.c_str(), &st), 0);
  EXPECT_GE(st.f_files, 20'000u);
  ASSERT_EQ(::statvfs(data_.c_str(), &st), 0);
  EXPECT_LT(st.f_files, 20'000u) << "mke2fs's default for 16 MiB";
}

// The size of the file system a workload sees at `dir`.
int64_t FilesystemBytes(const fs::path& dir) {
  struct statvfs st;
  return ::statvfs(dir.c_str(), &st) == 0 ? static_cast<int64_t>(st.f_blocks * st.f_frsize) : -1;
}

// A second mount of the volume's file system, as an agent's bind mount into a running workload
// is: the file system stays in use while it exists.
class BindMount {
 public:
  BindMount(const fs::path& from, fs::path to) : to_(std::move(to)) {
    fs::create_directories(to_);
    mounted_ = ::mount(from.c_str(), to_.c_str(), nullptr, MS_BIND, nullptr) == 0;
  }
  ~BindMount() { Release(); }
  bool mounted() const { return mounted_; }
  void Release() {
    if (mounted_) ::umount2(to_.c_str(), 0);
    mounted_ = false;
  }

 private:
  fs::path to_;
  bool mounted_ = false;
};

TEST_F(LoopVolumeTest, LargerLimitsGrowTheFileSystem) {
  volume_.reset();  // nothing holds the volume: it can grow, online or offline
  ASSERT_OK_AND_ASSIGN(volume_, backend_->OpenVolume("vol", {2 * kSize, 1000}));
  EXPECT_GT(FilesystemBytes(data_), kSize);
  EXPECT_EQ(WriteThroughMount(data_ / "big", kSize + (kSize / 2)), 0);
  EXPECT_OK(Put(*volume_, "after", "still served"));
  EXPECT_EQ(ReadHostFile(data_ / "after"), "still served");
}

TEST_F(LoopVolumeTest, AGrowthWaitsForTheFileSystemToBeFreeAndFinishesAtDetach) {
  ASSERT_OK(Put(*volume_, "kept", "data"));
  volume_.reset();
  BindMount workload(data_, temp_.path() / "workload");
  ASSERT_TRUE(workload.mounted());
  const int64_t before = FilesystemBytes(data_);
  // The larger size is committed: the caller gets OK, the volume serves on.
  ASSERT_OK_AND_ASSIGN(volume_, backend_->OpenVolume("vol", {2 * kSize, 1000}));
  EXPECT_OK(Put(*volume_, "during", "x"));
  if (FilesystemBytes(data_) > before) {
    GTEST_SKIP() << "this process grows mounted file systems online (CAP_SYS_RESOURCE)";
  }
  EXPECT_EQ(ReadHostFile(temp_.path() / "workload" / "during"), "x");
  EXPECT_OK(backend_->Recount("vol"));  // detach, but the workload still holds it
  EXPECT_EQ(FilesystemBytes(data_), before);
  workload.Release();
  volume_.reset();
  ASSERT_OK(backend_->Recount("vol"));  // the detach after the workload let go
  EXPECT_GT(FilesystemBytes(data_), kSize);
  EXPECT_EQ(WriteThroughMount(data_ / "big", kSize + (kSize / 2)), 0);
  EXPECT_EQ(ReadHostFile(data_ / "kept"), "data");
}

TEST_F(LoopVolumeTest, AGrowthThatWaitedFinishesAtTheNextStart) {
  volume_.reset();
  BindMount workload(data_, temp_.path() / "workload");
  ASSERT_TRUE(workload.mounted());
  const int64_t before = FilesystemBytes(data_);
  ASSERT_OK(backend_->OpenVolume("vol", {2 * kSize, 1000}));
  if (FilesystemBytes(data_) > before) {
    GTEST_SKIP() << "this process grows mounted file systems online (CAP_SYS_RESOURCE)";
  }
  backend_.reset();
  workload.Release();
  OpenBackend();
  EXPECT_GT(FilesystemBytes(data_), kSize);
  ASSERT_OK_AND_ASSIGN(volume_, backend_->OpenVolume("vol", {2 * kSize, 1000}));
  EXPECT_EQ(WriteThroughMount(data_ / "big", kSize + (kSize / 2)), 0);
}

TEST(LoopVolumeFlagTest, NamesAreChecked) {
  EXPECT_THAT(ParseVolumeFilesystem("loop-ext4"),
              IsOkAndHolds(::testing::Eq(VolumeFilesystem::kLoopExt4)));
  EXPECT_THAT(ParseVolumeFilesystem("directory"),
              IsOkAndHolds(::testing::Eq(VolumeFilesystem::kDirectory)));
  EXPECT_THAT(ParseVolumeFilesystem("zfs"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("loop-ext4 or directory")));
}

}  // namespace
}  // namespace gpuaas::storage::local
