// tests/fuzz/fuzz_api.cpp: the World's frame machinery under a hostile host. Bytes decode
// into pose streams (layouts, offsets, strides, element maps and inverse binds of any value,
// each host array fenced by guard bytes), a frame budget, and a sequence of Step /
// BeginStep / FinishStep calls with mutating calls between the halves, while the wind
// sampler, the simulate predicate and every profiler callback re-enter the World with calls
// the input picks (nested Step, BeginStep, FinishStep, UnbindAll, binds, unbinds, toggles).
// What must hold: a stream is refused at bind with a reason or written only inside its
// fields (the guard bytes and the bytes between fields never change, every written float is
// finite); a mutating call inside a callback or between BeginStep and FinishStep is refused
// (kReentrant, false, 0) and changes nothing; callbacks never nest more than a few deep (a
// nested Step returns the last stats instead of running one); every output stays finite.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <span>
#include <vector>

#include "fuzz_input.h"
#include "stickman_rig.h"
#include "tendon/tendon.h"

namespace {

using namespace tendon;
using fuzz::FuzzInput;
using fuzz::Require;
using fuzz::RequireFinite;

constexpr std::size_t kGuard = 32;
constexpr uint8_t kGuardByte = 0xCD;
constexpr uint8_t kUntouched = 0x3F;  // 0x3F3F3F3F is the float 0.747: finite where read as one

// A host array for one pose stream, with guard bytes on both sides.
struct GuardedStream {
  PoseStream stream{};
  std::vector<uint8_t> bytes;  // guard, region, guard
  std::size_t region = 0;
  std::vector<int32_t> element_of_bone;
  std::vector<float> inverse_bind;
  Transform model{};

  uint8_t* Host() { return bytes.data() + kGuard; }
  int32_t Stride() const {
    if (stream.byte_stride > 0) return stream.byte_stride;
    if (stream.layout != PoseLayout::kLocalTrs) return stream.matrix_form == MatrixForm::kRowMajor3x4 ? 48 : 64;
    int32_t end = stream.rotation_offset + 16;
    if (stream.translation_offset >= 0) end = std::max(end, stream.translation_offset + 12);
    if (stream.scale_offset >= 0) end = std::max(end, stream.scale_offset + 12);
    return end;
  }
  // The byte ranges inside an element that a write fills: {offset, size}.
  std::vector<std::array<int32_t, 2>> Fields() const {
    if (stream.layout != PoseLayout::kLocalTrs) return {{0, stream.matrix_form == MatrixForm::kRowMajor3x4 ? 48 : 64}};
    std::vector<std::array<int32_t, 2>> f = {{stream.rotation_offset, 16}};
    if (stream.translation_offset >= 0) f.push_back({stream.translation_offset, 12});
    if (stream.scale_offset >= 0) f.push_back({stream.scale_offset, 12});
    return f;
  }

  void Decode(FuzzInput& in, int32_t bones) {
    // Mostly a valid stream (so that the input reaches the writes), now and then a value no
    // enum or array holds.
    stream.layout = static_cast<PoseLayout>(in.Byte() < 8 ? 3 : in.Int(0, 2));
    stream.matrix_form = static_cast<MatrixForm>(in.Byte() < 8 ? 2 : in.Int(0, 1));
    stream.rotation_order = static_cast<QuatOrder>(in.Byte() < 8 ? 2 : in.Int(0, 1));
    stream.element_count = in.Byte() < 16 ? in.Int(-1, bones + 2) : bones + in.Int(0, 1);
    stream.byte_stride = in.Byte() < 160 ? 0 : in.Int(-8, 96);
    stream.translation_offset = in.Byte() < 224 ? 0 : in.Int(-2, 72);
    stream.rotation_offset = in.Byte() < 224 ? 12 : in.Int(-2, 72);
    stream.scale_offset = in.Byte() < 192 ? (in.Bool() ? -1 : 28) : in.Int(-2, 72);
    if (in.Byte() < 64) {
      element_of_bone.resize(static_cast<std::size_t>(std::max(0, bones + (in.Byte() < 16 ? in.Int(-1, 1) : 0))));
      for (std::size_t b = 0; b < element_of_bone.size(); ++b)
        element_of_bone[b] = in.Byte() < 200 ? static_cast<int32_t>(element_of_bone.size() - 1 - b) : in.Int(-2, bones + 2);
    }
    if (stream.layout == PoseLayout::kSkinningMatrix || in.Byte() < 16) {
      inverse_bind.assign(static_cast<std::size_t>(16 * std::max(0, bones + (in.Byte() < 16 ? in.Int(-1, 1) : 0))), 0.0f);
      for (std::size_t k = 0; k < inverse_bind.size(); k += 16)
        for (int d = 0; d < 4; ++d) inverse_bind[k + 5 * d] = 1.0f;
      for (int k = in.Byte() < 32 ? in.Int(1, 3) : 0; k > 0 && !inverse_bind.empty(); --k)
        inverse_bind[static_cast<std::size_t>(in.Int(0, static_cast<int32_t>(inverse_bind.size()) - 1))] = in.Float(-2, 2);
    }
    const bool with_model = in.Bool();
    model = in.Byte() < 200 ? Transform{} : in.Pose(2);
    // The host's claim, taken at its word: element_count elements of the stride it says
    // (what a valid binding needs exactly); a stride too small for the fields must be refused.
    const int32_t stride = Stride();
    region = stream.element_count > 0 && stride > 0 ? static_cast<std::size_t>(stream.element_count) * stride : 0;
    bytes.assign(region + 2 * kGuard, kUntouched);
    std::fill(bytes.begin(), bytes.begin() + kGuard, kGuardByte);
    std::fill(bytes.end() - kGuard, bytes.end(), kGuardByte);
    stream.base = in.Byte() < 4 ? nullptr : Host();
    stream.element_of_bone = element_of_bone;
    stream.inverse_bind = inverse_bind;
    stream.model_world = with_model ? &model : nullptr;
  }

  // After any call: the guards and every byte outside a bound bone's fields are as the host
  // left them, and every field holds finite floats.
  void Check(int32_t bones) const {
    for (std::size_t k = 0; k < kGuard; ++k)
      Require(bytes[k] == kGuardByte && bytes[bytes.size() - 1 - k] == kGuardByte, "a pose stream wrote past its array");
    Require(element_of_bone.empty() || static_cast<int32_t>(element_of_bone.size()) == bones,
            "a stream whose element map is not one entry per bone was bound");
    std::vector<uint8_t> mine(region, 0);
    const int32_t stride = Stride();
    const auto fields = Fields();
    for (int32_t b = 0; b < bones; ++b) {
      const int32_t e = element_of_bone.empty() ? b : element_of_bone[b];
      if (e < 0) continue;
      for (const auto& f : fields) {
        const std::size_t at = static_cast<std::size_t>(e) * stride + f[0];
        Require(at + f[1] <= region, "a bound stream's field lies outside its array");
        for (int32_t k = 0; k < f[1]; ++k) mine[at + k] = 1;
        for (int32_t k = 0; k + 4 <= f[1]; k += 4) {
          float v;
          std::memcpy(&v, bytes.data() + kGuard + at + k, sizeof v);
          Require(std::isfinite(v), "a pose stream holds a non-finite float");
        }
      }
    }
    for (std::size_t k = 0; k < region; ++k)
      Require(mine[k] == 1 || bytes[kGuard + k] == kUntouched, "a pose stream wrote outside its fields");
  }
};

constexpr int32_t kChainBones = 4;

// TENDON_FUZZ_TRACE=1 prints each binding's streams and whether they were taken (to replay a
// finding, or to see that the input reaches bound streams at all).
bool Tracing() {
  static const bool trace = std::getenv("TENDON_FUZZ_TRACE") != nullptr;
  return trace;
}
void TraceBind(const char* what, std::size_t streams, const Error& e) {
  if (Tracing()) std::fprintf(stderr, "%s with %zu streams: %s\n", what, streams, e.code == ErrorCode::kNone ? "bound" : e.message.c_str());
}

struct Scene;

// What a callback does when it runs: the next of the input's re-entry ops.
struct Reentry {
  Scene* scene = nullptr;
  std::vector<uint8_t> ops;
  std::size_t next = 0;
  int depth = 0;
};

struct Scene {
  std::unique_ptr<World> world;
  ChainArchetypeId strand{};
  Transform root{{0, 1.5f, 0}, {}, {1, 1, 1}};
  std::vector<Transform> animated, output;
  std::vector<GuardedStream> chain_streams;
  std::vector<PoseStream> chain_stream_list;
  ChainId chain{};
  HostBodyId host{};  // the last host body added (fuzzed settings and motion)
  RagdollArchetypeId limb{};
  std::vector<Transform> limb_out = std::vector<Transform>(2);
  std::vector<GuardedStream> limb_streams;
  std::vector<PoseStream> limb_stream_list;
  RagdollId ragdoll{};
  CharacterArchetypeId man_kind{};
  Transform model{{2, 0, 0}, {}, {1, 1, 1}};
  std::vector<Transform> man_animated, man_output, man_world;
  CharacterId man{};
  Reentry reentry;
  bool wind_on = false, predicate_on = false, hooks_on = false;
  bool predicate_answer = true;
  bool in_step = false;  // inside this host's Step, BeginStep or FinishStep call

  ChainBinding ChainBindingOf() {
    ChainBinding b;
    b.archetype = strand;
    b.root_parent_world = &root;
    b.animated_local = animated;
    b.output_local = output;
    b.pose_streams = chain_stream_list;
    return b;
  }
  void DecodeStreams(FuzzInput& in, int32_t bones, std::vector<GuardedStream>* streams, std::vector<PoseStream>* list) {
    streams->clear();
    list->clear();
    streams->resize(static_cast<std::size_t>(in.Int(0, 2)));
    for (GuardedStream& g : *streams) {
      g.Decode(in, bones);
      list->push_back(g.stream);
    }
  }
  // A binding is refused with a reason, or bound; refused streams must leave the arrays alone.
  void BindChainWithStreams(FuzzInput& in) {
    DecodeStreams(in, kChainBones, &chain_streams, &chain_stream_list);
    auto bound = world->BindChain(ChainBindingOf());
    TraceBind("chain", chain_streams.size(), bound.ok() ? Error{} : bound.error());
    if (!bound.ok()) {
      Require(!bound.error().message.empty(), "a refused chain binding says why");
      chain_streams.clear();
      chain_stream_list.clear();
      auto plain = world->BindChain(ChainBindingOf());  // refused only for the root the host left
      chain = plain.ok() ? plain.value() : ChainId{};
    } else {
      chain = bound.value();
    }
  }
  void BindLimbWithStreams(FuzzInput& in) {
    DecodeStreams(in, 2, &limb_streams, &limb_stream_list);
    RagdollBinding b;
    b.archetype = limb;
    b.placement.translation = {0.5f, 0.6f, 0};
    b.output_parts = limb_out;
    b.pose_streams = limb_stream_list;
    auto bound = world->BindRagdoll(b);
    TraceBind("ragdoll", limb_streams.size(), bound.ok() ? Error{} : bound.error());
    if (!bound.ok()) {
      Require(!bound.error().message.empty(), "a refused ragdoll binding says why");
      limb_streams.clear();
      limb_stream_list.clear();
      b.pose_streams = {};
      auto plain = world->BindRagdoll(b);
      ragdoll = plain.ok() ? plain.value() : RagdollId{};
    } else {
      ragdoll = bound.value();
    }
  }

  Scene(FuzzInput& in) {
    WorldSettings ws;
    ws.render_interpolation = in.Bool();
    ws.ragdoll_substeps = in.Int(1, 8);
    const uint8_t budget = in.Byte();
    if (budget < 64) {
      ws.frame_budget_ms = budget < 8 ? in.Float(-1, 1) : 0.002f * static_cast<float>(budget);
      ws.budget_min_ragdoll_substeps = in.Int(0, 9);
    }
    if (in.Byte() < 32) ws.max_chains = in.Int(-1, 2);
    auto created = World::Create(ws);
    if (!created.ok()) {
      Require(!created.error().message.empty(), "a refused world says why");
      ws.frame_budget_ms = 0;
      ws.budget_min_ragdoll_substeps = 4;
      ws.max_chains = INT32_MAX;
      created = World::Create(ws);
      Require(created.ok(), "the default world builds");
    }
    world = std::move(created.value());
    Require(world->BuildStaticWorld(StaticWorldSettings{{StaticPlane{{0, 1, 0}, 0}}}).code == ErrorCode::kNone, "static");
    ChainArchetypeSettings s;
    for (int32_t i = 0; i < kChainBones; ++i) s.bones.push_back(ChainBone{i - 1, Transform{{i == 0 ? 0.0f : 0.1f, 0, 0}, {}, {1, 1, 1}}});
    strand = world->BuildChainArchetype(s).value();
    for (const ChainBone& b : s.bones) animated.push_back(b.rest_local);
    output = animated;
    BindChainWithStreams(in);
    RagdollSettings limb_settings;
    for (int j = 0; j < 2; ++j) {
      PartSettings p;
      p.parent = j - 1;
      p.pose.translation = {0, 1.0f - 0.3f * static_cast<float>(j), 0};
      p.joint.anchor = {0, 1.15f - 0.3f * static_cast<float>(j), 0};
      limb_settings.parts.push_back(p);
    }
    limb = world->BuildRagdollArchetype(limb_settings).value();
    BindLimbWithStreams(in);
    man_kind = world->BuildCharacterArchetype(test::StickmanCharacter()).value();
    man_animated = test::StickmanSkeleton().rest_local;
    man_output = man_animated;
    man_world.resize(man_animated.size());
    CharacterBinding cb;
    cb.archetype = man_kind;
    cb.model_world = &model;
    cb.animated_local = man_animated;
    cb.output_local = man_output;
    cb.output_world = man_world;
    man = world->BindCharacter(cb).value();
    reentry.scene = this;
  }

  void CheckAll() const {
    for (const GuardedStream& g : chain_streams) g.Check(kChainBones);
    for (const GuardedStream& g : limb_streams) g.Check(2);
    if (world == nullptr || world->FrameInFlight()) return;  // the buffers are the frame's until FinishStep
    RequireFinite(output, "a chain's output");
    RequireFinite(limb_out, "a ragdoll's output");
    RequireFinite(man_output, "a character's local output");
    RequireFinite(man_world, "a character's world output");
  }
};

// A mutating call inside a frame answers kReentrant (or, for a handle that was not live
// anyway, kStaleHandle).
bool Refused(ErrorCode code, bool was_live) { return code == ErrorCode::kReentrant || (!was_live && code == ErrorCode::kStaleHandle); }

// One re-entering call, from inside a callback or between BeginStep and FinishStep: every
// mutating call is refused and changes nothing.
void Reenter(Scene& s, uint8_t op) {
  World& w = *s.world;
  const int32_t bound_before = w.BoundCharacterCount();
  const bool chain_before = w.IsValid(s.chain), ragdoll_before = w.IsValid(s.ragdoll);
  switch (op % 16) {
    case 0: (void)w.Step(1.0f / 60.0f); break;  // returns the last stats
    case 1: Require(!w.BeginStep(1.0f / 60.0f), "BeginStep inside a frame starts another"); break;
    case 2: (void)w.FinishStep(); break;
    case 3: Require(w.UnbindAll() == 0, "UnbindAll inside a frame unbinds"); break;
    case 4: Require(Refused(w.UnbindChain(s.chain).code, chain_before), "UnbindChain inside a frame is not kReentrant"); break;
    case 5: {
      auto r = w.BindChain(s.ChainBindingOf());
      Require(!r.ok() && r.error().code == ErrorCode::kReentrant, "BindChain inside a frame is not kReentrant");
      break;
    }
    case 6: Require(w.SetMaxChains(1).code == ErrorCode::kReentrant, "SetMaxChains inside a frame is not kReentrant"); break;
    case 7: Require(Refused(w.SetRagdollEnabled(s.ragdoll, false).code, ragdoll_before), "SetRagdollEnabled inside a frame"); break;
    case 8: Require(!w.ActivateCharacter(s.man), "ActivateCharacter inside a frame succeeds"); break;
    case 9: Require(w.SetProfilerHooks(ProfilerHooks{}).code == ErrorCode::kReentrant, "SetProfilerHooks inside a frame"); break;
    case 10:
      Require(Refused(w.ApplyRagdollImpulse(s.ragdoll, 0, {0, 5, 0}, {}).code, ragdoll_before), "an impulse inside a frame");
      break;
    case 11: {
      // Queries are safe: they answer (possibly from a frame half written).
      std::vector<Vec3> nodes(kChainBones), v(2), av(2);
      (void)w.GetChainNodePositions(s.chain, nodes);
      (void)w.GetRagdollVelocities(s.ragdoll, v, av);
      CharacterState st;
      (void)w.GetCharacterState(s.man, &st);
      (void)w.StateHash();
      break;
    }
    case 12: w.SetWindSampler(WindSampler{}); w.SetSimulatePredicate(SimulatePredicate{}); break;
    case 13: Require(w.DeactivateCharacter(s.man).code == ErrorCode::kReentrant, "DeactivateCharacter inside a frame"); break;
    case 14: Require(Refused(w.UnbindRagdoll(s.ragdoll).code, ragdoll_before), "UnbindRagdoll inside a frame"); break;
    default: Require(w.UnbindCharacter(s.man).code == ErrorCode::kReentrant, "UnbindCharacter inside a frame"); break;
  }
  Require(w.BoundCharacterCount() == bound_before && w.IsValid(s.chain) == chain_before &&
              w.IsValid(s.ragdoll) == ragdoll_before,
          "a call refused inside a frame changed what is bound");
}

// Every callback runs the next re-entry op, if any; depth catches a callback that a
// nested call runs again (a nested Step that steps).
void FromCallback(Reentry* r) {
  if (r == nullptr || r->scene == nullptr || !r->scene->in_step) return;
  Require(r->depth < 4, "host callbacks nest: a call from a callback ran the callbacks again");
  if (r->next >= r->ops.size()) return;
  ++r->depth;
  Reenter(*r->scene, r->ops[r->next++]);
  --r->depth;
}

Vec3 Wind(double, void* user) {
  FromCallback(static_cast<Reentry*>(user));
  return {0.5f, 0, 0};
}
bool Predicate(ChainId, Vec3, void* user) {
  auto* r = static_cast<Reentry*>(user);
  FromCallback(r);
  return r->scene->predicate_answer;
}
void ZoneBegin(const char*, uint32_t, uint32_t, void* user) { FromCallback(static_cast<Reentry*>(user)); }
void ZoneEnd(const char*, uint32_t, void* user) { FromCallback(static_cast<Reentry*>(user)); }
void Counter(const char*, double, void* user) { FromCallback(static_cast<Reentry*>(user)); }
void FrameMark(uint64_t, void* user) { FromCallback(static_cast<Reentry*>(user)); }

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  FuzzInput in(data, size);
  auto scene = std::make_unique<Scene>(in);
  Scene& s = *scene;
  s.CheckAll();
  for (int op = 0; op < 40 && !in.empty(); ++op) {
    World& w = *s.world;
    const bool in_flight = w.FrameInFlight();
    switch (in.Byte() % 12) {
      case 0: {
        const float dt = in.Float(0, 0.1f);
        s.in_step = true;
        (void)w.Step(dt);
        s.in_step = false;
        break;
      }
      case 1: {
        const float dt = in.Float(0, 0.1f);
        s.in_step = true;
        const bool started = w.BeginStep(dt);
        s.in_step = false;
        if (in_flight) Require(!started, "BeginStep with a frame in flight started another");
        break;
      }
      case 2:
        s.in_step = true;
        (void)w.FinishStep();
        s.in_step = false;
        break;
      case 3:
        // A mutating call between the halves is refused, as from a callback.
        if (in_flight) Reenter(s, in.Byte());
        break;
      case 4:
        if (in_flight) break;  // the bound buffers are the frame's until FinishStep
        switch (in.Byte() % 4) {
          case 0: s.root = in.Pose(3); break;
          case 1: s.model = in.Pose(3); break;
          case 2:
            for (GuardedStream& g : s.chain_streams) g.model = in.Pose(3);
            break;
          default:
            for (GuardedStream& g : s.limb_streams) g.model = in.Pose(3);
            break;
        }
        break;
      case 5: w.SetCamera(in.Vec(-20, 20)); break;
      case 6: {
        const int32_t max_chains = in.Int(-2, 3);
        const ErrorCode code = w.SetMaxChains(max_chains).code;
        if (in_flight) Require(code == ErrorCode::kReentrant, "SetMaxChains with a frame in flight");
        else Require(code == (max_chains < 0 ? ErrorCode::kOutOfRange : ErrorCode::kNone), "SetMaxChains's answer");
        break;
      }
      case 7: {
        // The callbacks on or off, with a fresh script of re-entry ops.
        s.reentry.ops.clear();
        s.reentry.next = 0;
        for (int k = in.Int(0, 6); k > 0; --k) s.reentry.ops.push_back(in.Byte());
        const uint8_t which = in.Byte();
        s.predicate_answer = in.Bool();
        if (in_flight) {
          Require(w.SetProfilerHooks(ProfilerHooks{}).code == ErrorCode::kReentrant, "SetProfilerHooks with a frame in flight");
          break;
        }
        s.wind_on = (which & 1) != 0;
        s.predicate_on = (which & 2) != 0;
        s.hooks_on = (which & 4) != 0;
        w.SetWindSampler(s.wind_on ? WindSampler{Wind, &s.reentry} : WindSampler{});
        w.SetSimulatePredicate(s.predicate_on ? SimulatePredicate{Predicate, &s.reentry} : SimulatePredicate{});
        ProfilerHooks hooks{};
        if (s.hooks_on) hooks = ProfilerHooks{ZoneBegin, ZoneEnd, (which & 8) ? Counter : nullptr, (which & 16) ? FrameMark : nullptr, &s.reentry};
        if ((which & 32) != 0) hooks.zone_end = nullptr;  // only one of the pair: refused
        const ErrorCode code = w.SetProfilerHooks(hooks).code;
        Require(code == ((hooks.zone_begin == nullptr) != (hooks.zone_end == nullptr) ? ErrorCode::kOutOfRange : ErrorCode::kNone),
                "SetProfilerHooks's answer");
        break;
      }
      case 8:
        // Rebinding with other streams (the old ones are handed back the animated pose).
        if (in_flight) break;
        if (in.Bool()) {
          if (w.IsValid(s.chain)) Require(w.UnbindChain(s.chain).code == ErrorCode::kNone, "a live chain unbinds");
          s.CheckAll();
          s.root = in.Byte() < 16 ? in.Pose(3) : Transform{{0, 1.5f, 0}, {}, {1, 1, 1}};  // mostly a root BindChain takes
          s.BindChainWithStreams(in);
        } else {
          if (w.IsValid(s.ragdoll)) Require(w.UnbindRagdoll(s.ragdoll).code == ErrorCode::kNone, "a live ragdoll unbinds");
          s.CheckAll();
          s.BindLimbWithStreams(in);
        }
        break;
      case 9: {
        const uint8_t what = in.Byte() % 8;
        Error e;
        if (what == 4) {
          // A host body of fuzzed shape, size, surface, filter and motion: refused by field
          // or added, never a crash; and it pushes the limb about from then on.
          HostBodySettings hs;
          hs.shape = static_cast<HostBodyShape>(in.Int(0, 3));
          hs.radius = in.Float(-1, 3);
          hs.half_height = in.Float(-1, 3);
          hs.half_extents = in.Vec(-1, 3);
          hs.transform = in.Pose(3);
          hs.linear_velocity = in.Vec(-50, 50);
          hs.angular_velocity = in.Vec(-50, 50);
          hs.collision_group = static_cast<uint32_t>(in.Int(0, 3));
          hs.trigger = in.Bool();
          hs.friction = in.Float(-1, 11);
          hs.restitution = in.Float(-0.5f, 1.5f);
          Result<HostBodyId> added = w.AddHostBody(hs);
          if (added.ok()) s.host = added.value();
          e = added.ok() ? Error{} : added.error();
        }
        if (what == 5) e = w.SetHostBodyMotion(s.host, in.Pose(3), in.Vec(-2000, 2000), in.Vec(-50, 50));
        if (what == 6) e = w.MoveHostBodyTo(s.host, in.Pose(3));
        if (what == 7) e = in.Bool() ? w.RemoveHostBody(s.host) : w.GetHostBodyState(s.host, nullptr);
        if (what == 0) e = w.ApplyRagdollImpulse(s.ragdoll, in.Int(-1, 2), in.Vec(-50, 50), in.Vec(-2, 2));
        if (what == 1) e.code = w.ActivateCharacter(s.man, {.impulse = in.Vec(-50, 50)}) ? ErrorCode::kNone : ErrorCode::kInUse;
        if (what == 2) e = w.DeactivateCharacter(s.man, in.Float(0, 1));
        if (what == 3) e = w.SetRagdollEnabled(s.ragdoll, in.Bool());
        if (in_flight) Require(e.code != ErrorCode::kNone, "a control call with a frame in flight was taken");
        break;
      }
      case 10:
        if (!in_flight) (void)w.SetRagdollKinematicRoot(s.ragdoll, in.Bool() ? &s.root : nullptr);
        break;
      default:
        // Destroying the World with a frame in flight waits for it; then the streams keep
        // what the last frame wrote.
        if (in.Byte() < 16) {
          s.world.reset();
          s.CheckAll();
          return 0;
        }
        break;
    }
    s.CheckAll();
  }
  s.in_step = true;
  (void)s.world->FinishStep();
  s.world->Step(1.0f / 60.0f);
  s.in_step = false;
  s.CheckAll();
  // UnbindAll hands the animated pose to the chain's streams; the guards still hold.
  (void)s.world->SetProfilerHooks(ProfilerHooks{});
  (void)s.world->UnbindAll();
  s.CheckAll();
  return 0;
}
