#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"
#include "services/storage/s3/conditions.h"
#include "services/storage/s3/errors.h"
#include "services/storage/s3/handlers.h"
#include "services/storage/s3/served_content.h"

namespace gpuaas::storage::s3 {
namespace {

constexpr size_t kReadChunk = 512 * 1024;
constexpr std::string_view kDefaultContentType = "binary/octet-stream";

// A key that names a directory holds no object.
absl::Status NotAnObject(const absl::Status& status) {
  if (status.code() == absl::StatusCode::kFailedPrecondition ||
      status.code() == absl::StatusCode::kNotFound) {
    return S3Status("NoSuchKey", "The specified key does not exist.");
  }
  return status;
}

void SetObjectHeaders(RequestContext& ctx, const ObjectInfo& info) {
  ctx.res.set_header("ETag", absl::StrCat("\"", info.etag, "\""));
  ctx.res.set_header("Last-Modified", HttpTime(info.modify_time));
  ctx.res.set_header("Accept-Ranges", "bytes");
}

std::string ContentType(const RequestContext& ctx, const ObjectInfo& info) {
  if (const std::string* forced = ctx.Param("response-content-type")) {
    return *forced;
  }
  return info.content_type.empty() ? std::string(kDefaultContentType) : info.content_type;
}

// The response-* query parameters a signed request may use to set response headers.
void SetOverrides(RequestContext& ctx) {
  constexpr std::pair<std::string_view, std::string_view> kOverrides[] = {
      {"response-content-disposition", "Content-Disposition"},
      {"response-content-language", "Content-Language"},
      {"response-content-encoding", "Content-Encoding"},
      {"response-cache-control", "Cache-Control"},
      {"response-expires", "Expires"},
  };
  for (const auto& [param, header] : kOverrides) {
    if (const std::string* value = ctx.Param(param)) {
      ctx.res.set_header(std::string(header), *value);
    }
  }
}

// 304 or 412 when the conditional headers say so; OK to go on.
absl::Status CheckPreconditions(RequestContext& ctx, const ObjectInfo& info, bool* answered) {
  std::string if_match = ctx.Header("If-Match");
  std::string if_none_match = ctx.Header("If-None-Match");
  std::string if_modified = ctx.Header("If-Modified-Since");
  std::string if_unmodified = ctx.Header("If-Unmodified-Since");
  ConditionalHeaders headers{if_match, if_none_match, if_modified, if_unmodified};
  switch (EvaluatePreconditions(headers, info.etag, info.modify_time)) {
    case Precondition::kProceed:
      return absl::OkStatus();
    case Precondition::kNotModified:
      SetObjectHeaders(ctx, info);
      SetServedContentHeaders(ctx, ContentType(ctx, info));
      ctx.res.status = 304;
      *answered = true;
      return absl::OkStatus();
    case Precondition::kFailed:
      return S3Status("PreconditionFailed",
                      "At least one of the pre-conditions you specified did not hold");
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status HeadObject(RequestContext& ctx) {
  auto info = ctx.volume->Stat(ctx.key);
  if (!info.ok()) {
    return NotAnObject(info.status());
  }
  bool answered = false;
  absl::Status status = CheckPreconditions(ctx, *info, &answered);
  if (!status.ok() || answered) {
    return status;
  }
  auto range = ParseRange(ctx.Header("Range"), info->size);
  if (!range.ok()) {
    return range.status();
  }
  SetObjectHeaders(ctx, *info);
  SetOverrides(ctx);
  ctx.res.set_header("Content-Type", ContentType(ctx, *info));
  SetServedContentHeaders(ctx, ContentType(ctx, *info));
  if (*range) {
    ctx.res.set_header("Content-Range",
                       absl::StrCat("bytes ", (*range)->first, "-",
                                    (*range)->first + (*range)->length - 1, "/", info->size));
    ctx.res.set_header("Content-Length", absl::StrCat((*range)->length));
    ctx.res.status = 206;
  } else {
    ctx.res.set_header("Content-Length", absl::StrCat(info->size));
    ctx.res.status = 200;
  }
  return absl::OkStatus();
}

absl::Status GetObject(RequestContext& ctx) {
  auto opened = ctx.volume->Open(ctx.key);
  if (!opened.ok()) {
    return NotAnObject(opened.status());
  }
  std::shared_ptr<ObjectReader> reader = *std::move(opened);
  const ObjectInfo& info = reader->info();
  bool answered = false;
  absl::Status status = CheckPreconditions(ctx, info, &answered);
  if (!status.ok() || answered) {
    return status;
  }
  auto range = ParseRange(ctx.Header("Range"), info.size);
  if (!range.ok()) {
    ctx.res.set_header("Content-Range", absl::StrCat("bytes */", info.size));
    return range.status();
  }
  int64_t first = 0;
  int64_t length = info.size;
  ctx.res.status = 200;
  if (*range) {
    first = (*range)->first;
    length = (*range)->length;
    ctx.res.status = 206;
    ctx.res.set_header("Content-Range",
                       absl::StrCat("bytes ", first, "-", first + length - 1, "/", info.size));
  }
  SetObjectHeaders(ctx, info);
  SetOverrides(ctx);
  std::string content_type = ContentType(ctx, info);
  SetServedContentHeaders(ctx, content_type);
  if (length == 0) {
    ctx.res.set_header("Content-Type", content_type);
    ctx.res.set_header("Content-Length", "0");
    return absl::OkStatus();
  }
  auto buffer = std::make_shared<std::vector<char>>(kReadChunk);
  std::shared_ptr<RequestLog> log = ctx.log;
  ctx.res.set_content_provider(
      static_cast<size_t>(length), content_type,
      [reader, buffer, log, first](size_t offset, size_t want, http::DataSink& sink) {
        auto n = reader->ReadAt(first + static_cast<int64_t>(offset), buffer->data(),
                                std::min(want, buffer->size()));
        if (!n.ok() || *n == 0 || !sink.write(buffer->data(), *n)) {
          log->aborted = true;
          return false;
        }
        log->bytes_out += static_cast<int64_t>(*n);
        return true;
      },
      [log](bool success) {
        if (!success) {
          log->aborted = true;
        }
      });
  return absl::OkStatus();
}

}  // namespace gpuaas::storage::s3
