#include "services/storage/s3/testing/raw_client.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "services/storage/s3/checksum.h"
#include "services/storage/s3/sigv4.h"

namespace gpuaas::storage::s3::testing {
namespace {

std::string AmzDate(absl::Time t) {
  return absl::FormatTime("%Y%m%dT%H%M%SZ", t, absl::UTCTimeZone());
}

Credential CredentialFor(const TestKey& key, absl::Time t, const std::string& region) {
  return Credential{key.id, absl::FormatTime("%Y%m%d", t, absl::UTCTimeZone()), region, "s3"};
}

std::string ChunkedBody(const std::string& data, size_t chunk_size, const std::string& key,
                        const std::string& amz_date, const std::string& scope, std::string previous,
                        int bad_chunk) {
  std::string out;
  size_t offset = 0;
  int index = 0;
  while (true) {
    size_t n = std::min(chunk_size, data.size() - offset);
    std::string chunk = data.substr(offset, n);
    previous = Sign(key, ChunkStringToSign(amz_date, scope, previous, Sha256Hex(chunk)));
    std::string signature = previous;
    if (++index == bad_chunk) {
      signature[0] = signature[0] == '0' ? '1' : '0';
    }
    absl::StrAppendFormat(&out, "%x;chunk-signature=%s\r\n", n, signature);
    out += chunk;
    out += "\r\n";
    offset += n;
    if (n == 0) {
      return out;
    }
  }
}

HttpReply Parse(const std::string& raw, bool head_request, bool reset) {
  HttpReply reply;
  size_t end = raw.find("\r\n\r\n");
  if (end == std::string::npos) {
    return reply;
  }
  std::string head = raw.substr(0, end);
  reply.body = raw.substr(end + 4);
  size_t line_end = head.find("\r\n");
  std::string status_line = head.substr(0, line_end);
  if (status_line.size() >= 12) {
    absl::SimpleAtoi(status_line.substr(9, 3), &reply.status);
  }
  size_t pos = line_end == std::string::npos ? head.size() : line_end + 2;
  while (pos < head.size()) {
    size_t next = head.find("\r\n", pos);
    if (next == std::string::npos) {
      next = head.size();
    }
    std::string line = head.substr(pos, next - pos);
    size_t colon = line.find(':');
    if (colon != std::string::npos) {
      reply.headers.emplace(absl::AsciiStrToLower(line.substr(0, colon)),
                            std::string(absl::StripAsciiWhitespace(line.substr(colon + 1))));
    }
    pos = next + 2;
  }
  // Keep only the announced body (HEAD and 304 announce without sending).
  int64_t length = 0;
  const bool announced = absl::SimpleAtoi(reply.Header("content-length"), &length);
  if (announced && static_cast<size_t>(length) < reply.body.size()) {
    reply.body.resize(length);
  }
  const bool bodiless = head_request || reply.status == 304;
  reply.complete = reply.status != 0 && !reset &&
                   (!announced || bodiless || reply.body.size() == static_cast<size_t>(length));
  return reply;
}

}  // namespace

std::string HttpReply::Header(const std::string& name) const {
  auto it = headers.find(absl::AsciiStrToLower(name));
  return it == headers.end() ? std::string() : it->second;
}

std::string HttpReply::ErrorCode() const {
  size_t begin = body.find("<Code>");
  size_t end = body.find("</Code>");
  if (begin == std::string::npos || end == std::string::npos) {
    return "";
  }
  return body.substr(begin + 6, end - begin - 6);
}

HttpReply Send(int port, const RawRequest& request) {
  std::string host = absl::StrCat("127.0.0.1:", port);
  std::string body = request.body;
  std::vector<std::pair<std::string, std::string>> headers = request.headers;
  headers.emplace_back("host", host);
  std::string authorization;
  if (request.key) {
    std::string amz_date = AmzDate(request.time);
    Credential credential = CredentialFor(*request.key, request.time, request.region);
    std::string payload_hash = request.payload_hash;
    if (request.chunk_size > 0) {
      payload_hash =
          std::string(request.unsigned_trailer ? kStreamingUnsignedTrailer : kStreamingPayload);
      headers.emplace_back("content-encoding", "aws-chunked");
      headers.emplace_back("x-amz-decoded-content-length", absl::StrCat(request.body.size()));
      if (request.unsigned_trailer) {
        headers.emplace_back("x-amz-trailer", "x-amz-checksum-crc32");
      }
    } else if (payload_hash.empty()) {
      payload_hash = Sha256Hex(body);
    }
    headers.emplace_back("x-amz-date", amz_date);
    headers.emplace_back("x-amz-content-sha256", payload_hash);
    for (auto& [name, value] : headers) {
      name = absl::AsciiStrToLower(name);
    }
    std::sort(headers.begin(), headers.end());
    std::string path_decoded = *UriDecode(request.path, false);
    auto query = ParseQuery(request.query);
    CanonicalInput in;
    in.method = request.method;
    in.decoded_path = path_decoded;
    in.query = &*query;
    for (const auto& [name, value] : headers) {
      in.headers.emplace_back(name, CanonicalHeaderValue({value}));
    }
    in.payload_hash = payload_hash;
    std::string key = SigningKey(request.key->secret, credential);
    std::string signature =
        Sign(key, StringToSign(amz_date, credential.Scope(), CanonicalRequest(in)));
    std::string names;
    for (const auto& [name, value] : headers) {
      absl::StrAppend(&names, names.empty() ? "" : ";", name);
    }
    authorization =
        absl::StrCat("AWS4-HMAC-SHA256 Credential=", credential.access_key_id, "/",
                     credential.Scope(), ", SignedHeaders=", names, ", Signature=", signature);
    if (request.chunk_size > 0 && request.unsigned_trailer) {
      body.clear();
      for (size_t offset = 0; offset < request.body.size(); offset += request.chunk_size) {
        std::string chunk = request.body.substr(offset, request.chunk_size);
        absl::StrAppendFormat(&body, "%x\r\n%s\r\n", chunk.size(), chunk);
      }
      auto crc = PayloadChecksum::For("crc32");
      crc->Update(request.body);
      std::string value = request.trailer_crc32.empty() ? crc->Base64() : request.trailer_crc32;
      absl::StrAppend(&body, "0\r\nx-amz-checksum-crc32:", value, "\r\n\r\n");
    } else if (request.chunk_size > 0) {
      body = ChunkedBody(request.body, request.chunk_size, key, amz_date, credential.Scope(),
                         signature, request.bad_chunk);
    }
  }
  std::string raw = absl::StrCat(request.method, " ", request.path,
                                 request.query.empty() ? "" : "?", request.query, " HTTP/1.1\r\n");
  for (const auto& [name, value] : headers) {
    absl::StrAppend(&raw, name, ": ", value, "\r\n");
  }
  for (const auto& [name, value] : request.unsigned_headers) {
    absl::StrAppend(&raw, name, ": ", value, "\r\n");
  }
  if (!authorization.empty()) {
    absl::StrAppend(&raw, "authorization: ", authorization, "\r\n");
  }
  absl::StrAppend(&raw, "content-length: ", body.size(), "\r\nconnection: close\r\n\r\n", body);

  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  timeval timeout{30, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
  HttpReply reply;
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    ::close(fd);
    return reply;
  }
  size_t to_send = std::min(raw.size(), request.cut_after.value_or(raw.size()));
  size_t sent = 0;
  while (sent < to_send) {
    ssize_t n = ::send(fd, raw.data() + sent, to_send - sent, MSG_NOSIGNAL);
    if (n <= 0) {
      break;
    }
    sent += static_cast<size_t>(n);
  }
  if (request.cut_after) {
    ::close(fd);
    return reply;
  }
  std::string received;
  char buffer[65536];
  ssize_t n = 0;
  while ((n = ::recv(fd, buffer, sizeof(buffer), 0)) > 0) {
    received.append(buffer, static_cast<size_t>(n));
  }
  ::close(fd);
  return Parse(received, request.method == "HEAD", /*reset=*/n < 0);
}

std::string PresignQuery(int port, const std::string& method, const std::string& path,
                         const TestKey& key, absl::Time time, absl::Duration expires,
                         const std::string& extra_query) {
  Credential credential = CredentialFor(key, time, "us-east-1");
  std::string amz_date = AmzDate(time);
  std::string query =
      absl::StrCat("X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=",
                   UriEncode(absl::StrCat(key.id, "/", credential.Scope()), true),
                   "&X-Amz-Date=", amz_date, "&X-Amz-Expires=", absl::ToInt64Seconds(expires),
                   "&X-Amz-SignedHeaders=host", extra_query.empty() ? "" : "&", extra_query);
  auto params = ParseQuery(query);
  std::string path_decoded = *UriDecode(path, false);
  CanonicalInput in;
  in.method = method;
  in.decoded_path = path_decoded;
  in.query = &*params;
  in.headers = {{"host", absl::StrCat("127.0.0.1:", port)}};
  in.payload_hash = kUnsignedPayload;
  std::string signature = Sign(SigningKey(key.secret, credential),
                               StringToSign(amz_date, credential.Scope(), CanonicalRequest(in)));
  return absl::StrCat(query, "&X-Amz-Signature=", signature);
}

}  // namespace gpuaas::storage::s3::testing
