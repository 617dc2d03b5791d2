#pragma once

// Replays a trace through the engine in virtual time (docs/sim.md, The simulated executor).
// A driver of the engine like the server: events in, decisions applied to a virtual world.

#include <cstdint>

#include "common/status.h"
#include "common/time.h"
#include "sim/cluster.h"
#include "sim/result.h"
#include "sim/trace.h"

namespace allot::sim {

struct SimOptions {
  // Jobs checkpoint every interval of work (a trace job may override it); 0 = never.
  Duration checkpoint_interval = 30 * Seconds(60);
  // Before a resumed attempt works again (reload, warm-up); it is not charged to the first.
  Duration restart_overhead = Seconds(60);
  // From the engine's Stop to the attempt's end (SIGTERM to exit).
  Duration stop_grace = Seconds(30);
  // The job saves its progress when it is stopped, as `allot-train` does on SIGTERM.
  bool checkpoint_on_stop = false;
  // Checks the scheduling invariants and the engine's usage after every decision; on by default
  // in debug builds. A violation ends the run with an Internal status that describes it.
#ifdef NDEBUG
  bool check_invariants = false;
#else
  bool check_invariants = true;
#endif
  int chart_buckets = 120;  // at most; buckets double in width as the run grows
};

Result<RunResult> Simulate(const Trace& trace, const Policy& policy, const SimOptions& options);

}  // namespace allot::sim
