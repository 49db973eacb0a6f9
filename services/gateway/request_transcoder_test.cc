#include "services/gateway/request_transcoder.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "gpuaas/auth/v1/auth.pb.h"
#include "gpuaas/instance/v1/instance.pb.h"
#include "gpuaas/stock/v1/stock.pb.h"
#include "services/gateway/public_routes_test_base.h"

namespace gpuaas::gateway {
namespace {

using ::testing::HasSubstr;

class RequestTranscoderTest : public PublicRoutesTest {
 protected:
  template <class T>
  absl::StatusOr<T> Transcode(absl::string_view verb, absl::string_view path,
                              absl::string_view query, absl::string_view body) {
    auto match = table_.Find(verb, path);
    if (!match) return absl::NotFoundError("no route");
    auto msg = TranscodeRequest(*match, query, body);
    if (!msg.ok()) return msg.status();
    T out;
    out.CopyFrom(**msg);
    return out;
  }
};

TEST_F(RequestTranscoderTest, TheSeedsCreateStocksBodyInEitherNameForm) {
  auto req = Transcode<stock::v1::CreateStocksRequest>(
      "POST", "/stocks", "",
      R"({"spec_name": "a100.1x", "number": 2, "operationId": "op-1", "gpu_num": 1})");
  ASSERT_TRUE(req.ok()) << req.status();
  EXPECT_EQ(req->spec_name(), "a100.1x");
  EXPECT_EQ(req->number(), 2);
  EXPECT_EQ(req->operation_id(), "op-1");
  EXPECT_EQ(req->gpu_num(), 1);
}

TEST_F(RequestTranscoderTest, QueryParametersFillTheRest) {
  auto req = Transcode<instance::v1::ListInstancesRequest>(
      "GET", "/v1/instances", "page_size=10&page_token=a%2Bb+c&state=STATE_RUNNING", "");
  ASSERT_TRUE(req.ok()) << req.status();
  EXPECT_EQ(req->page_size(), 10);
  EXPECT_EQ(req->page_token(), "a+b c");
  EXPECT_EQ(req->state(), instance::v1::STATE_RUNNING);
}

TEST_F(RequestTranscoderTest, ThePathWinsOverTheBody) {
  auto req = Transcode<instance::v1::StopInstanceRequest>("POST", "/v1/instances/ins-path:stop", "",
                                                          R"({"instance_id": "ins-body"})");
  ASSERT_TRUE(req.ok()) << req.status();
  EXPECT_EQ(req->instance_id(), "ins-path");
}

TEST_F(RequestTranscoderTest, BadInputNamesWhatIsWrong) {
  auto unknown =
      Transcode<instance::v1::ListInstancesRequest>("GET", "/v1/instances", "colour=red", "");
  EXPECT_EQ(unknown.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(unknown.status().message(), HasSubstr("query parameter colour"));
  auto bad_number =
      Transcode<instance::v1::ListInstancesRequest>("GET", "/v1/instances", "page_size=ten", "");
  EXPECT_THAT(bad_number.status().message(), HasSubstr("page_size"));
  auto bad_field =
      Transcode<stock::v1::CreateStocksRequest>("POST", "/stocks", "", R"({"spec": "a100.1x"})");
  EXPECT_EQ(bad_field.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(bad_field.status().message(), HasSubstr("spec"));
  auto not_json = Transcode<stock::v1::CreateStocksRequest>("POST", "/stocks", "", "{number: 1");
  EXPECT_EQ(not_json.status().code(), absl::StatusCode::kInvalidArgument);
  auto body_on_get =
      Transcode<instance::v1::ListInstancesRequest>("GET", "/v1/instances", "", "{}");
  EXPECT_THAT(body_on_get.status().message(), HasSubstr("takes no body"));
  auto query_with_star_body =
      Transcode<stock::v1::CreateStocksRequest>("POST", "/stocks", "number=3", "{}");
  EXPECT_THAT(query_with_star_body.status().message(), HasSubstr("JSON body"));
}

// A well-known type comes as one string; a parameter inside it beside that string is a
// conflict to name, not a JSON exception that drops the connection unanswered.
TEST_F(RequestTranscoderTest, AParameterInsideAWellKnownTypeSetAsAWholeIsRefused) {
  for (const char* query : {"start_time=2026-01-01T00:00:00Z&start_time.seconds=1",
                            "start_time.seconds=1&start_time=2026-01-01T00:00:00Z"}) {
    absl::StatusOr<instance::v1::ListUsageRequest> req;
    ASSERT_NO_THROW(req = Transcode<instance::v1::ListUsageRequest>("GET", "/v1/usage", query, ""))
        << query;
    EXPECT_EQ(req.status().code(), absl::StatusCode::kInvalidArgument) << query;
    EXPECT_THAT(req.status().message(), HasSubstr("start_time")) << query;
  }
  absl::StatusOr<auth::v1::UpdateTenantRequest> patch;
  ASSERT_NO_THROW(patch = Transcode<auth::v1::UpdateTenantRequest>(
                      "PATCH", "/v1/tenants/t-1", "update_mask=quota&update_mask.paths=x", "{}"));
  EXPECT_EQ(patch.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(patch.status().message(), HasSubstr("update_mask"));
  auto whole = Transcode<auth::v1::UpdateTenantRequest>("PATCH", "/v1/tenants/t-1",
                                                        "update_mask=display_name,quota", "{}");
  ASSERT_TRUE(whole.ok()) << whole.status();
  EXPECT_EQ(whole->update_mask().paths_size(), 2);
}

// Percent escapes decode to any byte; one that is not UTF-8 is a 400 naming where it came
// from, not a JSON exception that drops the connection unanswered.
TEST_F(RequestTranscoderTest, BytesThatAreNotUtf8AreRefusedByName) {
  absl::StatusOr<instance::v1::GetInstanceRequest> path;
  ASSERT_NO_THROW(
      path = Transcode<instance::v1::GetInstanceRequest>("GET", "/v1/instances/%FF", "", ""));
  EXPECT_EQ(path.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(path.status().message(), HasSubstr("instance_id"));
  absl::StatusOr<instance::v1::ListInstancesRequest> query;
  ASSERT_NO_THROW(query = Transcode<instance::v1::ListInstancesRequest>("GET", "/v1/instances",
                                                                        "page_token=a%C3%28", ""));
  EXPECT_EQ(query.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(query.status().message(), HasSubstr("page_token"));
  auto utf8 = Transcode<instance::v1::GetInstanceRequest>("GET", "/v1/instances/caf%C3%A9", "", "");
  ASSERT_TRUE(utf8.ok()) << utf8.status();
  EXPECT_EQ(utf8->instance_id(), "caf\u00e9");
}

TEST(MessageToJsonTest, ProtoNamesAsGrpcurlPrintsThem) {
  instance::v1::ListInstancesRequest req;
  req.set_page_size(5);
  req.set_spec_name("a100.1x");
  EXPECT_EQ(MessageToJson(req), R"({"page_size":5,"spec_name":"a100.1x"})");
}

}  // namespace
}  // namespace gpuaas::gateway
