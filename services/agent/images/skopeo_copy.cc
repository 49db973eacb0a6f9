#include "services/agent/images/skopeo_copy.h"

#include <fcntl.h>
#include <openssl/evp.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "libs/common/status_macros.h"
#include "libs/common/unique_fd.h"
#include "nlohmann/json.hpp"
#include "services/agent/images/bounded_json.h"
#include "services/agent/images/internal/run_child.h"

namespace gpuaas::agent {
namespace {

std::string Base64(absl::string_view bytes) {
  std::string out(4 * ((bytes.size() + 2) / 3) + 1, '\0');
  const int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                reinterpret_cast<const unsigned char*>(bytes.data()),
                                static_cast<int>(bytes.size()));
  out.resize(static_cast<size_t>(n));
  return out;
}

// The proxy settings of the agent's environment: a node may reach registries only through one.
void AddProxyEnvironment(std::vector<std::string>& env) {
  for (const char* name :
       {"HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "NO_PROXY", "no_proxy"}) {
    if (const char* value = std::getenv(name); value != nullptr) {
      env.push_back(absl::StrCat(name, "=", value));
    }
  }
}

absl::string_view LastLine(absl::string_view text) {
  text = absl::StripTrailingAsciiWhitespace(text);
  const size_t newline = text.rfind('\n');
  absl::string_view line = newline == absl::string_view::npos ? text : text.substr(newline + 1);
  // skopeo's own log prefix adds nothing for people.
  if (const size_t msg = line.find("msg=\""); msg != absl::string_view::npos) {
    line = line.substr(msg + 5);
    line = absl::StripSuffix(line, "\"");
  }
  return line.substr(0, 500);
}

}  // namespace

absl::Status SkopeoFailure(absl::string_view reference, absl::string_view stderr_text) {
  // Matched without the reference, whose own words ("t/denied", "not-found") must not decide.
  const absl::string_view repository = reference.substr(0, reference.find('@'));
  const std::string text =
      absl::AsciiStrToLower(absl::StrReplaceAll(stderr_text, {{reference, ""}, {repository, ""}}));
  const std::string detail = absl::StrCat(reference, " (", LastLine(stderr_text), ")");
  const auto has = [&text](std::initializer_list<absl::string_view> needles) {
    for (absl::string_view needle : needles) {
      if (absl::StrContains(text, needle)) {
        return true;
      }
    }
    return false;
  };
  if (has({"no space left on device", "disk quota exceeded"})) {
    return absl::ResourceExhaustedError(absl::StrCat("no space: ", detail));
  }
  if (has({"digest did not match", "does not match", "digest mismatch"})) {
    return absl::DataLossError(absl::StrCat("digest mismatch: ", detail));
  }
  if (has({"unauthorized", "authentication required", "denied", "403 (forbidden)"})) {
    return absl::PermissionDeniedError(absl::StrCat("unauthorized: ", detail));
  }
  if (has({"manifest unknown", "name unknown", "blob unknown", "not found"})) {
    return absl::NotFoundError(absl::StrCat("image not found: ", detail));
  }
  if (has({"context deadline exceeded"})) {
    return absl::DeadlineExceededError(absl::StrCat("timed out: ", detail));
  }
  if (has({"connection refused", "no such host", "timeout", "connection reset", "eof", "tls",
           "x509", "network is unreachable", "no route to host"})) {
    return absl::UnavailableError(absl::StrCat("registry unreachable: ", detail));
  }
  return absl::UnknownError(absl::StrCat("pulling ", detail));
}

absl::StatusOr<std::string> WriteAuthFile(const std::string& private_dir,
                                          absl::string_view reference, const RegistryLogin& login) {
  const std::string registry(reference.substr(0, reference.find('/')));
  nlohmann::json auth;
  auth["auths"][registry]["auth"] = Base64(absl::StrCat(login.username, ":", login.password));
  const std::string text = auth.dump();
  const std::string path = private_dir + "/auth.json";
  UniqueFd file(::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600));
  if (!file.valid() ||
      ::write(file.get(), text.data(), text.size()) != static_cast<ssize_t>(text.size())) {
    return absl::InternalError(absl::StrCat("writing the registry auth file: ", strerror(errno)));
  }
  return path;
}

namespace {

// skopeo `command` with the source options, run in the private directory's environment.
absl::StatusOr<ChildResult> RunSkopeo(const SkopeoOptions& options, const std::string& command,
                                      std::vector<std::string> args,
                                      const std::string& stdout_path = "") {
  const std::string tls = options.tls_verify ? "true" : "false";
  const bool inspect = command == "inspect";
  std::vector<std::string> argv = {options.skopeo_path, "--override-os=linux",
                                   "--override-arch=amd64"};
  if (options.timeout != absl::InfiniteDuration()) {
    argv.push_back(absl::StrCat(
        "--command-timeout=", std::max<int64_t>(1, absl::ToInt64Milliseconds(options.timeout)),
        "ms"));
  }
  argv.push_back(command);
  argv.push_back((inspect ? "--tls-verify=" : "--src-tls-verify=") + tls);
  if (!options.auth_file.empty()) {
    argv.insert(argv.end(), {inspect ? "--authfile" : "--src-authfile", options.auth_file});
  } else {
    // Never the node's own ~/.docker or containers auth: a tenant's pull is anonymous or theirs.
    argv.push_back(inspect ? "--no-creds" : "--src-no-creds");
  }
  argv.insert(argv.end(), args.begin(), args.end());
  std::vector<std::string> env = {"PATH=/usr/bin:/bin", "HOME=" + options.private_dir,
                                  "TMPDIR=" + options.private_dir};
  AddProxyEnvironment(env);
  return RunChild(argv, env, stdout_path);
}

}  // namespace

absl::StatusOr<std::string> SkopeoInspectRaw(const SkopeoOptions& options,
                                             const std::string& reference) {
  const std::string out = options.private_dir + "/manifest.json";
  GPUAAS_ASSIGN_OR_RETURN(const ChildResult child,
                          RunSkopeo(options, "inspect", {"--raw", "docker://" + reference}, out));
  if (child.exit_code != 0) {
    return SkopeoFailure(reference, child.stderr_text);
  }
  return ReadBoundedFile(out, "image manifest", kMaxManifestBytes);
}

absl::Status SkopeoCopy(const SkopeoOptions& options, const std::string& reference,
                        const std::string& layout_dir, const std::string& shared_blob_dir) {
  GPUAAS_ASSIGN_OR_RETURN(const ChildResult child,
                          RunSkopeo(options, "copy",
                                    {"--quiet", "--dest-shared-blob-dir", shared_blob_dir,
                                     "docker://" + reference, "oci:" + layout_dir + ":image"}));
  if (child.exit_code != 0) {
    return SkopeoFailure(reference, child.stderr_text);
  }
  return absl::OkStatus();
}

}  // namespace gpuaas::agent
