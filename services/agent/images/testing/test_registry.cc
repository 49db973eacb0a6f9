#include "services/agent/images/testing/test_registry.h"

#include <crypt.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "libs/common/files.h"
#include "libs/common/status_macros.h"
#include "libs/common/unique_fd.h"
#include "nlohmann/json.hpp"
#include "services/agent/images/internal/run_child.h"
#include "services/agent/images/testing/tar_builder.h"

namespace gpuaas::agent::testing {
namespace {

constexpr char kRegistry[] = "/usr/bin/docker-registry";
constexpr char kUmoci[] = "/usr/bin/umoci";
constexpr char kSkopeo[] = "/usr/bin/skopeo";

int FreePort() {
  UniqueFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_in addr{.sin_family = AF_INET, .sin_port = 0, .sin_addr = {htonl(INADDR_LOOPBACK)}};
  socklen_t length = sizeof(addr);
  if (::bind(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      ::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&addr), &length) != 0) {
    return -1;
  }
  return ntohs(addr.sin_port);
}

bool Answers(int port) {
  UniqueFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_in addr{.sin_family = AF_INET,
                   .sin_port = htons(static_cast<uint16_t>(port)),
                   .sin_addr = {htonl(INADDR_LOOPBACK)}};
  return ::connect(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
}

// An htpasswd line with a bcrypt hash from libcrypt (libxcrypt), which the registry's Go
// bcrypt accepts: no Python or Apache package needed.
absl::StatusOr<std::string> HtpasswdLine(const RegistryLogin& login) {
  char salt[CRYPT_GENSALT_OUTPUT_SIZE];
  if (crypt_gensalt_rn("$2b$", 5, nullptr, 0, salt, sizeof(salt)) == nullptr) {
    return absl::InternalError("crypt_gensalt for bcrypt failed");
  }
  crypt_data data{};
  const char* hash = crypt_r(login.password.c_str(), salt, &data);
  if (hash == nullptr || hash[0] == '*') {
    return absl::InternalError("bcrypt failed");
  }
  return absl::StrCat(login.username, ":", hash, "\n");
}

absl::Status WriteText(const std::string& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
  return out.good() ? absl::OkStatus() : absl::InternalError("writing " + path);
}

absl::Status Run(const std::vector<std::string>& argv) {
  GPUAAS_ASSIGN_OR_RETURN(const ChildResult result,
                          RunChild(argv, {"PATH=/usr/bin:/bin", "HOME=/tmp"}));
  if (result.exit_code != 0) {
    return absl::InternalError(absl::StrCat(argv[0], " ", argv[1], ": ", result.stderr_text));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::unique_ptr<TestRegistry>> TestRegistry::Start(
    const std::string& dir, std::optional<RegistryLogin> login) {
  std::unique_ptr<TestRegistry> registry(new TestRegistry());
  registry->dir_ = dir;
  std::filesystem::create_directories(dir + "/storage");
  const int port = FreePort();
  registry->host_ = absl::StrCat("127.0.0.1:", port);
  std::string config = absl::StrCat("version: 0.1\nlog: {level: info}\n",
                                    "storage: {filesystem: {rootdirectory: ", dir,
                                    "/storage}, delete: {enabled: true}}\n", "http: {addr: \"",
                                    registry->host_, "\", secret: test}\n");
  if (login.has_value()) {
    GPUAAS_ASSIGN_OR_RETURN(const std::string line, HtpasswdLine(*login));
    GPUAAS_RETURN_IF_ERROR(WriteText(dir + "/htpasswd", line));
    absl::StrAppend(&config, "auth: {htpasswd: {realm: test, path: ", dir, "/htpasswd}}\n");
  }
  GPUAAS_RETURN_IF_ERROR(WriteText(dir + "/config.yml", config));

  const std::string log = dir + "/registry.log";
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0600);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  const std::string config_path = dir + "/config.yml";
  char* argv[] = {const_cast<char*>(kRegistry), const_cast<char*>("serve"),
                  const_cast<char*>(config_path.c_str()), nullptr};
  char* envp[] = {const_cast<char*>("PATH=/usr/bin:/bin"), nullptr};
  const int spawned = ::posix_spawn(&registry->pid_, kRegistry, &actions, nullptr, argv, envp);
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0) {
    return absl::FailedPreconditionError(absl::StrCat("cannot run ", kRegistry));
  }
  for (int i = 0; i < 200; ++i) {
    if (Answers(port)) {
      return registry;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  }
  return absl::DeadlineExceededError("the registry did not start; see " + log);
}

TestRegistry::~TestRegistry() {
  if (pid_ > 0) {
    ::kill(pid_, SIGTERM);
    ::waitpid(pid_, nullptr, 0);
  }
}

std::string TestRegistry::BlobDataPath(const std::string& hex) const {
  return absl::StrCat(dir_, "/storage/docker/registry/v2/blobs/sha256/", hex.substr(0, 2), "/", hex,
                      "/data");
}

int TestRegistry::BlobDownloads() const {
  const std::string log = ReadFile(dir_ + "/registry.log").value_or("");
  int count = 0;
  for (absl::string_view line : absl::StrSplit(log, '\n')) {
    // The access log's lines: 127.0.0.1 - - [...] "GET /v2/<repo>/blobs/sha256:<hex> HTTP/1.1" 200
    if (absl::StrContains(line, "\"GET /v2/") && absl::StrContains(line, "/blobs/sha256:")) {
      ++count;
    }
  }
  return count;
}

namespace {

// Adds `image` to the OCI layout under `tag` with umoci.
absl::Status BuildImage(const std::string& layout, const std::string& tag, const TestImage& image) {
  const std::string tagged = layout + ":" + tag;
  GPUAAS_RETURN_IF_ERROR(Run({kUmoci, "new", "--image", tagged}));
  for (const std::string& tar : image.layer_tars) {
    GPUAAS_RETURN_IF_ERROR(Run({kUmoci, "raw", "add-layer", "--image", tagged, tar}));
  }
  std::vector<std::string> config = {kUmoci, "config", "--image", tagged};
  for (const std::string& env : image.config.env) {
    config.push_back("--config.env=" + env);
  }
  for (const std::string& arg : image.config.entrypoint) {
    config.push_back("--config.entrypoint=" + arg);
  }
  for (const std::string& arg : image.config.cmd) {
    config.push_back("--config.cmd=" + arg);
  }
  for (int port : image.config.exposed_ports) {
    config.push_back(absl::StrCat("--config.exposedports=", port, "/tcp"));
  }
  if (!image.config.working_dir.empty()) {
    config.push_back("--config.workingdir=" + image.config.working_dir);
  }
  if (!image.config.user.empty()) {
    config.push_back("--config.user=" + image.config.user);
  }
  return Run(config);
}

// Pushes the layout's `tag` (with --all, a list and its images) and returns the pinned
// reference.
absl::StatusOr<std::string> Push(const TestRegistry& registry, const std::string& repository,
                                 const std::string& layout, const std::string& tag,
                                 const std::string& work_dir, const RegistryLogin* login) {
  const std::string digest_file = work_dir + "/digest";
  std::vector<std::string> push = {
      kSkopeo, "copy", "--all", "--quiet", "--dest-tls-verify=false", "--digestfile", digest_file};
  if (login != nullptr) {
    push.push_back(absl::StrCat("--dest-creds=", login->username, ":", login->password));
  }
  push.push_back("oci:" + layout + ":" + tag);
  push.push_back(absl::StrCat("docker://", registry.host(), "/", repository, ":latest"));
  GPUAAS_RETURN_IF_ERROR(Run(push));
  GPUAAS_ASSIGN_OR_RETURN(const std::string digest, ReadFile(digest_file));
  return absl::StrCat(registry.host(), "/", repository, "@", absl::StripAsciiWhitespace(digest));
}

}  // namespace

absl::StatusOr<std::string> PushImage(const TestRegistry& registry, const std::string& repository,
                                      const TestImage& image, const std::string& work_dir,
                                      const RegistryLogin* login) {
  const std::string layout = work_dir + "/layout";
  std::filesystem::remove_all(layout);
  GPUAAS_RETURN_IF_ERROR(Run({kUmoci, "init", "--layout", layout}));
  GPUAAS_RETURN_IF_ERROR(BuildImage(layout, "latest", image));
  return Push(registry, repository, layout, "latest", work_dir, login);
}

absl::StatusOr<std::string> PushImageList(const TestRegistry& registry,
                                          const std::string& repository,
                                          const std::vector<PlatformImage>& images,
                                          const std::string& work_dir) {
  const std::string layout = work_dir + "/layout";
  std::filesystem::remove_all(layout);
  GPUAAS_RETURN_IF_ERROR(Run({kUmoci, "init", "--layout", layout}));
  for (const PlatformImage& image : images) {
    GPUAAS_RETURN_IF_ERROR(BuildImage(layout, image.architecture, image.image));
  }
  // umoci makes no lists: an OCI index naming each image with its platform, tagged "list".
  try {
    GPUAAS_ASSIGN_OR_RETURN(const std::string index_text, ReadFile(layout + "/index.json"));
    nlohmann::json index = nlohmann::json::parse(index_text);
    nlohmann::json list = {{"schemaVersion", 2},
                           {"mediaType", "application/vnd.oci.image.index.v1+json"},
                           {"manifests", nlohmann::json::array()}};
    for (const nlohmann::json& manifest : index.at("manifests")) {
      nlohmann::json entry = manifest;
      const std::string architecture =
          entry.at("annotations").at("org.opencontainers.image.ref.name").get<std::string>();
      entry.erase("annotations");
      entry["platform"] = {{"architecture", architecture}, {"os", "linux"}};
      list["manifests"].push_back(entry);
    }
    const std::string list_text = list.dump();
    const std::string list_path = layout + "/list.json";
    GPUAAS_RETURN_IF_ERROR(WriteText(list_path, list_text));
    GPUAAS_ASSIGN_OR_RETURN(const std::string hex, FileSha256(list_path));
    std::filesystem::rename(list_path, layout + "/blobs/sha256/" + hex);
    index["manifests"].push_back(
        {{"mediaType", "application/vnd.oci.image.index.v1+json"},
         {"digest", "sha256:" + hex},
         {"size", list_text.size()},
         {"annotations", {{"org.opencontainers.image.ref.name", "list"}}}});
    GPUAAS_RETURN_IF_ERROR(WriteText(layout + "/index.json", index.dump()));
  } catch (const nlohmann::json::exception& e) {
    return absl::InternalError(absl::StrCat("making the image list: ", e.what()));
  }
  return Push(registry, repository, layout, "list", work_dir, nullptr);
}

}  // namespace gpuaas::agent::testing
