// CreateImage as a client that wants the pinned image: images are pinned in the background
// (PENDING, then READY or FAILED), so a test that needs the pin creates, then polls GetImage.
// Header-only: include it where the instance service's proto is linked.
#pragma once

#include <grpcpp/grpcpp.h>

#include <chrono>
#include <functional>
#include <memory>
#include <thread>

#include "absl/strings/str_cat.h"
#include "gpuaas/instance/v1/instance.grpc.pb.h"

namespace gpuaas::testing {

// GetImage of `image` (as CreateImage answered it) until it is no longer PENDING: OK once it is
// READY, FAILED_PRECONDITION with its state_reason once it is FAILED, DEADLINE_EXCEEDED when it
// is still PENDING after `timeout`. `image` is the last answer. `ctx` makes each call's context
// (its token and deadline).
inline grpc::Status AwaitImage(gpuaas::instance::v1::ImageService::Stub& stub,
                               const std::function<std::unique_ptr<grpc::ClientContext>()>& ctx,
                               gpuaas::instance::v1::Image& image,
                               std::chrono::seconds timeout = std::chrono::seconds(60)) {
  namespace pb = gpuaas::instance::v1;
  const auto until = std::chrono::steady_clock::now() + timeout;
  grpc::Status s;
  while (image.state() == pb::IMAGE_STATE_PENDING) {
    if (std::chrono::steady_clock::now() > until) {
      return grpc::Status(grpc::StatusCode::DEADLINE_EXCEEDED, "the image is still PENDING");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    pb::GetImageRequest get;
    get.set_image(absl::StrCat(image.name(), ":", image.version()));
    get.set_tenant_id(image.tenant_id());
    s = stub.GetImage(ctx().get(), get, &image);
    if (!s.ok()) return s;
  }
  if (image.state() == pb::IMAGE_STATE_FAILED) {
    return grpc::Status(grpc::StatusCode::FAILED_PRECONDITION, image.state_reason());
  }
  return grpc::Status::OK;
}

// CreateImage's error; else AwaitImage's answer.
inline grpc::Status CreateImageAndWait(
    gpuaas::instance::v1::ImageService::Stub& stub,
    const std::function<std::unique_ptr<grpc::ClientContext>()>& ctx,
    const gpuaas::instance::v1::CreateImageRequest& req, gpuaas::instance::v1::Image& out,
    std::chrono::seconds timeout = std::chrono::seconds(60)) {
  const grpc::Status s = stub.CreateImage(ctx().get(), req, &out);
  if (!s.ok()) return s;
  return AwaitImage(stub, ctx, out, timeout);
}

}  // namespace gpuaas::testing
