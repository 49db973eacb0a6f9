#include "services/agent/images/layer_unpack.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <thread>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "libs/common/files.h"
#include "libs/common/unique_fd.h"
#include "libs/testing/status_matchers.h"
#include "libs/testing/temp_dir.h"
#include "services/agent/images/testing/tar_builder.h"

namespace gpuaas::agent {
namespace {

namespace fs = std::filesystem;
using ::gpuaas::agent::testing::Compression;
using ::gpuaas::agent::testing::TarBuilder;
using ::gpuaas::testing::StatusIs;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

std::string Xattr(const fs::path& path, const char* name) {
  char value[256];
  const ssize_t n = ::lgetxattr(path.c_str(), name, value, sizeof(value));
  return n < 0 ? std::string() : std::string(value, static_cast<size_t>(n));
}

struct stat Lstat(const fs::path& path) {
  struct stat st {};
  ::lstat(path.c_str(), &st);
  return st;
}

// Names left in `dir`: a failed unpack leaves neither the layer nor its temporary directory.
std::vector<std::string> Names(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir)) {
    names.push_back(entry.path().filename());
  }
  return names;
}

class LayerUnpackTest : public ::testing::Test {
 protected:
  void SetUp() override {
    fs::create_directories(layers_);
    fs::create_directories(outside_);
    ASSERT_TRUE(WriteSecret());
  }

  bool WriteSecret() {
    FILE* f = fopen((outside_ / "secret").c_str(), "w");
    if (f == nullptr) {
      return false;
    }
    fputs("secret", f);
    return fclose(f) == 0;
  }

  absl::StatusOr<int64_t> Unpack(const TarBuilder& tar,
                                 Compression compression = Compression::kGzip) {
    const std::string blob = (temp_.path() / "blob").string();
    absl::StatusOr<std::string> hex = tar.Write(blob, compression);
    if (!hex.ok()) {
      return hex.status();
    }
    layer_ = layers_ / *hex;
    return UnpackLayer(blob, *hex, layers_.string());
  }

  // Nothing was written next to the layers or in the directory a hostile tar aims at.
  void ExpectNothingWritten() {
    EXPECT_THAT(Names(layers_), IsEmpty());
    EXPECT_THAT(Names(outside_), ::testing::ElementsAre("secret"));
    EXPECT_EQ(ReadFile((outside_ / "secret").string()).value_or(""), "secret");
  }

  gpuaas::testing::TempDir temp_;
  const fs::path layers_ = temp_.path() / "layers";
  fs::path layer_;  // set by Unpack
  const fs::path outside_ = temp_.path() / "outside";
};

class LayerUnpackCompressionTest : public LayerUnpackTest,
                                   public ::testing::WithParamInterface<Compression> {};

TEST_P(LayerUnpackCompressionTest, KeepsFilesOwnersModesLinksAndXattrs) {
  TarBuilder tar;
  tar.Dir("./")
      .Dir("bin")
      .File("bin/tool", "#!/bin/sh\n", 04755, 0, 0)
      .Dir("home/user", 0700, 1000, 1000)
      .File("home/user/notes", "hello", 0600, 1000, 1001)
      .Symlink("bin/sh", "/bin/tool")
      .Hardlink("bin/tool2", "bin/tool")
      .FileWithXattr("data", "x", "user.note", "kept")
      .FileWithXattr("steer", "x", "trusted.overlay.redirect", "/etc")
      .File("implicit/parent/file", "made without its directories");
  ASSERT_THAT(Unpack(tar, GetParam()), ::gpuaas::testing::IsOkAndHolds(10 + 5 + 1 + 1 + 28));

  EXPECT_EQ(ReadFile((layer_ / "bin/tool").string()).value_or(""), "#!/bin/sh\n");
  EXPECT_EQ(Lstat(layer_ / "bin/tool").st_mode & 07777, 04755);
  const struct stat notes = Lstat(layer_ / "home/user/notes");
  EXPECT_EQ(notes.st_uid, 1000u);
  EXPECT_EQ(notes.st_gid, 1001u);
  EXPECT_EQ(notes.st_mode & 07777, 0600);
  EXPECT_EQ(Lstat(layer_ / "home/user").st_uid, 1000u);
  EXPECT_EQ(Lstat(layer_ / "home/user").st_mode & 07777, 0700);
  EXPECT_EQ(fs::read_symlink(layer_ / "bin/sh"), "/bin/tool");
  EXPECT_EQ(Lstat(layer_ / "bin/tool2").st_ino, Lstat(layer_ / "bin/tool").st_ino);
  EXPECT_EQ(Xattr(layer_ / "data", "user.note"), "kept");
  EXPECT_EQ(Xattr(layer_ / "steer", "trusted.overlay.redirect"), "");
  EXPECT_EQ(Lstat(layer_ / "bin").st_mtim.tv_sec, 1700000000);
  EXPECT_EQ(Lstat(layer_).st_mode & 07777, 0755);
  EXPECT_EQ(ReadFile((layer_ / "implicit/parent/file").string()).value_or(""),
            "made without its directories");
}

TEST_P(LayerUnpackCompressionTest, ConvertsWhiteoutsToOverlayFormat) {
  TarBuilder tar;
  tar.Dir("etc")
      .File("etc/.wh.hosts", "")
      .Dir("usr/share/doc")
      .File("usr/share/doc/.wh..wh..opq", "")
      .File("usr/share/doc/new", "n")
      .File("var/lib/.wh..wh..opq", "");
  ASSERT_OK(Unpack(tar, GetParam()).status());

  const struct stat whiteout = Lstat(layer_ / "etc/hosts");
  EXPECT_TRUE(S_ISCHR(whiteout.st_mode));
  EXPECT_EQ(whiteout.st_rdev, makedev(0, 0));
  EXPECT_FALSE(fs::exists(layer_ / "etc/.wh.hosts"));
  EXPECT_EQ(Xattr(layer_ / "usr/share/doc", "trusted.overlay.opaque"), "y");
  EXPECT_FALSE(fs::exists(layer_ / "usr/share/doc/.wh..wh..opq"));
  EXPECT_TRUE(fs::exists(layer_ / "usr/share/doc/new"));
  // An opaque marker whose directory has no entry of its own.
  EXPECT_EQ(Xattr(layer_ / "var/lib", "trusted.overlay.opaque"), "y");
  EXPECT_EQ(Xattr(layer_ / "usr", "trusted.overlay.opaque"), "");
}

TEST_P(LayerUnpackCompressionTest, SkipsDeviceNodes) {
  TarBuilder tar;
  tar.CharDevice("dev/mem", 1, 1).File("ok", "ok");
  ASSERT_OK(Unpack(tar, GetParam()).status());
  EXPECT_FALSE(fs::exists(fs::symlink_status(layer_ / "dev/mem")));
  EXPECT_TRUE(fs::exists(layer_ / "ok"));
}

TEST_P(LayerUnpackCompressionTest, BytesThatDoNotHashToTheDigestAreDataLoss) {
  TarBuilder tar;
  tar.File("a", "a");
  const std::string blob = (temp_.path() / "blob").string();
  ASSERT_OK(tar.Write(blob, GetParam()).status());
  EXPECT_THAT(UnpackLayer(blob, std::string(64, '0'), layers_.string()),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("digest mismatch")));
  ExpectNothingWritten();
}

INSTANTIATE_TEST_SUITE_P(Compressions, LayerUnpackCompressionTest,
                         ::testing::Values(Compression::kNone, Compression::kGzip,
                                           Compression::kZstd));

TEST_F(LayerUnpackTest, CorruptBlobIsDataLossNotAMalformedTar) {
  TarBuilder tar;
  tar.File("a", std::string(100000, 'a'));
  const std::string blob = (temp_.path() / "blob").string();
  absl::StatusOr<std::string> hex = tar.Write(blob, Compression::kGzip);
  ASSERT_OK(hex.status());
  fs::resize_file(blob, fs::file_size(blob) / 2);
  EXPECT_THAT(UnpackLayer(blob, *hex, layers_.string()),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("digest mismatch")));
  ExpectNothingWritten();
}

TEST_F(LayerUnpackTest, AbsolutePathIsRefused) {
  TarBuilder tar;
  tar.File("ok", "ok").File((outside_ / "pwned").string(), "pwned");
  EXPECT_THAT(Unpack(tar), StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("unsafe layer")));
  ExpectNothingWritten();
}

TEST_F(LayerUnpackTest, DotDotIsRefused) {
  TarBuilder tar;
  tar.File("a/../../outside/pwned", "pwned");
  EXPECT_THAT(Unpack(tar), StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("unsafe layer")));
  ExpectNothingWritten();
}

TEST_F(LayerUnpackTest, WritingThroughASymlinkIsRefused) {
  for (const std::string& target :
       {outside_.string(), std::string("../../outside"), std::string("/")}) {
    TarBuilder tar;
    tar.Symlink("escape", target).File("escape/pwned", "pwned");
    EXPECT_THAT(Unpack(tar),
                StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("path through a symlink")))
        << target;
    ExpectNothingWritten();
  }
}

TEST_F(LayerUnpackTest, DirectoryThroughASymlinkIsRefused) {
  TarBuilder tar;
  tar.Symlink("escape", outside_.string()).Dir("escape/sub").File("escape/sub/pwned", "pwned");
  EXPECT_THAT(Unpack(tar), StatusIs(absl::StatusCode::kInvalidArgument));
  ExpectNothingWritten();
}

TEST_F(LayerUnpackTest, ReplacingASymlinkReplacesTheLinkNotItsTarget) {
  TarBuilder tar;
  tar.Symlink("secret", (outside_ / "secret").string()).File("secret", "overwritten?");
  ASSERT_OK(Unpack(tar).status());
  EXPECT_EQ(ReadFile((layer_ / "secret").string()).value_or(""), "overwritten?");
  EXPECT_EQ(ReadFile((outside_ / "secret").string()).value_or(""), "secret");
}

TEST_F(LayerUnpackTest, HardlinkToOutsideIsRefused) {
  for (const std::string& target :
       {(outside_ / "secret").string(), std::string("../outside/secret")}) {
    TarBuilder tar;
    tar.Hardlink("leak", target);
    EXPECT_THAT(Unpack(tar), StatusIs(absl::StatusCode::kInvalidArgument)) << target;
    ExpectNothingWritten();
  }
  TarBuilder through_symlink;
  through_symlink.Symlink("out", outside_.string()).Hardlink("leak", "out/secret");
  EXPECT_THAT(Unpack(through_symlink), StatusIs(absl::StatusCode::kInvalidArgument));
  ExpectNothingWritten();
  EXPECT_EQ(Lstat(outside_ / "secret").st_nlink, 1u);
}

// A blob read while another process still writes it: the layer is unpacked from bytes as they
// come and lands under the digest of all the bytes.
TEST_F(LayerUnpackTest, UnpacksABlobWhileItIsWritten) {
  TarBuilder tar;
  tar.File("big", std::string(3 << 20, 'x')).File("small", "s");
  const std::string whole = (temp_.path() / "whole").string();
  absl::StatusOr<std::string> hex = tar.Write(whole, Compression::kGzip);
  ASSERT_OK(hex.status());
  const std::string bytes = *ReadFile(whole);
  const std::string growing = (temp_.path() / "growing").string();
  std::ofstream(growing).close();
  UniqueFd fd(::open(growing.c_str(), O_RDONLY | O_CLOEXEC));
  std::atomic<bool> written = false;
  std::thread writer([&] {
    std::ofstream out(growing, std::ios::binary);
    for (size_t at = 0; at < bytes.size(); at += 4096) {
      out.write(bytes.data() + at,
                static_cast<std::streamsize>(std::min<size_t>(4096, bytes.size() - at)));
      out.flush();
    }
    written = true;
  });
  int waits = 0;
  const std::function<absl::StatusOr<bool>()> complete = [&]() -> absl::StatusOr<bool> {
    ++waits;
    const bool done = written;
    if (!done) {
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    return done;
  };
  absl::StatusOr<StreamedLayer> layer = UnpackGrowingLayer(fd.get(), complete, layers_.string());
  writer.join();
  ASSERT_OK(layer.status());
  EXPECT_EQ(layer->hex, *hex);
  EXPECT_EQ(layer->size_bytes, (3 << 20) + 1);
  EXPECT_EQ(fs::file_size(layers_ / *hex / "big"), 3u << 20);
  EXPECT_GT(waits, 0);
}

TEST_F(LayerUnpackTest, AnAbandonedDownloadLeavesNothing) {
  TarBuilder tar;
  tar.File("big", std::string(1 << 20, 'x'));
  const std::string whole = (temp_.path() / "whole").string();
  ASSERT_OK(tar.Write(whole, Compression::kNone).status());
  fs::resize_file(whole, 1 << 19);
  UniqueFd fd(::open(whole.c_str(), O_RDONLY | O_CLOEXEC));
  const std::function<absl::StatusOr<bool>()> abandoned = []() -> absl::StatusOr<bool> {
    return absl::AbortedError("the download was abandoned");
  };
  EXPECT_THAT(UnpackGrowingLayer(fd.get(), abandoned, layers_.string()),
              StatusIs(absl::StatusCode::kAborted));
  ExpectNothingWritten();
}

}  // namespace
// The limits of UnpackLayerWithin, each crossed by a tar of a few MiB (the sandboxed unpacker
// runs this same code; tests/security/registry_attack_test runs it through a registry).
class UnpackLimitsTest : public LayerUnpackTest {
 protected:
  absl::StatusOr<StreamedLayer> UnpackWithin(const TarBuilder& tar, const UnpackLimits& limits,
                                             int64_t size_delta = 0) {
    const std::string blob = (temp_.path() / "limited").string();
    absl::StatusOr<std::string> hex = tar.Write(blob, Compression::kGzip);
    if (!hex.ok()) {
      return hex.status();
    }
    return UnpackLayerWithin(blob, *hex, static_cast<int64_t>(fs::file_size(blob)) + size_delta,
                             layers_.string(), limits);
  }
  static UnpackLimits Small() {
    return UnpackLimits{.max_layer_bytes = 4 << 20,
                        .max_layer_entries = 100,
                        .max_ratio = 20,
                        .ratio_floor_bytes = 1 << 20,
                        .min_free_bytes = 0};
  }
};

TEST_F(UnpackLimitsTest, EachLimitStopsTheUnpackAndLeavesNothing) {
  EXPECT_THAT(UnpackWithin(TarBuilder().File("zeros", std::string(3 << 20, '\0')), Small()),
              StatusIs(absl::StatusCode::kResourceExhausted, HasSubstr("compressed more than 20")));
  EXPECT_THAT(UnpackWithin(TarBuilder().File("big", std::string(5 << 20, 'x')), Small()),
              StatusIs(absl::StatusCode::kResourceExhausted, HasSubstr("bytes in one layer")));
  TarBuilder many;
  for (int i = 0; i < 101; ++i) many.File("f" + std::to_string(i), "");
  EXPECT_THAT(UnpackWithin(many, Small()),
              StatusIs(absl::StatusCode::kResourceExhausted, HasSubstr("more than 100 entries")));
  UnpackLimits reserve = Small();
  reserve.min_free_bytes = int64_t{1} << 62;
  EXPECT_THAT(UnpackWithin(TarBuilder().File("a", "a"), reserve),
              StatusIs(absl::StatusCode::kResourceExhausted, HasSubstr("reserve")));
  EXPECT_THAT(UnpackWithin(TarBuilder().File("a", "a"), Small(), -1),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("layer size")));
  EXPECT_THAT(Names(layers_), IsEmpty());
}

TEST_F(UnpackLimitsTest, ALayerWithinTheLimitsUnpacksAndCountsItsEntries) {
  absl::StatusOr<StreamedLayer> layer =
      UnpackWithin(TarBuilder().Dir("etc").File("etc/a", "a").File("etc/b", "bb"), Small());
  ASSERT_OK(layer.status());
  EXPECT_EQ(layer->size_bytes, 3);
  EXPECT_EQ(layer->entries, 3);
}

}  // namespace gpuaas::agent
