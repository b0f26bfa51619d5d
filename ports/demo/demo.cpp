// ports/demo/demo.cpp: tendon-demo, the main job. A crowd of procedurally generated
// characters wearing hair strands, a cape and a tail (verlet chains) and a charm on the
// hip (an accessory pendulum) walks along paths while a camera moves through the crowd.
// In a yard at the middle, ragdoll characters (the Jolt "Human" from ../shared/data, each
// with a ponytail chain on its head) walk in circles; some are struck (a powered flinch
// that hands back to the walk), some are knocked down (powered, then limp), some are
// grabbed by the head, dragged and thrown (a part drive, ThrowRagdoll); they lie until
// they settle, and get up where they lie, facing where their head points. A player
// capsule (a host body) walks through the yard, the walkers keep kinematic bodies, and
// the contact events are counted.
// It runs N seconds of frames at a varying frame rate with hitches, shows progress, and
// prints what the kernel did: bound, simulated, sleeping, snapped, lane occupancy,
// ragdoll events and milliseconds per phase (median and worst), and where it wrote a
// Chrome trace.
//
// This is a host: it owns the skeleton buffers and the animation (a walk cycle made of
// sines), and hands Tendon pointers to them, as an engine's pre-render job would.
#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <unistd.h>

#include <CLI/CLI.hpp>

#include "ports/device/device_profile_json.h"
#include "ports/gltf/vrm_avatar.h"
#include "ports/jolt_human/jolt_human.h"
#include "ports/shared_data.h"
#include "tendon/tbb_task_system.h"
#include "tendon/tendon.h"

namespace {

using namespace tendon;

// A call on a handle the demo holds cannot fail unless the demo is wrong: say so on stderr
// (the run goes on; its summary's counts show what it cost) and tell the caller.
bool Check(const Error& e, const char* what) {
  if (e.ok()) return true;
  std::fprintf(stderr, "tendon-demo: %s failed: %s %s: %s\n", what, ToString(e.code), e.field.c_str(), e.message.c_str());
  return false;
}

struct Options {
  int count = 2000;
  double seconds = 20.0;
  int workers = 0;  // 0: all hardware threads
  int budget = 3000;
  double budget_ms = 0;  // WorldSettings::frame_budget_ms (0: none)
  std::string device_profile;  // a tendon-devicebench profile (empty: none)
  int ragdolls = 24;
  Isa isa = Isa::kAuto;
  std::string trace = "tendon-demo.trace.json";
  unsigned seed = 7;
  std::string vrm;     // a .vrm to walk a crowd of (empty: none)
  int vrm_count = 64;  // copies of it
  bool overlap = false;  // World::BeginStep / FinishStep instead of Step
};

// Options through CLI11 (Debian libcli11-dev): a value that is not a number, or out of
// range, is refused with the option's name, and --help answers before anything is built.
// Returns -1 to go on, else the exit code.
int Parse(int argc, char** argv, Options* o) {
  CLI::App app{"tendon-demo: a crowd wearing hair, capes, tails and charms, simulated by Tendon."};
  // A number check first, so "--seconds abc" says it is not a number, then the range.
  app.add_option("--count", o->count, "characters")->check(CLI::Number)->check(CLI::Range(1, 1 << 20))->capture_default_str();
  app.add_option("--seconds", o->seconds, "simulated seconds of frames")
      ->check(CLI::Number)
      ->check(CLI::Range(1e-3, 1e6))
      ->capture_default_str();
  app.add_option("--workers", o->workers, "oneTBB workers, 0 = all hardware threads")
      ->check(CLI::Number)
      ->check(CLI::Range(0, 1024))
      ->capture_default_str();
  app.add_option("--budget", o->budget, "max simultaneously simulated chains")
      ->check(CLI::Number)
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app.add_option("--budget-ms", o->budget_ms,
                 "hold each Step under this many milliseconds (fewer chains, then fewer ragdoll substeps); 0: off")
      ->check(CLI::Number)
      ->check(CLI::Range(0.0, 1000.0))
      ->capture_default_str();
  app.add_option("--device-profile", o->device_profile,
                 "a profile from tendon-devicebench: its budgets replace the demo's chain budget, distances, "
                 "active characters, substeps and rate")
      ->check(CLI::ExistingFile);
  app.add_option("--ragdolls", o->ragdolls, "ragdoll characters in the yard (needs ../shared/data)")
      ->check(CLI::Number)
      ->check(CLI::Range(0, 4096))
      ->capture_default_str();
  std::string isa = "auto";
  app.add_option("--isa", isa, "instruction set of the kernels")
      ->check(CLI::IsMember({"auto", "scalar", "sse2", "sse4.2", "sse42", "avx2", "avx512"}, CLI::ignore_case))
      ->capture_default_str();
  app.add_option("--trace", o->trace, "Chrome Trace Event JSON output ('' disables)")->capture_default_str();
  app.add_option("--seed", o->seed, "crowd seed")->check(CLI::Number)->capture_default_str();
  app.add_option("--vrm", o->vrm, "a .vrm avatar: a crowd of copies walks, its springs swing (kVrm), some fall")
      ->check(CLI::ExistingFile);
  app.add_option("--vrm-count", o->vrm_count, "copies of the --vrm avatar")
      ->check(CLI::Number)
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  app.add_flag("--overlap", o->overlap,
               "step with BeginStep/FinishStep: the crowd's chains run beside the ragdoll substeps");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  const std::map<std::string, Isa> isas{{"auto", Isa::kAuto},   {"scalar", Isa::kScalar}, {"sse2", Isa::kSse2},
                                        {"sse4.2", Isa::kSse42}, {"sse42", Isa::kSse42},  {"avx2", Isa::kAvx2Fma},
                                        {"avx512", Isa::kAvx512}};
  std::string lower = isa;
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  o->isa = isas.at(lower);
  return -1;
}

// A strand of `nodes` bones along `dir`, each `segment` long.
ChainArchetypeSettings Strand(const char* name, int nodes, float segment, Vec3 dir) {
  ChainArchetypeSettings s;
  s.name = name;
  for (int i = 0; i < nodes; ++i) {
    ChainBone b;
    b.parent = i - 1;
    b.rest_local.translation = i == 0 ? Vec3{} : dir * segment;
    s.bones.push_back(b);
  }
  return s;
}

// A cape: one root across the shoulders and `columns` strands of `rows` hanging from it.
ChainArchetypeSettings Cape(int columns, int rows) {
  ChainArchetypeSettings s;
  s.name = "cape";
  s.bones.push_back({});
  for (int c = 0; c < columns; ++c) {
    const float x = (static_cast<float>(c) - 0.5f * static_cast<float>(columns - 1)) * 0.12f;
    for (int r = 0; r < rows; ++r) {
      ChainBone b;
      b.parent = r == 0 ? 0 : static_cast<int32_t>(s.bones.size()) - 1;
      b.rest_local.translation = r == 0 ? Vec3{x, -0.05f, -0.12f} : Vec3{0, -0.14f, 0};
      s.bones.push_back(b);
    }
  }
  s.settings.gravity_scale = 1.4f;
  s.settings.stiffness = 0.06f;
  s.settings.node_radius = 0.03f;
  // The body, as a capsule on the host's spine frame, keeps the cape off the back.
  s.colliders.push_back({.shape = ColliderShape::kCapsule, .bone = -1, .frame = 0, .a = {0, -0.6f, 0},
                         .b = {0, 0.1f, 0}, .radius = 0.16f});
  return s;
}

struct Character {
  Vec3 centre;      // of its walking circle
  bool broken_frame = false;  // this frame's animation is corrupt (NaN), as a bad asset would be
  float radius;     // of the circle
  float speed;      // rad/s along it
  float phase;
  Transform root{};   // character world transform
  Transform head{}, spine{}, hips{};
  std::vector<std::vector<Transform>> animated;  // per chain
  std::vector<std::vector<Transform>> output;
  std::vector<Transform> spine_frames;  // collider frames for the cape
  Transform charm_offset{};
  std::vector<ChainId> chains;
  PendulumId charm{};
};

void Animate(Character& c, double t) {
  const float a = c.phase + c.speed * static_cast<float>(t);
  const Vec3 pos = c.centre + Vec3{std::cos(a) * c.radius, 0.0f, std::sin(a) * c.radius};
  // Facing along the circle's tangent, with a walk bob and sway.
  const float heading = -a;
  const float bob = 0.04f * std::sin(2.0f * a * c.radius * 3.0f);
  c.root.translation = pos;
  c.root.rotation = AxisAngle(Vec3{0, 1, 0}, heading);
  const Quat sway = AxisAngle(Vec3{0, 0, 1}, 0.08f * std::sin(a * c.radius * 3.0f));
  c.hips = Compose(c.root, Transform{{0, 1.0f + bob, 0}, sway, {1, 1, 1}});
  c.spine = Compose(c.hips, Transform{{0, 0.45f, 0}, Conjugate(sway), {1, 1, 1}});
  c.head = Compose(c.spine, Transform{{0, 0.3f, 0}, AxisAngle(Vec3{1, 0, 0}, 0.1f * std::sin(a * 5.0f)), {1, 1, 1}});
  c.spine_frames[0] = c.spine;
  if (c.broken_frame) c.head.rotation.w = std::nanf("");
}


// The yaw (about +Y) of a rotation that turns only about +Y.
float YawOf(Quat q) { return 2.0f * std::atan2(q.y, q.w); }

// The stunt yard: ragdoll characters on the Jolt "Human" skeleton walking in circles.
struct Stuntman {
  Transform model{};
  std::vector<Transform> animated, output, world;
  CharacterId id{};
  Vec3 centre{};
  float angle = 0, radius = 5, clip_time = 0;
  bool down = false;
  double down_since = 0;
  std::vector<Transform> hair_animated, hair_output;
  ChainId hair{};
};

struct Yard {
  ports::JoltAnimation walk;
  SkeletonSettings skeleton;
  CharacterArchetypeId archetype{};
  int32_t head_bone = -1;
  std::vector<int32_t> part_bone;
  std::vector<std::unique_ptr<Stuntman>> men;
  int64_t hits = 0, knockdowns = 0, got_up = 0, facing[3] = {0, 0, 0}, started = 0, ended[4] = {0, 0, 0, 0};
  std::vector<int> active;
  std::vector<double> ragdoll_ms;
  double next_hit = 0.7, next_knockdown = 1.2;
  // The player: a host body (tendon/host_body.h) the demo walks back and forth across the
  // yard, through the bodies lying there and the standing characters.
  HostBodyId player{};
  float player_x = -8.0f, player_dir = 1.0f, player_walked = 0.0f;
  // Grab and throw (tendon/part_drive.h): every few seconds a walker is grabbed by the
  // head, lifted and dragged for a second by a part drive, and thrown.
  Stuntman* grabbed = nullptr;
  PartDriveId grab{};
  int32_t head_part = 0;
  Vec3 grab_target{};
  double next_grab = 2.0, release_at = 0;
  int64_t throws = 0;
  // Contact events (tendon/contact_events.h): impacts, those with the player, and the hard
  // ones (above 70 studs/s, 19.6 m/s: the fling reference's screen effect).
  int64_t impacts = 0, player_impacts = 0, hard_impacts = 0;
};

constexpr float kPlayerSpeed = 2.0f;  // m/s

constexpr float kWalkSpeed = 4.757f / 2.8f;  // the walk clip's root travel over its duration, m/s

// Places the model on its circle; the Jolt rig faces -Z, so yaw pi - angle walks the tangent.
void WalkOn(Stuntman& m, float dt, const Yard& yard) {
  m.angle += kWalkSpeed / m.radius * dt;
  m.clip_time += dt;
  m.model.translation = m.centre + Vec3{std::cos(m.angle) * m.radius, 0, std::sin(m.angle) * m.radius};
  m.model.rotation = AxisAngle(Vec3{0, 1, 0}, 3.14159265f - m.angle);
  ports::SampleJoltAnimation(yard.walk, m.clip_time, m.animated, true);
}

bool BuildYard(World& world, int count, std::mt19937& rng, Yard* yard, std::string* why) {
  const std::string data = ports::SharedDataPath("jolt-human/");
  auto neutral = ports::LoadJoltAnimation(data + "animations/neutral.json");
  auto walk = ports::LoadJoltAnimation(data + "animations/walk.json");
  auto ragdoll = ports::LoadJoltHumanRagdoll(data + "ragdoll.json");
  if (!neutral.ok() || !walk.ok() || !ragdoll.ok()) {
    *why = data + " is not available";
    return false;
  }
  yard->walk = walk.value();
  CharacterSettings cs;
  cs.name = "jolt human";
  cs.skeleton = ports::JoltSkeleton(neutral.value());
  cs.ragdoll = ragdoll.value();
  // Standing characters keep kinematic bodies: a body that falls on one lands on it, and
  // the player's capsule bumps into them.
  cs.inactive_bodies = CharacterInactiveBodies::kKinematic;
  yard->skeleton = cs.skeleton;
  auto built = world.BuildCharacterArchetype(cs);
  if (!built.ok()) {
    *why = built.error().field + ": " + built.error().message;
    return false;
  }
  yard->archetype = built.value();
  for (std::size_t b = 0; b < cs.skeleton.names.size(); ++b)
    if (cs.skeleton.names[b] == "C_Head_sjnt_0") yard->head_bone = static_cast<int32_t>(b);
  for (int32_t j = 0; j < world.CharacterPartCount(yard->archetype); ++j) {
    CharacterPartInfo info;
    Check(world.GetCharacterPartInfo(yard->archetype, j, &info), "GetCharacterPartInfo");
    yard->part_bone.push_back(info.bone);
    if (info.bone == yard->head_bone) yard->head_part = j;
  }
  HostBodySettings player;
  player.transform.translation = {yard->player_x, 0.9f, 0.5f};
  if (auto p = world.AddHostBody(player); p.ok()) yard->player = p.value();
  ChainArchetypeSettings tail = Strand("ponytail", 5, 0.07f, {0, -0.2f, 0.98f});
  tail.settings.node_radius = 0.015f;
  auto tail_id = world.BuildChainArchetype(tail);
  std::uniform_real_distribution<float> uni(0.0f, 1.0f);
  for (int i = 0; i < count; ++i) {
    auto m = std::make_unique<Stuntman>();
    m->radius = 3.0f + 4.0f * uni(rng);
    m->angle = 6.2831853f * uni(rng);
    m->clip_time = 2.8f * uni(rng);
    m->centre = Vec3{(uni(rng) - 0.5f) * 6.0f, 0, (uni(rng) - 0.5f) * 6.0f};
    m->animated = cs.skeleton.rest_local;
    m->output = m->animated;
    m->world.resize(m->animated.size());
    WalkOn(*m, 0.0f, *yard);
    CharacterBinding b;
    b.archetype = yard->archetype;
    b.model_world = &m->model;
    b.animated_local = m->animated;
    b.output_local = m->output;
    b.output_world = m->world;
    auto id = world.BindCharacter(b);
    if (!id.ok()) {
      *why = id.error().message;
      return false;
    }
    m->id = id.value();
    for (const ChainBone& bone : tail.bones) m->hair_animated.push_back(bone.rest_local);
    m->hair_animated[0].translation = {0, 0.12f, 0.08f};  // the back of the head
    m->hair_output = m->hair_animated;
    if (tail_id.ok() && yard->head_bone >= 0) {
      ChainBinding cb;
      cb.archetype = tail_id.value();
      cb.root_parent_world = &m->world[yard->head_bone];  // rides the ragdolled head
      cb.animated_local = m->hair_animated;
      cb.output_local = m->hair_output;
      if (auto r = world.BindChain(cb); r.ok()) m->hair = r.value();
    }
    yard->men.push_back(std::move(m));
  }
  return true;
}

// Before a Step: walk, strike and knock down; get up the ones that came to rest.
void DirectYard(World& world, Yard& yard, double t, float dt, std::mt19937& rng) {
  std::uniform_real_distribution<float> uni(0.0f, 1.0f);
  if (!yard.player.IsNull()) {
    // Back and forth along x through the middle of the yard, turning at +-8 m.
    yard.player_x += yard.player_dir * kPlayerSpeed * dt;
    yard.player_walked += kPlayerSpeed * dt;
    if (std::fabs(yard.player_x) > 8.0f) yard.player_dir = -yard.player_dir;
    Check(world.SetHostBodyMotion(yard.player, Transform{{yard.player_x, 0.9f, 0.5f}, {}, {1, 1, 1}},
                                  Vec3{yard.player_dir * kPlayerSpeed, 0, 0}, {}),
          "SetHostBodyMotion");
  }
  for (auto& m : yard.men) {
    if (!m->down) {
      WalkOn(*m, dt, yard);
      continue;
    }
    CharacterState st;
    Check(world.GetCharacterState(m->id, &st), "GetCharacterState");
    if (st.active && !st.settled && t - m->down_since < 5.0) continue;
    // Get up where it lies: the model under the hips, turned to where the head points.
    if (st.active) {
      ++yard.facing[static_cast<int>(st.facing)];
      m->model.translation = Vec3{st.root.translation.x, 0, st.root.translation.z};
      const float yaw = (st.heading_degrees + 180.0f) * 3.14159265f / 180.0f;
      m->model.rotation = AxisAngle(Vec3{0, 1, 0}, yaw);
      Check(world.DeactivateCharacter(m->id, 0.4f), "DeactivateCharacter");
      ++yard.got_up;
    }
    m->down = false;
    m->angle = 3.14159265f - YawOf(m->model.rotation);
    m->centre = m->model.translation - Vec3{std::cos(m->angle) * m->radius, 0, std::sin(m->angle) * m->radius};
  }
  if (yard.men.empty()) return;
  // A grabbed walker the budget evicted (switched off) lost its drive with its ragdoll.
  if (yard.grabbed != nullptr && !world.IsValid(yard.grab)) yard.grabbed = nullptr;
  if (yard.grabbed != nullptr) {
    // Held by the head, dragged sideways at 2 m/s; thrown when the second is up.
    yard.grab_target = yard.grab_target + Vec3{2.0f * dt, 0, 0};
    Check(world.SetPartDriveTarget(yard.grab, yard.grab_target), "SetPartDriveTarget");
    if (t >= yard.release_at) {
      Check(world.RemovePartDrive(yard.grab), "RemovePartDrive");
      const float a = 6.2831853f * uni(rng);
      if (world.ThrowRagdoll(world.CharacterRagdoll(yard.grabbed->id), Vec3{std::cos(a), 0.6f, std::sin(a)}, 700.0f, 3.0f,
                             12.0f).ok())
        ++yard.throws;
      yard.grabbed = nullptr;
    }
  }
  auto pick = [&]() -> Stuntman* {
    Stuntman* m = yard.men[static_cast<std::size_t>(uni(rng) * static_cast<float>(yard.men.size())) % yard.men.size()].get();
    return m->down ? nullptr : m;
  };
  if (t >= yard.next_hit) {
    yard.next_hit += 0.5 + 0.5 * uni(rng);
    if (Stuntman* m = pick()) {
      const auto part = static_cast<int32_t>(uni(rng) * static_cast<float>(yard.part_bone.size())) %
                        static_cast<int32_t>(yard.part_bone.size());
      const Vec3 at = m->world[static_cast<std::size_t>(yard.part_bone[part])].translation;
      const float a = 6.2831853f * uni(rng);
      if (world.HitCharacter(m->id, part, Vec3{std::cos(a) * 12.0f, 2.0f, std::sin(a) * 12.0f}, at)) ++yard.hits;
    }
  }
  if (t >= yard.next_grab && yard.grabbed == nullptr) {
    yard.next_grab += 3.0 + 2.0 * uni(rng);
    if (Stuntman* m = pick()) {
      CharacterActivateOptions o;
      o.strength = 0.2f;  // limp enough to dangle from the hand
      o.anchored = false;
      o.release_blend_seconds = 0.3f;
      if (world.ActivateCharacter(m->id, o)) {
        PartDriveSettings d;
        d.part = yard.head_part;
        d.target = m->world[static_cast<std::size_t>(yard.part_bone[yard.head_part])].translation + Vec3{0, 1.0f, 0};
        d.response_time = 0.3f;
        d.break_distance = 3.0f;
        if (auto drive = world.AddPartDrive(world.CharacterRagdoll(m->id), d); drive.ok()) {
          yard.grabbed = m;
          yard.grab = drive.value();
          yard.grab_target = d.target;
          yard.release_at = t + 1.0;
          m->down = true;
          m->down_since = t;
        }
      }
    }
  }
  if (t >= yard.next_knockdown) {
    yard.next_knockdown += 0.5 + 0.7 * uni(rng);
    if (Stuntman* m = pick()) {
      CharacterState st;
      Check(world.GetCharacterState(m->id, &st), "GetCharacterState");
      if (st.active) Check(world.DeactivateCharacter(m->id), "DeactivateCharacter");  // a flinch becomes a fall
      const float a = 6.2831853f * uni(rng);
      CharacterActivateOptions o;
      o.strength = 1.0f;
      o.anchored = false;
      o.impulse = Vec3{std::cos(a) * 150.0f, 60.0f, std::sin(a) * 150.0f};
      o.release_blend_seconds = 0.3f;
      if (world.ActivateCharacter(m->id, o)) {
        Check(world.GoLimp(m->id, 0.5f), "GoLimp");  // holds its pose a moment, then gives way
        m->down = true;
        m->down_since = t;
        ++yard.knockdowns;
      }
    }
  }
}

// After a Step: the events (a body the budget evicted goes back to walking).
void YardEvents(World& world, Yard& yard, const FrameStats& s) {
  CharacterEvent events[64];
  int32_t n;
  while ((n = world.DrainCharacterEvents(events)) > 0) {
    for (int32_t i = 0; i < n; ++i) {
      if (events[i].type == CharacterEvent::Type::kStarted) {
        ++yard.started;
        continue;
      }
      ++yard.ended[static_cast<int>(events[i].reason)];
      if (events[i].reason == CharacterEndReason::kEvicted) {
        for (auto& m : yard.men)
          if (m->id == events[i].character) m->down = false;
      }
    }
  }
  ContactEvent contacts[128];
  while ((n = world.DrainContactEvents(contacts)) > 0) {
    for (int32_t i = 0; i < n; ++i) {
      const ContactEvent& e = contacts[i];
      if (e.kind != ContactEventKind::kBegan) continue;
      if (e.b_kind == ContactSideKind::kHostBody && e.b_host_body == yard.player) ++yard.player_impacts;
      ++yard.impacts;
      if (e.normal_speed > 19.6f) ++yard.hard_impacts;
    }
  }
  yard.active.push_back(s.active_characters);
  yard.ragdoll_ms.push_back(s.times.ragdoll_ms);
}

// --vrm: a crowd of copies of one VRM avatar (ports/gltf/vrm_avatar.h) walking in circles
// around the yard, their spring bones on kVrm chains; now and then one is knocked down
// (ActivateCharacter with a push, released on the world clock 3 s later).
struct VrmCrowd {
  std::shared_ptr<const ports::VrmAvatarArchetype> kind;
  std::vector<std::unique_ptr<ports::VrmAvatar>> avatars;
  std::vector<float> angle, radius;
  int32_t head = -1;
  Quat head_rest{};
  int64_t knockdowns = 0;
  double next_knockdown = 1.5;
};

bool BuildVrmCrowd(World& world, const Options& opt, std::mt19937& rng, VrmCrowd* crowd, std::string* why) {
  auto kind = ports::VrmAvatarArchetype::Load(world, opt.vrm);
  if (!kind.ok()) {
    *why = kind.error().message;
    return false;
  }
  crowd->kind = kind.value();
  for (const auto& [role, bone] : crowd->kind->asset().humanoid)
    if (role == "head") crowd->head = bone;
  std::uniform_real_distribution<float> uni(0.0f, 1.0f);
  for (int i = 0; i < opt.vrm_count; ++i) {
    const float angle = 6.2831853f * uni(rng), radius = 12.0f + 10.0f * uni(rng);
    auto bound = ports::VrmAvatar::Bind(world, crowd->kind,
                                        Transform{{std::cos(angle) * radius, 0, std::sin(angle) * radius}, {}, {1, 1, 1}});
    if (!bound.ok()) {
      *why = bound.error().message;
      return false;
    }
    crowd->avatars.push_back(std::move(bound.value()));
    crowd->angle.push_back(angle);
    crowd->radius.push_back(radius);
  }
  if (crowd->head >= 0) crowd->head_rest = crowd->avatars[0]->animated_local[crowd->head].rotation;
  return true;
}

void DirectVrmCrowd(World& world, VrmCrowd& crowd, double t, float dt, std::mt19937& rng) {
  const float ft = static_cast<float>(t);
  for (std::size_t i = 0; i < crowd.avatars.size(); ++i) {
    ports::VrmAvatar& a = *crowd.avatars[i];
    // A VRM faces +Z: yaw -angle walks the circle's tangent. 1.2 m/s, bobbing, head nodding.
    crowd.angle[i] += 1.2f / crowd.radius[i] * dt;
    const float angle = crowd.angle[i];
    a.model_world.translation = Vec3{std::cos(angle) * crowd.radius[i], 0.03f * std::fabs(std::sin(8.0f * ft)),
                                     std::sin(angle) * crowd.radius[i]};
    a.model_world.rotation = AxisAngle(Vec3{0, 1, 0}, -angle);
    if (crowd.head >= 0)
      a.animated_local[crowd.head].rotation =
          crowd.head_rest * AxisAngle(Vec3{0, 0, 1}, 0.3f * std::sin(3.0f * ft + static_cast<float>(i)));
    if (a.character.generation == 0) a.UpdateWorld();
  }
  if (t >= crowd.next_knockdown && !crowd.avatars.empty()) {
    crowd.next_knockdown = t + 1.5;
    std::uniform_int_distribution<std::size_t> pick(0, crowd.avatars.size() - 1);
    ports::VrmAvatar& a = *crowd.avatars[pick(rng)];
    CharacterActivateOptions o;
    o.impulse = Rotate(a.model_world.rotation, Vec3{0, 10, 90});  // a shove from behind
    o.duration_seconds = 3.0f;
    if (a.character.generation != 0 && world.ActivateCharacter(a.character, o)) ++crowd.knockdowns;
  }
}

template <class T>
T Percentile(std::vector<T> v, double q) {
  if (v.empty()) return T{};
  std::sort(v.begin(), v.end());
  const auto i = static_cast<std::size_t>(q * static_cast<double>(v.size() - 1));
  return v[i];
}

}  // namespace

int main(int argc, char** argv) {
  Options opt;
  if (const int exit_code = Parse(argc, argv, &opt); exit_code >= 0) return exit_code;

  TbbTaskSystem tasks(opt.workers);
  WorldSettings ws;
  ws.isa = opt.isa;
  ws.max_chains = opt.budget;
  ws.frame_budget_ms = static_cast<float>(opt.budget_ms);
  ws.max_distance = 40.0f;
  ws.pendulum_max_distance = 40.0f;
  ws.ambient_wind = {2.5f, 0.0f, 1.0f};
  ws.max_active_characters = 8;  // small, so that the budget's evictions show
  ws.tasks = tasks.hooks();
  DeviceProfile profile;
  if (!opt.device_profile.empty()) {
    auto loaded = ports::LoadDeviceProfile(opt.device_profile);
    if (!loaded.ok()) {
      std::fprintf(stderr, "tendon-demo: --device-profile: %s\n", loaded.error().message.c_str());
      return 1;
    }
    profile = std::move(loaded.value());
    // The profile's budgets instead of the demo's own: left at their defaults, they are
    // the profile's to fill.
    const WorldSettings defaults{};
    ws.max_chains = defaults.max_chains;
    ws.max_distance = defaults.max_distance;
    ws.max_active_characters = defaults.max_active_characters;
    ws.device_profile = &profile;
  }
  auto created = World::Create(ws);
  if (!created.ok()) {
    std::fprintf(stderr, "World::Create: %s (%s)\n", created.error().message.c_str(), created.error().field.c_str());
    return 1;
  }
  World& world = *created.value();
  if (ws.device_profile != nullptr) {
    const WorldSettings& applied = world.Settings();
    std::printf("tendon-demo: device profile %s (tier %s, %s): max_chains %d, max_distance %.0f m, %d active "
                "characters, %d ragdoll substeps, %.0f Hz\n",
                opt.device_profile.c_str(), ToString(profile.tier), profile.machine.c_str(), applied.max_chains,
                applied.max_distance, applied.max_active_characters, applied.ragdoll_substeps, applied.fixed_hz);
  }

  // Archetypes: two hair lengths and two cape widths give several topologies (blocks).
  std::vector<ChainArchetypeSettings> settings;
  for (int nodes : {5, 8}) {
    ChainArchetypeSettings hair = Strand("hair", nodes, 0.06f, {0, -1, 0});
    hair.settings.node_radius = 0.01f;
    hair.colliders.push_back({.shape = ColliderShape::kSphere, .bone = -1, .frame = 0, .a = {0, 0.1f, 0}, .radius = 0.11f});
    settings.push_back(hair);
  }
  settings.push_back(Cape(3, 5));
  settings.push_back(Cape(4, 5));
  ChainArchetypeSettings tail = Strand("tail", 8, 0.09f, {0, -0.3f, -0.95f});
  tail.settings.stiffness = 0.03f;
  tail.settings.damping = 0.88f;
  tail.settings.node_radius = 0.02f;
  tail.colliders.push_back({.shape = ColliderShape::kPlane, .bone = -1, .frame = 0, .a = {0, 0, 0}, .b = {0, 1, 0}});
  settings.push_back(tail);
  std::vector<ChainArchetypeId> archetypes;
  for (const ChainArchetypeSettings& s : settings) {
    auto r = world.BuildChainArchetype(s);
    if (!r.ok()) {
      std::fprintf(stderr, "BuildChainArchetype(%s): %s\n", s.name.c_str(), r.error().message.c_str());
      return 1;
    }
    archetypes.push_back(r.value());
  }

  std::mt19937 rng(opt.seed);
  std::uniform_real_distribution<float> uni(0.0f, 1.0f);
  const float side = 3.0f * std::sqrt(static_cast<float>(opt.count));  // one character per 9 m^2
  std::vector<std::unique_ptr<Character>> crowd;
  crowd.reserve(opt.count);
  const Transform ground{};  // the tail's plane frame: the world ground
  for (int i = 0; i < opt.count; ++i) {
    auto c = std::make_unique<Character>();
    c->centre = Vec3{(uni(rng) - 0.5f) * side, 0.0f, (uni(rng) - 0.5f) * side};
    c->radius = 2.0f + 6.0f * uni(rng);
    c->speed = (0.8f + 0.8f * uni(rng)) / c->radius * (uni(rng) < 0.5f ? 1.0f : -1.0f);
    c->phase = 6.2831853f * uni(rng);
    c->spine_frames.assign(1, Transform{});
    Animate(*c, 0.0);
    const int hair_kind = uni(rng) < 0.5f ? 0 : 1;
    const int cape_kind = uni(rng) < 0.5f ? 2 : 3;
    struct Wear {
      int archetype;
      const Transform* parent;
      Transform offset;
    };
    std::vector<Wear> wear;
    for (int h = 0; h < 4; ++h) {
      const float a = 1.5708f * static_cast<float>(h) + 0.4f;
      wear.push_back({hair_kind, &c->head, Transform{{0.09f * std::cos(a), 0.16f, 0.09f * std::sin(a)}, {}, {1, 1, 1}}});
    }
    wear.push_back({cape_kind, &c->spine, Transform{{0, 0.25f, 0}, {}, {1, 1, 1}}});
    wear.push_back({4, &c->hips, Transform{{0, -0.05f, -0.12f}, {}, {1, 1, 1}}});
    c->animated.resize(wear.size());
    c->output.resize(wear.size());
    for (std::size_t w = 0; w < wear.size(); ++w) {
      const ChainArchetypeSettings& s = settings[wear[w].archetype];
      for (const ChainBone& b : s.bones) c->animated[w].push_back(b.rest_local);
      c->animated[w][0] = wear[w].offset;
      c->output[w] = c->animated[w];
    }
    for (std::size_t w = 0; w < wear.size(); ++w) {
      ChainBinding b;
      b.archetype = archetypes[wear[w].archetype];
      b.root_parent_world = wear[w].parent;
      b.animated_local = c->animated[w];
      b.output_local = c->output[w];
      const bool hair = wear[w].archetype < 2;
      const bool tail_chain = wear[w].archetype == 4;
      b.collider_frames = tail_chain ? std::span<const Transform>(&ground, 1)
                                     : (hair ? std::span<const Transform>(&c->head, 1)
                                             : std::span<const Transform>(c->spine_frames));
      auto r = world.BindChain(b);
      if (!r.ok()) {
        std::fprintf(stderr, "BindChain: %s\n", r.error().message.c_str());
        return 1;
      }
      c->chains.push_back(r.value());
    }
    c->charm_offset = Transform{{0.18f, -0.1f, 0.05f}, {}, {1, 1, 1}};
    PendulumBinding pb;
    pb.joint_world = &c->hips;
    pb.accessory_offset = &c->charm_offset;
    pb.settings.centre = {0, -0.12f, 0};
    auto pr = world.BindPendulum(pb);
    if (!pr.ok()) {
      std::fprintf(stderr, "BindPendulum: %s\n", pr.error().message.c_str());
      return 1;
    }
    c->charm = pr.value();
    crowd.push_back(std::move(c));
  }

  // The yard's ground, and its ragdoll characters.
  Check(world.BuildStaticWorld(StaticWorldSettings{{StaticPlane{{0, 1, 0}, 0}}}), "BuildStaticWorld");
  Yard yard;
  if (opt.ragdolls > 0) {
    std::string why;
    if (!BuildYard(world, opt.ragdolls, rng, &yard, &why)) {
      std::printf("tendon-demo: no ragdoll characters (%s)\n", why.c_str());
      yard.men.clear();
    }
  }

  VrmCrowd vrm;
  if (!opt.vrm.empty()) {
    std::string why;
    if (!BuildVrmCrowd(world, opt, rng, &vrm, &why)) {
      std::fprintf(stderr, "tendon-demo: --vrm %s: %s\n", opt.vrm.c_str(), why.c_str());
      return 1;
    }
    std::printf("tendon-demo: %d copies of %s: %d kVrm chains and %d spring joints each%s\n",
                static_cast<int>(vrm.avatars.size()), vrm.kind->asset().name.c_str(),
                static_cast<int>(vrm.kind->chains().size()), vrm.kind->joint_count(),
                vrm.kind->character().generation != 0 ? ", a ragdoll character" : " (no humanoid: no ragdoll)");
  }

  TraceWriter trace;
  if (!opt.trace.empty()) {
    if (trace.Open(opt.trace)) {
      world.SetTraceWriter(&trace);
    } else {
      std::fprintf(stderr, "cannot write %s; running without a trace\n", opt.trace.c_str());
    }
  }

  std::printf("tendon-demo: %d characters, %d chains and %d pendulums bound; %s kernel, %d lanes per block, "
              "%d workers, budget %d chains; %d ragdoll characters (at most %d active)\n",
              opt.count, static_cast<int>(crowd.size() * 6), opt.count, ToString(world.ActiveIsa()), world.LaneWidth(),
              tasks.worker_count(), world.Settings().max_chains, static_cast<int>(yard.men.size()),
              world.Settings().max_active_characters);

  // Frames: a frame rate that wanders between 30 and 144 fps, with a hitch every ~3 s.
  std::vector<double> total_ms, gather_ms, budget_ms, pose_ms, solve_ms, writeback_ms, pendulum_ms, host_ms;
  std::vector<double> budgeted_ms;  // frames that ran a substep, with --budget-ms
  long long budget_actions[5] = {};  // per BudgetAction
  std::vector<int> simulated, sleeping;
  std::vector<float> occupancy;
  int64_t snapped_teleport = 0, snapped_wake = 0, snapped_bad = 0, resets = 0, instance_substeps = 0, frames = 0;
  // Faults the demo injects on purpose, to show the kernel absorbing them (counted so that
  // the summary can say which of its snaps it caused).
  int64_t injected_teleports = 0, injected_corrupt_frames = 0;
  int64_t hitches = 0, dropped_frames = 0;
  double t = 0.0;
  double next_hitch = 2.5;
  int last_percent = -1;
  const bool tty = isatty(fileno(stdout)) != 0;
  const auto wall0 = std::chrono::steady_clock::now();
  while (t < opt.seconds) {
    const double fps = 87.0 + 57.0 * std::sin(t * 0.7) + 10.0 * (uni(rng) - 0.5);
    double dt = 1.0 / std::clamp(fps, 30.0, 144.0);
    if (t >= next_hitch) {
      dt = 0.15 + 0.2 * uni(rng);  // a loading hitch
      next_hitch += 2.5 + uni(rng);
      ++hitches;
    }
    t += dt;
    // The camera flies through the crowd along a slow loop.
    const float ct = static_cast<float>(t);
    const Vec3 camera{std::sin(ct * 0.11f) * side * 0.35f, 2.0f, std::cos(ct * 0.07f) * side * 0.35f};
    // Now and then the character nearest the camera (so that its chains are simulated, not
    // asleep beyond the distance budget) respawns 8 m away (a teleport), and some play a
    // corrupt animation frame (NaN): the kernel snaps the first and holds the second.
    const auto frame_index = static_cast<std::size_t>(frames);
    if (frame_index % 240 == 120) {
      auto nearest = std::min_element(crowd.begin(), crowd.end(), [&](const auto& a, const auto& b) {
        return LengthSquared(a->centre - camera) < LengthSquared(b->centre - camera);
      });
      (*nearest)->centre.x += 8.0f;
      ++injected_teleports;
    }
    for (std::size_t i = 0; i < crowd.size(); ++i) {
      crowd[i]->broken_frame = frame_index % 97 == 50 && i % 50 == 0;
      injected_corrupt_frames += crowd[i]->broken_frame ? 1 : 0;
    }
    const auto h0 = std::chrono::steady_clock::now();
    for (auto& c : crowd) Animate(*c, t);
    DirectYard(world, yard, t, static_cast<float>(dt), rng);
    DirectVrmCrowd(world, vrm, t, static_cast<float>(dt), rng);
    world.SetCamera(camera);
    host_ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - h0).count());
    // With --overlap the frame is handed to the workers whole; a real host would do its
    // own pre-render work (not touching the bound buffers) before FinishStep.
    if (opt.overlap) world.BeginStep(static_cast<float>(dt));
    const FrameStats& s = opt.overlap ? world.FinishStep() : world.Step(static_cast<float>(dt));
    YardEvents(world, yard, s);
    ++frames;
    if (s.dropped_seconds > 0) ++dropped_frames;
    total_ms.push_back(s.times.total_ms);
    gather_ms.push_back(s.times.gather_ms);
    budget_ms.push_back(s.times.budget_ms);
    pose_ms.push_back(s.times.pose_ms);
    solve_ms.push_back(s.times.solve_ms);
    writeback_ms.push_back(s.times.writeback_ms);
    pendulum_ms.push_back(s.times.pendulum_ms);
    simulated.push_back(s.simulated_chains);
    sleeping.push_back(s.sleeping_chains);
    occupancy.push_back(s.lane_occupancy);
    snapped_teleport += s.snapped_teleport;
    snapped_wake += s.snapped_wake;
    snapped_bad += s.snapped_bad_input;
    resets += s.reset_non_finite;
    instance_substeps += s.simulated_instance_substeps;
    budget_actions[static_cast<int>(s.budget_action)] += 1;
    if (s.substeps > 0) budgeted_ms.push_back(s.times.total_ms);
    const int percent = static_cast<int>(100.0 * std::min(t / opt.seconds, 1.0));
    if (percent / 5 != last_percent / 5) {
      last_percent = percent;
      std::printf("%s  [%-20s] %3d%%  t=%5.1fs  frame %lld  simulated %d  sleeping %d  step %.2f ms   ",
                  tty ? "\r" : (percent >= 5 ? "\n" : ""),
                  std::string(static_cast<std::size_t>(percent / 5), '#').c_str(), percent, t,
                  static_cast<long long>(frames), s.simulated_chains, s.sleeping_chains, s.times.total_ms);
      std::fflush(stdout);
    }
  }
  const double wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
  std::printf("\n");

  // Every bound chain still writes finite poses; unbinding puts the skeletons back.
  int non_finite = 0;
  for (const auto& c : crowd)
    for (const auto& chain : c->output)
      for (const Transform& x : chain) non_finite += IsFinite(x) ? 0 : 1;
  for (const auto& m : yard.men)
    for (const Transform& x : m->output) non_finite += IsFinite(x) ? 0 : 1;
  for (const auto& a : vrm.avatars)
    for (const Transform& x : a->output_local) non_finite += IsFinite(x) ? 0 : 1;

  const FrameStats& last = world.LastStats();
  if (opt.budget_ms > 0) {
    int over = 0;
    for (double ms : budgeted_ms) over += ms > opt.budget_ms ? 1 : 0;
    std::printf("\nbudget %.2f ms: frames with substeps median %.3f ms, p95 %.3f ms, %d of %zu over; %lld cuts, "
                "%lld give-backs, %lld frames at the floor; last frame %d chains, %d ragdoll substeps\n",
                opt.budget_ms, Percentile(budgeted_ms, 0.5), Percentile(budgeted_ms, 0.95), over, budgeted_ms.size(),
                budget_actions[static_cast<int>(BudgetAction::kCut)],
                budget_actions[static_cast<int>(BudgetAction::kRestored)],
                budget_actions[static_cast<int>(BudgetAction::kAtFloor)], last.simulated_chains,
                last.budget_ragdoll_substeps);
  }
  std::printf("\nsummary over %lld frames (%.1f simulated seconds, %lld hitches, %lld frames clamped), wall %.2f s\n",
              static_cast<long long>(frames), t, static_cast<long long>(hitches),
              static_cast<long long>(dropped_frames), wall_s);
  std::printf("  bound        %d chains, %d pendulums\n", last.bound_chains, last.bound_pendulums);
  std::printf("  simulated    median %d chains, worst %d; %lld instance-substeps in all\n",
              Percentile(simulated, 0.5), *std::max_element(simulated.begin(), simulated.end()),
              static_cast<long long>(instance_substeps));
  std::printf("  sleeping     median %d chains (distance %d, budget %d in the last frame)\n", Percentile(sleeping, 0.5),
              last.culled_by_distance, last.culled_by_budget);
  std::printf("  snapped      %lld teleports, %lld wakes, %lld bad inputs; %lld non-finite resets\n",
              static_cast<long long>(snapped_teleport), static_cast<long long>(snapped_wake),
              static_cast<long long>(snapped_bad), static_cast<long long>(resets));
  std::printf("  injected     on purpose, to show the guards: %lld respawns 8 m away (every 240th frame, the "
              "character nearest the camera: the teleport guard snaps its chains), %lld corrupt animation frames (a NaN head "
              "rotation on every 50th character every 97th frame: each chain simulated that frame (not asleep "
              "beyond the distance budget) is held at its last good pose and counted as a bad input)\n",
              static_cast<long long>(injected_teleports), static_cast<long long>(injected_corrupt_frames));
  std::printf("  lanes        occupancy median %.1f%%, worst %.1f%% (%d lanes per block)\n",
              100.0 * Percentile(occupancy, 0.5), 100.0 * *std::min_element(occupancy.begin(), occupancy.end()),
              world.LaneWidth());
  if (!yard.men.empty()) {
    std::printf("  ragdolls     %d characters, active median %d worst %d; %lld hits (flinches), %lld knockdowns, "
                "%lld got up (%lld on their back, %lld face down, %lld on a side)\n",
                static_cast<int>(yard.men.size()), Percentile(yard.active, 0.5),
                *std::max_element(yard.active.begin(), yard.active.end()), static_cast<long long>(yard.hits),
                static_cast<long long>(yard.knockdowns), static_cast<long long>(yard.got_up),
                static_cast<long long>(yard.facing[0]), static_cast<long long>(yard.facing[1]),
                static_cast<long long>(yard.facing[2]));
    std::printf("  player       a host capsule walked %.0f m back and forth through the yard; %lld bodies bumped it\n",
                static_cast<double>(yard.player_walked), static_cast<long long>(yard.player_impacts));
    std::printf("  grabs        %lld walkers grabbed by the head, dragged a second and thrown\n",
                static_cast<long long>(yard.throws));
    std::printf("  impacts      %lld contact events began (%lld hard: above 70 studs/s, 19.6 m/s)\n",
                static_cast<long long>(yard.impacts), static_cast<long long>(yard.hard_impacts));
    std::printf("  events       %lld started; ended: %lld released, %lld evicted by the budget, %lld expired, %lld removed\n",
                static_cast<long long>(yard.started), static_cast<long long>(yard.ended[0]),
                static_cast<long long>(yard.ended[1]), static_cast<long long>(yard.ended[2]),
                static_cast<long long>(yard.ended[3]));
  }
  if (!vrm.avatars.empty()) {
    std::printf("  vrm          %d avatars (%d spring joints each, kVrm), %lld knocked down\n",
                static_cast<int>(vrm.avatars.size()), vrm.kind->joint_count(), static_cast<long long>(vrm.knockdowns));
  }
  std::printf("  ms per phase  median    worst\n");
  const struct {
    const char* name;
    const std::vector<double>* v;
  } phases[] = {{"gather", &gather_ms}, {"budget", &budget_ms},       {"pose", &pose_ms},
                {"solve", &solve_ms},   {"writeback", &writeback_ms}, {"pendulums", &pendulum_ms},
                {"ragdolls", &yard.ragdoll_ms}, {"step total", &total_ms}, {"host anim", &host_ms}};
  for (const auto& p : phases) {
    if (p.v->empty()) continue;
    std::printf("  %-12s %7.3f  %7.3f\n", p.name, Percentile(*p.v, 0.5), *std::max_element(p.v->begin(), p.v->end()));
  }
  std::printf("  non-finite outputs: %d\n", non_finite);

  if (trace.IsOpen()) {
    world.SetTraceWriter(nullptr);
    const auto events = trace.events_written();
    trace.Close();
    std::printf("  trace: %s (%llu events; open in ui.perfetto.dev or chrome://tracing)\n", opt.trace.c_str(),
                static_cast<unsigned long long>(events));
    // The dashboard (tools/dashboard, a static page): its frames, phases and counters.
    std::error_code ec;
    const std::string absolute = std::filesystem::absolute(opt.trace, ec).string();
    std::printf("  dashboard: (cd %s && npm ci) && chromium --allow-file-access-from-files "
                "'file://%s/index.html?trace=file://%s'\n",
                TENDON_DASHBOARD_DIR, TENDON_DASHBOARD_DIR, absolute.c_str());
  }

  // Unbind everything: every bone goes back to its animated pose.
  int restored = 0, bones = 0;
  for (auto& c : crowd) {
    for (std::size_t w = 0; w < c->chains.size(); ++w) {
      Check(world.UnbindChain(c->chains[w]), "UnbindChain");
      for (std::size_t k = 0; k < c->output[w].size(); ++k) {
        ++bones;
        restored += c->output[w][k] == c->animated[w][k] ? 1 : 0;
      }
    }
    Check(world.UnbindPendulum(c->charm), "UnbindPendulum");
  }
  for (auto& m : yard.men) {
    Check(world.UnbindCharacter(m->id), "UnbindCharacter");
    for (std::size_t k = 0; k < m->output.size(); ++k) {
      ++bones;
      restored += m->output[k] == m->animated[k] ? 1 : 0;
    }
  }
  for (auto& a : vrm.avatars) {
    Check(a->Unbind(), "Unbind");
    for (std::size_t k = 0; k < a->output_local.size(); ++k) {
      ++bones;
      restored += a->output_local[k] == a->animated_local[k] ? 1 : 0;
    }
  }
  std::printf("  unbound: %d of %d bones restored exactly to the animated pose\n", restored, bones);
  return non_finite == 0 && restored == bones ? 0 : 1;
}
