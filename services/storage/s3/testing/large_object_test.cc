// Volume through the AWS CLI (and rclone when installed): a 2 GB object up and down by
// multipart with an identical SHA-256 while this process (which hosts the server) stays under
// 200 MB of peak RSS, and a sync of
// 10,000 small files up and back. GPUAAS_S3_LARGE_MB, GPUAAS_S3_RSS_LIMIT_MB and
// GPUAAS_S3_SYNC_FILES shrink them (e.g. for sanitizer builds). Prints throughput; asserts
// nothing about speed.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <iostream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "libs/testing/ci_skip.h"
#include "services/storage/s3/testing/client_tools.h"
#include "services/storage/s3/testing/test_stack.h"

namespace gpuaas::storage::s3::testing {
namespace {

namespace fs = std::filesystem;

int64_t EnvInt(const char* name, int64_t fallback) {
  const char* text = std::getenv(name);
  int64_t value = 0;
  return text != nullptr && absl::SimpleAtoi(text, &value) && value > 0 ? value : fallback;
}

class S3VolumeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    aws_ = FindClient("aws");
    if (!aws_) {
      GPUAAS_SKIP_OR_FAIL_IN_CI() << "aws is not installed (tools/install-deps installs awscli)";
    }
  }
  CommandResult Aws(std::vector<std::string> args) {
    std::vector<std::string> argv = {*aws_};
    argv.insert(argv.end(), args.begin(), args.end());
    argv.push_back("--endpoint-url=" + stack_.endpoint());
    argv.push_back("--only-show-errors");
    return RunCommand(argv, AwsEnv(temp_.path() / "aws-home", kKeyRw));
  }

  std::optional<std::string> aws_;
  gpuaas::testing::TempDir temp_;
  S3TestStack stack_;
};

double Seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

TEST_F(S3VolumeTest, LargeObjectUpAndDownThroughBoundedMemory) {
  const int64_t size = EnvInt("GPUAAS_S3_LARGE_MB", 2048) << 20;
  const int64_t rss_limit = EnvInt("GPUAAS_S3_RSS_LIMIT_MB", 200) << 20;
  fs::path source = temp_.path() / "large.bin";
  fs::path copy = temp_.path() / "large.copy";
  WritePatternFile(source, size, 42);
  std::string expected = FileSha256(source);

  auto start = std::chrono::steady_clock::now();
  CommandResult up = Aws({"s3", "cp", source.string(), "s3://sto_a/models/large.bin"});
  double up_seconds = Seconds(start);
  ASSERT_EQ(up.exit_code, 0) << up.output;
  fs::remove(source);

  start = std::chrono::steady_clock::now();
  CommandResult down = Aws({"s3", "cp", "s3://sto_a/models/large.bin", copy.string()});
  double down_seconds = Seconds(start);
  ASSERT_EQ(down.exit_code, 0) << down.output;
  EXPECT_EQ(fs::file_size(copy), static_cast<uintmax_t>(size));
  EXPECT_EQ(FileSha256(copy), expected);

  double mb = static_cast<double>(size) / (1 << 20);
  std::cout << "aws s3 cp " << mb << " MiB: up " << mb / up_seconds << " MiB/s, down "
            << mb / down_seconds << " MiB/s\n";

  // The same object through rclone (provider Other), which uploads its own multipart way.
  if (auto rclone = FindClient("rclone")) {
    auto env = RcloneEnv(temp_.path() / "rclone-home", stack_, kKeyRw);
    fs::rename(copy, source);
    start = std::chrono::steady_clock::now();
    CommandResult r =
        RunCommand({*rclone, "copyto", source.string(), "x:sto_a/models/rclone.bin"}, env);
    up_seconds = Seconds(start);
    ASSERT_EQ(r.exit_code, 0) << r.output;
    fs::remove(source);
    start = std::chrono::steady_clock::now();
    r = RunCommand({*rclone, "copyto", "x:sto_a/models/rclone.bin", copy.string()}, env);
    down_seconds = Seconds(start);
    ASSERT_EQ(r.exit_code, 0) << r.output;
    EXPECT_EQ(FileSha256(copy), expected);
    std::cout << "rclone copyto " << mb << " MiB: up " << mb / up_seconds << " MiB/s, down "
              << mb / down_seconds << " MiB/s\n";
  }

  int64_t peak = PeakRssBytes();
  std::cout << "peak RSS of the process serving S3: " << peak / (1 << 20) << " MiB\n";
  EXPECT_LT(peak, rss_limit);
}

TEST_F(S3VolumeTest, SyncsManySmallFilesUpAndBack) {
  const int64_t files = EnvInt("GPUAAS_S3_SYNC_FILES", 10'000);
  fs::path tree = temp_.path() / "dataset";
  for (int64_t i = 0; i < files; ++i) {
    WriteFile(tree / absl::StrCat("class", i % 10) / absl::StrCat("img_", i, ".txt"),
              absl::StrCat("sample ", i, "\n"));
  }
  auto start = std::chrono::steady_clock::now();
  CommandResult up = Aws({"s3", "sync", tree.string(), "s3://sto_a/dataset"});
  double up_seconds = Seconds(start);
  ASSERT_EQ(up.exit_code, 0) << up.output;

  fs::path back = temp_.path() / "back";
  start = std::chrono::steady_clock::now();
  CommandResult down = Aws({"s3", "sync", "s3://sto_a/dataset", back.string()});
  double down_seconds = Seconds(start);
  ASSERT_EQ(down.exit_code, 0) << down.output;

  int64_t count = 0;
  for (const auto& entry : fs::recursive_directory_iterator(back)) {
    if (entry.is_regular_file()) {
      ++count;
    }
  }
  EXPECT_EQ(count, files);
  for (int64_t i = 0; i < files; i += 997) {
    fs::path relative = fs::path(absl::StrCat("class", i % 10)) / absl::StrCat("img_", i, ".txt");
    EXPECT_EQ(ReadFile(back / relative), absl::StrCat("sample ", i, "\n"));
  }
  std::cout << "aws s3 sync " << files << " files: up " << files / up_seconds << " files/s, down "
            << files / down_seconds << " files/s\n";
}

}  // namespace
}  // namespace gpuaas::storage::s3::testing
