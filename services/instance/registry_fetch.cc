#include "services/instance/registry_fetch.h"

#include <curl/curl.h>
#include <sys/socket.h>

#include <algorithm>
#include <memory>
#include <mutex>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/strip.h"

namespace gpuaas::instance {
namespace {

struct Transfer {
  const registry::RegistryPolicy* policy;
  size_t max_body;
  bool refused = false;
  bool too_big = false;
  std::string body;
  std::string www_authenticate;
};

curl_socket_t OpenCheckedSocket(void* data, curlsocktype /*purpose*/, curl_sockaddr* address) {
  auto& t = *static_cast<Transfer*>(data);
  if (!t.policy->MayConnect(&address->addr)) {
    t.refused = true;
    return CURL_SOCKET_BAD;
  }
  return ::socket(address->family, address->socktype | SOCK_CLOEXEC, address->protocol);
}

size_t OnBody(char* data, size_t size, size_t count, void* user) {
  auto& t = *static_cast<Transfer*>(user);
  const size_t n = size * count;
  if (t.body.size() + n > t.max_body) {
    t.too_big = true;
    return 0;  // aborts the transfer
  }
  t.body.append(data, n);
  return n;
}

size_t OnHeader(char* data, size_t size, size_t count, void* user) {
  auto& t = *static_cast<Transfer*>(user);
  const absl::string_view line(data, size * count);
  if (absl::StartsWith(line, "HTTP/")) {
    t.www_authenticate.clear();  // a new response (after a redirect or a 100)
  } else if (line.size() > 17 && absl::EqualsIgnoreCase(line.substr(0, 17), "www-authenticate:")) {
    t.www_authenticate = std::string(absl::StripAsciiWhitespace(line.substr(17)));
    t.www_authenticate.resize(std::min<size_t>(t.www_authenticate.size(), 2048));
  }
  return size * count;
}

struct CurlDeleter {
  void operator()(CURL* h) const { curl_easy_cleanup(h); }
  void operator()(curl_slist* l) const { curl_slist_free_all(l); }
};

}  // namespace

RegistryResponse FetchFromRegistry(const registry::RegistryPolicy& policy,
                                   const RegistryRequest& request) {
  static std::once_flag init;
  std::call_once(init, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
  RegistryResponse out;
  std::unique_ptr<CURL, CurlDeleter> h(curl_easy_init());
  if (h == nullptr) return out;
  Transfer t{.policy = &policy, .max_body = request.max_body};
  std::unique_ptr<curl_slist, CurlDeleter> headers, resolve;
  for (const std::string& header : request.headers) {
    headers.reset(curl_slist_append(headers.release(), header.c_str()));
  }
  for (const std::string& pin : request.resolve) {
    resolve.reset(curl_slist_append(resolve.release(), pin.c_str()));
  }
  const long timeout_ms = std::max<long>(1, absl::ToInt64Milliseconds(request.timeout));
  CURL* c = h.get();
  curl_easy_setopt(c, CURLOPT_URL, request.url.c_str());
  curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(c, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 1L);
  curl_easy_setopt(c, CURLOPT_MAXREDIRS, 3L);
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(c, CURLOPT_PROXY, "");  // the control plane reaches registries directly
  curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, timeout_ms);
  curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, timeout_ms);
  curl_easy_setopt(c, CURLOPT_OPENSOCKETFUNCTION, OpenCheckedSocket);
  curl_easy_setopt(c, CURLOPT_OPENSOCKETDATA, &t);
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, OnBody);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &t);
  curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, OnHeader);
  curl_easy_setopt(c, CURLOPT_HEADERDATA, &t);
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers.get());
  curl_easy_setopt(c, CURLOPT_RESOLVE, resolve.get());
  curl_easy_setopt(c, CURLOPT_USERAGENT, "gpuaas-instance");
  curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, request.verify_tls ? 1L : 0L);
  curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, request.verify_tls ? 2L : 0L);
  if (!request.username.empty()) {
    curl_easy_setopt(c, CURLOPT_HTTPAUTH, CURLAUTH_BASIC);
    curl_easy_setopt(c, CURLOPT_USERNAME, request.username.c_str());
    curl_easy_setopt(c, CURLOPT_PASSWORD, request.password.c_str());
  }
  const CURLcode code = curl_easy_perform(c);
  if (t.refused) {
    out.outcome = RegistryResponse::Outcome::kRefused;
    return out;
  }
  if (code == CURLE_SSL_CONNECT_ERROR) {
    out.outcome = RegistryResponse::Outcome::kTlsFailed;
    return out;
  }
  if (code != CURLE_OK || t.too_big) return out;
  curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &out.status);
  out.outcome = RegistryResponse::Outcome::kOk;
  out.body = std::move(t.body);
  out.www_authenticate = std::move(t.www_authenticate);
  return out;
}

}  // namespace gpuaas::instance
