// Signs the load generator's S3 requests the way the AWS CLI does (SigV4 in the Authorization
// header), with the data plane's own SigV4 functions, so what is measured is the server and
// not a client's Python.
#pragma once

#include <httplib.h>

#include <string>
#include <string_view>

#include "absl/time/time.h"

namespace gpuaas::storage::bench {

struct S3Credentials {
  std::string access_key_id;
  std::string secret_access_key;
  std::string region = "us-east-1";
};

// The headers that sign `method path` (path percent-decoded, no query) for `host`; the payload
// is UNSIGNED-PAYLOAD.
httplib::Headers SignRequest(const S3Credentials& credentials, std::string_view method,
                             std::string_view path, std::string_view host, absl::Time now);

}  // namespace gpuaas::storage::bench
