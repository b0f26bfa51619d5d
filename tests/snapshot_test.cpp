// Saved states (tendon/snapshot.h): stepping on after a restore gives the bits stepping on
// from the save gave, in the same World and in another built the same way at other worker
// counts; refused buffers change nothing; saving and restoring allocate nothing.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <memory>
#include <vector>

#include "allocation_counter.h"
#include "kernel/core/snapshot_io.h"
#include "kernel/rigid/rigid_block.h"
#include "kernel/world/world_access.h"
#include "stickman_rig.h"
#include "tendon/tbb_task_system.h"
#include "tendon/world.h"
#include "test_util.h"

namespace tendon::test {
namespace {

// Chains (kTendon with a collider, and kVrm), pendulums, a pile of three-part limbs
// falling onto a plane and onto each other, stickman characters (limp, powered and
// anchored, struck, going limp, handed back with a crossfade), a moving host body, a part
// drive, contact events. Every host input is a function of the frame number, so a frame
// can be replayed.
struct Scene {
  std::unique_ptr<World> w;
  std::vector<std::unique_ptr<HostChain>> chains;
  // The first two chains (a kTendon and a kVrm one) also write row-major 3x4 model matrices
  // (tendon/pose_layout.h): the replays compare them too.
  std::vector<PoseStream> streams = std::vector<PoseStream>(2);
  std::vector<std::vector<float>> stream_data = std::vector<std::vector<float>>(2);
  std::vector<Transform> joints, offsets;
  std::vector<std::vector<Transform>> limbs;
  std::vector<RagdollId> limb_ids;
  SkeletonSettings skeleton;
  std::vector<Transform> models;
  std::vector<std::vector<Transform>> man_out;
  std::vector<CharacterId> men;
  HostBodyId body{};
  PartDriveId drive{};

  // What a scene holds (each test's subject; kAll: everything at once).
  enum Parts : uint32_t { kChains = 1, kPendulums = 2, kPile = 4, kCharacters = 8, kHostBody = 16, kAll = 31 };
  uint32_t parts = kAll;

  explicit Scene(TaskHooks hooks, uint32_t what = kAll, int32_t limb_count = 12) : parts(what) {
    const int32_t limb_parts = 3;
    WorldSettings ws;
    ws.tasks = hooks;
    ws.max_chains = 64;
    ws.ambient_wind = {3, 0, 1};
    w = MakeWorld(ws);
    std::vector<ChainArchetypeSettings> kinds = {Strand(5, 0.08f), Strand(6, 0.05f, {0, -1, 0})};
    kinds[0].colliders.push_back({.shape = ColliderShape::kSphere, .bone = 0, .a = {0, -0.2f, 0.05f}, .radius = 0.1f});
    kinds[1].model = ChainModel::kVrm;
    std::vector<ChainArchetypeId> ids;
    for (const auto& k : kinds) ids.push_back(w->BuildChainArchetype(k).value());
    for (int i = 0; i < ((parts & kChains) != 0 ? 24 : 0); ++i) {
      chains.push_back(std::make_unique<HostChain>(kinds[i % 2], Vec3{static_cast<float>(i % 6) * 2.0f, 0,
                                                                       static_cast<float>(i / 6) * 2.0f}));
      ChainBinding b = chains.back()->Binding(ids[i % 2]);
      if (i < 2) {
        const auto bones = static_cast<int32_t>(kinds[i].bones.size());
        stream_data[i].assign(static_cast<std::size_t>(12 * bones), 0.0f);
        streams[i].layout = PoseLayout::kModelMatrix;
        streams[i].matrix_form = MatrixForm::kRowMajor3x4;
        streams[i].base = stream_data[i].data();
        streams[i].element_count = bones;
        b.pose_streams = std::span<const PoseStream>(&streams[i], 1);
      }
      EXPECT_TRUE(w->BindChain(b).ok());
    }
    const int pendulums = (parts & kPendulums) != 0 ? 8 : 0;
    joints.resize(pendulums);
    offsets.assign(pendulums, Transform{{0, -0.3f, 0}, {}, {1, 1, 1}});
    for (int i = 0; i < pendulums; ++i) {
      joints[i].translation = {static_cast<float>(i) * 3.0f, 1, 0};
      PendulumBinding b;
      b.joint_world = &joints[i];
      b.accessory_offset = &offsets[i];
      EXPECT_TRUE(w->BindPendulum(b).ok());
    }
    EXPECT_TRUE(w->BuildStaticWorld(StaticWorldSettings{{StaticPlane{{0, 1, 0}, 0}}}).ok());
    RagdollSettings limb;
    for (int j = 0; j < limb_parts; ++j) {
      PartSettings p;
      p.parent = j - 1;
      p.pose.translation = {0, 1.0f - 0.3f * j, 0};
      p.joint.anchor = {0, 1.15f - 0.3f * j, 0};
      p.joint.type = j == 2 ? JointType::kHinge : JointType::kSwingTwist;
      p.joint.hinge_min_degrees = -10;
      p.joint.hinge_max_degrees = 120;
      limb.parts.push_back(p);
    }
    const RagdollArchetypeId limb_id = w->BuildRagdollArchetype(limb).value();
    if ((parts & kPile) == 0) limb_count = 0;
    limbs.assign(limb_count, std::vector<Transform>(limb_parts));
    for (int i = 0; i < limb_count; ++i) {
      RagdollBinding b;
      b.archetype = limb_id;
      // Two heaps: limbs land on each other (pairs, islands) and come to rest (sleep).
      b.placement = Transform{{static_cast<float>(i % 2) * 0.4f, 0.6f + 0.5f * i, static_cast<float>(i % 3) * 0.2f},
                              AxisAngle(Vec3{0, 0, 1}, 0.3f * i), {1, 1, 1}};
      b.angular_velocity = {0, 0, 1.0f + 0.2f * i};
      if (i >= limb_count - 2) {
        // Two lie on the ground apart from the heaps and fall asleep early.
        b.placement = Transform{{20.0f + 3.0f * i, 0.2f, 0}, AxisAngle(Vec3{0, 0, 1}, 1.5708f), {1, 1, 1}};
        b.angular_velocity = {};
      }
      b.output_parts = limbs[i];
      limb_ids.push_back(w->BindRagdoll(b).value());
    }
    const CharacterArchetypeId man = w->BuildCharacterArchetype(StickmanCharacter()).value();
    skeleton = StickmanSkeleton();  // the characters' animated_local: it must outlive them
    const int people = (parts & kCharacters) != 0 ? 4 : 0;
    models.resize(people);
    man_out.assign(people, skeleton.rest_local);
    for (int i = 0; i < people; ++i) {
      models[i].translation = {static_cast<float>(i) * 1.5f + 4.0f, 1.0f, 6.0f};
      CharacterBinding b;
      b.archetype = man;
      b.model_world = &models[i];
      b.animated_local = skeleton.rest_local;
      b.output_local = man_out[i];
      men.push_back(w->BindCharacter(b).value());
    }
    if ((parts & kHostBody) != 0) {
      HostBodySettings hb;
      hb.transform.translation = {3, 0.5f, 0};
      body = w->AddHostBody(hb).value();
    }
    // A part drive pulls a limb of the pile (moved at frame 46).
    if (limb_count > 5) {
      drive = w->AddPartDrive(limb_ids[5], {.part = 2, .target = {1, 2, 1}, .response_time = 0.1f}).value();
    }
  }

  // Frame f's host inputs, events and Step.
  void Frame(int f) {
    const float t = static_cast<float>(f) / 60.0f;
    for (std::size_t i = 0; i < models.size(); ++i)
      models[i].translation.x = static_cast<float>(i) * 1.5f + 4.0f + std::sin(t) * 0.5f;
    if (f == 10 && !men.empty()) {
      w->ActivateCharacter(men[0], {.impulse = {5.0f, 20, 0}, .strength = 0.0f});
      w->ActivateCharacter(men[1], {.strength = 1.0f, .anchored = true});
      w->ActivateCharacter(men[2], {.strength = 1.0f, .anchored = true});
    }
    if (f == 30 && !men.empty()) w->HitCharacter(men[3], 3, Vec3{0, 0, 8}, models[3].translation);
    if (f == 42 && !men.empty()) {
      EXPECT_TRUE(w->GoLimp(men[1], 0.3f).ok());
    }
    if (f == 44 && !men.empty()) {
      EXPECT_TRUE(w->DeactivateCharacter(men[2], 0.3f).ok());
    }
    if (f == 46 && w->IsValid(drive)) {
      EXPECT_TRUE(w->SetPartDriveTarget(drive, {0, 1.5f, 2}).ok());
    }
    for (std::size_t i = 0; i < chains.size(); ++i) {
      chains[i]->root_parent.rotation = AxisAngle(Vec3{0, 1, 0}, std::sin(t * 2.0f + static_cast<float>(i)));
      chains[i]->root_parent.translation.y = std::sin(t * 3.0f + static_cast<float>(i)) * 0.3f;
      // The teleport guard: one chain jumps 10 m and back.
      chains[i]->root_parent.translation.x =
          static_cast<float>(i % 6) * 2.0f + (i == 4 && f >= 45 && f < 48 ? 10.0f : 0.0f);
    }
    for (std::size_t i = 0; i < joints.size(); ++i)
      joints[i].rotation = AxisAngle(Vec3{0, 0, 1}, std::sin(t * 4.0f + static_cast<float>(i)));
    if (w->IsValid(body)) {
      EXPECT_TRUE(w->SetHostBodyMotion(body, Transform{{3.0f - 2.0f * t, 0.5f, 0}, {}, {1, 1, 1}}, {-2, 0, 0}, {}).ok());
    }
    w->SetCamera(Vec3{std::sin(t) * 5.0f + 5.0f, 0, 3});
    const float dt = f % 7 == 0 ? 0.05f : 1.0f / (45.0f + static_cast<float>(f % 5) * 20.0f);
    w->Step(dt);
  }

  // Frames [from, to): the state hash after each, and every contact event drained.
  std::vector<uint64_t> Run(int from, int to, std::vector<ContactEvent>* events = nullptr) {
    std::vector<uint64_t> hashes;
    std::vector<ContactEvent> buffer(512);
    for (int f = from; f < to; ++f) {
      Frame(f);
      // The state hash, and the pose streams' bits folded in (FNV-1a 64).
      uint64_t h = w->StateHash();
      for (const std::vector<float>& data : stream_data) {
        for (const float x : data) {
          uint32_t bits;
          std::memcpy(&bits, &x, sizeof bits);
          h = (h ^ bits) * 1099511628211ull;
        }
      }
      hashes.push_back(h);
      const int32_t n = w->DrainContactEvents(buffer);
      if (events != nullptr) events->insert(events->end(), buffer.begin(), buffer.begin() + n);
    }
    return hashes;
  }

  std::vector<std::byte> Save() const {
    std::vector<std::byte> bytes(w->SavedStateSize());
    const Result<std::size_t> written = w->SaveState(bytes);
    EXPECT_TRUE(written.ok()) << written.error().message;
    EXPECT_EQ(written.ok() ? written.value() : 0, bytes.size());
    return bytes;
  }
};

// Where a section tagged `tag` begins in a saved state (its tag's first byte), or 0.
std::size_t SectionAt(const std::vector<std::byte>& bytes, const char (&tag)[5]) {
  for (std::size_t i = kSnapshotHeaderBytes; i + 4 <= bytes.size(); ++i) {
    if (std::memcmp(bytes.data() + i, tag, 4) == 0) return i;
  }
  return 0;
}
// Overwrites 4 or 8 bytes at `at` and recomputes the header's checksum, as a tampered
// (not merely corrupted) buffer would: only the reader's own checks can refuse it.
template <class T>
void Tamper(std::vector<std::byte>& bytes, std::size_t at, T value) {
  std::memcpy(bytes.data() + at, &value, sizeof value);
  const uint64_t checksum =
      detail::SnapshotChecksum(std::span<const std::byte>(bytes).subspan(kSnapshotHeaderBytes));
  std::memcpy(bytes.data() + kSnapshotHeaderBytes - 8, &checksum, sizeof checksum);
}

bool SameEvent(const ContactEvent& x, const ContactEvent& y) {
  return x.kind == y.kind && x.ragdoll == y.ragdoll && x.part == y.part && x.b_kind == y.b_kind &&
         x.b_ragdoll == y.b_ragdoll && x.b_part == y.b_part && x.b_host_body == y.b_host_body &&
         x.point == y.point && x.normal == y.normal && x.impulse == y.impulse && x.time == y.time;
}

constexpr int kSaveAt = 40;  // characters mid-activation, the pile falling and touching
constexpr int kSteps = 24;   // through a GoLimp, a crossfade, a teleport and a drive's move

// Saves at kSaveAt, steps kSteps frames, restores, steps them again: the same hashes and
// the same contact events.
void ExpectReplay(uint32_t parts) {
  Scene s(TaskHooks{nullptr, nullptr, nullptr, 1}, parts);
  s.Run(0, kSaveAt);
  const std::vector<std::byte> saved = s.Save();
  const uint64_t at_save = s.w->StateHash();
  std::vector<ContactEvent> first_events, second_events;
  const std::vector<uint64_t> first = s.Run(kSaveAt, kSaveAt + kSteps, &first_events);
  ASSERT_TRUE(s.w->RestoreState(saved).ok());
  EXPECT_EQ(s.w->StateHash(), at_save);
  const std::vector<uint64_t> second = s.Run(kSaveAt, kSaveAt + kSteps, &second_events);
  EXPECT_EQ(first, second);
  ASSERT_EQ(first_events.size(), second_events.size());
  for (std::size_t i = 0; i < first_events.size(); ++i) EXPECT_TRUE(SameEvent(first_events[i], second_events[i])) << i;
  if ((parts & Scene::kChains) != 0) {
    for (const std::vector<float>& data : s.stream_data) {
      EXPECT_TRUE(std::any_of(data.begin(), data.end(), [](float x) { return x != 0.0f; }))
          << "the chains' streams must be written";
    }
  }
  if ((parts & Scene::kPile) != 0) {
    EXPECT_GT(first_events.size(), 0u) << "the pile must report contacts in the window";
  }
}

TEST(Snapshot, ChainsReplayBitForBitAfterARestore) { ExpectReplay(Scene::kChains); }
TEST(Snapshot, PendulumsReplayBitForBitAfterARestore) { ExpectReplay(Scene::kPendulums); }
TEST(Snapshot, APileOfRagdollsWithAPartDriveReplaysBitForBitWithItsContactEvents) { ExpectReplay(Scene::kPile); }
TEST(Snapshot, PoweredCharactersMidActivationAndCrossfadeReplayBitForBit) { ExpectReplay(Scene::kCharacters); }
TEST(Snapshot, AHostBodyPushingThePileReplaysBitForBit) { ExpectReplay(Scene::kPile | Scene::kHostBody); }
TEST(Snapshot, EverythingAtOnceReplaysBitForBit) { ExpectReplay(Scene::kAll); }

// The replays above are only worth something if their window holds what they claim:
// ragdolls touching each other, some asleep, powered characters, a crossfade.
TEST(Snapshot, TheReplayWindowHoldsPairsSleepPoweredCharactersAndACrossfade) {
  Scene s(TaskHooks{nullptr, nullptr, nullptr, 1});
  s.Run(0, kSaveAt);
  EXPECT_GE(s.w->ActiveCharacterCount(), 2);
  int32_t most_pairs = 0, most_asleep = 0;
  bool crossfading = false;
  for (int f = kSaveAt; f < kSaveAt + kSteps; ++f) {
    s.Frame(f);
    most_pairs = std::max(most_pairs, s.w->LastStats().contact_ragdoll_pairs);
    most_asleep = std::max(most_asleep, s.w->LastStats().sleeping_ragdolls);
    CharacterState state;
    ASSERT_TRUE(s.w->GetCharacterState(s.men[2], &state).ok());
    crossfading = crossfading || state.blending_out;
  }
  EXPECT_GT(most_pairs, 0);
  EXPECT_GT(most_asleep, 0);
  EXPECT_TRUE(crossfading);
}

// Saves at kSaveAt with no workers; a World built the same way at 2 and 8 oneTBB workers
// takes the state (its hash is the saved World's) and steps on to the same hashes.
void ExpectRestoreElsewhere(uint32_t parts) {
  Scene s(TaskHooks{nullptr, nullptr, nullptr, 1}, parts);
  s.Run(0, kSaveAt);
  const std::vector<std::byte> saved = s.Save();
  const uint64_t at_save = s.w->StateHash();
  const std::vector<uint64_t> expected = s.Run(kSaveAt, kSaveAt + kSteps);
  for (const int32_t workers : {2, 8}) {
    TbbTaskSystem tasks(workers);
    Scene other(tasks.hooks(), parts);
    const Error e = other.w->RestoreState(saved);
    ASSERT_TRUE(e.ok()) << e.field << ": " << e.message;
    EXPECT_EQ(other.w->StateHash(), at_save) << workers << " workers";
    EXPECT_EQ(other.Run(kSaveAt, kSaveAt + kSteps), expected) << workers << " workers";
  }
}

TEST(Snapshot, ChainsRestoreIntoAnotherWorldAtTwoAndEightWorkers) { ExpectRestoreElsewhere(Scene::kChains); }
TEST(Snapshot, PendulumsRestoreIntoAnotherWorldAtTwoAndEightWorkers) { ExpectRestoreElsewhere(Scene::kPendulums); }
TEST(Snapshot, APileRestoresIntoAnotherWorldAtTwoAndEightWorkers) { ExpectRestoreElsewhere(Scene::kPile); }
TEST(Snapshot, CharactersRestoreIntoAnotherWorldAtTwoAndEightWorkers) { ExpectRestoreElsewhere(Scene::kCharacters); }
TEST(Snapshot, EverythingRestoresIntoAnotherWorldAtTwoAndEightWorkers) { ExpectRestoreElsewhere(Scene::kAll); }

TEST(Snapshot, SavingAndRestoringAllocateNothing) {
  Scene s(TaskHooks{nullptr, nullptr, nullptr, 1});
  s.Run(0, kSaveAt);
  std::vector<std::byte> bytes(s.w->SavedStateSize());
  const long before = g_allocations.load();
  const Result<std::size_t> written = s.w->SaveState(bytes);
  const Error restored = s.w->RestoreState(bytes);
  const long after = g_allocations.load();
  ASSERT_TRUE(written.ok());
  ASSERT_TRUE(restored.ok());
  EXPECT_EQ(after - before, 0);
}

TEST(Snapshot, ARestoredWorldSavesTheBytesItWasRestoredFrom) {
  Scene s(TaskHooks{nullptr, nullptr, nullptr, 1});
  s.Run(0, kSaveAt);
  const std::vector<std::byte> saved = s.Save();
  Scene other(TaskHooks{nullptr, nullptr, nullptr, 1});
  ASSERT_TRUE(other.w->RestoreState(saved).ok());
  EXPECT_EQ(other.Save(), saved);
}

TEST(Snapshot, ACharactersStateRestoresItsStateMachineRagdollAndKinematicCopy) {
  Scene s(TaskHooks{nullptr, nullptr, nullptr, 1}, Scene::kCharacters);
  s.Run(0, kSaveAt);
  const CharacterId man = s.men[1];  // powered and anchored; goes limp at frame 42
  std::vector<std::byte> bytes(s.w->SavedCharacterStateSize(man));
  ASSERT_TRUE(s.w->SaveCharacterState(man, bytes).ok());
  CharacterState at_save, later, restored;
  ASSERT_TRUE(s.w->GetCharacterState(man, &at_save).ok());
  s.Run(kSaveAt, kSaveAt + kSteps);
  ASSERT_TRUE(s.w->GetCharacterState(man, &later).ok());
  ASSERT_NE(later.strength, at_save.strength) << "the window must change the character";
  ASSERT_TRUE(s.w->RestoreCharacterState(man, bytes).ok());
  ASSERT_TRUE(s.w->GetCharacterState(man, &restored).ok());
  EXPECT_EQ(restored.active, at_save.active);
  EXPECT_EQ(restored.anchored, at_save.anchored);
  EXPECT_EQ(restored.strength, at_save.strength);
  EXPECT_EQ(restored.generation, at_save.generation);
  EXPECT_EQ(restored.root_velocity, at_save.root_velocity);
  // A ragdoll's state is not a character's.
  EXPECT_EQ(s.w->RestoreRagdollState(s.w->CharacterRagdoll(man), bytes).field, "kind");
}

// A small world whose buffer is short enough to refuse at every length.
struct Small {
  std::unique_ptr<World> w;
  std::vector<Transform> out;
  std::unique_ptr<HostChain> chain;
  RagdollId ragdoll{};
  explicit Small(int32_t parts = 2, int32_t extra_ragdolls = 0) {
    w = MakeWorld();
    EXPECT_TRUE(w->BuildStaticWorld(StaticWorldSettings{{StaticPlane{{0, 1, 0}, 0}}}).ok());
    RagdollSettings s;
    for (int j = 0; j < parts; ++j) {
      PartSettings p;
      p.parent = j - 1;
      p.pose.translation = {0, 1.0f - 0.3f * j, 0};
      p.joint.anchor = {0, 1.15f - 0.3f * j, 0};
      s.parts.push_back(p);
    }
    const RagdollArchetypeId a = w->BuildRagdollArchetype(s).value();
    out.resize(static_cast<std::size_t>(parts) * (1 + extra_ragdolls));
    for (int i = 0; i <= extra_ragdolls; ++i) {
      RagdollBinding b;
      b.archetype = a;
      b.placement.translation = {static_cast<float>(i) * 2.0f, 1, 0};
      b.output_parts = std::span<Transform>(out).subspan(static_cast<std::size_t>(i) * parts, parts);
      const RagdollId id = w->BindRagdoll(b).value();
      if (i == 0) ragdoll = id;
    }
    const ChainArchetypeSettings k = Strand(3, 0.1f);
    chain = std::make_unique<HostChain>(k);
    EXPECT_TRUE(w->BindChain(chain->Binding(w->BuildChainArchetype(k).value())).ok());
    for (int f = 0; f < 5; ++f) w->Step(1.0f / 60.0f);
  }
  std::vector<std::byte> Save() const {
    std::vector<std::byte> bytes(w->SavedStateSize());
    EXPECT_TRUE(w->SaveState(bytes).ok());
    return bytes;
  }
};

TEST(Snapshot, ATruncatedBufferIsRefusedAtEveryLengthAndChangesNothing) {
  Small s;
  const std::vector<std::byte> saved = s.Save();
  for (int f = 0; f < 3; ++f) s.w->Step(1.0f / 60.0f);
  const uint64_t hash = s.w->StateHash();
  for (std::size_t n = 0; n < saved.size(); ++n) {
    const Error e = s.w->RestoreState(std::span<const std::byte>(saved).first(n));
    ASSERT_EQ(e.code, ErrorCode::kOutOfRange) << n;
  }
  EXPECT_EQ(s.w->StateHash(), hash);
}

TEST(Snapshot, AFlippedByteAnywhereIsRefusedAndChangesNothing) {
  Small s;
  const std::vector<std::byte> saved = s.Save();
  for (int f = 0; f < 3; ++f) s.w->Step(1.0f / 60.0f);
  const uint64_t hash = s.w->StateHash();
  for (std::size_t i = 0; i < saved.size(); ++i) {
    std::vector<std::byte> bad = saved;
    bad[i] ^= std::byte{0x10};
    const Error e = s.w->RestoreState(bad);
    ASSERT_FALSE(e.ok()) << "byte " << i;
  }
  EXPECT_EQ(s.w->StateHash(), hash);
}

TEST(Snapshot, WrongMagicVersionAndKindAreRefusedByName) {
  Small s;
  std::vector<std::byte> bytes = s.Save();
  const uint64_t hash = s.w->StateHash();
  std::vector<std::byte> bad = bytes;
  bad[0] = std::byte{'X'};
  EXPECT_EQ(s.w->RestoreState(bad).field, "magic");
  bad = bytes;
  bad[4] = std::byte{2};
  EXPECT_EQ(s.w->RestoreState(bad).field, "version");
  EXPECT_EQ(s.w->RestoreChainState(ChainId{0, 1}, bytes).field, "kind");
  EXPECT_EQ(s.w->StateHash(), hash);
}

TEST(Snapshot, AStateOfOtherArchetypesOrAnotherInstanceCountIsRefusedAndChangesNothing) {
  Small s;
  const std::vector<std::byte> saved = s.Save();
  Small other_parts(3);
  const uint64_t hash = other_parts.w->StateHash();
  const Error parts = other_parts.w->RestoreState(saved);
  EXPECT_EQ(parts.code, ErrorCode::kBadReference);
  EXPECT_NE(parts.message.find("ragdoll"), std::string::npos) << parts.message;
  EXPECT_EQ(other_parts.w->StateHash(), hash);
  Small more(2, 1);
  const uint64_t more_hash = more.w->StateHash();
  const Error count = more.w->RestoreState(saved);
  EXPECT_EQ(count.code, ErrorCode::kBadReference);
  EXPECT_EQ(count.field, "ragdolls.slot_count");
  EXPECT_EQ(more.w->StateHash(), more_hash);
}

TEST(Snapshot, ANonFiniteSavedValueIsRefused) {
  Small s;
  detail::WorldAccess::PoisonRagdollState(*s.w, s.ragdoll);
  const std::vector<std::byte> poisoned = s.Save();
  Small other;
  const uint64_t hash = other.w->StateHash();
  EXPECT_EQ(other.w->RestoreState(poisoned).code, ErrorCode::kNotFinite);
  EXPECT_EQ(other.w->StateHash(), hash);
}

TEST(Snapshot, SavingAndRestoringMidFrameAreRefused) {
  Small s;
  World* w = s.w.get();
  std::vector<std::byte> bytes(w->SavedStateSize());
  ASSERT_TRUE(w->SaveState(bytes).ok());
  ASSERT_TRUE(w->BeginStep(1.0f / 60.0f));
  EXPECT_EQ(w->RestoreState(bytes).code, ErrorCode::kReentrant);
  EXPECT_EQ(w->SaveState(bytes).error().code, ErrorCode::kReentrant);
  w->FinishStep();
  EXPECT_TRUE(w->RestoreState(bytes).ok());
}

// The sizes read the state that is moving mid-frame: 0 then, as for a stale handle.
TEST(Snapshot, SavedStateSizesAreZeroMidFrame) {
  Small s;
  World* w = s.w.get();
  const ChainId chain{0, 1};
  ASSERT_GT(w->SavedStateSize(), 0u);
  ASSERT_GT(w->SavedRagdollStateSize(s.ragdoll), 0u);
  ASSERT_GT(w->SavedChainStateSize(chain), 0u);
  ASSERT_TRUE(w->BeginStep(1.0f / 60.0f));
  EXPECT_EQ(w->SavedStateSize(), 0u);
  EXPECT_EQ(w->SavedRagdollStateSize(s.ragdoll), 0u);
  EXPECT_EQ(w->SavedChainStateSize(chain), 0u);
  w->FinishStep();
  EXPECT_GT(w->SavedStateSize(), 0u);
}

TEST(Snapshot, ATooSmallBufferIsRefusedNamingTheSizeNeeded) {
  Small s;
  std::vector<std::byte> bytes(s.w->SavedStateSize() - 1);
  const Result<std::size_t> r = s.w->SaveState(bytes);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kNullBuffer);
  EXPECT_NE(r.error().message.find(std::to_string(bytes.size() + 1)), std::string::npos);
}

TEST(Snapshot, ARagdollsStateRestoresIntoItAndIntoAnotherOfItsArchetype) {
  Small s(2, 1);
  std::vector<std::byte> bytes(s.w->SavedRagdollStateSize(s.ragdoll));
  ASSERT_TRUE(s.w->SaveRagdollState(s.ragdoll, bytes).ok());
  std::vector<Vec3> v0(2), w0(2), v1(2), w1(2);
  ASSERT_TRUE(s.w->GetRagdollVelocities(s.ragdoll, v0, w0).ok());
  for (int f = 0; f < 10; ++f) s.w->Step(1.0f / 60.0f);
  ASSERT_TRUE(s.w->RestoreRagdollState(s.ragdoll, bytes).ok());
  ASSERT_TRUE(s.w->GetRagdollVelocities(s.ragdoll, v1, w1).ok());
  EXPECT_EQ(v0, v1);
  const RagdollId other{1, 1};
  ASSERT_TRUE(s.w->IsValid(other));
  ASSERT_TRUE(s.w->RestoreRagdollState(other, bytes).ok());
  ASSERT_TRUE(s.w->GetRagdollVelocities(other, v1, w1).ok());
  EXPECT_EQ(v0, v1);
}

TEST(Snapshot, AChainsStateRestoresBitForBit) {
  Small s;
  const ChainId chain{0, 1};
  std::vector<std::byte> bytes(s.w->SavedChainStateSize(chain));
  ASSERT_TRUE(s.w->SaveChainState(chain, bytes).ok());
  std::vector<Vec3> before(3), after(3);
  ASSERT_TRUE(s.w->GetChainNodePositions(chain, before).ok());
  for (int f = 0; f < 10; ++f) {
    s.chain->root_parent.translation.x = 0.05f * static_cast<float>(f);
    s.w->Step(1.0f / 60.0f);
  }
  ASSERT_TRUE(s.w->RestoreChainState(chain, bytes).ok());
  ASSERT_TRUE(s.w->GetChainNodePositions(chain, after).ok());
  EXPECT_EQ(before, after);
}

// A ragdoll's state restored into another of its archetype moves the saved drive rows onto
// the target's drive (matched in slot order) and never touches the saving ragdoll's drive.
TEST(Snapshot, ARagdollsStateRestoredIntoAnotherRewritesOnlyThatOnesDrive) {
  Small s(2, 1);
  const RagdollId other{1, 1};
  ASSERT_TRUE(s.w->IsValid(other));
  PartDriveSettings pull;
  pull.part = 1;
  pull.target = {0, 2, 0};
  const PartDriveId drive_a = s.w->AddPartDrive(s.ragdoll, pull).value();
  pull.target = {5, 2, 0};
  const PartDriveId drive_b = s.w->AddPartDrive(other, pull).value();
  for (int f = 0; f < 3; ++f) s.w->Step(1.0f / 60.0f);
  std::vector<std::byte> bytes(s.w->SavedRagdollStateSize(s.ragdoll));
  ASSERT_TRUE(s.w->SaveRagdollState(s.ragdoll, bytes).ok());
  PartDriveState saved_a, a_before, a_after, b_after;
  ASSERT_TRUE(s.w->GetPartDriveState(drive_a, &saved_a).ok());
  ASSERT_TRUE(s.w->SetPartDriveTarget(drive_a, {1, 3, 0}).ok());
  for (int f = 0; f < 3; ++f) s.w->Step(1.0f / 60.0f);
  ASSERT_TRUE(s.w->GetPartDriveState(drive_a, &a_before).ok());
  const Error restored = s.w->RestoreRagdollState(other, bytes);
  ASSERT_TRUE(restored.ok()) << restored.message;
  ASSERT_TRUE(s.w->GetPartDriveState(drive_a, &a_after).ok());
  ASSERT_TRUE(s.w->GetPartDriveState(drive_b, &b_after).ok());
  EXPECT_EQ(a_after.target, (Vec3{1, 3, 0}));
  EXPECT_EQ(a_after.distance, a_before.distance);
  EXPECT_EQ(b_after.target, saved_a.target);
  EXPECT_EQ(b_after.distance, saved_a.distance);
  EXPECT_EQ(b_after.broken, saved_a.broken);
}

// A saved drive's break distance divides in UpdateDrives, and a pulling drive must hold a
// lane slot: a tampered record is refused by field and changes nothing.
TEST(Snapshot, ATamperedPartDriveRecordIsRefusedAndChangesNothing) {
  Small s(2);
  PartDriveSettings pull;
  pull.part = 1;
  pull.target = {0, 2, 0};
  const PartDriveId drive = s.w->AddPartDrive(s.ragdoll, pull).value();
  s.w->Step(1.0f / 60.0f);
  std::vector<std::byte> saved(s.w->SavedRagdollStateSize(s.ragdoll));
  ASSERT_TRUE(s.w->SaveRagdollState(s.ragdoll, saved).ok());
  const std::size_t drives = SectionAt(saved, "DRVS");
  ASSERT_GT(drives, 0u);
  // tag, length, count, then index, ragdoll, lane_slot, part, local_body, target, break_distance.
  const std::size_t lane_slot_at = drives + 20, break_at = drives + 52;
  const uint64_t hash = s.w->StateHash();
  for (const float bad : {0.0f, -1.0f}) {
    std::vector<std::byte> bytes = saved;
    Tamper(bytes, break_at, bad);
    const Error e = s.w->RestoreRagdollState(s.ragdoll, bytes);
    EXPECT_EQ(e.code, ErrorCode::kOutOfRange) << bad;
    EXPECT_EQ(e.field, "part_drives.break_distance") << bad;
  }
  std::vector<std::byte> bytes = saved;
  Tamper(bytes, lane_slot_at, int32_t{-1});  // no lane, and not broken
  const Error e = s.w->RestoreRagdollState(s.ragdoll, bytes);
  EXPECT_EQ(e.code, ErrorCode::kOutOfRange);
  EXPECT_EQ(e.field, "part_drives.break_distance");
  // The drive's target row in the lane (the record's last rows, just before DRVS): only a
  // drive's force cap may be infinite.
  for (const int32_t row : {detail::kDriveTx, detail::kDriveMass, detail::kDriveInvOmega2}) {
    bytes = saved;
    Tamper(bytes, drives - 4 * static_cast<std::size_t>(detail::kRigidLaneFieldCount - detail::kDriveBase - row),
           INFINITY);
    const Error inf = s.w->RestoreRagdollState(s.ragdoll, bytes);
    EXPECT_EQ(inf.code, ErrorCode::kNotFinite) << row;
    EXPECT_EQ(inf.field, "ragdoll.lane") << row;
  }
  bytes = saved;
  Tamper(bytes, drives - 4 * static_cast<std::size_t>(detail::kRigidLaneFieldCount - detail::kDriveBase -
                                                      detail::kDriveMaxForce),
         INFINITY);
  EXPECT_TRUE(s.w->RestoreRagdollState(s.ragdoll, bytes).ok()) << "infinity: no force cap";
  EXPECT_EQ(s.w->StateHash(), hash);
  EXPECT_TRUE(s.w->IsValid(drive));
  EXPECT_TRUE(s.w->RestoreRagdollState(s.ragdoll, saved).ok());
}

// The whole World's drive records: two drives of one ragdoll may not share a lane slot (the
// second would overwrite the first's rows every substep), and a record must drive the part
// its drive drives here (a drive's part is fixed when it is added). Both refused by field,
// and nothing changes.
TEST(Snapshot, AWholeStatesDrivesThatShareALaneSlotOrNameAnotherPartAreRefused) {
  Small s(3);
  PartDriveSettings pull;
  pull.part = 1;
  pull.target = {0, 2, 0};
  const PartDriveId first = s.w->AddPartDrive(s.ragdoll, pull).value();
  pull.part = 2;
  pull.target = {1, 2, 0};
  const PartDriveId second = s.w->AddPartDrive(s.ragdoll, pull).value();
  s.w->Step(1.0f / 60.0f);
  std::vector<std::byte> saved(s.w->SavedStateSize());
  ASSERT_TRUE(s.w->SaveState(saved).ok());
  const std::size_t drives = SectionAt(saved, "DRVS");
  ASSERT_GT(drives, 0u);
  // tag, length, count, then per record: index, ragdoll, lane_slot, part, local_body, target,
  // break_distance, distance, broken.
  constexpr std::size_t kRecord = 4 + 4 + 4 + 4 + 12 + 12 + 4 + 4 + 1;
  const std::size_t first_at = drives + 12, second_at = first_at + kRecord;
  int32_t first_slot = -1, second_slot = -1;
  std::memcpy(&first_slot, saved.data() + first_at + 8, 4);
  std::memcpy(&second_slot, saved.data() + second_at + 8, 4);
  ASSERT_GE(first_slot, 0);
  ASSERT_GE(second_slot, 0);
  ASSERT_NE(first_slot, second_slot);
  const uint64_t hash = s.w->StateHash();
  std::vector<std::byte> bytes = saved;
  Tamper(bytes, second_at + 8, first_slot);
  Error e = s.w->RestoreState(bytes);
  EXPECT_EQ(e.code, ErrorCode::kOutOfRange);
  EXPECT_EQ(e.field, "part_drives.lane_slot");
  bytes = saved;
  Tamper(bytes, second_at + 12, int32_t{1});  // the first drive's part
  e = s.w->RestoreState(bytes);
  EXPECT_EQ(e.code, ErrorCode::kBadReference);
  EXPECT_EQ(e.field, "part_drives.part");
  EXPECT_EQ(s.w->StateHash(), hash);
  EXPECT_TRUE(s.w->IsValid(first));
  EXPECT_TRUE(s.w->IsValid(second));
  EXPECT_TRUE(s.w->RestoreState(saved).ok());
}

// A touching pair's key names two ragdolls' parts; one past its ragdoll's part count
// would make the contact events read past its lane: refused, and nothing changes.
TEST(Snapshot, AContactMemoryKeyNamingAPartPastItsRagdollIsRefused) {
  Scene scene(TaskHooks{nullptr, nullptr, nullptr, 1}, Scene::kPile);
  scene.Run(0, 60);
  std::vector<std::byte> saved = scene.Save();
  const std::size_t pairs = SectionAt(saved, "TCHS");
  ASSERT_GT(pairs, 0u);
  uint32_t touching = 0;
  std::memcpy(&touching, saved.data() + pairs + 8, 4);
  ASSERT_GT(touching, 0u) << "the pile has no touching pair at frame 60";
  // The last pair (keys ascend, so a larger last key keeps their order): tag, length, count,
  // then per pair key, two generation words, reported, speed, impulse, point, normal.
  const std::size_t key_at = pairs + 12 + static_cast<std::size_t>(touching - 1) * (8 + 4 + 4 + 1 + 4 + 4 + 12 + 12);
  uint64_t key = 0;
  std::memcpy(&key, saved.data() + key_at, 8);
  // Its higher side (slot << 6 | part): the part set to 63 (the limbs have 3).
  const uint64_t tampered = (key & ~uint64_t{63}) | 63u;
  ASSERT_GT(tampered, key);
  std::vector<std::byte> bytes = saved;
  Tamper(bytes, key_at, tampered);
  const uint64_t hash = scene.w->StateHash();
  const Error e = scene.w->RestoreState(bytes);
  EXPECT_EQ(e.code, ErrorCode::kOutOfRange);
  EXPECT_EQ(e.field, "contact_memory.key");
  EXPECT_EQ(scene.w->StateHash(), hash);
  EXPECT_TRUE(scene.w->RestoreState(saved).ok());
}

// A saved record that disables a ragdoll which has a part drive in the same state (only a
// tampered buffer has both): the writing pass would remove the drive and then miss it, a
// partial restore. The checking pass refuses it, whole or per instance, and nothing changes.
TEST(Snapshot, ADriveOnARagdollTheSavedStateDisablesIsRefusedBeforeAnythingIsWritten) {
  Small s(2);
  PartDriveSettings pull;
  pull.part = 1;
  pull.target = {0, 2, 0};
  const PartDriveId drive = s.w->AddPartDrive(s.ragdoll, pull).value();
  s.w->Step(1.0f / 60.0f);
  std::vector<std::byte> whole(s.w->SavedStateSize()), one(s.w->SavedRagdollStateSize(s.ragdoll));
  ASSERT_TRUE(s.w->SaveState(whole).ok());
  ASSERT_TRUE(s.w->SaveRagdollState(s.ragdoll, one).ok());
  const uint64_t hash = s.w->StateHash();
  for (std::vector<std::byte>* bytes : {&whole, &one}) {
    const std::size_t record = SectionAt(*bytes, "RGD1");
    ASSERT_GT(record, 0u);
    // tag, length, slot, kind, archetype fingerprint, part count, rows, then enabled.
    Tamper(*bytes, record + 8 + 4 + 4 + 8 + 4 + 4, uint8_t{0});
  }
  const Error e_whole = s.w->RestoreState(whole);
  EXPECT_EQ(e_whole.code, ErrorCode::kBadReference);
  EXPECT_EQ(e_whole.field, "part_drives.ragdoll");
  const Error e_one = s.w->RestoreRagdollState(s.ragdoll, one);
  EXPECT_EQ(e_one.code, ErrorCode::kBadReference);
  EXPECT_EQ(e_one.field, "part_drives.ragdoll");
  EXPECT_EQ(s.w->StateHash(), hash);
  EXPECT_TRUE(s.w->IsValid(drive));
  EXPECT_TRUE(s.w->IsRagdollEnabled(s.ragdoll));
}

// max_chains = 8 and 16 one-strand chains of one archetype: one block of 8 lanes. Saved
// with chains 0-7 awake, restored when 8-15 are: the restore must put 8-15 to sleep before
// it wakes 0-7, or chain 0 would take lane 8, past the block (issue 40).
TEST(Snapshot, AWholeRestoreWhoseAwakeChainsDifferFromNowsStaysWithinItsLanesAndReplays) {
  WorldSettings ws;
  ws.max_chains = 8;
  std::unique_ptr<World> w = MakeWorld(ws);
  const ChainArchetypeSettings kind = Strand(4, 0.08f);
  const ChainArchetypeId archetype = w->BuildChainArchetype(kind).value();
  std::vector<std::unique_ptr<HostChain>> chains;
  std::vector<ChainId> ids;
  for (int i = 0; i < 16; ++i) {
    chains.push_back(std::make_unique<HostChain>(kind, Vec3{static_cast<float>(i) * 0.5f, 0, 0}));
    ids.push_back(w->BindChain(chains.back()->Binding(archetype)).value());
  }
  const auto step = [&](int f) {
    for (std::size_t i = 0; i < chains.size(); ++i)
      chains[i]->root_parent.translation.y = std::sin(0.2f * static_cast<float>(f) + static_cast<float>(i)) * 0.2f;
    w->Step(1.0f / 60.0f);
  };
  const auto awake_first_half = [&](bool first) {
    for (int i = 0; i < 16; ++i) EXPECT_EQ(w->IsSimulated(ids[i]), (i < 8) == first) << "chain " << i;
  };
  w->SetCamera(Vec3{-1, 0, 0});
  for (int f = 0; f < 5; ++f) step(f);
  awake_first_half(true);
  std::vector<std::byte> bytes(w->SavedStateSize());
  ASSERT_TRUE(w->SaveState(bytes).ok());
  std::vector<uint64_t> want;
  for (int f = 5; f < 15; ++f) {
    step(f);
    want.push_back(w->StateHash());
  }
  w->SetCamera(Vec3{8.5f, 0, 0});
  for (int f = 15; f < 20; ++f) step(f);
  awake_first_half(false);
  w->SetCamera(Vec3{-1, 0, 0});
  const Error restored = w->RestoreState(bytes);
  ASSERT_TRUE(restored.ok()) << restored.message;
  awake_first_half(true);
  std::vector<uint64_t> got;
  for (int f = 5; f < 15; ++f) {
    step(f);
    got.push_back(w->StateHash());
  }
  EXPECT_EQ(got, want);
}

}  // namespace
}  // namespace tendon::test
