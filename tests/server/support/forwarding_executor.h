#pragma once

// An executor that passes every call on to the real one: what the controller tests' wrappers
// (a launch held, a stop dropped) derive from, overriding only what they change.

#include <memory>
#include <mutex>
#include <utility>

#include "exec/executor.h"

namespace allot::server {

class ForwardingExecutor : public exec::Executor {
 public:
  explicit ForwardingExecutor(std::unique_ptr<exec::Executor> real) : real_(std::move(real)) {}
  Status Launch(const exec::LaunchSpec& spec) override { return real_->Launch(spec); }
  void Stop(model::JobId job, int attempt, Duration grace, model::StopKind kind) override {
    real_->Stop(job, attempt, grace, kind);
  }
  Status Adopt(const exec::AdoptSpec& spec) override { return real_->Adopt(spec); }
  void Detach() override { real_->Detach(); }
  void ConfigurationChanged() override { real_->ConfigurationChanged(); }
  bool SandboxActive() const override { return real_->SandboxActive(); }
  Health health() const override { return real_->health(); }

 private:
  std::unique_ptr<exec::Executor> real_;
};

// The real executor, which hands no stop on while `drop` is set: a stop whose effect the server
// went down before running.
class StopDropper final : public ForwardingExecutor {
 public:
  StopDropper(std::unique_ptr<exec::Executor> real, bool drop)
      : ForwardingExecutor(std::move(real)), drop_(drop) {}
  void Stop(model::JobId job, int attempt, Duration grace, model::StopKind kind) override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      ++stops_;
      if (drop_) return;
    }
    ForwardingExecutor::Stop(job, attempt, grace, kind);
  }
  int stops() {
    std::lock_guard<std::mutex> lock(mu_);
    return stops_;
  }

 private:
  std::mutex mu_;
  const bool drop_;
  int stops_ = 0;
};

}  // namespace allot::server
