#include "services/instance/images.h"

#include "absl/strings/str_cat.h"
#include "google/protobuf/util/message_differencer.h"
#include "libs/authz/roles.h"
#include "libs/authz/tenant_scope.h"
#include "libs/common/status_macros.h"
#include "libs/registry_policy/registry_policy.h"
#include "libs/service/paging.h"
#include "libs/service/validate.h"
#include "services/instance/instance_rules.h"
#include "services/instance/oci_reference.h"
#include "services/instance/registry_secrets.h"
#include "services/instance/repository_images.h"

namespace gpuaas::instance {
namespace {

constexpr size_t kMaxUsername = 256;
constexpr size_t kMaxPassword = 4096;

absl::Status ValidateCredentials(const pb::CreateImageRequest& req) {
  if (!req.has_registry_credentials()) return absl::OkStatus();
  const pb::RegistryCredentials& c = req.registry_credentials();
  if (c.username().empty() || c.username().size() > kMaxUsername) {
    return service::InvalidField("registry_credentials.username", "must be 1 to 256 bytes");
  }
  for (char ch : c.username()) {
    if (ch <= ' ' || ch > '~') {
      return service::InvalidField("registry_credentials.username",
                                   "may hold only printable ASCII without spaces");
    }
  }
  // The password itself is never echoed, not even in an error.
  if (c.password().empty() || c.password().size() > kMaxPassword) {
    return service::InvalidField("registry_credentials.password", "must be 1 to 4096 bytes");
  }
  for (char ch : c.password()) {
    if (static_cast<unsigned char>(ch) < ' ' || ch == '\x7f') {
      return service::InvalidField("registry_credentials.password",
                                   "may not hold control characters");
    }
  }
  if (req.image().oci_reference().empty()) {
    return service::InvalidField("registry_credentials", "needs image.oci_reference");
  }
  return absl::OkStatus();
}

// The tenant whose images `p` reaches besides the catalog ("" for the catalog alone), naming
// `requested` (a request's tenant_id): a tenant role's own tenant (naming another is NOT_FOUND),
// a global role's named one.
absl::StatusOr<std::string> ImageTenant(const authz::Principal& p, const std::string& requested,
                                        std::string_view field) {
  if (!requested.empty()) GPUAAS_RETURN_IF_ERROR(service::ValidateSlug(field, requested));
  GPUAAS_ASSIGN_OR_RETURN(const std::string scope, authz::TenantScope(p));
  if (scope.empty()) return requested;
  if (!requested.empty() && requested != scope) return absl::NotFoundError("tenant not found");
  return scope;
}

absl::Status ImageNotFound(const std::string& ref) {
  return absl::NotFoundError(absl::StrCat("image: ", ref, " not found"));
}

// `tenant`'s image, else the catalog's.
std::optional<ImageRow> FindImage(db::Tx& tx, const std::string& tenant, const std::string& name,
                                  const std::string& version) {
  if (!tenant.empty()) {
    if (std::optional<ImageRow> own = repo::GetImage(tx, tenant, name, version)) return own;
  }
  return repo::GetImage(tx, "", name, version);
}

// What two creates of one image must agree on (the pin is the first create's).
pb::Image Comparable(pb::Image image) {
  image.clear_create_time();
  image.clear_oci_digest_reference();
  image.clear_registry_password_set();
  image.clear_state();
  image.clear_state_reason();
  (void)image.mutable_defaults();  // an empty template stored reads back as set
  return image;
}

// The reference's grammar and its registry's host and port, without DNS or the network.
absl::Status ValidateReference(const std::string& reference) {
  if (reference.empty()) return absl::OkStatus();
  GPUAAS_ASSIGN_OR_RETURN(const OciReference ref,
                          ParseOciReference("image.oci_reference", reference));
  if (!registry::ParseRegistryAddress(ref.host).ok()) {
    return service::InvalidField("image.oci_reference", "names no valid registry host:port");
  }
  return absl::OkStatus();
}

}  // namespace

pb::Image Images::Prepare(const std::string& tenant, const pb::CreateImageRequest& req) {
  pb::Image image = req.image();
  image.clear_create_time();
  image.clear_oci_digest_reference();
  image.clear_registry_password_set();
  image.clear_state_reason();
  image.set_tenant_id(tenant);
  image.set_registry_username(req.registry_credentials().username());
  image.set_state(image.oci_reference().empty() ? pb::IMAGE_STATE_READY : pb::IMAGE_STATE_PENDING);
  return image;
}

absl::Status Images::CreateImage(const authz::Principal& p, const pb::CreateImageRequest& req,
                                 pb::Image& out) {
  GPUAAS_RETURN_IF_ERROR(ValidateImage(req.image()));
  GPUAAS_RETURN_IF_ERROR(ValidateCredentials(req));
  GPUAAS_RETURN_IF_ERROR(ValidateReference(req.image().oci_reference()));
  GPUAAS_ASSIGN_OR_RETURN(const std::string tenant,
                          ImageTenant(p, req.image().tenant_id(), "image.tenant_id"));
  GPUAAS_RETURN_IF_ERROR(tenant.empty()
                             ? authz::RequirePower(p, authz::Power::kPlatform, "adding images")
                             : authz::RequirePower(p, authz::Power::kUse, "adding images"));
  const pb::Image& asked = req.image();
  const pb::RegistryCredentials& login = req.registry_credentials();
  if (!login.username().empty() && box_ == nullptr) {
    return absl::FailedPreconditionError(
        "registry_credentials: this service keeps no secrets (gpuaas-instance "
        "--secret-key-file)");
  }
  const std::string aad = ImageSecretAad(tenant, asked.name(), asked.version());
  // A create of what is stored answers it (and pins a FAILED one again); anything else under
  // its key is ALREADY_EXISTS. Runs in a transaction.
  const auto answer_taken = [&](db::Tx& tx, const ImageRow& taken,
                                const pb::Image& wanted) -> absl::Status {
    bool same = google::protobuf::util::MessageDifferencer::Equals(Comparable(taken.image),
                                                                   Comparable(wanted));
    if (same && !taken.registry_secret.empty()) {
      absl::StatusOr<pb::RegistryCredentials> kept =
          box_ == nullptr ? absl::FailedPreconditionError("no key")
                          : OpenCredentials(*box_, taken.registry_secret, aad);
      same = kept.ok() && kept->password() == login.password();
    }
    if (!same) {
      return absl::AlreadyExistsError(absl::StrCat("image: ", asked.name(), ":", asked.version(),
                                                   " exists with other contents"));
    }
    out = taken.image;
    if (repo::RepinImage(tx, tenant, asked.name(), asked.version())) {
      out.set_state(pb::IMAGE_STATE_PENDING);
      out.clear_state_reason();
    }
    return absl::OkStatus();
  };
  pb::Image wanted = asked;
  wanted.set_tenant_id(tenant);
  wanted.set_registry_username(login.username());
  const pb::Image image = Prepare(tenant, req);
  std::string sealed;
  if (box_ != nullptr) {
    GPUAAS_ASSIGN_OR_RETURN(sealed, SealCredentials(*box_, login, aad));
  }
  GPUAAS_RETURN_IF_ERROR(
      pool_.RunInTransaction("instance.create_image", [&](db::Tx& tx) -> absl::Status {
        if (std::optional<ImageRow> taken =
                repo::GetImage(tx, tenant, image.name(), image.version())) {
          return answer_taken(tx, *taken, wanted);
        }
        repo::InsertImage(tx, image, sealed);
        out = repo::GetImage(tx, tenant, image.name(), image.version())->image;
        return absl::OkStatus();
      }));
  // The registry is asked by the pin queue's workers, never on this thread.
  if (out.state() == pb::IMAGE_STATE_PENDING) {
    pins_.Add(PinKey{tenant, out.name(), out.version()});
  }
  return absl::OkStatus();
}

absl::Status Images::GetImage(const authz::Principal& p, const pb::GetImageRequest& req,
                              pb::Image& out) {
  GPUAAS_RETURN_IF_ERROR(service::ValidateRequired("image", req.image()));
  GPUAAS_RETURN_IF_ERROR(authz::RequirePower(p, authz::Power::kRead, "reading images"));
  GPUAAS_ASSIGN_OR_RETURN(const std::string tenant, ImageTenant(p, req.tenant_id(), "tenant_id"));
  auto [name, version] = SplitImageRef(req.image());
  return pool_.RunInTransaction("instance.get_image", [&](db::Tx& tx) -> absl::Status {
    std::optional<ImageRow> row = FindImage(tx, tenant, name, version);
    if (!row) return ImageNotFound(req.image());
    out = std::move(row->image);
    return absl::OkStatus();
  });
}

absl::Status Images::ListImages(const authz::Principal& p, const pb::ListImagesRequest& req,
                                pb::ListImagesResponse& out) {
  GPUAAS_ASSIGN_OR_RETURN(service::PageRequest page,
                          service::ParsePage(req.page_size(), req.page_token()));
  GPUAAS_RETURN_IF_ERROR(authz::RequirePower(p, authz::Power::kRead, "listing images"));
  GPUAAS_ASSIGN_OR_RETURN(const std::string tenant, ImageTenant(p, req.tenant_id(), "tenant_id"));
  return pool_.RunInTransaction("instance.list_images", [&](db::Tx& tx) -> absl::Status {
    service::FillPage(page, repo::ListImages(tx, tenant, req.name(), page.after, page.limit),
                      *out.mutable_images(), *out.mutable_next_page_token(), repo::ImageKey);
    return absl::OkStatus();
  });
}

absl::Status Images::DeleteImage(const authz::Principal& p, const pb::DeleteImageRequest& req,
                                 pb::DeleteImageResponse& out) {
  auto [name, version] = SplitImageRef(req.image());
  if (name.empty() || version.empty()) {
    return service::InvalidField("image", "want name:version");
  }
  GPUAAS_RETURN_IF_ERROR(authz::RequirePower(p, authz::Power::kUse, "deleting images"));
  GPUAAS_ASSIGN_OR_RETURN(const std::string tenant, ImageTenant(p, req.tenant_id(), "tenant_id"));
  return pool_.RunInTransaction("instance.delete_image", [&](db::Tx& tx) -> absl::Status {
    std::optional<ImageRow> row = FindImage(tx, tenant, name, version);
    if (!row) return ImageNotFound(req.image());
    const std::string& owner = row->image.tenant_id();
    if (owner.empty()) {
      GPUAAS_RETURN_IF_ERROR(
          authz::RequirePower(p, authz::Power::kPlatform, "deleting the catalog's images"));
    }
    repo::DeleteImage(tx, owner, name, version);
    return absl::OkStatus();
  });
}

absl::StatusOr<ResolvedImage> Images::Resolve(const std::string& tenant, const std::string& ref) {
  auto [name, version] = SplitImageRef(ref);
  GPUAAS_ASSIGN_OR_RETURN(
      std::optional<ImageRow> row,
      pool_.Read<std::optional<ImageRow>>(
          "instance.get_image", [&](db::Tx& tx) -> absl::StatusOr<std::optional<ImageRow>> {
            return FindImage(tx, tenant, name, version);
          }));
  if (!row) return ImageNotFound(ref);
  if (row->image.state() == pb::IMAGE_STATE_PENDING) {
    return absl::FailedPreconditionError(absl::StrCat(
        "image: ", ref, " is still being pinned (PENDING); create the instance once it is READY"));
  }
  if (row->image.state() == pb::IMAGE_STATE_FAILED) {
    return absl::FailedPreconditionError(absl::StrCat("image: ", ref, " could not be pinned (",
                                                      row->image.state_reason(),
                                                      "); create the image again to retry"));
  }
  ResolvedImage resolved{.image = std::move(row->image), .credentials = {}};
  if (row->registry_secret.empty()) return resolved;
  const pb::Image& image = resolved.image;
  absl::StatusOr<pb::RegistryCredentials> login =
      box_ == nullptr
          ? absl::FailedPreconditionError("no --secret-key-file")
          : OpenCredentials(*box_, row->registry_secret,
                            ImageSecretAad(image.tenant_id(), image.name(), image.version()));
  if (!login.ok()) {
    return absl::FailedPreconditionError(
        absl::StrCat("image: ", ref, "'s registry login cannot be opened (",
                     login.status().message(), "); was the service's --secret-key-file changed?"));
  }
  resolved.credentials = *std::move(login);
  return resolved;
}

absl::StatusOr<std::string> Images::SealForInstance(const pb::RegistryCredentials& credentials,
                                                    const std::string& instance_id) const {
  if (credentials.username().empty()) return std::string();
  if (box_ == nullptr) return absl::FailedPreconditionError("no --secret-key-file");
  return SealCredentials(*box_, credentials, InstanceSecretAad(instance_id));
}

}  // namespace gpuaas::instance
