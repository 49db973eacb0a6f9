#include "bench/stock/bench_client.h"

#include <filesystem>

#include "absl/strings/str_cat.h"
#include "bench/loadgen/node_agent_token.h"
#include "libs/client/auth_client.h"
#include "libs/client/call_context.h"
#include "libs/client/channel.h"
#include "libs/common/files.h"
#include "libs/common/status_macros.h"
#include "libs/rpc/status.h"

namespace gpuaas::stock::bench {
namespace {

// Tokens live 15 minutes by default; a fresh one well before that.
constexpr absl::Duration kTokenRefresh = absl::Minutes(5);

}  // namespace

absl::Status FromGrpc(const grpc::Status& s, const std::string& what) {
  absl::Status st = rpc::FromGrpcStatus(s);
  if (st.ok()) return st;
  return absl::Status(st.code(), absl::StrCat(what, ": ", st.message()));
}

absl::StatusOr<std::unique_ptr<BenchClient>> BenchClient::Connect(const ConnectFlags& flags,
                                                                  int extra_channels) {
  std::unique_ptr<BenchClient> c(new BenchClient());
  c->flags_ = flags;
  std::error_code ec;
  client::Settings settings(client::ProcessEnv(), std::filesystem::current_path(ec));
  client::Endpoint given{
      .address = flags.auth_addr,
      .tls = {.ca_file = flags.ca_file, .cert_file = flags.cert_file, .key_file = flags.key_file}};
  GPUAAS_ASSIGN_OR_RETURN(c->auth_endpoint_,
                          client::ResolveEndpoint(client::Service::kAuth, given, settings));
  given.address = flags.stock_addr;
  GPUAAS_ASSIGN_OR_RETURN(c->stock_endpoint_,
                          client::ResolveEndpoint(client::Service::kStock, given, settings));
  GPUAAS_ASSIGN_OR_RETURN(c->flags_.user, settings.Get(flags.user, "GPUAAS_ADMIN_USER", "admin"));
  GPUAAS_ASSIGN_OR_RETURN(std::string password_file,
                          settings.Get(flags.password_file, "GPUAAS_ADMIN_PASSWORD_FILE"));
  if (password_file.empty()) {
    return absl::InvalidArgumentError(
        "--password-file (or GPUAAS_ADMIN_PASSWORD_FILE) is required");
  }
  GPUAAS_ASSIGN_OR_RETURN(c->password_, ReadSecretFile(password_file));
  GPUAAS_ASSIGN_OR_RETURN(c->auth_channel_,
                          client::OpenChannel(c->auth_endpoint_.address, c->auth_endpoint_.tls));
  for (int i = 0; i <= extra_channels; ++i) {
    grpc::ChannelArguments args;
    // Distinct arguments keep gRPC from sharing one connection between channels.
    args.SetInt("gpuaas.stock_bench.connection", i);
    GPUAAS_ASSIGN_OR_RETURN(
        std::shared_ptr<grpc::Channel> channel,
        client::OpenChannel(c->stock_endpoint_.address, c->stock_endpoint_.tls, args));
    c->stock_.push_back(pb::StockService::NewStub(channel));
    if (i == 0) c->agent_ = pb::NodeAgentService::NewStub(channel);
  }
  absl::MutexLock lock(&c->mu_);
  GPUAAS_RETURN_IF_ERROR(c->Login());
  return c;
}

absl::Status BenchClient::Login() {
  auth::v1::LoginRequest req;
  req.set_user_name(flags_.user);
  req.set_password(password_);
  absl::StatusOr<auth::v1::LoginResponse> resp =
      client::AuthClient(auth_channel_, flags_.timeout).Login(req);
  if (!resp.ok()) {
    return absl::Status(resp.status().code(),
                        absl::StrCat("login as ", flags_.user, ": ", resp.status().message()));
  }
  token_ = resp->access_token();
  token_time_ = absl::Now();
  return absl::OkStatus();
}

std::string BenchClient::Token() {
  absl::MutexLock lock(&mu_);
  if (absl::Now() - token_time_ > kTokenRefresh) {
    // A failed refresh keeps the old token: the calls then fail and say why.
    (void)Login();
  }
  return token_;
}

std::unique_ptr<grpc::ClientContext> BenchClient::NewContext() {
  client::CallContext call;
  call.set_timeout(flags_.timeout).set_bearer_token(Token());
  return call.NewClientContext();
}

absl::Status BenchClient::RegisterNode(const pb::Node& node) {
  // As the node's own agent: only it makes the node's calls.
  GPUAAS_ASSIGN_OR_RETURN(
      const std::string token,
      gpuaas::bench::NodeAgentToken(client::AuthClient(auth_channel_, flags_.timeout), Token(),
                                    node.node_id()));
  client::CallContext call;
  call.set_timeout(flags_.timeout).set_bearer_token(token);
  pb::RegisterNodeRequest req;
  *req.mutable_node() = node;
  pb::RegisterNodeResponse out;
  return FromGrpc(agent().RegisterNode(call.NewClientContext().get(), req, &out),
                  absl::StrCat("RegisterNode ", node.node_id()));
}

absl::Status BenchClient::EnsureSpec(const pb::Spec& spec) {
  pb::CreateSpecRequest req;
  *req.mutable_spec() = spec;
  pb::Spec out;
  return FromGrpc(stock().CreateSpec(NewContext().get(), req, &out),
                  absl::StrCat("CreateSpec ", spec.spec_name()));
}

absl::StatusOr<pb::StockCount> BenchClient::Summary(const std::string& spec) {
  pb::GetStockSummaryRequest req;
  req.set_spec_name(spec);
  pb::GetStockSummaryResponse out;
  GPUAAS_RETURN_IF_ERROR(FromGrpc(stock().GetStockSummary(NewContext().get(), req, &out),
                                  absl::StrCat("GetStockSummary ", spec)));
  return out.counts().empty() ? pb::StockCount{} : out.counts(0);
}

absl::StatusOr<int64_t> BenchClient::TotalStocks() {
  pb::GetStockSummaryResponse out;
  GPUAAS_RETURN_IF_ERROR(
      FromGrpc(stock().GetStockSummary(NewContext().get(), {}, &out), "GetStockSummary"));
  int64_t total = 0;
  for (const pb::StockCount& c : out.counts()) total += c.total();
  return total;
}

absl::StatusOr<std::vector<pb::Node>> BenchClient::AllNodes() {
  std::vector<pb::Node> nodes;
  pb::ListNodesRequest req;
  req.set_page_size(500);
  do {
    pb::ListNodesResponse page;
    GPUAAS_RETURN_IF_ERROR(
        FromGrpc(stock().ListNodes(NewContext().get(), req, &page), "ListNodes"));
    for (pb::Node& n : *page.mutable_nodes()) nodes.push_back(std::move(n));
    req.set_page_token(page.next_page_token());
  } while (!req.page_token().empty());
  return nodes;
}

}  // namespace gpuaas::stock::bench
