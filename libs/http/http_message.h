// One HTTP exchange as a blocking handler sees it: the request's head, a pull reader for its body,
// and a response that is either a small body or a streaming content provider. The transport
// (http_transport.h) fills and writes these; handlers never touch the connection.
#pragma once

#include <strings.h>

#include <cstddef>
#include <functional>
#include <map>
#include <string>
#include <string_view>

namespace gpuaas::http {

struct CaseInsensitiveLess {
  bool operator()(const std::string& a, const std::string& b) const {
    return strcasecmp(a.c_str(), b.c_str()) < 0;
  }
};

// Header names compare case-insensitively; a name may repeat.
using Headers = std::multimap<std::string, std::string, CaseInsensitiveLess>;

struct HttpRequest {
  std::string method;
  std::string target;       // as sent: the path and query, still percent-encoded
  Headers headers;          // exactly as received
  std::string remote_addr;  // the client's address without its port
  int connection_fd = -1;   // the client's socket, while the request is served

  // The first value of a header, or "".
  std::string get_header_value(const std::string& name) const;
  bool has_header(const std::string& name) const { return headers.count(name) > 0; }
  // Whether the client closed its connection (it left): for a handler that waits long before it
  // answers, which no failed write would tell. False without a connection.
  bool client_gone() const;
};

// Receives a piece of the request body; false stops the reading.
using ContentReceiver = std::function<bool(const char* data, size_t size)>;
// Pulls the whole request body through `receiver`, blocking. False when the connection failed
// or ended before the body did, or the receiver said stop.
using ContentReader = std::function<bool(const ContentReceiver& receiver)>;

// Where a content provider writes the response body. `write` blocks until the bytes are sent
// (false: the client is gone); `done` ends a chunked body.
struct DataSink {
  std::function<bool(const char* data, size_t size)> write;
  std::function<void()> done;
};

// Called until `length` bytes went out; each call writes at most `length` bytes from `offset`.
// False: stop (the response is cut short).
using ContentProvider = std::function<bool(size_t offset, size_t length, DataSink& sink)>;
// A chunked body: called until it calls sink.done().
using ChunkedContentProvider = std::function<bool(size_t offset, DataSink& sink)>;
// Called once the response is over (or dropped): true when the whole body went out.
using ContentProviderReleaser = std::function<void(bool success)>;

// After a 101 answer the connection is the handler's, for a protocol it speaks itself (a
// WebSocket): raw bytes, read and written on the one thread that runs the upgrade handler (TLS
// allows no other). The transport closes the connection once the handler returns.
class UpgradedConnection {
 public:
  virtual ~UpgradedConnection() = default;
  // The socket, to poll for input (with Buffered(): bytes already read or decrypted).
  virtual int fd() const = 0;
  virtual bool Buffered() const = 0;
  // What is there, at most `size` bytes; blocks when nothing is (poll first). 0: the peer
  // closed, or the connection failed.
  virtual size_t Read(char* out, size_t size) = 0;
  // All of `data`, blocking up to the transport's write timeout. False: the peer is gone.
  virtual bool Write(std::string_view data) = 0;
};
using UpgradeHandler = std::function<void(UpgradedConnection& connection)>;

struct HttpResponse {
  HttpResponse() = default;
  HttpResponse(const HttpResponse&) = delete;
  HttpResponse& operator=(const HttpResponse&) = delete;
  ~HttpResponse();

  int status = -1;
  Headers headers;
  std::string body;

  // Adds a header (a name may repeat); one with CR or LF in it is dropped.
  void set_header(const std::string& name, const std::string& value);
  bool has_header(const std::string& name) const { return headers.count(name) > 0; }
  void set_content(std::string content, const std::string& content_type);
  void set_content_provider(size_t length, const std::string& content_type,
                            ContentProvider provider, ContentProviderReleaser releaser = nullptr);
  void set_chunked_content_provider(const std::string& content_type,
                                    ChunkedContentProvider provider,
                                    ContentProviderReleaser releaser = nullptr);

  // Answers 101 with these headers, then hands the connection to `handler` (set the protocol's
  // headers, e.g. Upgrade and Sec-WebSocket-Accept, with set_header).
  void set_upgrade(UpgradeHandler handler) {
    status = 101;
    upgrade = std::move(handler);
  }

  // Read by the transport.
  UpgradeHandler upgrade;
  size_t content_length = 0;
  ContentProvider content_provider;
  ChunkedContentProvider chunked_content_provider;
  ContentProviderReleaser releaser;
  bool provider_succeeded = false;
};

}  // namespace gpuaas::http
