// The SQL of images: the platform's catalog (tenant "") and each tenant's own.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "gpuaas/instance/v1/instance.pb.h"
#include "libs/db/db.h"

namespace gpuaas::instance {

namespace pb = ::gpuaas::instance::v1;

// An image as stored: the message (tenant_id, the pinned reference, registry_username and
// registry_password_set filled) and its sealed registry login (registry_secrets.h).
struct ImageRow {
  pb::Image image;
  std::string registry_secret;
};

// An image being pinned (image_pin_queue.h).
struct PinKey {
  std::string tenant, name, version;
};

namespace repo {

// `tenant`'s image ("" for the catalog's), the newest version of `name` when `version` is "".
std::optional<ImageRow> GetImage(db::Tx& tx, const std::string& tenant, const std::string& name,
                                 const std::string& version);
// Inserts `image` under image.tenant_id(), in image.state() (READY for UNSPECIFIED). Throws
// unique_violation for a taken key.
void InsertImage(db::Tx& tx, const pb::Image& image, const std::string& registry_secret);
// A FAILED image made PENDING again; false when it is not FAILED.
bool RepinImage(db::Tx& tx, const std::string& tenant, const std::string& name,
                const std::string& version);
// A PENDING image of `oci_reference` made READY at `digest_reference` (failure "") or FAILED
// with `failure`; false when it is no longer PENDING or names another reference.
bool FinishPin(db::Tx& tx, const PinKey& key, const std::string& oci_reference,
               const std::string& digest_reference, const std::string& failure);
// Every PENDING image, oldest first.
std::vector<PinKey> PendingPins(db::Tx& tx);
// The catalog's images and `tenant`'s (the catalog's alone for ""), of `name` when not "",
// ordered by name, version, then tenant ("" first), after the key `after` (ImageKey).
std::vector<pb::Image> ListImages(db::Tx& tx, const std::string& tenant, const std::string& name,
                                  const std::string& after, int limit);
// The paging key of an image: "name:version/tenant".
std::string ImageKey(const pb::Image& image);
bool DeleteImage(db::Tx& tx, const std::string& tenant, const std::string& name,
                 const std::string& version);

}  // namespace repo
}  // namespace gpuaas::instance
