// CephBackend against a real cluster (the ctest fixture `ceph`, or GPUAAS_TEST_CEPH_DIR: see
// test_cluster.h). Without a cluster every test fails: a backend never run is not tested.
#include "services/storage/ceph/ceph_backend.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/xattr.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>

#include "absl/strings/str_cat.h"
#include "libs/common/errno_status.h"
#include "libs/common/files.h"
#include "libs/common/unique_fd.h"
#include "libs/testing/status_matchers.h"
#include "libs/testing/temp_dir.h"
#include "services/storage/ceph/rstats.h"
#include "services/storage/ceph/test_cluster.h"
#include "services/storage/local/staged_file.h"

namespace gpuaas::storage::ceph {
namespace {

namespace fs = std::filesystem;
using ::gpuaas::testing::IsOkAndHolds;
using ::gpuaas::testing::StatusIs;

constexpr int64_t kMiB = 1 << 20;

std::string Bytes(int64_t n, char c) { return std::string(static_cast<size_t>(n), c); }

absl::StatusOr<ObjectInfo> Put(Volume& volume, std::string_view key, const std::string& data) {
  absl::StatusOr<std::unique_ptr<ObjectWriter>> writer = volume.Create(key, data.size(), "");
  if (!writer.ok()) {
    return writer.status();
  }
  for (size_t at = 0; at < data.size(); at += kMiB) {
    if (absl::Status s = (*writer)->Write(std::string_view(data).substr(at, kMiB)); !s.ok()) {
      return s;
    }
  }
  return (*writer)->Commit();
}

absl::StatusOr<std::string> Get(Volume& volume, std::string_view key) {
  absl::StatusOr<std::unique_ptr<ObjectReader>> reader = volume.Open(key);
  if (!reader.ok()) {
    return reader.status();
  }
  std::string out(static_cast<size_t>((*reader)->info().size), '\0');
  size_t done = 0;
  while (done < out.size()) {
    absl::StatusOr<size_t> n = (*reader)->ReadAt(done, out.data() + done, out.size() - done);
    if (!n.ok()) {
      return n.status();
    }
    if (*n == 0) {
      break;
    }
    done += *n;
  }
  out.resize(done);
  return out;
}

// Names in a directory of the test's mount.
std::vector<std::string> Entries(const fs::path& dir) {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    names.push_back(entry.path().filename().string());
  }
  return names;
}

class CephBackendTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_OK_AND_ASSIGN(cluster_, TestClusterOptions());
    ASSERT_OK_AND_ASSIGN(a_, NewReplica("a"));
    volume_id_ = absl::StrCat("vol_test", local::RandomStagingName("").substr(0, 12));
  }

  void TearDown() override {
    if (a_ != nullptr) {
      EXPECT_OK(a_->DeleteVolume(volume_id_));
    }
    a_.reset();
    b_.reset();
    // No mount or ceph-fuse of this test is left behind.
    EXPECT_FALSE(IsMountPoint((dir_.path() / "a").string()));
    EXPECT_FALSE(IsMountPoint((dir_.path() / "b").string()));
  }

  CephBackendOptions Options(const std::string& replica, bool sync_writes = true) const {
    CephBackendOptions options;
    options.cluster = cluster_;
    options.mount_point = (dir_.path() / replica).string();
    // As in production: CephFS's counters follow synced writes within about a second.
    options.sync_writes = sync_writes;
    return options;
  }

  // A storage service replica of its own: its own librados connection and ceph-fuse mount.
  absl::StatusOr<std::unique_ptr<Backend>> NewReplica(const std::string& name) const {
    return NewCephBackend(Options(name));
  }

  // The subvolume's directory on replica a's mount (its data/ is what MountSourceFor names).
  fs::path VolumeTop() {
    absl::StatusOr<MountSource> source = a_->MountSourceFor(volume_id_, "node");
    EXPECT_OK(source.status());
    if (!source.ok() || !source->ceph.has_value()) return fs::path();
    EXPECT_TRUE(source->host_path.empty()) << "a node never gets a path of the service's own";
    return fs::path(Options("a").mount_point + source->ceph->path).parent_path();
  }

  ClusterOptions cluster_;
  gpuaas::testing::TempDir dir_;
  std::unique_ptr<Backend> a_;
  std::unique_ptr<Backend> b_;
  std::string volume_id_;
};

TEST_F(CephBackendTest, CreatesWritesReadsListsAndCounts) {
  const VolumeLimits limits{.max_bytes = 64 * kMiB, .max_files = 100};
  EXPECT_EQ(a_->backend_class(), "ceph");
  ASSERT_OK(a_->CreateVolume(volume_id_, limits));
  ASSERT_OK(a_->CreateVolume(volume_id_, limits));  // a retry keeps it
  ASSERT_OK_AND_ASSIGN(std::shared_ptr<Volume> volume, a_->OpenVolume(volume_id_, limits));
  const std::string data = Bytes(3 * kMiB, 'x');
  ASSERT_OK_AND_ASSIGN(ObjectInfo info, Put(*volume, "dir/a.bin", data));
  EXPECT_EQ(info.size, 3 * kMiB);
  ASSERT_OK(Put(*volume, "b.txt", "hello").status());
  ASSERT_OK_AND_ASSIGN(std::string read, Get(*volume, "dir/a.bin"));
  EXPECT_TRUE(read == data);
  ASSERT_OK_AND_ASSIGN(ObjectInfo stat, volume->Stat("b.txt"));
  EXPECT_EQ(stat.etag, "5d41402abc4b2a76b9719d911017c592");  // md5("hello")

  ASSERT_OK_AND_ASSIGN(ListResult all, volume->List({}));
  ASSERT_EQ(all.objects.size(), 2u);  // staging and uploads are not objects
  EXPECT_EQ(all.objects[0].key, "b.txt");
  EXPECT_EQ(all.objects[1].key, "dir/a.bin");
  ASSERT_OK_AND_ASSIGN(ListResult top, volume->List({.delimiter = "/"}));
  EXPECT_EQ(top.common_prefixes, std::vector<std::string>{"dir/"});

  // The user's files are what a workload sees: data/ holds them and nothing else.
  const fs::path top_dir = VolumeTop();
  EXPECT_EQ(Entries(top_dir / "data").size(), 2u);
  // The quota is the size; usage comes from CephFS's recursive counters (propagated lazily).
  UniqueFd fd(::open(top_dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  ASSERT_OK_AND_ASSIGN(int64_t quota, ReadQuota(fd.get(), "max_bytes"));
  EXPECT_EQ(quota, 64 * kMiB);
  ASSERT_OK_AND_ASSIGN(int64_t max_files, ReadQuota(fd.get(), "max_files"));
  EXPECT_EQ(max_files, 100);
  // Namespace-isolated: a node's credential for it reaches its own RADOS namespace only.
  char ns[128] = {};
  ASSERT_GT(::fgetxattr(fd.get(), "ceph.dir.layout.pool_namespace", ns, sizeof ns - 1), 0);
  EXPECT_EQ(std::string(ns), "fsvolumens_" + volume_id_);
  // Right after its own writes CephFS's counters may not have them yet; this replica's do.
  ASSERT_OK_AND_ASSIGN(VolumeUsage usage, a_->Recount(volume_id_));
  EXPECT_EQ(usage.bytes, 3 * kMiB + 5);
  EXPECT_EQ(usage.files, 2);
  EXPECT_EQ(volume->Usage().bytes, 3 * kMiB + 5);
}

TEST_F(CephBackendTest, OneReplicaContinuesAndCompletesAnotherReplicasUpload) {
  const VolumeLimits limits{.max_bytes = 64 * kMiB, .max_files = 100};
  ASSERT_OK(a_->CreateVolume(volume_id_, limits));
  ASSERT_OK_AND_ASSIGN(b_, NewReplica("b"));
  ASSERT_OK_AND_ASSIGN(std::shared_ptr<Volume> on_a, a_->OpenVolume(volume_id_, limits));
  ASSERT_OK_AND_ASSIGN(std::shared_ptr<Volume> on_b, b_->OpenVolume(volume_id_, limits));

  ASSERT_OK_AND_ASSIGN(UploadInfo upload, on_a->CreateUpload("big.bin", "application/x-test"));
  const std::string part1 = Bytes(5 * kMiB, '1');
  const std::string part2 = Bytes(kMiB, '2');
  ASSERT_OK_AND_ASSIGN(auto w1, on_a->CreatePart(upload.upload_id, 1, part1.size()));
  ASSERT_OK(w1->Write(part1));
  ASSERT_OK_AND_ASSIGN(ObjectInfo p1, w1->Commit());
  // Replica b, which never saw the upload begin, lists it, adds a part and completes it.
  ASSERT_OK_AND_ASSIGN(std::vector<UploadInfo> uploads, on_b->ListUploads());
  ASSERT_EQ(uploads.size(), 1u);
  EXPECT_EQ(uploads[0].upload_id, upload.upload_id);
  ASSERT_OK_AND_ASSIGN(auto w2, on_b->CreatePart(upload.upload_id, 2, part2.size()));
  ASSERT_OK(w2->Write(part2));
  ASSERT_OK_AND_ASSIGN(ObjectInfo p2, w2->Commit());
  ASSERT_OK_AND_ASSIGN(std::vector<PartInfo> parts, on_b->ListParts(upload.upload_id));
  ASSERT_EQ(parts.size(), 2u);
  EXPECT_EQ(parts[0].etag, p1.etag);
  ASSERT_OK_AND_ASSIGN(ObjectInfo done, on_b->CompleteUpload(upload.upload_id, parts));
  EXPECT_EQ(done.size, 6 * kMiB);
  EXPECT_TRUE(done.etag.ends_with("-2"));

  ASSERT_OK_AND_ASSIGN(std::string read, Get(*on_a, "big.bin"));
  EXPECT_TRUE(read == part1 + part2);
  ASSERT_OK_AND_ASSIGN(ObjectInfo stat, on_a->Stat("big.bin"));
  EXPECT_EQ(stat.etag, done.etag);
  EXPECT_EQ(stat.content_type, "application/x-test");
  EXPECT_THAT(on_a->ListParts(upload.upload_id), StatusIs(absl::StatusCode::kNotFound));
  ASSERT_OK_AND_ASSIGN(uploads, on_a->ListUploads());
  EXPECT_TRUE(uploads.empty());
}

TEST_F(CephBackendTest, AWritePastTheSizeIsRefusedAndLeavesNoPartialObject) {
  const VolumeLimits limits{.max_bytes = 8 * kMiB, .max_files = 100};
  ASSERT_OK(a_->CreateVolume(volume_id_, limits));
  ASSERT_OK_AND_ASSIGN(std::shared_ptr<Volume> on_a, a_->OpenVolume(volume_id_, limits));
  // Up front: more than the size is refused before a byte is sent.
  EXPECT_THAT(on_a->Create("huge", 9 * kMiB, ""), StatusIs(absl::StatusCode::kResourceExhausted));

  // Another replica (syncing its writes, as in production) fills 6 MiB of the 8.
  ASSERT_OK_AND_ASSIGN(b_, NewReplica("b"));
  ASSERT_OK_AND_ASSIGN(std::shared_ptr<Volume> on_b, b_->OpenVolume(volume_id_, limits));
  ASSERT_OK(Put(*on_b, "six.bin", Bytes(6 * kMiB, '6')).status());
  EXPECT_EQ(on_a->Usage().bytes, 0);  // replica a has not counted it yet
  // Once CephFS's counters have it (the MDS propagates them within about a second) and a's are
  // old enough to be read again, a refuses 4 MiB more, which its own counters would admit.
  const fs::path top = VolumeTop();
  UniqueFd fd(::open(top.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  VolumeUsage counted;
  for (int i = 0; i < 100 && counted.bytes < 6 * kMiB; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    ASSERT_OK_AND_ASSIGN(counted, ReadRecursiveUsage(fd.get()));
  }
  ASSERT_EQ(counted.bytes, 6 * kMiB);
  std::this_thread::sleep_for(std::chrono::milliseconds(2100));
  ASSERT_OK_AND_ASSIGN(on_a, a_->OpenVolume(volume_id_, limits));
  EXPECT_EQ(on_a->Usage().bytes, 6 * kMiB);
  EXPECT_THAT(Put(*on_a, "late.bin", Bytes(4 * kMiB, 'l')).status(),
              StatusIs(absl::StatusCode::kResourceExhausted));
  EXPECT_THAT(on_a->Stat("late.bin"), StatusIs(absl::StatusCode::kNotFound));
  EXPECT_TRUE(Entries(top / ".staging").empty());
  EXPECT_EQ(Entries(top / "data"), std::vector<std::string>{"six.bin"});
  // What still fits is taken.
  ASSERT_OK(Put(*on_a, "two.bin", Bytes(2 * kMiB, '2')).status());
}

TEST_F(CephBackendTest, ALargerSizeGrowsTheVolumeOnline) {
  VolumeLimits limits{.max_bytes = 4 * kMiB, .max_files = 100};
  ASSERT_OK(a_->CreateVolume(volume_id_, limits));
  ASSERT_OK_AND_ASSIGN(std::shared_ptr<Volume> volume, a_->OpenVolume(volume_id_, limits));
  ASSERT_OK(Put(*volume, "first", Bytes(3 * kMiB, 'f')).status());
  EXPECT_THAT(volume->Create("second", 3 * kMiB, ""),
              StatusIs(absl::StatusCode::kResourceExhausted));

  limits.max_bytes = 16 * kMiB;
  ASSERT_OK_AND_ASSIGN(std::shared_ptr<Volume> grown, a_->OpenVolume(volume_id_, limits));
  EXPECT_EQ(grown, volume);  // the same volume, never unmounted
  ASSERT_OK(Put(*volume, "second", Bytes(3 * kMiB, 's')).status());
  UniqueFd fd(::open(VolumeTop().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  ASSERT_OK_AND_ASSIGN(int64_t quota, ReadQuota(fd.get(), "max_bytes"));
  EXPECT_EQ(quota, 16 * kMiB);
  // Another replica opening it later sees the grown quota too.
  ASSERT_OK_AND_ASSIGN(b_, NewReplica("b"));
  ASSERT_OK_AND_ASSIGN(std::shared_ptr<Volume> on_b, b_->OpenVolume(volume_id_, limits));
  ASSERT_OK_AND_ASSIGN(std::string read, Get(*on_b, "second"));
  EXPECT_EQ(read.size(), static_cast<size_t>(3 * kMiB));
}

TEST_F(CephBackendTest, DeleteRemovesTheSubvolume) {
  const VolumeLimits limits{.max_bytes = 4 * kMiB, .max_files = 10};
  ASSERT_OK(a_->CreateVolume(volume_id_, limits));
  ASSERT_OK_AND_ASSIGN(std::shared_ptr<Volume> volume, a_->OpenVolume(volume_id_, limits));
  ASSERT_OK(Put(*volume, "k", "v").status());
  const fs::path top = VolumeTop();
  ASSERT_OK(a_->DeleteVolume(volume_id_));
  EXPECT_THAT(volume->Stat("k"), StatusIs(absl::StatusCode::kNotFound));
  EXPECT_THAT(a_->OpenVolume(volume_id_, limits), StatusIs(absl::StatusCode::kNotFound));
  EXPECT_THAT(a_->MountSourceFor(volume_id_, "node"), StatusIs(absl::StatusCode::kNotFound));
  EXPECT_THAT(a_->Recount(volume_id_), StatusIs(absl::StatusCode::kNotFound));
  EXPECT_FALSE(fs::exists(top));
  EXPECT_OK(a_->DeleteVolume(volume_id_));  // a retry
}

TEST_F(CephBackendTest, AVolumeDeletedThroughOneReplicaIsGoneOnTheOther) {
  const VolumeLimits limits{.max_bytes = 4 * kMiB, .max_files = 10};
  ASSERT_OK(a_->CreateVolume(volume_id_, limits));
  ASSERT_OK_AND_ASSIGN(b_, NewReplica("b"));
  ASSERT_OK_AND_ASSIGN(std::shared_ptr<Volume> on_b, b_->OpenVolume(volume_id_, limits));
  ASSERT_OK(Put(*on_b, "k", "v").status());
  ASSERT_OK(a_->DeleteVolume(volume_id_));
  // (A write already on its way through b may land in Ceph's trash; the control plane stops
  // new ones first: a storage being deleted is no bucket.)
  std::this_thread::sleep_for(std::chrono::milliseconds(2100));  // b looks again now
  EXPECT_THAT(b_->OpenVolume(volume_id_, limits), StatusIs(absl::StatusCode::kNotFound));
}

TEST_F(CephBackendTest, ExpiryDropsStagedFilesOfDeadWritersAndKeepsYoungUploads) {
  const VolumeLimits limits{.max_bytes = 16 * kMiB, .max_files = 100};
  ASSERT_OK(a_->CreateVolume(volume_id_, limits));
  ASSERT_OK_AND_ASSIGN(std::shared_ptr<Volume> volume, a_->OpenVolume(volume_id_, limits));
  ASSERT_OK_AND_ASSIGN(UploadInfo upload, volume->CreateUpload("u", ""));
  // A staged file a replica that died left, untouched for two hours, and a fresh one.
  const fs::path staging = VolumeTop() / ".staging";
  std::ofstream(staging / "dead.tmp") << "partial";
  std::ofstream(staging / "live.tmp") << "in progress";
  const timespec old_times[2] = {{absl::ToUnixSeconds(absl::Now() - absl::Hours(2)), 0},
                                 {absl::ToUnixSeconds(absl::Now() - absl::Hours(2)), 0}};
  ASSERT_EQ(::utimensat(AT_FDCWD, (staging / "dead.tmp").c_str(), old_times, 0), 0);

  // Only old uploads go (the cluster is shared with other tests: a later cutoff would take
  // their uploads too); LocalVolume's expiry itself is tested with the local backend.
  ASSERT_OK_AND_ASSIGN(int expired, a_->ExpireUploads(absl::Now() - absl::Hours(1)));
  EXPECT_EQ(expired, 0);
  ASSERT_OK_AND_ASSIGN(std::vector<PartInfo> parts, volume->ListParts(upload.upload_id));
  EXPECT_TRUE(parts.empty());
  EXPECT_EQ(Entries(staging), std::vector<std::string>{"live.tmp"});
}

TEST_F(CephBackendTest, BadOptionsFailNamingTheOption) {
  CephBackendOptions options = Options("bad");
  options.cluster.conf_path = (dir_.path() / "missing.conf").string();
  EXPECT_THAT(NewCephBackend(options),
              StatusIs(absl::StatusCode::kInvalidArgument, ::testing::HasSubstr("conf")));
  options = Options("bad");
  options.fs_name = "no_such_fs";
  EXPECT_THAT(NewCephBackend(options),
              StatusIs(absl::StatusCode::kInvalidArgument, ::testing::HasSubstr("no_such_fs")));
  options = Options("bad");
  options.cluster.client_id = "nobody";
  EXPECT_THAT(NewCephBackend(options),
              StatusIs(absl::StatusCode::kInvalidArgument, ::testing::HasSubstr("keyring")));
  EXPECT_FALSE(IsMountPoint((dir_.path() / "bad").string()));
}

TEST_F(CephBackendTest, ARestoredSnapshotHoldsTheDataOfItsMoment) {
  ASSERT_OK(a_->CreateVolume(volume_id_, {.max_bytes = 64 * kMiB, .max_files = 100}));
  ASSERT_OK_AND_ASSIGN(auto volume, a_->OpenVolume(volume_id_, {64 * kMiB, 100}));
  ASSERT_OK(Put(*volume, "notes/a.txt", "old").status());
  // What a workload may plant through its mount: a restore copies it as a symlink, never what
  // it points at.
  fs::create_symlink("/etc/passwd", VolumeTop() / "data" / "planted");
  // CephFS's counters of the subvolume (what a snapshot's size is) trail the write.
  {
    UniqueFd top(::open(VolumeTop().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    VolumeUsage counted;
    for (int i = 0; i < 100 && counted.bytes < 3; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      ASSERT_OK_AND_ASSIGN(counted, ReadRecursiveUsage(top.get()));
    }
  }
  ASSERT_OK(a_->CreateSnapshot(volume_id_, "before"));
  EXPECT_THAT(a_->CreateSnapshot(volume_id_, "before"), StatusIs(absl::StatusCode::kAlreadyExists));
  ASSERT_OK(Put(*volume, "notes/a.txt", "new!").status());
  ASSERT_OK(Put(*volume, "b.txt", "later").status());

  ASSERT_OK_AND_ASSIGN(std::vector<SnapshotInfo> snapshots, a_->ListSnapshots(volume_id_));
  ASSERT_EQ(snapshots.size(), 1u);
  EXPECT_EQ(snapshots[0].snapshot_id, "before");
  EXPECT_GE(snapshots[0].bytes, 3);
  EXPECT_LT(absl::AbsDuration(absl::Now() - snapshots[0].create_time), absl::Minutes(5));

  const std::string restored = volume_id_ + "_r";
  ASSERT_OK(a_->RestoreSnapshot(volume_id_, "before", restored, {32 * kMiB, 50}));
  ASSERT_OK(a_->RestoreSnapshot(volume_id_, "before", restored, {32 * kMiB, 50}))
      << "a retry keeps what the first made";
  ASSERT_OK_AND_ASSIGN(auto copy, a_->OpenVolume(restored, {32 * kMiB, 50}));
  {
    // Its data in a RADOS namespace of its own, as every volume's: a node's credential for it
    // (fs subvolume authorize) reaches that namespace only.
    ASSERT_OK_AND_ASSIGN(MountSource source, a_->MountSourceFor(volume_id_, "node"));
    ASSERT_OK_AND_ASSIGN(MountSource copied, a_->MountSourceFor(restored, "node"));
    const auto pool_namespace = [&](const MountSource& m) {
      const fs::path top = fs::path(Options("a").mount_point + m.ceph->path).parent_path();
      char value[256] = {};
      const ssize_t n =
          ::getxattr(top.c_str(), "ceph.dir.layout.pool_namespace", value, sizeof(value) - 1);
      return n > 0 ? std::string(value, static_cast<size_t>(n)) : std::string();
    };
    EXPECT_NE(pool_namespace(source), "");
    EXPECT_NE(pool_namespace(copied), "");
    EXPECT_NE(pool_namespace(copied), pool_namespace(source));
    const fs::path copied_data(Options("a").mount_point + copied.ceph->path);
    EXPECT_TRUE(fs::is_symlink(copied_data / "planted"));
    EXPECT_EQ(fs::read_symlink(copied_data / "planted"), "/etc/passwd");
  }
  EXPECT_THAT(Get(*copy, "notes/a.txt"), IsOkAndHolds(std::string("old")));
  EXPECT_THAT(copy->Stat("b.txt"), StatusIs(absl::StatusCode::kNotFound));
  EXPECT_THAT(Get(*volume, "notes/a.txt"), IsOkAndHolds(std::string("new!")));
  // The copy is a storage of its own: writing to it leaves the source alone.
  ASSERT_OK(Put(*copy, "notes/a.txt", "copy").status());
  EXPECT_THAT(Get(*volume, "notes/a.txt"), IsOkAndHolds(std::string("new!")));

  EXPECT_THAT(a_->RestoreSnapshot(volume_id_, "before", volume_id_ + "_small", {1, 50}),
              StatusIs(absl::StatusCode::kResourceExhausted));
  EXPECT_THAT(a_->RestoreSnapshot(volume_id_, "nope", volume_id_ + "_x", {kMiB, 50}),
              StatusIs(absl::StatusCode::kNotFound));

  ASSERT_OK(a_->DeleteSnapshot(volume_id_, "before"));
  EXPECT_THAT(a_->ListSnapshots(volume_id_), IsOkAndHolds(::testing::IsEmpty()));
  EXPECT_THAT(a_->DeleteSnapshot(volume_id_, "before"), StatusIs(absl::StatusCode::kNotFound));
  EXPECT_THAT(Get(*copy, "notes/a.txt"), IsOkAndHolds(std::string("copy")))
      << "a restored storage outlives its snapshot";
  EXPECT_OK(a_->DeleteVolume(restored));
}

TEST_F(CephBackendTest, SnapshotsGoWithTheirVolumeAndBadNamesAreRefused) {
  EXPECT_THAT(a_->CreateSnapshot(volume_id_, "s"), StatusIs(absl::StatusCode::kNotFound));
  EXPECT_THAT(a_->ListSnapshots(volume_id_), StatusIs(absl::StatusCode::kNotFound));
  ASSERT_OK(a_->CreateVolume(volume_id_, {.max_bytes = 8 * kMiB, .max_files = 0}));
  EXPECT_THAT(a_->CreateSnapshot(volume_id_, "../x"),
              StatusIs(absl::StatusCode::kInvalidArgument, ::testing::HasSubstr("snapshot_id")));
  EXPECT_THAT(a_->CreateSnapshot(volume_id_, ""), StatusIs(absl::StatusCode::kInvalidArgument));
  ASSERT_OK(a_->CreateSnapshot(volume_id_, "s1"));
  ASSERT_OK(a_->CreateSnapshot(volume_id_, "s2"));
  ASSERT_OK(a_->DeleteVolume(volume_id_)) << "its snapshots go with it";
  EXPECT_THAT(a_->ListSnapshots(volume_id_), StatusIs(absl::StatusCode::kNotFound));
}

}  // namespace
}  // namespace gpuaas::storage::ceph
