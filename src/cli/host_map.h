#pragma once

// `allot server --host-map FILE`. Per instance type either a list of slots (the original form)
// or a map with the list under `slots` and the type's sandbox limits under `limits`:
//
//   ml.g5.xlarge:
//     - {gpus: "0", cpus: "0-3"}
//   ml.p4d.24xlarge:
//     slots: [{gpus: "0,1,2,3", cpus: "0-23"}]
//     limits: {memory: 512G, pids: 16384, tmp: 8G, disk: 2T, files: 1000000}  # each optional;
//                                                                        # 0 = none
//
// ReadHostMap (cli/commands.h) reads the slots of either form; ReadHostMapLimits the limits.

#include <map>
#include <string>

#include "server/options.h"

namespace allot::cli {

// Throws std::runtime_error naming the file's problem (an unknown field, a bad size).
std::map<std::string, server::Options::LimitOverrides> ReadHostMapLimits(const std::string& path);

}  // namespace allot::cli
