#include "services/storage/local/lister.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "services/storage/local/dir_reader.h"
#include "services/storage/local/folder_marker.h"
#include "services/storage/local/object_key.h"
#include "services/storage/local/object_meta.h"
#include "services/storage/local/safe_path.h"

namespace gpuaas::storage::local {
namespace {

bool StartsWith(std::string_view s, std::string_view prefix) {
  return s.size() >= prefix.size() && s.compare(0, prefix.size(), prefix) == 0;
}

// Whether `dir_fd` is a folder marker or a regular file or marker lies anywhere beneath it;
// stops at the first one.
bool HoldsObject(int dir_fd) {
  if (IsFolderMarker(dir_fd)) {
    return true;
  }
  bool found = false;
  std::vector<std::string> subdirs;
  (void)ReadDir(dir_fd, [&](std::string_view name, EntryType type) {
    if (type == EntryType::kFile) {
      found = true;
      return false;
    }
    if (type == EntryType::kDir) {
      subdirs.emplace_back(name);
    }
    return true;
  });
  for (size_t i = 0; !found && i < subdirs.size(); ++i) {
    absl::StatusOr<UniqueFd> sub = OpenDirBeneath(dir_fd, subdirs[i], "list");
    found = sub.ok() && HoldsObject(sub->get());
  }
  return found;
}

struct Item {
  bool is_prefix = false;
  ObjectInfo object;  // when !is_prefix
  std::string prefix;
};

// A depth-first walk over sorted directories: yields objects (and, with a delimiter, common
// prefixes) in key order, strictly after start_after.
class Walker {
 public:
  Walker(int root_fd, DirListingCache& cache, const ListRequest& request)
      : root_fd_(root_fd), cache_(cache), request_(request) {}

  absl::Status Start() {
    const std::string& prefix = request_.prefix;
    // A prefix naming a folder ("a/b/") lists the folder's marker first, as S3 lists it.
    if (IsFolderKey(prefix) && (request_.start_after.empty() || prefix > request_.start_after)) {
      absl::StatusOr<UniqueFd> folder =
          OpenDirBeneath(root_fd_, prefix.substr(0, prefix.size() - 1), "list");
      if (folder.ok() && IsFolderMarker(folder->get())) {
        first_ = Item{false, FolderInfo(folder->get(), prefix), {}};
      }
    }
    const size_t slash = prefix.rfind('/');
    const std::string dir_key = slash == std::string::npos ? "" : prefix.substr(0, slash + 1);
    const std::string name_filter = prefix.substr(dir_key.size());
    if (dir_key.size() > kMaxKeyBytes) {
      return absl::OkStatus();  // no key can start with it
    }
    std::string dir_path;
    if (!dir_key.empty()) {
      dir_path = dir_key.substr(0, dir_key.size() - 1);
      for (const std::string& segment : KeySegments(dir_path)) {
        if (!IsKeySegment(segment)) {
          return absl::OkStatus();  // "a//", "../": no valid key starts with it
        }
      }
    }
    absl::StatusOr<UniqueFd> dir =
        OpenDirBeneath(root_fd_, dir_path, absl::StrCat("prefix \"", dir_key, "\""));
    if (absl::IsNotFound(dir.status()) || absl::IsFailedPrecondition(dir.status())) {
      return absl::OkStatus();
    }
    if (!dir.ok()) {
      return dir.status();
    }
    return Push(*std::move(dir), dir_key, name_filter);
  }

  absl::StatusOr<std::optional<Item>> Next() {
    if (first_.has_value()) {
      std::optional<Item> first = std::move(first_);
      first_.reset();
      return first;
    }
    const std::string& after = request_.start_after;
    while (!stack_.empty()) {
      Frame& frame = stack_.back();
      if (frame.index >= frame.end) {
        stack_.pop_back();
        continue;
      }
      const DirEntry& entry = (*frame.entries)[frame.index++];
      std::string key = frame.key_prefix + entry.sort_name;
      const int dir_fd = frame.fd.get();
      const bool past = after.empty() || key > after;
      if (!entry.is_dir) {
        if (!past || key.size() > kMaxKeyBytes) {
          continue;
        }
        std::optional<ObjectInfo> object = StatObject(dir_fd, entry.sort_name, std::move(key));
        if (object.has_value()) {
          return Item{false, *std::move(object), {}};
        }
        continue;
      }
      if (key.size() > kMaxKeyBytes) {
        continue;  // every key beneath is longer still
      }
      if (!request_.delimiter.empty()) {
        if (!past) {
          continue;
        }
        absl::StatusOr<UniqueFd> sub = OpenDirBeneath(dir_fd, entry.name(), "list");
        if (sub.ok() && HoldsObject(sub->get())) {
          return Item{true, {}, std::move(key)};
        }
        continue;
      }
      if (!past && !StartsWith(after, key)) {
        continue;  // the whole subtree sorts before start_after
      }
      absl::StatusOr<UniqueFd> sub = OpenDirBeneath(dir_fd, entry.name(), "list");
      if (!sub.ok()) {
        continue;  // gone or swapped for a symlink meanwhile
      }
      // A folder marker's key ("a/b/") sorts before everything in it.
      std::optional<Item> marker;
      if (past && IsFolderMarker(sub->get())) {
        marker = Item{false, FolderInfo(sub->get(), key), {}};
      }
      // `frame` may dangle from here on.
      absl::Status status = Push(*std::move(sub), key, "");
      if (!status.ok()) {
        return status;
      }
      if (marker.has_value()) {
        return marker;
      }
    }
    return std::optional<Item>();
  }

 private:
  struct Frame {
    UniqueFd fd;
    std::string key_prefix;  // "" or "a/b/"
    std::shared_ptr<const DirEntries> entries;
    size_t index = 0;
    size_t end = 0;
  };

  static std::optional<ObjectInfo> StatObject(int dir_fd, const std::string& name,
                                              std::string key) {
    absl::StatusOr<UniqueFd> fd =
        OpenBeneath(dir_fd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY, "list");
    struct stat st;
    if (!fd.ok() || ::fstat(fd->get(), &st) != 0 || !S_ISREG(st.st_mode)) {
      return std::nullopt;  // gone or replaced meanwhile
    }
    return ReadObjectInfo(fd->get(), st, std::move(key));
  }

  // Enters a directory: only entries starting with `name_filter`, and only from where keys
  // can pass start_after (a binary search, so a page deep into a large directory does not scan
  // what comes before it).
  absl::Status Push(UniqueFd fd, const std::string& key_prefix, const std::string& name_filter) {
    absl::StatusOr<std::shared_ptr<const DirEntries>> entries = cache_.Get(key_prefix, fd.get());
    if (!entries.ok()) {
      return entries.status();
    }
    const DirEntries& list = **entries;
    const auto by_name = [](const DirEntry& e, const std::string& s) { return e.sort_name < s; };
    auto lo = std::lower_bound(list.begin(), list.end(), name_filter, by_name);
    auto hi = std::partition_point(
        lo, list.end(), [&](const DirEntry& e) { return StartsWith(e.sort_name, name_filter); });
    const std::string& after = request_.start_after;
    auto from = lo;
    if (!after.empty()) {
      if (StartsWith(after, key_prefix)) {
        const std::string rest = after.substr(key_prefix.size());
        auto pos = std::lower_bound(list.begin(), list.end(), rest, by_name);
        // The directory whose subtree holds start_after sorts just before it.
        if (pos != list.begin() && std::prev(pos)->is_dir &&
            StartsWith(rest, std::prev(pos)->sort_name)) {
          --pos;
        }
        from = std::max(lo, pos);
      } else if (after > key_prefix) {
        from = hi;
      }
    }
    Frame frame;
    frame.fd = std::move(fd);
    frame.key_prefix = key_prefix;
    frame.index = static_cast<size_t>(std::min(from, hi) - list.begin());
    frame.end = static_cast<size_t>(hi - list.begin());
    frame.entries = *std::move(entries);
    stack_.push_back(std::move(frame));
    return absl::OkStatus();
  }

  const int root_fd_;
  DirListingCache& cache_;
  const ListRequest& request_;
  std::vector<Frame> stack_;
  std::optional<Item> first_;  // the prefix's own folder marker, listed first
};

}  // namespace

absl::Status ValidateListRequest(const ListRequest& request) {
  if (!request.delimiter.empty() && request.delimiter != "/") {
    return absl::InvalidArgumentError(
        absl::StrCat("delimiter \"", request.delimiter, "\": only \"/\" is supported"));
  }
  if (request.max_keys < 1 || request.max_keys > 1000) {
    return absl::InvalidArgumentError(
        absl::StrCat("max_keys: ", request.max_keys, " is outside 1..1000"));
  }
  return absl::OkStatus();
}

absl::StatusOr<ListResult> ListObjects(int root_fd, DirListingCache& cache,
                                       const ListRequest& request) {
  absl::Status status = ValidateListRequest(request);
  if (!status.ok()) {
    return status;
  }
  ListResult result;
  Walker walker(root_fd, cache, request);
  status = walker.Start();
  if (!status.ok()) {
    return status;
  }
  int count = 0;
  std::string last;
  while (true) {
    absl::StatusOr<std::optional<Item>> item = walker.Next();
    if (!item.ok()) {
      return item.status();
    }
    if (!item->has_value()) {
      break;
    }
    if (count == request.max_keys) {
      result.truncated = true;
      result.next_start_after = last;
      break;
    }
    ++count;
    Item& it = **item;
    if (it.is_prefix) {
      last = it.prefix;
      result.common_prefixes.push_back(std::move(it.prefix));
    } else {
      last = it.object.key;
      result.objects.push_back(std::move(it.object));
    }
  }
  return result;
}

}  // namespace gpuaas::storage::local
