#include "services/instance/image_pinner.h"

#include <curl/curl.h>
#include <openssl/sha.h>

#include <algorithm>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "libs/common/logging.h"
#include "libs/common/status_macros.h"
#include "nlohmann/json.hpp"
#include "services/instance/oci_reference.h"
#include "services/instance/registry_fetch.h"

namespace gpuaas::instance {
namespace {

constexpr char kField[] = "image.oci_reference";
constexpr char kAccept[] =
    "Accept: application/vnd.oci.image.index.v1+json, "
    "application/vnd.oci.image.manifest.v1+json, "
    "application/vnd.docker.distribution.manifest.list.v2+json, "
    "application/vnd.docker.distribution.manifest.v2+json";

std::string Sha256Hex(const std::string& data) {
  unsigned char md[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(data.data()), data.size(), md);
  return absl::BytesToHexString(
      absl::string_view(reinterpret_cast<const char*>(md), SHA256_DIGEST_LENGTH));
}

absl::Status Unreachable() { return absl::UnavailableError(registry::kUnreachable); }

absl::Status LoginFailure(bool with_login) {
  return absl::InvalidArgumentError(with_login
                                        ? "registry_credentials: the registry refused the login"
                                        : "registry_credentials: the registry wants a login");
}

// The value of `key` in a WWW-Authenticate challenge's parameters (key="value").
std::string ChallengeParam(const std::string& challenge, absl::string_view key) {
  const std::string needle = absl::StrCat(key, "=\"");
  size_t at = 0;
  while ((at = challenge.find(needle, at)) != std::string::npos) {
    if (at == 0 || challenge[at - 1] == ' ' || challenge[at - 1] == ',') {
      const size_t start = at + needle.size();
      const size_t end = challenge.find('"', start);
      if (end == std::string::npos) return "";
      return challenge.substr(start, end - start);
    }
    at += needle.size();
  }
  return "";
}

std::string Escape(const std::string& s) {
  char* e = curl_easy_escape(nullptr, s.data(), static_cast<int>(s.size()));
  std::string out = e == nullptr ? "" : e;
  curl_free(e);
  return out;
}

// A manifest or index as the OCI and Docker formats spell one.
bool LooksLikeManifest(const std::string& body) {
  const nlohmann::json doc = nlohmann::json::parse(body, nullptr, false);
  if (!doc.is_object()) return false;
  const auto version = doc.find("schemaVersion");
  return version != doc.end() && version->is_number_integer() && *version == 2;
}

class RegistryPinner final : public ImagePinner {
 public:
  explicit RegistryPinner(RegistryPinnerOptions options) : options_(std::move(options)) {}

  absl::StatusOr<std::string> Pin(const std::string& reference,
                                  const pb::RegistryCredentials& credentials) override {
    GPUAAS_ASSIGN_OR_RETURN(const OciReference ref, ParseOciReference(kField, reference));
    absl::StatusOr<registry::RegistryAddress> address = registry::ParseRegistryAddress(ref.host);
    if (!address.ok()) return absl::InvalidArgumentError(absl::StrCat(kField, ": bad registry"));
    // Docker Hub's API is served from another name than its references'.
    if (address->host == "docker.io") address->host = "registry-1.docker.io";
    GPUAAS_ASSIGN_OR_RETURN(const std::vector<std::string> addresses,
                            options_.policy.Resolve(*address));
    if (!ref.digest.empty()) return ref.ToString();

    Attempt attempt{
        .address = *address, .addresses = addresses, .ref = ref, .credentials = credentials};
    if (!options_.policy.Insecure(*address)) return PinOver(attempt, "https", true);
    // An insecure registry: TLS unverified, or plain HTTP when it speaks no TLS.
    absl::StatusOr<std::string> pinned = PinOver(attempt, "https", false);
    if (pinned.ok() || !attempt.tls_failed) return pinned;
    return PinOver(attempt, "http", false);
  }

 private:
  struct Attempt {
    registry::RegistryAddress address;
    std::vector<std::string> addresses;
    OciReference ref;
    pb::RegistryCredentials credentials;
    bool tls_failed = false;
  };

  absl::StatusOr<std::string> PinOver(Attempt& a, absl::string_view scheme, bool verify) {
    const bool with_login = !a.credentials.username().empty();
    RegistryRequest manifest{
        .url = absl::StrCat(scheme, "://", a.address.HostPort(), "/v2/", a.ref.repository,
                            "/manifests/", Escape(a.ref.tag)),
        .resolve = {},
        .headers = {kAccept},
        .username = "",
        .password = "",
        .verify_tls = verify,
        .timeout = options_.timeout};
    if (a.address.host.find(':') == std::string::npos) {
      std::vector<std::string> pinned;
      for (const std::string& ip : a.addresses) {
        pinned.push_back(ip.find(':') == std::string::npos ? ip : absl::StrCat("[", ip, "]"));
      }
      manifest.resolve = {
          absl::StrCat(a.address.host, ":", a.address.port, ":", absl::StrJoin(pinned, ","))};
    }
    RegistryResponse r = FetchFromRegistry(options_.policy, manifest);
    if (r.outcome == RegistryResponse::Outcome::kOk && r.status == 401) {
      // The registry's challenge: a token from its realm (Bearer), or the login itself (Basic).
      const std::string& challenge = r.www_authenticate;
      if (absl::StartsWithIgnoreCase(challenge, "bearer ")) {
        GPUAAS_ASSIGN_OR_RETURN(const std::string token, Token(a, challenge, verify));
        manifest.headers.push_back("Authorization: Bearer " + token);
      } else if (absl::StartsWithIgnoreCase(challenge, "basic ") && with_login) {
        manifest.username = a.credentials.username();
        manifest.password = a.credentials.password();
      } else {
        return LoginFailure(with_login);
      }
      r = FetchFromRegistry(options_.policy, manifest);
    }
    return Judge(a, r, with_login);
  }

  absl::StatusOr<std::string> Token(Attempt& a, const std::string& challenge, bool verify) {
    const std::string realm = ChallengeParam(challenge, "realm");
    if (!absl::StartsWith(realm, "https://") && !absl::StartsWith(realm, "http://")) {
      return Unreachable();
    }
    std::string url = absl::StrCat(realm, realm.find('?') == std::string::npos ? "?" : "&",
                                   "scope=", Escape("repository:" + a.ref.repository + ":pull"));
    if (const std::string service = ChallengeParam(challenge, "service"); !service.empty()) {
      absl::StrAppend(&url, "&service=", Escape(service));
    }
    RegistryRequest request{.url = url,
                            .resolve = {},
                            .headers = {},
                            .username = a.credentials.username(),
                            .password = a.credentials.password(),
                            .verify_tls = verify,
                            .timeout = options_.timeout,
                            .max_body = 64 << 10};
    const RegistryResponse r = FetchFromRegistry(options_.policy, request);
    if (r.outcome == RegistryResponse::Outcome::kRefused) {
      return absl::PermissionDeniedError(registry::kNotAllowed);
    }
    if (r.outcome != RegistryResponse::Outcome::kOk) return Unreachable();
    if (r.status == 401 || r.status == 403) return LoginFailure(!a.credentials.username().empty());
    const nlohmann::json doc = nlohmann::json::parse(r.body, nullptr, false);
    if (r.status != 200 || !doc.is_object()) return Unreachable();
    for (const char* key : {"token", "access_token"}) {
      const auto it = doc.find(key);
      if (it != doc.end() && it->is_string() && !it->get<std::string>().empty()) {
        const std::string token = it->get<std::string>();
        // A header value: no line breaks or controls from the remote.
        if (std::any_of(token.begin(), token.end(), [](char c) { return c < '!' || c > '~'; })) {
          return Unreachable();
        }
        return token;
      }
    }
    return Unreachable();
  }

  absl::StatusOr<std::string> Judge(Attempt& a, const RegistryResponse& r, bool with_login) {
    switch (r.outcome) {
      case RegistryResponse::Outcome::kRefused:
        return absl::PermissionDeniedError(registry::kNotAllowed);
      case RegistryResponse::Outcome::kTlsFailed:
        a.tls_failed = true;
        return Unreachable();
      case RegistryResponse::Outcome::kFailed:
        return Unreachable();
      case RegistryResponse::Outcome::kOk:
        break;
    }
    if (r.status == 401 || r.status == 403) return LoginFailure(with_login);
    if (r.status == 404) {
      return absl::NotFoundError(
          absl::StrCat(kField, ": ", a.ref.ToString(), " not found in its registry"));
    }
    if (r.status != 200 || r.body.empty() || !LooksLikeManifest(r.body)) return Unreachable();
    return a.ref.PinnedTo(absl::StrCat("sha256:", Sha256Hex(r.body)));
  }

  const RegistryPinnerOptions options_;
};

}  // namespace

ImagePinnerPtr NewRegistryPinner(RegistryPinnerOptions options) {
  return std::make_unique<RegistryPinner>(std::move(options));
}

}  // namespace gpuaas::instance
