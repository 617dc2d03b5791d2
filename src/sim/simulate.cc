#include "sim/simulate.h"

#include "sim/world.h"

namespace allot::sim {

Result<RunResult> Simulate(const Trace& trace, const Policy& policy, const SimOptions& options) {
  internal::World world(trace, policy, options);
  return world.Run();
}

}  // namespace allot::sim
