#include "services/instance/repository_images.h"

#include "absl/strings/str_cat.h"
#include "libs/common/proto_time.h"
#include "libs/db/rows.h"

namespace gpuaas::instance::repo {
namespace {

// clang-format off
#define GPUAAS_IMAGE_FROM                                                                        \
  "SELECT name, version, description, command, oci_reference, defaults, "                        \
  GPUAAS_SQL_MICROS("create_time") ", tenant_id, oci_digest_reference, registry_username, "      \
  "registry_secret, deny_egress, pin_state, pin_failure FROM instance.images "
// The paging key, as ImageKey spells it.
#define GPUAAS_IMAGE_KEY "name || ':' || version || '/' || tenant_id"
// clang-format on

pb::ImageState StateFromText(const std::string& text) {
  if (text == "PENDING") return pb::IMAGE_STATE_PENDING;
  if (text == "FAILED") return pb::IMAGE_STATE_FAILED;
  return pb::IMAGE_STATE_READY;
}

std::string_view StateText(pb::ImageState state) {
  switch (state) {
    case pb::IMAGE_STATE_PENDING:
      return "PENDING";
    case pb::IMAGE_STATE_FAILED:
      return "FAILED";
    default:
      return "READY";
  }
}

ImageRow ImageFromRow(const db::Row& r) {
  ImageRow row;
  pb::Image& i = row.image;
  i.set_name(r.Get<std::string>(0));
  i.set_version(r.Get<std::string>(1));
  i.set_description(r.Get<std::string>(2));
  i.set_command(r.Get<std::string>(3));
  i.set_oci_reference(r.Get<std::string>(4));
  (void)i.mutable_defaults()->ParseFromString(r.GetBytes(5));
  *i.mutable_create_time() = ToProtoTime(r.GetTime(6));
  i.set_tenant_id(r.Get<std::string>(7));
  i.set_oci_digest_reference(r.Get<std::string>(8));
  i.set_registry_username(r.Get<std::string>(9));
  row.registry_secret = r.GetBytes(10);
  i.set_registry_password_set(!row.registry_secret.empty());
  i.set_deny_egress(r.Get<bool>(11));
  i.set_state(StateFromText(r.Get<std::string>(12)));
  i.set_state_reason(r.Get<std::string>(13));
  return row;
}

}  // namespace

std::optional<ImageRow> GetImage(db::Tx& tx, const std::string& tenant, const std::string& name,
                                 const std::string& version) {
  // No version: the newest.
  constexpr std::string_view kGet = GPUAAS_IMAGE_FROM
      "WHERE tenant_id = $1 AND name = $2 AND ($3 = '' OR version = $3) "
      "ORDER BY create_time DESC, version DESC LIMIT 1";
  std::optional<db::Row> row = tx.Exec(kGet, tenant, name, version).First();
  if (!row) return std::nullopt;
  return ImageFromRow(*row);
}

void InsertImage(db::Tx& tx, const pb::Image& image, const std::string& registry_secret) {
  constexpr std::string_view kInsert =
      "INSERT INTO instance.images (tenant_id, name, version, description, command, "
      "oci_reference, defaults, oci_digest_reference, registry_username, registry_secret, "
      "deny_egress, pin_state) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)";
  tx.Exec(kInsert, image.tenant_id(), image.name(), image.version(), image.description(),
          image.command(), image.oci_reference(), db::Bytes{image.defaults().SerializeAsString()},
          image.oci_digest_reference(), image.registry_username(), db::Bytes{registry_secret},
          image.deny_egress(), std::string(StateText(image.state())));
}

bool RepinImage(db::Tx& tx, const std::string& tenant, const std::string& name,
                const std::string& version) {
  constexpr std::string_view kRepin =
      "UPDATE instance.images SET pin_state = 'PENDING', pin_failure = '' "
      "WHERE tenant_id = $1 AND name = $2 AND version = $3 AND pin_state = 'FAILED'";
  return tx.Exec(kRepin, tenant, name, version).affected_rows() > 0;
}

bool FinishPin(db::Tx& tx, const PinKey& key, const std::string& oci_reference,
               const std::string& digest_reference, const std::string& failure) {
  constexpr std::string_view kFinish =
      "UPDATE instance.images SET pin_state = CASE WHEN $5 = '' THEN 'READY' ELSE 'FAILED' END, "
      "oci_digest_reference = $6, pin_failure = $5 "
      "WHERE tenant_id = $1 AND name = $2 AND version = $3 AND oci_reference = $4 "
      "AND pin_state = 'PENDING'";
  return tx.Exec(kFinish, key.tenant, key.name, key.version, oci_reference, failure,
                 digest_reference)
             .affected_rows() > 0;
}

std::vector<PinKey> PendingPins(db::Tx& tx) {
  constexpr std::string_view kPending =
      "SELECT tenant_id, name, version FROM instance.images WHERE pin_state = 'PENDING' "
      "ORDER BY create_time";
  return tx.Exec(kPending).Map([](const db::Row& r) {
    return PinKey{r.Get<std::string>(0), r.Get<std::string>(1), r.Get<std::string>(2)};
  });
}

std::vector<pb::Image> ListImages(db::Tx& tx, const std::string& tenant, const std::string& name,
                                  const std::string& after, int limit) {
  constexpr std::string_view kList = GPUAAS_IMAGE_FROM
      "WHERE tenant_id IN ('', $1) AND ($2 = '' OR name = $2) AND " GPUAAS_IMAGE_KEY
      " > $3 "
      "ORDER BY " GPUAAS_IMAGE_KEY " LIMIT $4";
  return tx.Exec(kList, tenant, name, after, limit).Map([](const db::Row& r) {
    return ImageFromRow(r).image;
  });
}

std::string ImageKey(const pb::Image& image) {
  return absl::StrCat(image.name(), ":", image.version(), "/", image.tenant_id());
}

bool DeleteImage(db::Tx& tx, const std::string& tenant, const std::string& name,
                 const std::string& version) {
  constexpr std::string_view kDelete =
      "DELETE FROM instance.images WHERE tenant_id = $1 AND name = $2 AND version = $3";
  return tx.Exec(kDelete, tenant, name, version).affected_rows() > 0;
}

}  // namespace gpuaas::instance::repo
