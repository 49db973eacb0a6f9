#include "libs/http/http_message.h"

#include <poll.h>

#include <utility>

namespace gpuaas::http {
namespace {

bool HasCrLf(const std::string& s) { return s.find_first_of("\r\n") != std::string::npos; }

}  // namespace

std::string HttpRequest::get_header_value(const std::string& name) const {
  auto it = headers.find(name);
  return it != headers.end() ? it->second : std::string();
}

bool HttpRequest::client_gone() const {
  if (connection_fd < 0) {
    return false;
  }
  pollfd p{connection_fd, POLLRDHUP, 0};
  return ::poll(&p, 1, 0) > 0 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR)) != 0;
}

HttpResponse::~HttpResponse() {
  if (releaser) {
    releaser(provider_succeeded);
  }
}

void HttpResponse::set_header(const std::string& name, const std::string& value) {
  if (!HasCrLf(name) && !HasCrLf(value)) {
    headers.emplace(name, value);
  }
}

void HttpResponse::set_content(std::string content, const std::string& content_type) {
  body = std::move(content);
  headers.erase("Content-Type");
  set_header("Content-Type", content_type);
}

void HttpResponse::set_content_provider(size_t length, const std::string& content_type,
                                        ContentProvider provider, ContentProviderReleaser release) {
  set_header("Content-Type", content_type);
  content_length = length;
  content_provider = std::move(provider);
  releaser = std::move(release);
}

void HttpResponse::set_chunked_content_provider(const std::string& content_type,
                                                ChunkedContentProvider provider,
                                                ContentProviderReleaser release) {
  set_header("Content-Type", content_type);
  chunked_content_provider = std::move(provider);
  releaser = std::move(release);
}

}  // namespace gpuaas::http
