// The directories of a local backend's data root, opened once and shared by the backend and
// its volumes (which may outlive the backend's map while a writer holds them):
//
//   <data_root>/volumes/<volume_id>/    exactly the user's files; what an instance mounts
//   <data_root>/staging/                 files being written (renamed into place when complete)
//   <data_root>/uploads/<volume_id>/     multipart uploads (upload_store.h)
//
// volume_id is the storage's identity (storage_uid), never its reusable storage_id.
//   <data_root>/trash/                   deleted volumes on their way out
//   <data_root>/images/<volume_id>.img   a volume's own file system (--volume-filesystem=
//                                        loop-ext4), loop-mounted on volumes/<volume_id>/, which
//                                        then holds data/ (the user's files), .staging/ and
//                                        .uploads/ of that volume
//
// All on one file system, so that every move between them is an atomic rename (a volume with
// its own file system keeps its moves inside it).
#pragma once

#include <memory>
#include <string>

#include "libs/common/errno_status.h"
#include "libs/common/thread_pool.h"
#include "libs/common/unique_fd.h"

namespace gpuaas::storage::local {

struct DataRoot {
  std::string path;  // absolute
  UniqueFd root;
  UniqueFd lock;  // flock'ed: one backend per data root
  UniqueFd volumes;
  UniqueFd staging;
  UniqueFd uploads;
  UniqueFd trash;
  UniqueFd images;
  // New volumes get a file system of their own (see loop_filesystem.h).
  bool loop_volumes = false;
  bool sync_writes = true;
  // Hash large chunks beside the writing thread (StagedFile::Append).
  std::unique_ptr<ThreadPool> hashers;
};

}  // namespace gpuaas::storage::local
