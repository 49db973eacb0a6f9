// A small blocking HTTP/1.1 client for the proxy's tests: raw requests (so a test can send
// what no well-behaved client would: absolute-form targets, two Hosts), responses parsed by
// Beast, WebSocket echo, and a chunked upload that never holds its whole body.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace gpuaas::proxy_testing {

struct HttpResponse {
  int status = 0;                              // 0: no (complete) response, the connection broke
  std::map<std::string, std::string> headers;  // names lowercased
  std::string body;
  std::string Header(const std::string& name) const {
    auto it = headers.find(name);
    return it == headers.end() ? "" : it->second;
  }
};

// One connection to 127.0.0.1:port.
class HttpConnection final {
 public:
  explicit HttpConnection(int port);
  ~HttpConnection();
  bool connected() const;

  // Writes `raw` as is; false when the write failed.
  bool Send(const std::string& raw);
  // Reads one response (status 0 when the connection ended first). For a HEAD set `head`.
  HttpResponse Read(bool head = false);
  // A GET of `path` on `host` with extra header lines ("Name: value\r\n"...), then its answer.
  HttpResponse Get(const std::string& host, const std::string& path,
                   const std::string& headers = "");
  // Reads until the peer closes or `timeout_ms` passes; true when it closed.
  bool WaitClosed(int timeout_ms);
  // POSTs `total` bytes in `piece`-byte chunks (Transfer-Encoding: chunked), then reads the
  // answer.
  HttpResponse PostChunked(const std::string& host, const std::string& path,
                           const std::string& headers, uint64_t total, size_t piece);
  // GETs `path` and counts its body bytes without keeping them; -1 when it broke off.
  int64_t Download(const std::string& host, const std::string& path, const std::string& headers,
                   int* status);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// One request on a connection of its own.
HttpResponse HttpGet(int port, const std::string& host, const std::string& path,
                     const std::string& headers = "");

// A WebSocket to ws://host/path through 127.0.0.1:port that sends each message and expects it
// echoed. Returns the echoes joined by '|', or "error: ..." on failure.
std::string WebSocketEcho(int port, const std::string& host, const std::string& path,
                          const std::string& authorization,
                          const std::vector<std::string>& messages);

// A WebSocket held open through 127.0.0.1:port (as a Jupyter kernel's is), opened with extra
// request fields (a cookie, an Origin), so a test can keep using it after access changes.
class OpenWebSocket final {
 public:
  OpenWebSocket(int port, const std::string& host, const std::string& path,
                const std::vector<std::pair<std::string, std::string>>& fields);
  ~OpenWebSocket();
  // The handshake's error, "" once open.
  const std::string& error() const;
  // Sends `message` and reads its echo; "error: ..." once the connection has ended (or no echo
  // came within 10 s).
  std::string Echo(const std::string& message);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace gpuaas::proxy_testing
