// kernel/world/phase_run.h: timing a run of the frame's phases on one thread.
//
// What it does: runs each phase inside the host's profiler zone (when there is one) and
// records its time from the CPU's counter (tick_clock.h), a test's clock, or not at all
// (WorldSettings::time_phases false); a phase with no work and no profiler is not run.
// What it does NOT do: decide the phase order (world_frame.cpp does).
// Threading: one PhaseRun per thread of the frame. Memory: none.
#pragma once

#include <cstdint>

#include "kernel/core/profile.h"
#include "kernel/core/tick_clock.h"
#include "kernel/world/world_access.h"
#include "tendon/profiler_hooks.h"

namespace tendon::detail {

// Times a run of phases on one thread (CPU ticks: see tick_clock.h), each a zone in the
// host's profiler when it has one. A phase's time runs from the end of the one before it
// in the run, so n phases cost n + 1 counter reads (a read is 11 ns on this machine kind,
// and a lone avatar's Step is under 1 us). A phase with no work (no bodies, no pendulums,
// an empty chain pass) is not run when there is no profiler: it reads no counter and
// records 0. With a profiler it runs, so that every phase has its zone.
class PhaseRun {
 public:
  // `chain`, when not null, is the tick the last timed phase on this thread ended at: the
  // run's first phase starts there instead of reading the counter, and the run's last tick
  // goes back there. A counter read costs about 10 ns on this project's VMs (rdtsc), and a
  // lone avatar's whole Step is about 500 ns: the serial Step without profiler zones chains
  // its phases, so that what lies between them (a few dozen instructions) counts toward
  // the next one. With zones, each phase starts at its own tick, after its zone's begin.
  // `timed` false (WorldSettings::time_phases): no counter is read and every phase records 0.
  PhaseRun(const detail::TickClock& clock, const ProfilerHooks* profiler, const detail::PhaseClock* test_clock,
           uint32_t thread, bool timed, uint64_t* chain = nullptr)
      : clock_(clock),
        profiler_(profiler),
        test_clock_(test_clock),
        thread_(thread),
        timed_(timed),
        chain_(profiler == nullptr ? chain : nullptr),
        last_(chain_ != nullptr ? *chain_ : 0) {}
  ~PhaseRun() {
    if (chain_ != nullptr) *chain_ = last_;
  }
  PhaseRun(const PhaseRun&) = delete;
  PhaseRun& operator=(const PhaseRun&) = delete;

  // `items()` is the phase's work for a test's clock (world_access.h), asked after it ran.
  template <class F, class Items>
  void Phase(double& ms, detail::FramePhase id, const char* name, uint32_t color, bool has_work, F&& phase,
             Items&& items) {
    if (test_clock_ != nullptr) {
      detail::ProfileZone zone(profiler_, name, color, thread_);
      phase();
      ms = test_clock_->ms(id, items(), test_clock_->user);
      return;
    }
    if (!has_work && profiler_ == nullptr) {
      ms = 0;  // nothing to step: not even called (a lone avatar's Step ran five such phases)
      return;
    }
    if (!timed_) {
      detail::ProfileZone zone(profiler_, name, color, thread_);
      phase();
      ms = 0;
      return;
    }
    if (last_ == 0) last_ = detail::Ticks();
    {
      detail::ProfileZone zone(profiler_, name, color, thread_);
      phase();
    }
    const uint64_t now = detail::Ticks();
    ms = clock_.Ms(now > last_ ? now - last_ : 0);
    last_ = now;
  }

 private:
  const detail::TickClock& clock_;
  const ProfilerHooks* profiler_;
  const detail::PhaseClock* test_clock_;  // null: the CPU counter
  uint32_t thread_;
  bool timed_;
  uint64_t* chain_;
  uint64_t last_;  // the last phase's end; 0 until the run's first timed phase (unchained)
};

}  // namespace tendon::detail
