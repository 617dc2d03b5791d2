#pragma once

// Capacity accounting of one queue: U, B, I per share and their sums, in the actual and the
// projected view, and the "fits" test of docs/design/engine.md.

#include <cstdint>
#include <string_view>

#include "engine/state.h"

namespace allot::engine::internal {

enum class FitMode : std::uint8_t { kWithinQuota, kBorrow };

// Returns the index of `unit` in `q`, adding it (and growing every per-unit vector) if new.
std::uint32_t InternUnit(QueueState& q, std::string_view unit);
// Returns the shape id of `demand` in `q`, interning its units.
std::uint32_t InternShape(QueueState& q, const model::Demand& demand);

// Sets L and C of share `s` from its config (units absent from the config get 0).
void ApplyShareLimits(QueueState& q, ShareState& s);
// Recomputes the per-unit sums of both views from the shares (after a limit or strategy change).
void RecomputeAggregates(QueueState& q);

// Adds (sign = +1) or removes (sign = -1) `shape` to share `share` in `view`.
void AddUsage(QueueState& q, View view, std::uint32_t share, const Shape& shape, std::int64_t sign);

// Whether adding `count` of unit `u` to share `share` in `view` satisfies the quota (or borrow
// cap), pool and lending conditions.
bool UnitFits(const QueueState& q, View view, std::uint32_t share, std::uint32_t u,
              std::int64_t count, FitMode mode);
// The same, once `added` more of unit `u` is already in the share (nothing is changed).
bool UnitFitsAfter(const QueueState& q, View view, std::uint32_t share, std::uint32_t u,
                   std::int64_t added, std::int64_t count, FitMode mode);
bool Fits(const QueueState& q, View view, std::uint32_t share, const Shape& shape, FitMode mode);
// Whether `shape` fits share `share` in `view` once `added` is in the share as well.
bool FitsBeside(const QueueState& q, View view, std::uint32_t share, const Shape& added,
                const Shape& shape, FitMode mode);
// The pool has room for `shape` now, beside the free part of the nominees' reservations (less
// `own_free`, the part of the caller's own reservation, when a nominee asks).
bool RoomBesideNominees(const QueueState& q, const Shape& shape,
                        const std::vector<std::int64_t>* own_free);
// Fits in both views, and beside the nominees' free reservations: what a normal dispatch needs.
bool FitsNow(const QueueState& q, std::uint32_t share, const Shape& shape, FitMode mode);
// U' + N <= L on every unit (projected): the job is within its share's quota.
bool WithinQuota(const QueueState& q, std::uint32_t share, const Shape& shape);

std::int64_t Borrowed(const ShareState& s, View view, std::uint32_t u);
// Removing `held` (a job's shape) from share `s` leaves it at or above its own limit on every
// unit of `held` (projected): the job runs on capacity its share borrows, a reclaim candidate.
bool AboveLimitAfter(const ShareState& s, const Shape& held);
std::int64_t Idle(const ShareState& s, View view, std::uint32_t u);

}  // namespace allot::engine::internal
