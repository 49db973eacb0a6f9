#include "services/storage/s3/dispatcher.h"

#include <exception>
#include <random>
#include <utility>

#include "absl/strings/str_format.h"
#include "libs/authz/storage_access.h"
#include "libs/common/logging.h"
#include "services/storage/s3/errors.h"
#include "services/storage/s3/handlers.h"
#include "services/storage/s3/metrics.h"
#include "services/storage/s3/object_key_form.h"

namespace gpuaas::storage::s3 {
namespace {

std::shared_ptr<spdlog::logger> Log() {
  static const auto* logger = new std::shared_ptr<spdlog::logger>(Logger("s3"));
  return *logger;
}

absl::Status NoSuchBucket() {
  return S3Status("NoSuchBucket", "The specified bucket does not exist");
}

// Authorization's answer in S3 terms: another tenant's storage, or one the key is not scoped
// to, is NoSuchBucket, so nobody learns that it exists.
absl::Status FromAuthz(const absl::Status& status) {
  if (status.ok()) {
    return status;
  }
  if (status.code() == absl::StatusCode::kNotFound) {
    return NoSuchBucket();
  }
  if (status.code() == absl::StatusCode::kPermissionDenied) {
    return S3Status("AccessDenied", status.message());
  }
  return status;
}

// A Directory or Backend lookup that failed for a reason other than absence.
absl::Status Unavailable(const absl::Status& status) {
  if (status.code() == absl::StatusCode::kUnavailable ||
      status.code() == absl::StatusCode::kDeadlineExceeded ||
      status.code() == absl::StatusCode::kAborted || status.code() == absl::StatusCode::kUnknown) {
    return S3Status("ServiceUnavailable", "Please reduce your request rate or retry.");
  }
  return status;
}

std::string_view NotFoundCode(Operation op) {
  switch (op) {
    case Operation::kUploadPart:
    case Operation::kListParts:
    case Operation::kCompleteMultipartUpload:
    case Operation::kAbortMultipartUpload:
      return "NoSuchUpload";
    case Operation::kHeadBucket:
    case Operation::kGetBucketLocation:
    case Operation::kListObjects:
    case Operation::kListObjectsV2:
    case Operation::kListMultipartUploads:
      return "NoSuchBucket";
    default:
      return "NoSuchKey";
  }
}

}  // namespace

RequestLog::~RequestLog() {
  absl::Duration latency = absl::Now() - start;
  auto logger = Log();
  if (logger->should_log(spdlog::level::info)) {
    logger->info("{} {} bucket={} status={}{}{} in={} out={} ms={:.1f} caller={} id={}", method,
                 operation, bucket.empty() ? "-" : bucket, status,
                 error_code.empty() ? "" : " code=", error_code, bytes_in, bytes_out,
                 absl::ToDoubleMilliseconds(latency), caller.empty() ? "-" : caller,
                 request_id + (aborted ? " aborted" : ""));
  }
  if (metrics != nullptr) {
    metrics->Record(operation, status, bytes_in, bytes_out, latency);
  }
}

Dispatcher::Dispatcher(DispatcherOptions options, Directory& directory, const Backends& backends,
                       authz::Authenticator& tokens, const Clock& clock, S3Metrics* metrics)
    : options_(std::move(options)),
      directory_(directory),
      backends_(backends),
      clock_(clock),
      metrics_(metrics),
      authenticator_(directory, tokens, clock, options_.region, options_.max_clock_skew),
      cors_(options_.cors_origins),
      next_request_id_(std::random_device{}() * uint64_t{0x9E3779B97F4A7C15}) {}

void Dispatcher::Handle(const http::HttpRequest& req, http::HttpResponse& res,
                        const http::ContentReader* body) {
  RequestContext ctx(req, res, body);
  ctx.request_id = absl::StrFormat("%016X", next_request_id_.fetch_add(1));
  ctx.method = req.method;
  ctx.now = clock_.Now();
  RequestLog& log = *ctx.log;
  log.start = absl::Now();
  log.request_id = ctx.request_id;
  log.method = req.method;
  log.metrics = metrics_;
  res.set_header("x-amz-request-id", ctx.request_id);
  res.set_header("Server", "gpuaas");
  // Before serving, so that error answers reach the console's page too.
  cors_.AddResponseHeaders(req, res);
  if (cors_.AnswerPreflight(req, res)) {
    log.operation = "CorsPreflight";
    log.status = res.status;
    return;
  }

  absl::Status status;
  try {
    status = Serve(ctx);
  } catch (const std::exception& e) {
    Log()->error("request {}: {}", ctx.request_id, e.what());
    status = absl::InternalError("exception");
  }
  if (!status.ok()) {
    SendError(ctx, status);
  }
  if (body != nullptr && !ctx.body_consumed) {
    // The rest of the body is still on the wire; the transport closes the connection.
    res.set_header("Connection", "close");
  }
  log.operation = std::string(OperationName(ctx.op));
  log.bucket = ctx.bucket;
  log.caller = ctx.auth.caller.name;
  log.status = res.status;
}

absl::Status Dispatcher::Serve(RequestContext& ctx) {
  absl::Status status = ParseTarget(ctx);
  if (!status.ok()) {
    return status;
  }
  ctx.op = Route(ctx.method, !ctx.bucket.empty(), !ctx.key.empty(), ctx.query,
                 ctx.HasHeader("x-amz-copy-source"));

  AuthInput in;
  in.method = ctx.method;
  in.decoded_path = ctx.decoded_path;
  in.query = &ctx.query;
  in.header_values = [&ctx](std::string_view name) {
    std::vector<std::string> values;
    auto [begin, end] = ctx.http.headers.equal_range(std::string(name));
    for (auto it = begin; it != end; ++it) {
      values.push_back(it->second);
    }
    return values;
  };
  for (const auto& [name, value] : ctx.http.headers) {
    in.header_names.push_back(name);
  }
  auto auth = authenticator_.Authenticate(in);
  if (!auth.ok()) {
    return auth.status();
  }
  ctx.auth = *std::move(auth);

  switch (ctx.op) {
    case Operation::kNotImplemented:
      return S3Status("NotImplemented",
                      "A header or query you provided implies functionality that is not "
                      "implemented");
    case Operation::kMethodNotAllowed:
      return S3Status("MethodNotAllowed",
                      "The specified method is not allowed against this resource.");
    case Operation::kListBuckets:
      return ListBuckets(ctx, directory_);
    default:
      break;
  }
  status = OpenBucket(ctx);
  if (!status.ok()) {
    return status;
  }
  return RunOperation(ctx);
}

absl::Status Dispatcher::ParseTarget(RequestContext& ctx) {
  std::string_view target = ctx.http.target;
  size_t question = target.find('?');
  std::string_view raw_path = target.substr(0, question);
  std::string_view raw_query =
      question == std::string_view::npos ? std::string_view() : target.substr(question + 1);
  auto path = UriDecode(raw_path, false);
  if (!path.ok() || path->empty() || (*path)[0] != '/') {
    return S3Status("InvalidURI", "Couldn't parse the specified URI.");
  }
  ctx.decoded_path = *std::move(path);
  auto query = ParseQuery(raw_query);
  if (!query.ok()) {
    return S3Status("InvalidURI", "Couldn't parse the specified URI.");
  }
  ctx.query = *std::move(query);
  std::string_view rest = std::string_view(ctx.decoded_path).substr(1);
  size_t slash = rest.find('/');
  ctx.bucket = std::string(rest.substr(0, slash));
  if (slash != std::string_view::npos) {
    ctx.key = std::string(rest.substr(slash + 1));
  }
  return ctx.key.empty() ? absl::OkStatus() : CheckObjectKey(ctx.key);
}

absl::Status Dispatcher::OpenBucket(RequestContext& ctx) {
  authz::DataAction action = ActionOf(ctx.op);
  const Caller& caller = ctx.auth.caller;
  if (caller.grant) {
    absl::Status allowed =
        FromAuthz(authz::AuthorizeStorageData(*caller.grant, ctx.bucket, action));
    if (!allowed.ok()) {
      return allowed;
    }
  }
  auto bucket = directory_.FindBucket(ctx.bucket);
  if (!bucket.ok()) {
    return bucket.status().code() == absl::StatusCode::kNotFound ? NoSuchBucket()
                                                                 : Unavailable(bucket.status());
  }
  if (caller.principal) {
    absl::Status allowed =
        FromAuthz(authz::AuthorizeStorageData(*caller.principal, bucket->tenant_id, action));
    if (!allowed.ok()) {
      return allowed;
    }
  }
  ctx.bucket_info = *std::move(bucket);
  absl::StatusOr<Backend*> backend = backends_.Find(ctx.bucket_info.backend_class);
  if (!backend.ok()) {
    return Unavailable(backend.status());
  }
  auto volume = (*backend)->OpenVolume(ctx.bucket_info.volume_id, ctx.bucket_info.limits);
  if (!volume.ok()) {
    return volume.status().code() == absl::StatusCode::kNotFound ? NoSuchBucket()
                                                                 : Unavailable(volume.status());
  }
  ctx.volume = *std::move(volume);
  return absl::OkStatus();
}

absl::Status Dispatcher::RunOperation(RequestContext& ctx) {
  switch (ctx.op) {
    case Operation::kCreateBucket:
      return CreateBucket(ctx);
    case Operation::kHeadBucket:
      return HeadBucket(ctx, options_.region);
    case Operation::kGetBucketLocation:
      return GetBucketLocation(ctx, options_.region);
    case Operation::kListObjects:
      return ListObjects(ctx, /*v2=*/false);
    case Operation::kListObjectsV2:
      return ListObjects(ctx, /*v2=*/true);
    case Operation::kListMultipartUploads:
      return ListMultipartUploads(ctx);
    case Operation::kDeleteObjects:
      return DeleteObjects(ctx);
    case Operation::kHeadObject:
      return HeadObject(ctx);
    case Operation::kGetObject:
      return GetObject(ctx);
    case Operation::kPutObject:
      return PutObject(ctx);
    case Operation::kCopyObject:
      return CopyObject(ctx);
    case Operation::kDeleteObject:
      return DeleteObject(ctx);
    case Operation::kCreateMultipartUpload:
      return CreateMultipartUpload(ctx);
    case Operation::kUploadPart:
      return UploadPart(ctx);
    case Operation::kListParts:
      return ListParts(ctx);
    case Operation::kCompleteMultipartUpload:
      return CompleteMultipartUpload(ctx);
    case Operation::kAbortMultipartUpload:
      return AbortMultipartUpload(ctx);
    default:
      return S3Status("NotImplemented", "not implemented");
  }
}

void Dispatcher::SendError(RequestContext& ctx, const absl::Status& status) {
  S3Error error = ToS3Error(status, NotFoundCode(ctx.op));
  if (error.code == "InternalError") {
    Log()->error("request {} {} {}: {}", ctx.request_id, ctx.method, OperationName(ctx.op),
                 status.ToString());
  }
  ctx.log->error_code = error.code;
  ctx.res.status = error.http_status;
  // A failover or overload: tell clients (AWS CLI, rclone) to come back rather than give up.
  if (error.http_status == 503) ctx.res.set_header("Retry-After", "1");
  std::string resource = ctx.decoded_path.empty() ? "/" : ctx.decoded_path;
  SendXml(ctx, error.http_status, ErrorDocument(error, resource, ctx.request_id));
}

}  // namespace gpuaas::storage::s3
