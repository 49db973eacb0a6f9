// Cross-origin access for browsers: the web console is served from another origin than the S3
// endpoint (the gateway's :8090 against :9000), and its file browser sends presigned requests
// straight here. Only the listed origins get CORS headers; any other page's requests are served
// as before, so the browser withholds the answers from it.
//
// Never Access-Control-Allow-Credentials: a presigned URL carries its own signature and no
// cookie is ever used, so a listed page gains nothing a leaked URL would not give anyone with
// curl, and an unlisted page cannot even read the answers.
#pragma once

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "libs/http/http_message.h"

namespace gpuaas::storage::s3 {

// OK when `origin` is what a browser sends as Origin: "http" or "https", "://", a host and an
// optional port, nothing after ("http://127.0.0.1:8090"). INVALID_ARGUMENT otherwise ("*",
// "null", a path or a trailing slash), naming the origin.
absl::Status CheckCorsOrigin(absl::string_view origin);

class CorsPolicy final {
 public:
  // Origins compare exactly (CheckCorsOrigin'd by the caller); none: CORS is off and no
  // response changes.
  explicit CorsPolicy(std::vector<std::string> origins);

  // Headers every response gets: for a listed Origin, Access-Control-Allow-Origin (that
  // origin) and -Expose-Headers (so the page can read ETag, which it needs to complete a
  // multipart upload); Vary: Origin whenever CORS is on, as the answer depends on it.
  void AddResponseHeaders(const http::HttpRequest& req, http::HttpResponse& res) const;

  // A preflight (OPTIONS with Access-Control-Request-Method) from a listed origin: answers it
  // 200 with the methods, the requested headers that are allowed and a max age, and returns
  // true. Anything else: false, `res` untouched (an unlisted origin's preflight then fails
  // like any unsigned request).
  bool AnswerPreflight(const http::HttpRequest& req, http::HttpResponse& res) const;

 private:
  bool Listed(const std::string& origin) const;

  std::vector<std::string> origins_;
};

}  // namespace gpuaas::storage::s3
