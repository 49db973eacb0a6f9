#include "services/storage/s3/testing/client_tools.h"

#include <fcntl.h>
#include <openssl/evp.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <memory>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "services/storage/s3/sigv4.h"

extern char** environ;

namespace gpuaas::storage::s3::testing {

std::optional<std::string> FindClient(const std::string& name) {
  std::string debian = "/usr/bin/" + name;
  if (access(debian.c_str(), X_OK) == 0) {
    return debian;
  }
  const char* path = getenv("PATH");
  std::string dirs = path ? path : "";
  size_t begin = 0;
  while (begin <= dirs.size()) {
    size_t end = dirs.find(':', begin);
    if (end == std::string::npos) {
      end = dirs.size();
    }
    std::string candidate = dirs.substr(begin, end - begin) + "/" + name;
    if (end > begin && access(candidate.c_str(), X_OK) == 0) {
      return candidate;
    }
    begin = end + 1;
  }
  return std::nullopt;
}

CommandResult RunCommand(const std::vector<std::string>& argv,
                         const std::vector<std::string>& env) {
  int pipe_fds[2];
  CommandResult result;
  if (pipe(pipe_fds) != 0) {
    return result;
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], 1);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], 2);
  posix_spawn_file_actions_addclose(&actions, pipe_fds[0]);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  std::vector<std::string> full_env = env;
  full_env.push_back(absl::StrCat("PATH=/usr/bin:/bin:", getenv("PATH") ? getenv("PATH") : ""));
  std::vector<char*> args;
  for (const auto& a : argv) {
    args.push_back(const_cast<char*>(a.c_str()));
  }
  args.push_back(nullptr);
  std::vector<char*> envp;
  for (const auto& e : full_env) {
    envp.push_back(const_cast<char*>(e.c_str()));
  }
  envp.push_back(nullptr);
  pid_t pid = 0;
  int rc = posix_spawn(&pid, argv[0].c_str(), &actions, nullptr, args.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  close(pipe_fds[1]);
  if (rc != 0) {
    close(pipe_fds[0]);
    result.output = "spawn failed";
    return result;
  }
  char buffer[4096];
  ssize_t n;
  while ((n = read(pipe_fds[0], buffer, sizeof(buffer))) > 0) {
    // Keep the tail: a long sync prints a line per file.
    result.output.append(buffer, static_cast<size_t>(n));
    if (result.output.size() > (1 << 20)) {
      result.output.erase(0, result.output.size() - (256 << 10));
    }
  }
  close(pipe_fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return result;
}

std::vector<std::string> AwsEnv(const std::filesystem::path& home, const TestKey& key) {
  std::filesystem::create_directories(home);
  WriteFile(home / "aws-config",
            "[default]\nregion = us-east-1\ns3 =\n    addressing_style = path\n");
  return {"HOME=" + home.string(),
          "AWS_CONFIG_FILE=" + (home / "aws-config").string(),
          "AWS_SHARED_CREDENTIALS_FILE=" + (home / "aws-credentials").string(),
          "AWS_ACCESS_KEY_ID=" + key.id,
          "AWS_SECRET_ACCESS_KEY=" + key.secret,
          "AWS_DEFAULT_REGION=us-east-1",
          "AWS_EC2_METADATA_DISABLED=true",
          "AWS_PAGER=",
          "LC_ALL=C.UTF-8"};
}

std::vector<std::string> RcloneEnv(const std::filesystem::path& home, const S3TestStack& stack,
                                   const TestKey& key) {
  std::filesystem::create_directories(home);
  return {"HOME=" + home.string(),
          "RCLONE_CONFIG=" + (home / "rclone.conf").string(),
          "RCLONE_CONFIG_X_TYPE=s3",
          "RCLONE_CONFIG_X_PROVIDER=Other",
          "RCLONE_CONFIG_X_ACCESS_KEY_ID=" + key.id,
          "RCLONE_CONFIG_X_SECRET_ACCESS_KEY=" + key.secret,
          "RCLONE_CONFIG_X_ENDPOINT=" + stack.endpoint(),
          "RCLONE_CONFIG_X_REGION=us-east-1",
          "RCLONE_CONFIG_X_FORCE_PATH_STYLE=true"};
}

std::filesystem::path S3cmdConfig(const std::filesystem::path& home, const S3TestStack& stack,
                                  const TestKey& key) {
  std::filesystem::create_directories(home);
  std::string host = absl::StrCat("127.0.0.1:", stack.port());
  std::filesystem::path path = home / "s3cfg";
  WriteFile(path, absl::StrCat("[default]\naccess_key = ", key.id, "\nsecret_key = ", key.secret,
                               "\nhost_base = ", host, "\nhost_bucket = ", host,
                               "\nuse_https = False\nbucket_location = us-east-1\n"
                               "signature_v2 = False\n"));
  return path;
}

void WritePatternFile(const std::filesystem::path& path, int64_t size, uint64_t seed) {
  std::ofstream out(path, std::ios::binary);
  std::vector<uint64_t> block((1 << 20) / sizeof(uint64_t));
  uint64_t x = seed | 1;
  for (int64_t written = 0; written < size;) {
    for (auto& word : block) {
      x ^= x << 13;
      x ^= x >> 7;
      x ^= x << 17;
      word = x;
    }
    int64_t n = std::min<int64_t>(size - written, block.size() * sizeof(uint64_t));
    out.write(reinterpret_cast<const char*>(block.data()), n);
    written += n;
  }
}

std::string FileSha256(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::unique_ptr<EVP_MD_CTX, void (*)(EVP_MD_CTX*)> ctx(EVP_MD_CTX_new(), EVP_MD_CTX_free);
  EVP_DigestInit_ex(ctx.get(), EVP_sha256(), nullptr);
  std::vector<char> buffer(1 << 20);
  while (in) {
    in.read(buffer.data(), static_cast<std::streamsize>(buffer.size()));
    EVP_DigestUpdate(ctx.get(), buffer.data(), static_cast<size_t>(in.gcount()));
  }
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_DigestFinal_ex(ctx.get(), digest, &len);
  return HexEncode(std::string_view(reinterpret_cast<char*>(digest), len));
}

std::string ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

void WriteFile(const std::filesystem::path& path, const std::string& content) {
  std::filesystem::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << content;
}

int64_t PeakRssBytes() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmHWM:", 0) == 0) {
      int64_t kb = 0;
      std::string digits;
      for (char c : line) {
        if (c >= '0' && c <= '9') {
          digits.push_back(c);
        }
      }
      absl::SimpleAtoi(digits, &kb);
      return kb * 1024;
    }
  }
  return -1;
}

}  // namespace gpuaas::storage::s3::testing
