#include "services/agent/images/skopeo_copy.h"

#include <fcntl.h>
#include <openssl/evp.h>
#include <unistd.h>

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
#include "libs/common/unique_fd.h"
#include "nlohmann/json.hpp"
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

// containers-auth.json(5) for the reference's registry, readable only by us.
absl::Status WriteAuthFile(const std::string& path, absl::string_view reference,
                           const RegistryLogin& login) {
  const std::string registry(reference.substr(0, reference.find('/')));
  nlohmann::json auth;
  auth["auths"][registry]["auth"] = Base64(absl::StrCat(login.username, ":", login.password));
  const std::string text = auth.dump();
  UniqueFd file(::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600));
  if (!file.valid() ||
      ::write(file.get(), text.data(), text.size()) != static_cast<ssize_t>(text.size())) {
    return absl::InternalError(absl::StrCat("writing the registry auth file: ", strerror(errno)));
  }
  return absl::OkStatus();
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
  if (has({"unauthorized", "authentication required", "denied"})) {
    return absl::PermissionDeniedError(absl::StrCat("unauthorized: ", detail));
  }
  if (has({"manifest unknown", "name unknown", "blob unknown", "not found"})) {
    return absl::NotFoundError(absl::StrCat("image not found: ", detail));
  }
  if (has({"connection refused", "no such host", "timeout", "connection reset", "eof", "tls",
           "x509", "network is unreachable", "no route to host"})) {
    return absl::UnavailableError(absl::StrCat("registry unreachable: ", detail));
  }
  return absl::UnknownError(absl::StrCat("pulling ", detail));
}

absl::Status SkopeoCopy(const SkopeoCopyRequest& request) {
  const std::string tls = request.tls_verify ? "true" : "false";
  std::vector<std::string> argv = {request.skopeo_path,
                                   "--override-os=linux",
                                   "--override-arch=amd64",
                                   "copy",
                                   "--quiet",
                                   "--src-tls-verify=" + tls,
                                   "--dest-shared-blob-dir",
                                   request.shared_blob_dir};
  if (request.login != nullptr) {
    const std::string auth_file = request.private_dir + "/auth.json";
    if (absl::Status written = WriteAuthFile(auth_file, request.reference, *request.login);
        !written.ok()) {
      return written;
    }
    argv.insert(argv.end(), {"--src-authfile", auth_file});
  } else {
    // Never the node's own ~/.docker or containers auth: a tenant's pull is anonymous or theirs.
    argv.push_back("--src-no-creds");
  }
  argv.push_back("docker://" + request.reference);
  argv.push_back("oci:" + request.layout_dir + ":image");
  std::vector<std::string> env = {"PATH=/usr/bin:/bin", "HOME=" + request.private_dir,
                                  "TMPDIR=" + request.private_dir};
  AddProxyEnvironment(env);
  absl::StatusOr<ChildResult> child = RunChild(argv, env);
  if (!child.ok()) {
    return child.status();
  }
  if (child->exit_code == 0) {
    return absl::OkStatus();
  }
  return SkopeoFailure(request.reference, child->stderr_text);
}

}  // namespace gpuaas::agent
