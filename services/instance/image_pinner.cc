#include "services/instance/image_pinner.h"

#include <fcntl.h>
#include <openssl/sha.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "libs/common/logging.h"
#include "libs/common/status_macros.h"
#include "services/instance/oci_reference.h"

extern char** environ;

namespace gpuaas::instance {
namespace {

namespace fs = std::filesystem;

constexpr char kField[] = "image.oci_reference";
// A manifest or index is small; the registry's limit is 4 MiB.
constexpr size_t kMaxManifest = 4 << 20;

// A private directory for one skopeo run (its auth file and its stderr), removed with it.
class PrivateDir final {
 public:
  static absl::StatusOr<PrivateDir> Make() {
    std::string tmpl = (fs::temp_directory_path() / "gpuaas-pin-XXXXXX").string();
    if (::mkdtemp(tmpl.data()) == nullptr) {
      return absl::InternalError(absl::StrCat("mkdtemp: ", std::strerror(errno)));
    }
    return PrivateDir(tmpl);  // mkdtemp makes it 0700
  }
  PrivateDir(PrivateDir&& o) noexcept : path_(std::move(o.path_)) { o.path_.clear(); }
  PrivateDir& operator=(PrivateDir&&) = delete;
  ~PrivateDir() {
    std::error_code ec;
    if (!path_.empty()) fs::remove_all(path_, ec);
  }
  const fs::path& path() const { return path_; }

 private:
  explicit PrivateDir(fs::path path) : path_(std::move(path)) {}
  fs::path path_;
};

// Writes containers-auth.json(5) for `host` to `path`, 0600 from its creation.
absl::Status WriteAuthFile(const fs::path& path, const std::string& host,
                           const pb::RegistryCredentials& c) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) return absl::InternalError(absl::StrCat("auth file: ", std::strerror(errno)));
  // The login is base64 inside the JSON, so no character of it needs escaping.
  const std::string json =
      absl::StrCat("{\"auths\":{\"", host, "\":{\"auth\":\"",
                   absl::Base64Escape(absl::StrCat(c.username(), ":", c.password())), "\"}}}");
  const bool ok = ::write(fd, json.data(), json.size()) == static_cast<ssize_t>(json.size());
  ::close(fd);
  if (!ok) return absl::InternalError("auth file: short write");
  return absl::OkStatus();
}

struct RunResult {
  int exit_code = -1;
  std::string out;
};

// Runs argv with stdout to a pipe (at most kMaxManifest kept) and stderr to `err_file`.
absl::StatusOr<RunResult> Run(std::vector<std::string> args, const fs::path& err_file) {
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  int out[2];
  if (::pipe2(out, O_CLOEXEC) != 0) return absl::InternalError("pipe");
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, out[1], 1);
  posix_spawn_file_actions_addopen(&actions, 2, err_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                   0600);
  pid_t pid = 0;
  const int spawned = ::posix_spawnp(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(out[1]);
  if (spawned != 0) {
    ::close(out[0]);
    return absl::FailedPreconditionError(
        absl::StrCat("cannot run ", args[0], " (is skopeo installed?): ", std::strerror(spawned)));
  }
  RunResult r;
  char buf[16384];
  for (;;) {
    const ssize_t n = ::read(out[0], buf, sizeof buf);
    if (n == 0) break;
    if (n < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (r.out.size() < kMaxManifest + 1) r.out.append(buf, static_cast<size_t>(n));
  }
  ::close(out[0]);
  int wstatus = 0;
  while (::waitpid(pid, &wstatus, 0) < 0 && errno == EINTR) {
  }
  r.exit_code = WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : 128 + WTERMSIG(wstatus);
  return r;
}

// skopeo's complaint from its stderr: the msg="..." of its log line when it has one, at most
// 400 bytes.
std::string ReadComplaint(const fs::path& path) {
  std::ifstream in(path);
  std::string s((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  constexpr std::string_view kMsg = "msg=\"";
  if (const size_t at = s.find(kMsg); at != std::string::npos) {
    s = s.substr(at + kMsg.size());
    if (const size_t end = s.rfind('"'); end != std::string::npos) s.resize(end);
    s = absl::StrReplaceAll(s, {{"\\\"", "\""}});
  }
  if (s.size() > 400) s.resize(400);
  return std::string(absl::StripAsciiWhitespace(s));
}

std::string Sha256Hex(const std::string& data) {
  unsigned char md[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(data.data()), data.size(), md);
  return absl::BytesToHexString(
      absl::string_view(reinterpret_cast<const char*>(md), SHA256_DIGEST_LENGTH));
}

// skopeo's failure as this API reports it, from its stderr (which never holds the login: that
// is only in the auth file).
absl::Status Failure(const OciReference& ref, const std::string& err, bool with_login) {
  const std::string lower = absl::AsciiStrToLower(err);
  if (absl::StrContains(lower, "manifest unknown") || absl::StrContains(lower, "name unknown") ||
      absl::StrContains(lower, "not found")) {
    return absl::NotFoundError(
        absl::StrCat(kField, ": ", ref.ToString(), " not found in its registry"));
  }
  if (absl::StrContains(lower, "unauthorized") || absl::StrContains(lower, "authentication") ||
      absl::StrContains(lower, "denied") || absl::StrContains(lower, "401")) {
    return absl::InvalidArgumentError(
        with_login ? absl::StrCat("registry_credentials: ", ref.host, " refused the login")
                   : absl::StrCat("registry_credentials: ", ref.host, " wants a login for ",
                                  ref.repository));
  }
  return absl::UnavailableError(
      absl::StrCat(kField, ": registry ", ref.host, " could not be read: ", err));
}

class SkopeoPinner final : public ImagePinner {
 public:
  explicit SkopeoPinner(SkopeoPinnerOptions options) : options_(std::move(options)) {}

  absl::StatusOr<std::string> Pin(const std::string& reference,
                                  const pb::RegistryCredentials& credentials) override {
    GPUAAS_ASSIGN_OR_RETURN(const OciReference ref, ParseOciReference(kField, reference));
    if (!ref.digest.empty()) return ref.ToString();
    GPUAAS_ASSIGN_OR_RETURN(PrivateDir dir, PrivateDir::Make());
    std::vector<std::string> args = {options_.skopeo, "--command-timeout",
                                     absl::StrCat(absl::ToInt64Seconds(options_.timeout), "s"),
                                     "inspect", "--raw"};
    const bool with_login = !credentials.username().empty();
    if (with_login) {
      const fs::path auth = dir.path() / "auth.json";
      GPUAAS_RETURN_IF_ERROR(WriteAuthFile(auth, ref.host, credentials));
      args.push_back("--authfile=" + auth.string());
    } else {
      // Not the user's or the service's own logins: only what the image was given.
      args.push_back("--no-creds");
    }
    if (Insecure(ref.host)) args.push_back("--tls-verify=false");
    args.push_back("docker://" + ref.ToString());
    const fs::path err_file = dir.path() / "stderr";
    GPUAAS_ASSIGN_OR_RETURN(RunResult r, Run(std::move(args), err_file));
    if (r.exit_code != 0) {
      const std::string err = ReadComplaint(err_file);
      Logger("instance")
          ->info("pinning {}: skopeo exited {}: {}", ref.ToString(), r.exit_code, err);
      return Failure(ref, err, with_login);
    }
    if (r.out.empty() || r.out.size() > kMaxManifest) {
      return absl::UnavailableError(
          absl::StrCat(kField, ": registry ", ref.host, " answered no manifest of at most 4 MiB"));
    }
    return ref.PinnedTo(absl::StrCat("sha256:", Sha256Hex(r.out)));
  }

 private:
  bool Insecure(const std::string& host) const {
    return IsLoopbackRegistry(host) ||
           std::find(options_.insecure_registries.begin(), options_.insecure_registries.end(),
                     host) != options_.insecure_registries.end();
  }

  const SkopeoPinnerOptions options_;
};

}  // namespace

ImagePinnerPtr NewSkopeoPinner(SkopeoPinnerOptions options) {
  return std::make_unique<SkopeoPinner>(std::move(options));
}

}  // namespace gpuaas::instance
