// The shape of the permission matrix tests: every RPC of a service × every kind of caller, from
// the tenant a resource belongs to and from another, plus a call without a token. libs/authz
// decides who may do what; these tests pin its answers RPC by RPC, so a new RPC without a row,
// or a rule that changes, fails a test.
#pragma once

#include <grpcpp/support/status.h>
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

namespace gpuaas::testing {

enum class CallerKind { kViewer, kUser, kOther, kService, kPlatform, kNodeAgent, kProxy, kGateway };

struct MatrixCaller {
  const char* name;
  std::string token;
  CallerKind kind;
};

struct MatrixRow {
  const char* rpc;
  // Makes call number `n` (unique per call: for resources a destructive call consumes).
  std::function<grpc::Status(const std::string& token, int n)> call;
  // The code each kind of caller gets: the resource's tenant's viewer; its member or tenant
  // admin; another tenant's admin; a service; a platform admin.
  grpc::StatusCode viewer, user, other, service, platform;
  // The machines' own keys (issue 22): a node agent of the row's node, and the access proxy.
  // Refused unless the row says otherwise, so a row written before them keeps them out.
  grpc::StatusCode node_agent = grpc::StatusCode::PERMISSION_DENIED;
  grpc::StatusCode proxy = grpc::StatusCode::PERMISSION_DENIED;
  // The gateway's key only vouches for logins' client addresses: it calls nothing itself.
  grpc::StatusCode gateway = grpc::StatusCode::PERMISSION_DENIED;
};

// Runs every row as every caller, and without a token (UNAUTHENTICATED), and checks that the
// rows cover all `methods` RPCs.
inline void RunPermissionMatrix(const std::vector<MatrixRow>& rows,
                                const std::vector<MatrixCaller>& callers, size_t methods) {
  EXPECT_EQ(rows.size(), methods) << "every RPC needs a row";
  int n = 0;
  for (const MatrixRow& row : rows) {
    for (const MatrixCaller& c : callers) {
      SCOPED_TRACE(std::string(row.rpc) + " as " + c.name);
      const grpc::StatusCode want = c.kind == CallerKind::kViewer      ? row.viewer
                                    : c.kind == CallerKind::kUser      ? row.user
                                    : c.kind == CallerKind::kOther     ? row.other
                                    : c.kind == CallerKind::kService   ? row.service
                                    : c.kind == CallerKind::kNodeAgent ? row.node_agent
                                    : c.kind == CallerKind::kProxy     ? row.proxy
                                    : c.kind == CallerKind::kGateway   ? row.gateway
                                                                       : row.platform;
      const grpc::Status s = row.call(c.token, ++n);
      EXPECT_EQ(s.error_code(), want) << s.error_message();
    }
    EXPECT_EQ(row.call("", ++n).error_code(), grpc::StatusCode::UNAUTHENTICATED) << row.rpc;
  }
}

}  // namespace gpuaas::testing
