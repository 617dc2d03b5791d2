#pragma once

// `allot shares QUEUE`: the quota shares of a queue, per share and capacity unit: limit, used,
// borrowed, lent and waiting jobs, from ListQuotaShares (limits) and GetJobQueueSnapshot
// (queueUtilization.quotaShareUtilization.topCapacityUtilization, whose entries carry
// capacityUsage and the Allot extension fields borrowed, lent and waitingJobs).

#include <ostream>

#include "cli/client.h"

namespace allot::cli {

// Prints the table for `shares` (ListQuotaShares items) and `snapshot` (GetJobQueueSnapshot).
void PrintShares(const std::string& queue, const Json& shares, const Json& snapshot,
                 const Json& environment, std::ostream& out);

}  // namespace allot::cli
