#include "model/config.h"

namespace allot::model {

std::string_view ToString(State s) { return s == State::kEnabled ? "ENABLED" : "DISABLED"; }

std::string_view ToString(SharingStrategy s) {
  switch (s) {
    case SharingStrategy::kReserve:
      return "RESERVE";
    case SharingStrategy::kLend:
      return "LEND";
    case SharingStrategy::kLendAndBorrow:
      return "LEND_AND_BORROW";
  }
  return "RESERVE";
}

std::optional<State> ParseState(std::string_view s) {
  if (s == "ENABLED") return State::kEnabled;
  if (s == "DISABLED") return State::kDisabled;
  return std::nullopt;
}

std::optional<SharingStrategy> ParseSharingStrategy(std::string_view s) {
  if (s == "RESERVE") return SharingStrategy::kReserve;
  if (s == "LEND") return SharingStrategy::kLend;
  if (s == "LEND_AND_BORROW") return SharingStrategy::kLendAndBorrow;
  return std::nullopt;
}

}  // namespace allot::model
