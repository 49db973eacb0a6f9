// All SQL of the stock service, each statement a named constant next to the method that runs it.
// Methods run inside the caller's transaction (db::Tx); errors are libs/db exceptions that
// db::Pool::RunInTransaction turns into a Status.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "gpuaas/stock/v1/stock.pb.h"
#include "libs/db/db.h"
#include "libs/service/paging.h"
#include "services/stock/spec_rules.h"

namespace gpuaas::stock {

class Repository final {
 public:
  // Specs. A spec row holds its demand as exact integers; the read side formats them.
  void InsertSpec(db::Tx& tx, const pb::Spec& spec, const SpecDemand& demand);
  std::optional<pb::Spec> GetSpec(db::Tx& tx, const std::string& spec_name);
  std::vector<pb::Spec> ListSpecs(db::Tx& tx, bool show_deprecated,
                                  const service::PageRequest& page);
  // Writes price, description and deprecated; false when the spec does not exist.
  bool UpdateSpec(db::Tx& tx, const pb::Spec& spec);
  bool DeleteSpec(db::Tx& tx, const std::string& spec_name);
};

}  // namespace gpuaas::stock
