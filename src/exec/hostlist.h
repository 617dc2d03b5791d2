#pragma once

// Slurm's host list notation, as in SLURM_JOB_NODELIST and squeue's "nodes": "n[1-3,7],gpu05",
// "rack[1-2]-n[01-02]". Expanded in Slurm's order (each bracket's ranges left to right; for
// several brackets in one name, the last one varies fastest), keeping zero padding.

#include <string>
#include <vector>

#include "common/status.h"

namespace allot::exec {

// InvalidArgument for an unbalanced bracket, a bad range ("n[3-1]", "n[a-b]") or a list that
// expands to more than 100,000 names.
Result<std::vector<std::string>> ExpandHostList(const std::string& list);

}  // namespace allot::exec
