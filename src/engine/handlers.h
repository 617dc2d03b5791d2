#pragma once

// One handler per event. Each validates before it changes anything, marks the queues whose
// pass must run in st.dirty, and writes decisions to st.out.

#include "common/status.h"
#include "engine/state.h"
#include "model/event.h"

namespace allot::engine::internal {

Status Handle(EngineState& st, const model::PutServiceEnvironment& e);
Status Handle(EngineState& st, const model::DeleteServiceEnvironment& e);
Status Handle(EngineState& st, const model::PutJobQueue& e);
Status Handle(EngineState& st, const model::DeleteJobQueue& e);
Status Handle(EngineState& st, const model::PutQuotaShare& e);
Status Handle(EngineState& st, const model::DeleteQuotaShare& e);
Status Handle(EngineState& st, const model::SubmitJob& e);
Status Handle(EngineState& st, const model::RestoreJob& e);
Status Handle(EngineState& st, const model::UpdateJobPriority& e);
Status Handle(EngineState& st, const model::TerminateJob& e);
Status Handle(EngineState& st, const model::AttemptStarting& e);
Status Handle(EngineState& st, const model::AttemptRunning& e);
Status Handle(EngineState& st, const model::CheckpointObserved& e);
Status Handle(EngineState& st, const model::AttemptEnded& e);
Status Handle(EngineState& st, const model::Tick& e);
Status Handle(EngineState& st, const model::HoldDispatches& e);

// Fires every timer due by st.now.
void FireDeadlines(EngineState& st);

// Removes deleted shares and queues that have no live job left.
void CollectDeleted(EngineState& st, std::uint32_t queue);

// After a configuration change of queue `q`: limits and sums, misconfiguration of every waiting
// job, nominees.
void ReconcileQueue(EngineState& st, std::uint32_t queue);

}  // namespace allot::engine::internal
