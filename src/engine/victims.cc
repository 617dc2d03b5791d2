#include "engine/victims.h"

#include <algorithm>
#include <tuple>

#include "engine/accounting.h"

namespace allot::engine::internal {

namespace {

using model::PreemptionRule;

// One instance-count class of one share's candidates, walked in victim order.
struct Cursor {
  std::uint32_t share = 0;
  std::int64_t instances = 0;
  RunSet::const_iterator it;
  RunSet::const_iterator end;
};

// Lazily merges cursors on the exact victim key: priority, work lost now, newest start, id.
class CandidateStream {
 public:
  CandidateStream(const EngineState& st, std::int32_t below_priority)
      : now_(st.now), newest_first_(st.newest_first), below_priority_(below_priority) {}

  void AddShare(const ShareState& s, std::uint32_t share) {
    for (const auto& [instances, set] : s.running) {
      if (!set.empty()) cursors_.push_back({share, instances, set.begin(), set.end()});
    }
  }

  // The next candidate in victim order, or false when none is left.
  bool Next(std::uint32_t* share, const RunKey** key) {
    Cursor* best = nullptr;
    for (Cursor& c : cursors_) {
      if (c.it == c.end || c.it->priority >= below_priority_) continue;
      if (best == nullptr || Less(c, *best)) best = &c;
    }
    if (best == nullptr) return false;
    *share = best->share;
    *key = &*best->it;
    ++best->it;
    return true;
  }

  std::int64_t Lost(std::int64_t instances, const RunKey& k) const {
    return instances * std::max<std::int64_t>(0, now_ - k.reference);
  }

 private:
  bool Less(const Cursor& a, const Cursor& b) const {
    const RunKey& x = *a.it;
    const RunKey& y = *b.it;
    if (newest_first_) {
      return std::make_tuple(x.priority, -x.started_at, x.id) <
             std::make_tuple(y.priority, -y.started_at, y.id);
    }
    return std::make_tuple(x.priority, Lost(a.instances, x), -x.started_at, x.id) <
           std::make_tuple(y.priority, Lost(b.instances, y), -y.started_at, y.id);
  }

  Timestamp now_;
  bool newest_first_;
  std::int32_t below_priority_;
  std::vector<Cursor> cursors_;
};

// What the victims taken so far must achieve (docs/design/engine.md, Victims).
enum class Target : std::uint8_t {
  kQuota,           // U' + N <= L
  kFitWithinQuota,  // fits the projected view within quota
  kFitBorrowing,    // fits the projected view within quota, or by borrowing beside what other
                    // shares' waiting jobs are owed (in-share in a LEND_AND_BORROW share)
};

FitMode ModeOf(Target t) {
  return t == Target::kFitBorrowing ? FitMode::kBorrow : FitMode::kWithinQuota;
}

class Search {
 public:
  Search(EngineState& st, QueueState& q, const Job& preemptor, const std::vector<OwedNeed>& owed)
      : st_(st), q_(q), p_(preemptor), shape_(q.shapes[preemptor.shape]), owed_(owed) {}

  // The candidate that came closest to being chosen instead, once Run succeeded.
  std::optional<model::RunnerUp> RunnerUp() const {
    if (put_back_) return model::RunnerUp{Record(*put_back_), true};
    if (next_) return model::RunnerUp{Record(*next_), false};
    return std::nullopt;
  }

  bool Run(bool in_share, std::vector<VictimChoice>* out) {
    const bool borrows = q_.shares[p_.share]->borrows();
    if (in_share && borrows && RunBorrowing(out)) return true;
    if (in_share) TakeInShare(Target::kQuota);
    if (WithinQuota(q_, p_.share, shape_)) {
      TakeReclaim();
      if (in_share) TakeInShare(Target::kFitWithinQuota);
    }
    if (!Done(Target::kFitWithinQuota)) return GiveUp();
    FillBack(Target::kFitWithinQuota);
    if (in_share && borrows && AVictimCouldBorrowBack()) return GiveUp();
    *out = std::move(taken_);
    return true;
  }

 private:
  const Shape& ShapeOfJob(const Job& j) const { return q_.shapes[j.shape]; }

  // In a share that may borrow, in-share victims are taken only until the preemptor fits by
  // borrowing: a victim taken beyond that could borrow its capacity back at once. It does not
  // borrow what other shares' waiting jobs are owed: they would reclaim it at once.
  bool RunBorrowing(std::vector<VictimChoice>* out) {
    TakeInShare(Target::kFitBorrowing);
    if (!Done(Target::kFitBorrowing)) return GiveUp();
    FillBack(Target::kFitBorrowing);
    if (AnInShareVictimFitsBeside()) return GiveUp();
    *out = std::move(taken_);
    return true;
  }

  model::VictimRecord Record(const VictimChoice& v) const {
    return {v.job->id, q_.shares[v.job->share]->config.name, v.rule, v.key};
  }

  // Whether a candidate of another share could have been taken by reclaim, or one of the
  // preemptor's share in-share: it holds a unit the preemptor needs.
  bool HoldsNeededUnit(const Shape& victim) const {
    for (const auto& [u, n] : shape_.parts) {
      for (const auto& [vu, vn] : victim.parts) {
        if (vu == u) return true;
      }
    }
    return false;
  }

  // After a phase took victims: the next candidate its stream would have given, for the record
  // (bounded: a stream of many candidates that hold nothing useful is not walked to its end).
  void PeekNext(CandidateStream& stream, PreemptionRule rule, bool reclaim) {
    constexpr int kMaxPeek = 64;
    std::uint32_t share = 0;
    const RunKey* key = nullptr;
    for (int i = 0; i < kMaxPeek && stream.Next(&share, &key); ++i) {
      if (AlreadyTaken(key->id)) continue;
      Job& job = *st_.FindJob(key->id);
      const Shape& victim = ShapeOfJob(job);
      if (!HoldsNeededUnit(victim)) continue;
      if (reclaim && !AboveLimitAfter(*q_.shares[share], victim)) continue;
      next_ = VictimChoice{
          &job,
          reclaim ? ReclaimRule(*q_.shares[share], victim) : rule,
          {job.priority, stream.Lost(victim.instances, *key), job.attempt_started, job.id}};
      return;
    }
    next_.reset();
  }

  // Puts every victim taken back into the projected view.
  bool GiveUp() {
    for (const VictimChoice& v : taken_) Restore(v);
    taken_.clear();
    return false;
  }

  // Whether the set taken through reclaim (RunBorrowing found no set of the share's own jobs
  // that lets the preemptor borrow) stops a job for nothing in a LEND_AND_BORROW share: the
  // preemptor would fit by borrowing (beside what is owed) with one of the victims kept, or an
  // in-share victim would fit once the preemptor holds its need.
  bool AVictimCouldBorrowBack() {
    for (const VictimChoice& v : taken_) {
      Restore(v);
      const bool kept = Done(Target::kFitBorrowing);
      AddUsage(q_, kProjected, v.job->share, ShapeOfJob(*v.job), -1);
      if (kept) return true;
    }
    return AnInShareVictimFitsBeside();
  }

  // Whether an in-share victim would fit within quota, or by borrowing beside what other shares'
  // waiting jobs are owed, once the preemptor holds its need: it would restart at once.
  // Minimality alone does not rule it out: the lending condition depends on the order of
  // additions when an admin's lowered limit left borrowing unbacked.
  bool AnInShareVictimFitsBeside() {
    auto fits_beside = [this](const VictimChoice& v, FitMode mode) {
      return FitsBeside(q_, kProjected, p_.share, shape_, ShapeOfJob(*v.job), mode);
    };
    auto in_share = [](const VictimChoice& v) { return v.rule == PreemptionRule::kInShare; };
    if (std::any_of(taken_.begin(), taken_.end(), [&](const VictimChoice& v) {
          return in_share(v) && fits_beside(v, FitMode::kWithinQuota);
        })) {
      return true;
    }
    const OwedCounted owed(q_, owed_);
    return std::any_of(taken_.begin(), taken_.end(), [&](const VictimChoice& v) {
      return in_share(v) && fits_beside(v, FitMode::kBorrow);
    });
  }

  // Whether the preemptor is still blocked, for `target`, on a unit the candidate holds.
  bool Useful(const Shape& victim, Target target) {
    std::optional<OwedCounted> owed;
    if (target == Target::kFitBorrowing) owed.emplace(q_, owed_);
    const ShareState& s = *q_.shares[p_.share];
    for (const auto& [u, n] : shape_.parts) {
      const bool blocked = target == Target::kQuota
                               ? s.used[kProjected][u] + n > s.limit[u]
                               : !UnitFits(q_, kProjected, p_.share, u, n, ModeOf(target));
      if (!blocked) continue;
      for (const auto& [vu, vn] : victim.parts) {
        if (vu == u) return true;
      }
    }
    return false;
  }

  PreemptionRule ReclaimRule(const ShareState& s, const Shape& victim) const {
    if (!s.borrows()) return PreemptionRule::kLimitLowered;
    for (const auto& [u, n] : victim.parts) {
      if (Borrowed(s, kProjected, u) > s.borrow_cap[u]) return PreemptionRule::kLimitLowered;
    }
    return PreemptionRule::kReclaim;
  }

  bool AlreadyTaken(model::JobId id) const {
    return std::any_of(taken_.begin(), taken_.end(),
                       [id](const VictimChoice& v) { return v.job->id == id; });
  }

  void Take(Job& job, PreemptionRule rule, std::int64_t lost) {
    taken_.push_back({&job, rule, {job.priority, lost, job.attempt_started, job.id}});
    AddUsage(q_, kProjected, job.share, ShapeOfJob(job), -1);
  }

  void Restore(const VictimChoice& v) {
    AddUsage(q_, kProjected, v.job->share, ShapeOfJob(*v.job), +1);
  }

  void TakeInShare(Target target) {
    CandidateStream stream(st_, p_.priority);
    stream.AddShare(*q_.shares[p_.share], p_.share);
    std::uint32_t share = 0;
    const RunKey* key = nullptr;
    const std::size_t before = taken_.size();
    while (!Done(target) && stream.Next(&share, &key)) {
      if (AlreadyTaken(key->id)) continue;
      Job& job = *st_.FindJob(key->id);
      const Shape& victim = ShapeOfJob(job);
      if (!Useful(victim, target)) continue;
      Take(job, PreemptionRule::kInShare, stream.Lost(victim.instances, *key));
    }
    if (taken_.size() > before) PeekNext(stream, PreemptionRule::kInShare, /*reclaim=*/false);
  }

  void TakeReclaim() {
    CandidateStream stream(st_, std::numeric_limits<std::int32_t>::max());
    for (std::uint32_t t = 0; t < q_.shares.size(); ++t) {
      const ShareState* s = q_.shares[t].get();
      if (t != p_.share && s != nullptr && BorrowsNeededUnit(*s)) stream.AddShare(*s, t);
    }
    std::uint32_t share = 0;
    const RunKey* key = nullptr;
    const std::size_t before = taken_.size();
    while (!Done(Target::kFitWithinQuota) && stream.Next(&share, &key)) {
      Job& job = *st_.FindJob(key->id);
      const Shape& victim = ShapeOfJob(job);
      const ShareState& s = *q_.shares[share];
      if (!Useful(victim, Target::kFitWithinQuota) || !AboveLimitAfter(s, victim)) continue;
      Take(job, ReclaimRule(s, victim), stream.Lost(victim.instances, *key));
    }
    if (taken_.size() > before) PeekNext(stream, PreemptionRule::kReclaim, /*reclaim=*/true);
  }

  bool BorrowsNeededUnit(const ShareState& s) const {
    for (const auto& [u, n] : shape_.parts) {
      if (Borrowed(s, kProjected, u) > 0) return true;
    }
    return false;
  }

  bool Done(Target target) {
    switch (target) {
      case Target::kQuota:
        return WithinQuota(q_, p_.share, shape_);
      case Target::kFitWithinQuota:
        return Fits(q_, kProjected, p_.share, shape_, FitMode::kWithinQuota);
      case Target::kFitBorrowing:
        break;
    }
    // Within quota the preemptor leaves its share within its limit: nobody reclaims from it.
    if (Fits(q_, kProjected, p_.share, shape_, FitMode::kWithinQuota)) return true;
    const OwedCounted owed(q_, owed_);
    return Fits(q_, kProjected, p_.share, shape_, FitMode::kBorrow);
  }

  // Puts victims back, newest choice first, wherever the preemptor still meets `target`
  // without them.
  void FillBack(Target target) {
    for (std::size_t i = taken_.size(); i-- > 0;) {
      Restore(taken_[i]);
      if (Done(target)) {
        put_back_ = taken_[i];  // the loop goes backwards: the last one kept is the first chosen
        taken_.erase(taken_.begin() + static_cast<std::ptrdiff_t>(i));
      } else {
        AddUsage(q_, kProjected, taken_[i].job->share, ShapeOfJob(*taken_[i].job), -1);
      }
    }
  }

  EngineState& st_;
  QueueState& q_;
  const Job& p_;
  const Shape& shape_;
  const std::vector<OwedNeed>& owed_;  // other shares' waiting jobs, for Target::kFitBorrowing
  std::vector<VictimChoice> taken_;
  std::optional<VictimChoice> put_back_;  // the first victim FillBack put back
  std::optional<VictimChoice> next_;      // the next candidate after the last phase that took
};

}  // namespace

bool ChooseVictims(EngineState& st, QueueState& q, const Job& preemptor, bool in_share,
                   const std::vector<OwedNeed>& owed, std::vector<VictimChoice>* out,
                   std::optional<model::RunnerUp>* runner_up) {
  Search search(st, q, preemptor, owed);
  if (!search.Run(in_share, out)) return false;
  if (runner_up != nullptr) *runner_up = search.RunnerUp();
  return true;
}

}  // namespace allot::engine::internal
