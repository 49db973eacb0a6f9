// One HTTP GET to an image registry under the platform's RegistryPolicy (libcurl): the
// pinner's only way to reach a registry.
//
// Every connection, the first and each redirect hop's, is checked at the socket against the
// policy (RegistryPolicy::MayConnect), so neither a redirect nor a DNS answer that changed
// since the check leads anywhere the policy refuses; the first host is connected at the
// addresses RegistryPolicy::Resolve checked. Connect and whole-request timeouts are short, the
// body is capped, no proxy from the environment is used, and only http and https are spoken.
#pragma once

#include <string>
#include <vector>

#include "absl/time/time.h"
#include "libs/registry_policy/registry_policy.h"

namespace gpuaas::instance {

struct RegistryRequest {
  std::string url;
  // "host:port:addr,addr" pins for the URL's host (curl's CURLOPT_RESOLVE).
  std::vector<std::string> resolve;
  std::vector<std::string> headers;
  // Basic auth (curl sends it to the URL's host only, never to a redirect's).
  std::string username, password;
  bool verify_tls = true;
  absl::Duration timeout = absl::Seconds(10);
  size_t max_body = 4 << 20;
};

struct RegistryResponse {
  // Why no response: kOk, kRefused (a connection the policy refused), kTlsFailed (the TLS
  // handshake failed: perhaps a plain-HTTP server), kFailed (everything else).
  enum class Outcome { kOk, kRefused, kTlsFailed, kFailed };
  Outcome outcome = Outcome::kFailed;
  long status = 0;
  std::string body;
  // The final response's WWW-Authenticate header.
  std::string www_authenticate;
};

// Runs `request`. Blocks up to request.timeout (after at most request.timeout to connect).
// Thread-safe.
RegistryResponse FetchFromRegistry(const registry::RegistryPolicy& policy,
                                   const RegistryRequest& request);

}  // namespace gpuaas::instance
