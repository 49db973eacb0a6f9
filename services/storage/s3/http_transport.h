// cpp-httplib's Server with our own per-connection loop. httplib 0.11.4 (Debian 12) parses
// requests, streams bodies to a ContentReader and responses from a content provider well, but
// its own loop cannot close a connection whose request body a handler left unread (an error
// answered before a 2 GB upload arrived would leave the rest of it to be parsed as the next
// request), reads sockets 4 KiB at a time, would gunzip a body sent with
// "Content-Encoding: gzip" (S3 stores such bodies as they are), and answers "Expect:
// 100-continue" only in lower case (Go's AWS SDK, so rclone, sends "100-Continue" and then
// waits a second per request). This loop reads through a 64 KiB buffer, speaks TLS itself when
// given a context, normalizes those two headers (keeping the originals for signature checks),
// and lets a handler end the connection after its response.
#pragma once

#include <httplib.h>
#include <openssl/ssl.h>

#include <map>
#include <string>
#include <vector>

namespace gpuaas::storage::s3 {

// What the loop knows about the request being handled, for the handler running on its thread.
struct Exchange {
  // Set by the handler: close the connection once the response is written.
  bool close_after_response = false;
  // Headers as received that the loop changed before httplib saw them (see above), by
  // lower-case name: signatures cover what the client sent.
  std::map<std::string, std::vector<std::string>> original_headers;
};

class HttpTransport final : public httplib::Server {
 public:
  // `tls` (may be null): every connection speaks TLS with it. Not owned; outlives this.
  explicit HttpTransport(SSL_CTX* tls) : tls_(tls) {}

  // The exchange of the request the calling thread is handling (inside a handler only).
  static Exchange& CurrentExchange();

  // Gives the listening socket a longer accept queue than httplib's built-in 5, after bind.
  void WidenBacklog(int backlog);

 private:
  bool process_and_close_socket(socket_t sock) override;

  SSL_CTX* tls_;
};

}  // namespace gpuaas::storage::s3
