// The ImageService methods (instance.proto): the platform's catalog and tenants' own images,
// pinned by digest in the background (image_pin_queue.h), their registry logins sealed at rest
// (registry_secrets.h). A tenant role reaches its tenant's images and the catalog; another
// tenant's images do not exist for it. Global roles reach the catalog, and a tenant's images by
// naming the tenant.
//
// CreateImage stores the image PENDING in one short transaction and hands it to the pin queue
// (image_pin_queue.h), whose workers ask the registry: no call waits on a registry.
#pragma once

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gpuaas/instance/v1/instance.pb.h"
#include "libs/authz/principal.h"
#include "libs/common/secret_box.h"
#include "libs/db/db.h"
#include "services/instance/image_pin_queue.h"

namespace gpuaas::instance {

namespace pb = ::gpuaas::instance::v1;

// An image an instance is made from, with its registry login opened.
struct ResolvedImage {
  pb::Image image;
  pb::RegistryCredentials credentials;
};

class Images final {
 public:
  // `box` may be null: the service keeps no secret key, and images with a registry login are
  // refused (FAILED_PRECONDITION). `pins` and `box` must outlive it.
  Images(db::Pool& pool, ImagePinQueue& pins, const SecretBox* box)
      : pool_(pool), pins_(pins), box_(box) {}

  absl::Status CreateImage(const authz::Principal& p, const pb::CreateImageRequest& req,
                           pb::Image& out);
  absl::Status GetImage(const authz::Principal& p, const pb::GetImageRequest& req, pb::Image& out);
  absl::Status ListImages(const authz::Principal& p, const pb::ListImagesRequest& req,
                          pb::ListImagesResponse& out);
  absl::Status DeleteImage(const authz::Principal& p, const pb::DeleteImageRequest& req,
                           pb::DeleteImageResponse& out);

  // The image `ref` ("name:version" or "name") names for an instance of `tenant`: the tenant's
  // own, else the catalog's, with its login opened. The caller checked it may create in
  // `tenant`. Errors: NOT_FOUND "image: ..."; FAILED_PRECONDITION "image: ..." while it is
  // PENDING, when it is FAILED, or when its login cannot be opened (no or another
  // --secret-key-file).
  absl::StatusOr<ResolvedImage> Resolve(const std::string& tenant, const std::string& ref);

  // `credentials` sealed for instance `instance_id` ("" for none). Error: FAILED_PRECONDITION
  // without a secret key.
  absl::StatusOr<std::string> SealForInstance(const pb::RegistryCredentials& credentials,
                                              const std::string& instance_id) const;

 private:
  // The image a create stores: PENDING when it has a reference to pin, its output fields set.
  static pb::Image Prepare(const std::string& tenant, const pb::CreateImageRequest& req);

  db::Pool& pool_;
  ImagePinQueue& pins_;
  const SecretBox* box_;
};

}  // namespace gpuaas::instance
