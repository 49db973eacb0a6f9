// Running the S3 clients Debian ships (aws, rclone, s3cmd, python3 with boto3, curl) against
// an S3TestStack, each with its configuration in a private directory (never the user's ~/.aws
// or rclone.conf).
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "services/storage/s3/testing/test_stack.h"

namespace gpuaas::storage::s3::testing {

struct CommandResult {
  int exit_code = -1;
  std::string output;  // stdout and stderr
};

// The Debian client binary `name` (/usr/bin first, then PATH), or nullopt.
std::optional<std::string> FindClient(const std::string& name);

// Runs `argv` with exactly `env` (plus PATH), capturing its output.
CommandResult RunCommand(const std::vector<std::string>& argv, const std::vector<std::string>& env);

// Environments that point each client at the stack with `key`; files go under `home`.
std::vector<std::string> AwsEnv(const std::filesystem::path& home, const TestKey& key);
std::vector<std::string> RcloneEnv(const std::filesystem::path& home, const S3TestStack& stack,
                                   const TestKey& key);
// Writes an s3cmd config for the stack and returns its path.
std::filesystem::path S3cmdConfig(const std::filesystem::path& home, const S3TestStack& stack,
                                  const TestKey& key);

// Writes `size` bytes of a deterministic pseudo-random stream, 1 MiB at a time.
void WritePatternFile(const std::filesystem::path& path, int64_t size, uint64_t seed);
// SHA-256 in hex of a file, read 1 MiB at a time.
std::string FileSha256(const std::filesystem::path& path);
std::string ReadFile(const std::filesystem::path& path);
void WriteFile(const std::filesystem::path& path, const std::string& content);
// The process's peak resident set (VmHWM) in bytes.
int64_t PeakRssBytes();

}  // namespace gpuaas::storage::s3::testing
