// tendon-devicebench: calibrates this device and writes its device profile.
//
// Runs tendon::CalibrateDevice (tendon/device_profile.h) for every instruction set the CPU
// has on oneTBB pools of 1, 2, 4, ... and N workers, prints the axes per configuration, the tier and the
// budgets, and writes the profile as JSON (ports/device/device_profile_json.h). A World
// created with WorldSettings::device_profile = &profile takes the budgets the host leaves
// at their defaults.
//   tendon-devicebench [--workers N] [--seconds S] [--out FILE] [--raw]
#include <cstdio>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>

#include "ports/device/device_profile_json.h"
#include "tendon/tbb_task_system.h"
#include "tendon/tendon.h"

int main(int argc, char** argv) {
  using namespace tendon;
  int workers = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  double seconds = 3.0;
  std::string out = "tendon-device-profile.json";
  bool raw = false;
  CLI::App app{"tendon-devicebench: calibrates this device (Tendon's kernels on synthetic scenes) and writes its "
               "device profile: tier, best instruction set, useful workers and budgets."};
  app.add_option("--workers", workers, "measure oneTBB pools of 1, 2, 4, ... and N workers")
      ->check(CLI::Number)
      ->check(CLI::Range(1, 1024))
      ->capture_default_str();
  app.add_option("--seconds", seconds, "the whole calibration's time budget")
      ->check(CLI::Number)
      ->check(CLI::Range(0.05, 60.0))
      ->capture_default_str();
  app.add_option("--out", out, "where the profile is written ('' writes none)")->capture_default_str();
  app.add_flag("--raw", raw, "also print items per second (the units of tendon::kReferenceRates)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }

  // 1, 2, 4, ... and N itself: each pool gets a share of the time, so a many-core machine
  // measures a handful of worker counts, not every one.
  std::vector<std::unique_ptr<TbbTaskSystem>> systems;
  std::vector<TaskHooks> pools;
  for (int n = 1; n <= workers; n = n * 2 > workers && n != workers ? workers : n * 2) {
    systems.push_back(std::make_unique<TbbTaskSystem>(n));
    pools.push_back(systems.back()->hooks());
  }
  CalibrationSettings settings;
  settings.max_seconds = seconds;
  settings.worker_pools = pools;
  auto calibrated = CalibrateDevice(settings);
  if (!calibrated.ok()) {
    std::fprintf(stderr, "tendon-devicebench: %s (%s)\n", calibrated.error().message.c_str(),
                 calibrated.error().field.c_str());
    return 1;
  }
  const DeviceProfile& p = calibrated.value();
  std::printf("tendon-devicebench: %s\n", p.machine.empty() ? "(unknown CPU)" : p.machine.c_str());
  std::printf("axes against the reference machine (%s):\n", kReferenceMachine);
  std::printf("  %-11s %7s %11s %14s %14s %13s\n", "isa", "workers", "chain_solve", "pose_writeback",
              "rigid_substeps", "pair_contacts");
  for (const DeviceMeasurement& m : p.measurements) {
    std::printf("  %-11s %7d %11.3f %14.3f %14.3f %13.3f\n", ToString(m.isa), m.workers, m.axes.chain_solve,
                m.axes.pose_writeback, m.axes.rigid_substeps, m.axes.pair_contacts);
    if (raw) {
      std::printf("  %-11s %7s %11.4g %14.4g %14.4g %13.4g  items/s\n", "", "", m.axes.chain_solve * kReferenceRates.chain_solve,
                  m.axes.pose_writeback * kReferenceRates.pose_writeback,
                  m.axes.rigid_substeps * kReferenceRates.rigid_substeps,
                  m.axes.pair_contacts * kReferenceRates.pair_contacts);
    }
  }
  std::printf("tier %s: compute %.2f (chains %.2f, ragdolls %.2f); best %s on %d workers\n", ToString(p.tier), p.compute,
              p.chain_compute, p.rigid_compute, ToString(p.best_isa), p.useful_workers);
  std::printf("budgets: max_chains %d, max_distance %.0f m, max_active_characters %d, ragdoll_substeps %d, "
              "fixed_hz %.0f\n",
              p.max_chains, p.max_distance, p.max_active_characters, p.ragdoll_substeps, p.fixed_hz);
  if (!out.empty()) {
    if (Error e = ports::SaveDeviceProfile(p, out); e.code != ErrorCode::kNone) {
      std::fprintf(stderr, "tendon-devicebench: %s\n", e.message.c_str());
      return 1;
    }
    std::printf("profile: %s (WorldSettings::device_profile, after ports::LoadDeviceProfile)\n", out.c_str());
  }
  return 0;
}
