#include "tools/gpuaasctl/storage_tables.h"

#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "tools/gpuaasctl/output.h"
#include "tools/gpuaasctl/price.h"

namespace gpuaas::ctl {
namespace {

// The region the S3 clients sign for; the data plane serves one region.
constexpr char kS3Region[] = "us-east-1";

std::string AttachedCell(const storagepb::Storage& s) {
  std::vector<std::string> parts;
  for (const auto& a : s.attachments()) {
    parts.push_back(absl::StrCat(a.instance_id(), a.read_only() ? ":ro" : ""));
  }
  return absl::StrJoin(parts, ",");
}

std::string Percent(int64_t used, int64_t of) {
  if (of <= 0) return "";
  return absl::StrFormat("%.1f%%", 100.0 * static_cast<double>(used) / static_cast<double>(of));
}

constexpr char kStorageStatePrefix[] = "STORAGE_STATE_";

}  // namespace

absl::StatusOr<storagepb::StorageState> ParseStorageState(std::string_view flag,
                                                          std::string_view name) {
  std::string upper = absl::AsciiStrToUpper(std::string(name));
  if (upper.rfind(kStorageStatePrefix, 0) != 0) upper = absl::StrCat(kStorageStatePrefix, upper);
  storagepb::StorageState state;
  if (!storagepb::StorageState_Parse(upper, &state) ||
      state == storagepb::STORAGE_STATE_UNSPECIFIED) {
    return absl::InvalidArgumentError(absl::StrCat(std::string(flag), ": unknown storage state \"",
                                                   std::string(name),
                                                   "\"; want creating, ready or deleting"));
  }
  return state;
}

std::string StorageStateName(storagepb::StorageState state) {
  if (state == storagepb::STORAGE_STATE_UNSPECIFIED) return "";
  if (!storagepb::StorageState_IsValid(state)) return absl::StrCat(static_cast<int>(state));
  return absl::AsciiStrToLower(
      storagepb::StorageState_Name(state).substr(sizeof(kStorageStatePrefix) - 1));
}

std::string HumanBytes(int64_t bytes) {
  constexpr std::string_view kUnits[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  if (bytes < 1024) return absl::StrCat(bytes, "B");
  double value = static_cast<double>(bytes);
  size_t unit = 0;
  value /= 1024;
  while (value >= 1024 && unit + 1 < std::size(kUnits)) {
    value /= 1024;
    ++unit;
  }
  return absl::StrFormat("%.1f%s", value, kUnits[unit]);
}

std::string StorageSpecTable(
    const google::protobuf::RepeatedPtrField<storagepb::StorageSpec>& specs) {
  Table t({"SPEC", "SIZE", "MAX-FILES", "PRICE/GB/H", "BACKEND", "CREATED", "DESCRIPTION"});
  for (const auto& s : specs) {
    t.AddRow({s.spec_name(), s.size(), absl::StrCat(s.max_files()),
              FormatPriceMicros(s.price_per_gb_hour_micros()), s.backend_class(),
              FormatTimestamp(s.create_time()), s.description()});
  }
  return t.Render();
}

std::string StorageTable(const google::protobuf::RepeatedPtrField<storagepb::Storage>& storages) {
  Table t(
      {"STORAGE", "TENANT", "SPEC", "STATE", "SIZE", "MAX-FILES", "ATTACHED", "CREATED", "NAME"});
  for (const auto& s : storages) {
    t.AddRow({s.storage_id(), s.tenant_id(), s.spec_name(), StorageStateName(s.state()),
              HumanBytes(s.size_bytes()), absl::StrCat(s.max_files()), AttachedCell(s),
              FormatTimestamp(s.create_time()), s.name()});
  }
  return t.Render();
}

std::string StorageDetail(const storagepb::Storage& s) {
  Fields f;
  f.Add("storage", s.storage_id());
  f.Add("name", s.name());
  f.Add("tenant", s.tenant_id());
  f.Add("spec", s.spec_name());
  f.Add("backend", s.backend_class());
  f.Add("state", StorageStateName(s.state()));
  f.Add("size", HumanBytes(s.size_bytes()));
  f.Add("used", absl::StrCat(HumanBytes(s.used_bytes()), " (",
                             Percent(s.used_bytes(), s.size_bytes()), ")"));
  f.Add("files", absl::StrCat(s.used_files(), " of ", s.max_files(), " (",
                              Percent(s.used_files(), s.max_files()), ")"));
  f.Add("created", FormatTimestamp(s.create_time()));
  f.Add("updated", FormatTimestamp(s.update_time()));
  std::string out = f.Render();
  if (s.attachments().empty()) return out;
  Table t({"INSTANCE", "NODE", "MODE", "ATTACHED"});
  for (const auto& a : s.attachments()) {
    t.AddRow({a.instance_id(), a.node_id(), a.read_only() ? "read-only" : "read-write",
              FormatTimestamp(a.create_time())});
  }
  return absl::StrCat(out, "\n", t.Render());
}

std::string AccessorTable(
    const google::protobuf::RepeatedPtrField<storagepb::Accessor>& accessors) {
  Table t({"ACCESS-KEY", "STORAGE", "MODE", "EXPIRES", "CREATOR", "CREATED", "DESCRIPTION"});
  for (const auto& a : accessors) {
    t.AddRow({a.access_key_id(), a.storage_id(), a.read_only() ? "read-only" : "read-write",
              FormatTimestamp(a.expire_time()), a.creator(), FormatTimestamp(a.create_time()),
              a.description()});
  }
  return t.Render();
}

std::string AccessorSetupText(const storagepb::CreateAccessorResponse& resp,
                              std::string_view s3_endpoint) {
  const storagepb::Accessor& a = resp.accessor();
  const std::string endpoint(s3_endpoint);
  const std::string& bucket = a.storage_id();
  const std::string profile = "gpuaas-" + bucket;
  std::string out;
  Fields f;
  f.Add("access key id", resp.access_key_id());
  f.Add("secret access key", resp.secret_access_key().empty() ? "(shown only when first created)"
                                                              : resp.secret_access_key());
  f.Add("bucket", bucket);
  f.Add("mode", a.read_only() ? "read-only" : "read-write");
  f.Add("expires", FormatTimestamp(a.expire_time()));
  f.Add("endpoint", endpoint);
  absl::StrAppend(&out, f.Render());
  if (resp.secret_access_key().empty()) return out;
  absl::StrAppend(&out,
                  "\nThe secret is shown only now. Keep it; delete the accessor when done.\n");
  absl::StrAppend(&out, "\n# AWS CLI, as profile ", profile, ":\n",  //
                  "aws configure set aws_access_key_id ", resp.access_key_id(), " --profile ",
                  profile, "\n",  //
                  "aws configure set aws_secret_access_key ", resp.secret_access_key(),
                  " --profile ", profile, "\n",                                          //
                  "aws configure set region ", kS3Region, " --profile ", profile, "\n",  //
                  "aws --profile ", profile, " --endpoint-url ", endpoint, " s3 ls s3://", bucket,
                  "/\n");
  absl::StrAppend(&out, "\n# or in the environment (boto3 and the AWS CLI read these):\n",  //
                  "export AWS_ACCESS_KEY_ID=", resp.access_key_id(), "\n",                  //
                  "export AWS_SECRET_ACCESS_KEY=", resp.secret_access_key(), "\n",          //
                  "export AWS_DEFAULT_REGION=", kS3Region, "\n",                            //
                  "export AWS_ENDPOINT_URL=", endpoint, "\n");
  absl::StrAppend(&out, "\n# rclone: add to ~/.config/rclone/rclone.conf, then `rclone ls ",
                  profile, ":", bucket, "`\n",                             //
                  "[", profile, "]\n",                                     //
                  "type = s3\n",                                           //
                  "provider = Other\n",                                    //
                  "access_key_id = ", resp.access_key_id(), "\n",          //
                  "secret_access_key = ", resp.secret_access_key(), "\n",  //
                  "endpoint = ", endpoint, "\n",                           //
                  "region = ", kS3Region, "\n",                            //
                  "force_path_style = true\n");
  return out;
}

std::string SnapshotTable(
    const google::protobuf::RepeatedPtrField<storagepb::Snapshot>& snapshots) {
  Table t({"SNAPSHOT", "STORAGE", "USED", "CREATED"});
  for (const auto& s : snapshots) {
    t.AddRow({s.snapshot_id(), s.storage_id(), HumanBytes(s.used_bytes()),
              FormatTimestamp(s.create_time())});
  }
  return t.Render();
}

absl::StatusOr<storagepb::SnapshotRef> ParseSnapshotRef(std::string_view flag,
                                                        std::string_view value) {
  const size_t slash = value.find('/');
  if (slash == std::string_view::npos || slash == 0 || slash + 1 == value.size() ||
      value.find('/', slash + 1) != std::string_view::npos) {
    return absl::InvalidArgumentError(absl::StrCat(
        std::string(flag), ": want STORAGE/SNAPSHOT, got \"", std::string(value), "\""));
  }
  storagepb::SnapshotRef ref;
  ref.set_storage_id(std::string(value.substr(0, slash)));
  ref.set_snapshot_id(std::string(value.substr(slash + 1)));
  return ref;
}

}  // namespace gpuaas::ctl
