// REST to protobuf and back: a route's request message from the path's variables, the query
// string and the JSON body; an answer as JSON with the proto's own field names (as grpcurl
// prints them: fields at their default value left out, int64 as strings, enums by name).
#pragma once

#include <google/protobuf/message.h>

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "services/gateway/route_table.h"

namespace gpuaas::gateway {

// The request of `match`'s method. The body (JSON, either field name form) fills the whole
// request (body "*") or one field of it; each path variable then sets its field; any other
// field may come as a query parameter (`page_size=10`, `filter.state=STATE_RUNNING`,
// `tags=a&tags=b` for a repeated one) unless the body carries it. INVALID_ARGUMENT naming the
// parameter or the body's problem.
absl::StatusOr<std::unique_ptr<google::protobuf::Message>> TranscodeRequest(const RouteMatch& match,
                                                                            absl::string_view query,
                                                                            absl::string_view body);

// A JSON request body (either field name form; blank is {}) into `message`. INVALID_ARGUMENT
// "body: ..." naming the problem.
absl::Status ParseJsonBody(absl::string_view body, google::protobuf::Message& message);

// `message` as JSON.
std::string MessageToJson(const google::protobuf::Message& message);

// The query string's pairs, `+` and percent escapes decoded. INVALID_ARGUMENT on a malformed
// escape.
absl::StatusOr<std::vector<std::pair<std::string, std::string>>> ParseQuery(
    absl::string_view query);

}  // namespace gpuaas::gateway
