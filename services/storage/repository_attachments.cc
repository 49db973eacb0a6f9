// Attachments of storages to instances.
#include "absl/strings/str_join.h"
#include "libs/common/proto_time.h"
#include "services/storage/repository.h"

namespace gpuaas::storage {
namespace {

// clang-format off
#define GPUAAS_ATTACHMENT_COLUMNS \
  "storage_id, instance_id, node_id, read_only, " GPUAAS_SQL_MICROS("create_time")
#define GPUAAS_ATTACHMENT_FROM "SELECT " GPUAAS_ATTACHMENT_COLUMNS " FROM storage.attachments "
// clang-format on

pb::Attachment AttachmentFromRow(const db::Row& r) {
  pb::Attachment a;
  a.set_storage_id(r.Get<std::string>(0));
  a.set_instance_id(r.Get<std::string>(1));
  a.set_node_id(r.Get<std::string>(2));
  a.set_read_only(r.Get<bool>(3));
  *a.mutable_create_time() = ToProtoTime(r.GetTime(4));
  return a;
}

}  // namespace

std::vector<pb::Attachment> Repository::AttachmentsOf(db::Tx& tx,
                                                      const std::vector<std::string>& storage_ids) {
  // Storage ids never hold ',', so the page's ids travel as one text.
  constexpr std::string_view kAttachmentsOf = GPUAAS_ATTACHMENT_FROM
      "WHERE storage_id = ANY(string_to_array($1, ',')) ORDER BY storage_id, instance_id";
  if (storage_ids.empty()) return {};
  return tx.Exec(kAttachmentsOf, absl::StrJoin(storage_ids, ",")).Map(AttachmentFromRow);
}

std::optional<pb::Attachment> Repository::GetAttachment(db::Tx& tx, const std::string& storage_id,
                                                        const std::string& instance_id) {
  constexpr std::string_view kGetAttachment =
      GPUAAS_ATTACHMENT_FROM "WHERE storage_id = $1 AND instance_id = $2";
  std::optional<db::Row> row = tx.Exec(kGetAttachment, storage_id, instance_id).First();
  if (!row) return std::nullopt;
  return AttachmentFromRow(*row);
}

std::optional<pb::Attachment> Repository::Writer(db::Tx& tx, const std::string& storage_id) {
  constexpr std::string_view kWriter =
      GPUAAS_ATTACHMENT_FROM "WHERE storage_id = $1 AND NOT read_only";
  std::optional<db::Row> row = tx.Exec(kWriter, storage_id).First();
  if (!row) return std::nullopt;
  return AttachmentFromRow(*row);
}

void Repository::InsertAttachment(db::Tx& tx, const pb::Attachment& a) {
  constexpr std::string_view kInsertAttachment =
      "INSERT INTO storage.attachments (storage_id, instance_id, node_id, read_only) "
      "VALUES ($1, $2, $3, $4)";
  tx.Exec(kInsertAttachment, a.storage_id(), a.instance_id(), a.node_id(), a.read_only());
}

std::optional<pb::Attachment> Repository::DeleteAttachment(db::Tx& tx,
                                                           const std::string& storage_id,
                                                           const std::string& instance_id) {
  constexpr std::string_view kDeleteAttachment =
      "DELETE FROM storage.attachments WHERE storage_id = $1 AND instance_id = $2 "
      "RETURNING " GPUAAS_ATTACHMENT_COLUMNS;
  std::optional<db::Row> row = tx.Exec(kDeleteAttachment, storage_id, instance_id).First();
  if (!row) return std::nullopt;
  return AttachmentFromRow(*row);
}

}  // namespace gpuaas::storage
