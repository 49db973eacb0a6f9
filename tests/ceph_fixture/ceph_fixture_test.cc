// The fixture `ceph` is a real cluster: a subvolume made with a size through the mgr's `volumes`
// module, mounted with ceph-fuse, refuses a writer past that size, as the storage service's
// Ceph backend relies on.
#include <fcntl.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "libs/testing/ceph_test.h"
#include "libs/testing/shell_output.h"
#include "libs/testing/status_matchers.h"
#include "libs/testing/temp_dir.h"

namespace gpuaas::testing {
namespace {

constexpr int64_t kQuotaBytes = 8 << 20;
constexpr int64_t kChunkBytes = 1 << 20;

// Unique per run: test binaries of two runs may share nothing, but one cluster is shared by
// every test of a run.
std::string RandomSubvolumeName() {
  std::random_device seed;
  return absl::StrCat("fixture-test-", seed(), "-", seed());
}

// Single-quoted for /bin/sh: the fixture's paths are plain, but a test should not depend on it.
std::string Quoted(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  }
  return out + "'";
}

// Whether no ceph-fuse process mounts `mountpoint` (its last argument), waiting up to `timeout`
// for that. The pattern starts at the command's start so that it never matches the shell that
// runs pgrep, whose command line holds it too.
bool NoCephFuseOnWithin(const std::string& mountpoint, absl::Duration timeout) {
  const std::string pgrep = absl::StrCat(
      "pgrep -f -- ", Quoted(absl::StrCat("^ceph-fuse .* ", mountpoint, "$")), " >/dev/null");
  const absl::Time deadline = absl::Now() + timeout;
  while (ShellOutput(pgrep).ok()) {
    if (absl::Now() > deadline) {
      return false;
    }
    absl::SleepFor(absl::Milliseconds(100));
  }
  return true;
}

class CephFixtureTest : public CephTest {
 protected:
  // `ceph ARGS` as client.admin (the fixture's ceph.conf names its keyring for it).
  absl::StatusOr<std::string> Ceph(const std::string& args) {
    return ShellOutput(absl::StrCat("ceph -c ", Quoted(ceph().conf), " --keyring ",
                                    Quoted(ceph().keyring), " ", args));
  }
};

TEST_F(CephFixtureTest, SubvolumeSizeRefusesAWriterThroughCephFuse) {
  const std::string name = RandomSubvolumeName();
  ASSERT_OK(
      Ceph(absl::StrCat("fs subvolume create ", ceph().fs, " ", name, " --size ", kQuotaBytes))
          .status());
  absl::Cleanup remove_subvolume = [&] {
    EXPECT_OK(Ceph(absl::StrCat("fs subvolume rm ", ceph().fs, " ", name)).status());
  };
  ASSERT_OK_AND_ASSIGN(std::string path,
                       Ceph(absl::StrCat("fs subvolume getpath ", ceph().fs, " ", name)));
  path = std::string(absl::StripAsciiWhitespace(path));
  ASSERT_TRUE(absl::StartsWith(path, "/volumes/")) << path;

  TempDir mount;
  const std::string mountpoint = mount.path().string();
  // ceph-fuse returns once the mount is up (it daemonizes then).
  ASSERT_OK(ShellOutput(absl::StrCat("ceph-fuse -c ", Quoted(ceph().conf), " --id admin -k ",
                                     Quoted(ceph().keyring), " -r ", Quoted(path), " ",
                                     Quoted(mountpoint), " >/dev/null"))
                .status());
  absl::Cleanup unmount = [&] {
    EXPECT_OK(ShellOutput(absl::StrCat("fusermount -u ", Quoted(mountpoint))).status());
    // ceph-fuse flushes and says goodbye to the MDS after the unmount: a client still at it
    // when the fixture's cleanup stops the cluster would wait for it forever.
    EXPECT_TRUE(NoCephFuseOnWithin(mountpoint, absl::Seconds(30)))
        << "ceph-fuse still runs 30 s after unmounting " << mountpoint;
  };

  // The subvolume's size is the quota of its directory.
  std::vector<char> xattr(64);
  const ssize_t xattr_len =
      getxattr(mountpoint.c_str(), "ceph.quota.max_bytes", xattr.data(), xattr.size());
  ASSERT_GT(xattr_len, 0) << "getxattr ceph.quota.max_bytes: " << std::strerror(errno);
  EXPECT_EQ(std::string(xattr.data(), xattr_len), std::to_string(kQuotaBytes));

  const std::string file = mountpoint + "/fill";
  const int fd = open(file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  ASSERT_GE(fd, 0) << "open " << file << ": " << std::strerror(errno);
  const std::vector<char> chunk(kChunkBytes, 'x');
  int64_t written = 0;
  int refused_errno = 0;
  // Up to 4x the size: the client learns the directory's usage from the MDS a little late, so
  // a writer may overshoot before the refusal. CephFS says its quotas are imprecise: runs here
  // have been refused anywhere from just under the size to a little over twice it (8 MiB of
  // write-back in flight), so the bound checked is the loop's, 4x.
  while (written < 4 * kQuotaBytes) {
    const ssize_t n = write(fd, chunk.data(), chunk.size());
    if (n < 0) {
      refused_errno = errno;
      break;
    }
    written += n;
  }
  // The refusal may come as late as the flush.
  if (refused_errno == 0 && fsync(fd) != 0) {
    refused_errno = errno;
  }
  const int close_errno = close(fd) == 0 ? 0 : errno;
  if (refused_errno == 0) {
    refused_errno = close_errno;
  }

  EXPECT_TRUE(refused_errno == EDQUOT || refused_errno == ENOSPC)
      << "after " << written << " bytes into a subvolume of " << kQuotaBytes << ": "
      << (refused_errno == 0 ? "no error" : std::strerror(refused_errno));
  EXPECT_GE(written, kQuotaBytes / 2) << "refused long before the size";
}

}  // namespace
}  // namespace gpuaas::testing
