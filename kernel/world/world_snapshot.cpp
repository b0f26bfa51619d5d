// kernel/world/world_snapshot.cpp: the World's saved states (tendon/snapshot.h).
//
// What it does: frames a payload with the header (magic, version, kind, length, FNV-1a 64
// checksum) and fills it from the systems' writers: the World's own section (the fixed
// clock, the frame counter the chains' budget compares against, the camera), then chains,
// pendulums, ragdolls (every slot: the host's ragdolls, host bodies, characters' ragdolls
// and kinematic copies), characters. A restore checks the header, runs every system's
// reader over the payload once without writing (SnapshotReader::apply false), and only
// when all of it passed, once more writing. Saving writes in one pass and counts on past
// the buffer's end, so a buffer that is too small is refused naming the size needed.
// What it does NOT do: allocate (the writers and readers work in the caller's buffer; but
// see Memory),
// or run inside a frame (kReentrant; the sizes are 0 then).
// Threading: the World's thread, between frames. Memory: the caller's buffer only (but
// see tendon/snapshot.h: a kinematic-root group an archetype has not reserved).
#include <cassert>
#include <string>

#include "kernel/core/snapshot_io.h"
#include "kernel/core/validation.h"
#include "kernel/world/world_impl.h"
#include "tendon/snapshot.h"
#include "tendon/world.h"

namespace tendon {

using detail::SnapshotReader;
using detail::SnapshotWriter;

namespace {

constexpr uint32_t kWorldTag = detail::SnapshotTag("WRLD");

Error Busy() {
  return detail::Fail(ErrorCode::kReentrant, -1, "world",
                      "saved states are taken and restored between Steps: a frame is in flight");
}

// A followed ragdoll's state is the sender's (tendon/follow.h): its samples and the follow
// clock are not saved, so neither is anything while one is followed.
Error Following() {
  return detail::Fail(ErrorCode::kInUse, -1, "ragdoll",
                      "a ragdoll is followed (FollowRagdoll): saved states are refused until StopFollowing");
}

template <class Fill>
std::size_t CountBytes(const Fill& fill) {
  SnapshotWriter counter{std::span<std::byte>{}};
  fill(counter);
  return kSnapshotHeaderBytes + counter.size();
}

// One pass: the writer keeps counting past the buffer's end, so a buffer that is too small
// is refused naming the size needed (what it holds then is unspecified).
template <class Fill>
Result<std::size_t> SaveWith(SnapshotKind kind, std::span<std::byte> out, const Fill& fill) {
  const std::span<std::byte> room =
      out.size() > kSnapshotHeaderBytes ? out.subspan(kSnapshotHeaderBytes) : std::span<std::byte>{};
  SnapshotWriter payload{room};
  if (!room.empty()) fill(payload);
  const std::size_t total = room.empty() ? CountBytes(fill) : kSnapshotHeaderBytes + payload.size();
  if (out.size() < total || payload.overflow()) {
    return detail::Fail(ErrorCode::kNullBuffer, -1, "out",
                        "the buffer holds " + std::to_string(out.size()) + " bytes and the saved state needs " +
                            std::to_string(total));
  }
  const std::size_t payload_bytes = total - kSnapshotHeaderBytes;
  const uint64_t checksum = detail::SnapshotChecksum(out.subspan(kSnapshotHeaderBytes, payload_bytes));
  SnapshotWriter header{out.first(kSnapshotHeaderBytes)};
  header.U32(kSnapshotMagic);
  header.U32(kSnapshotVersion);
  header.U32(static_cast<uint32_t>(kind));
  header.U32(0);
  header.U64(payload_bytes);
  header.U64(checksum);
  return total;
}

const char* KindName(uint32_t kind) {
  switch (kind) {
    case static_cast<uint32_t>(SnapshotKind::kWorld): return "a whole World's";
    case static_cast<uint32_t>(SnapshotKind::kRagdoll): return "a ragdoll's";
    case static_cast<uint32_t>(SnapshotKind::kCharacter): return "a character's";
    case static_cast<uint32_t>(SnapshotKind::kChain): return "a chain's";
    default: return "an unknown kind of";
  }
}

// The header's checks, in the order that explains a bad buffer best.
Error CheckHeader(SnapshotKind kind, std::span<const std::byte> in, std::span<const std::byte>* payload) {
  if (in.size() < kSnapshotHeaderBytes) {
    return detail::Fail(ErrorCode::kOutOfRange, -1, "in",
                        "the buffer has " + std::to_string(in.size()) + " bytes, fewer than a saved state's " +
                            std::to_string(kSnapshotHeaderBytes) + "-byte header: truncated or not a saved state");
  }
  SnapshotReader header{in.first(kSnapshotHeaderBytes), false};
  const uint32_t magic = header.U32("magic");
  const uint32_t version = header.U32("version");
  const uint32_t got_kind = header.U32("kind");
  const uint32_t reserved = header.U32("reserved");
  const uint64_t length = header.U64("length");
  const uint64_t checksum = header.U64("checksum");
  if (magic != kSnapshotMagic)
    return detail::Fail(ErrorCode::kOutOfRange, -1, "magic", "the buffer does not start with a saved state's magic");
  if (version != kSnapshotVersion) {
    return detail::Fail(ErrorCode::kOutOfRange, -1, "version",
                        "the saved state is of format version " + std::to_string(version) + "; this build reads " +
                            std::to_string(kSnapshotVersion));
  }
  if (got_kind != static_cast<uint32_t>(kind)) {
    return detail::Fail(ErrorCode::kOutOfRange, -1, "kind",
                        std::string("the buffer holds ") + KindName(got_kind) + " saved state; this call restores " +
                            KindName(static_cast<uint32_t>(kind)));
  }
  if (reserved != 0) return detail::Fail(ErrorCode::kOutOfRange, -1, "reserved", "the header's reserved word is not 0");
  if (length != in.size() - kSnapshotHeaderBytes) {
    return detail::Fail(ErrorCode::kOutOfRange, -1, "length",
                        "the header says " + std::to_string(length) + " bytes of payload and the buffer has " +
                            std::to_string(in.size() - kSnapshotHeaderBytes) +
                            (length > in.size() - kSnapshotHeaderBytes ? ": truncated" : ": extra bytes after it"));
  }
  *payload = in.subspan(kSnapshotHeaderBytes);
  if (detail::SnapshotChecksum(*payload) != checksum)
    return detail::Fail(ErrorCode::kOutOfRange, -1, "checksum", "the payload's checksum does not match: corrupted");
  return {};
}

template <class Read>
Error RestoreWith(SnapshotKind kind, std::span<const std::byte> in, const Read& read) {
  std::span<const std::byte> payload;
  if (Error e = CheckHeader(kind, in, &payload); !e.ok()) return e;
  SnapshotReader check{payload, false};
  read(check);
  if (!check.failed() && check.left() != 0)
    check.Fail(ErrorCode::kOutOfRange, -1, "payload", "bytes are left over after the saved state's last section");
  if (check.failed()) return check.error();
  SnapshotReader apply{payload, true};
  read(apply);  // the same reads that passed: every refusal belongs in the checking pass
  // A failure here is a check missing from the checking pass: the World is partly restored.
  assert(!apply.failed() && "a saved state passed the check and failed while being written");
  if (apply.failed()) {
    Error e = apply.error();
    e.message = "the saved state passed the check and failed while being written (the World is partly restored; "
                "please report it): " + e.message;
    return e;
  }
  return {};
}

const Transform* AnchorOf(uint32_t slot, const void* characters) {
  return static_cast<const detail::CharacterSystem*>(characters)->AnchorOfRagdoll(slot);
}

Error Stale(const char* what) {
  return detail::Fail(ErrorCode::kStaleHandle, -1, what, std::string(what) + " is not a live handle");
}

}  // namespace

namespace {
void SaveWorld(const World::Impl& w, SnapshotWriter& out) {
  const std::size_t at = out.Begin(kWorldTag);
  out.F64(w.clock.accumulator());
  out.F64(w.clock.time());
  out.U64(w.stats.frame);
  out.V3(w.camera);
  out.I32(w.pending_bad_input);
  out.End(at);
  w.chains.SaveState(out);
  w.pendulums.SaveState(out);
  w.ragdolls.SaveState(out);
  w.characters.SaveState(out);
}

void RestoreWorld(World::Impl& w, SnapshotReader& in) {
  const std::size_t end = in.Begin(kWorldTag, "world");
  const double accumulator = in.F64("world.clock_accumulator", true);
  const double time = in.F64("world.clock_time", true);
  const uint64_t frame = in.U64("world.frame");
  const Vec3 camera = in.V3("world.camera");
  const int32_t pending_bad_input = in.I32("world.pending_bad_input");
  if (!in.failed() && (accumulator < 0.0 || accumulator > w.clock.step() * 2.0 || time < 0.0 || pending_bad_input < 0))
    in.Fail(ErrorCode::kOutOfRange, -1, "world.clock", "the saved clock is out of range for this World's fixed rate");
  in.End(end, "world");
  if (in.apply() && !in.failed()) {
    w.clock.Restore(accumulator, time);
    w.stats.frame = frame;
    w.camera = camera;
    w.pending_bad_input = pending_bad_input;
  }
  if (!in.failed()) w.chains.RestoreState(in);
  if (!in.failed()) w.pendulums.RestoreState(in);
  if (!in.failed()) w.ragdolls.RestoreState(in, &AnchorOf, &w.characters);
  if (!in.failed()) w.characters.RestoreState(in);
}
}  // namespace

std::size_t World::SavedStateSize() const {
  if (impl_->stepping || impl_->frame_state.in_flight) return 0;  // mid-frame: the state is moving
  return CountBytes([&](SnapshotWriter& out) { SaveWorld(*impl_, out); });
}

Result<std::size_t> World::SaveState(std::span<std::byte> out) const {
  if (impl_->stepping || impl_->frame_state.in_flight) return Busy();
  if (impl_->follow.Count() > 0) return Following();
  return SaveWith(SnapshotKind::kWorld, out, [&](SnapshotWriter& w) { SaveWorld(*impl_, w); });
}

Error World::RestoreState(std::span<const std::byte> in) {
  if (impl_->stepping || impl_->frame_state.in_flight) return Busy();
  if (impl_->follow.Count() > 0) return Following();
  return RestoreWith(SnapshotKind::kWorld, in, [&](SnapshotReader& r) { RestoreWorld(*impl_, r); });
}

std::size_t World::SavedRagdollStateSize(RagdollId ragdoll) const {
  if (impl_->stepping || impl_->frame_state.in_flight) return 0;  // mid-frame: the state is moving
  if (!impl_->ragdolls.IsValid(ragdoll)) return 0;
  return CountBytes([&](SnapshotWriter& w) { impl_->ragdolls.SaveInstance(ragdoll, w); });
}

Result<std::size_t> World::SaveRagdollState(RagdollId ragdoll, std::span<std::byte> out) const {
  if (impl_->stepping || impl_->frame_state.in_flight) return Busy();
  if (!impl_->ragdolls.IsValid(ragdoll)) return Stale("ragdoll");
  if (impl_->follow.IsFollowing(ragdoll)) return Following();
  return SaveWith(SnapshotKind::kRagdoll, out, [&](SnapshotWriter& w) { impl_->ragdolls.SaveInstance(ragdoll, w); });
}

Error World::RestoreRagdollState(RagdollId ragdoll, std::span<const std::byte> in) {
  if (impl_->stepping || impl_->frame_state.in_flight) return Busy();
  if (!impl_->ragdolls.IsValid(ragdoll)) return Stale("ragdoll");
  if (impl_->follow.IsFollowing(ragdoll)) return Following();
  return RestoreWith(SnapshotKind::kRagdoll, in, [&](SnapshotReader& r) {
    impl_->ragdolls.RestoreInstance(ragdoll, r, &AnchorOf, &impl_->characters);
  });
}

namespace {
// A character's record, then its ragdoll's and its kinematic copy's (when it has one).
void SaveCharacter(const World::Impl& w, CharacterId c, RagdollId ragdoll, SnapshotWriter& out) {
  w.characters.SaveInstance(c, out);
  w.ragdolls.SaveInstance(ragdoll, out);
  const RagdollId twin = w.characters.TwinOf(c);
  out.Bool(w.ragdolls.IsValid(twin));
  if (w.ragdolls.IsValid(twin)) w.ragdolls.SaveInstance(twin, out);
}
}  // namespace

std::size_t World::SavedCharacterStateSize(CharacterId character) const {
  if (impl_->stepping || impl_->frame_state.in_flight) return 0;  // mid-frame: the state is moving
  if (!IsValid(character)) return 0;
  const RagdollId ragdoll = CharacterRagdoll(character);
  return CountBytes([&](SnapshotWriter& w) { SaveCharacter(*impl_, character, ragdoll, w); });
}

Result<std::size_t> World::SaveCharacterState(CharacterId character, std::span<std::byte> out) const {
  if (impl_->stepping || impl_->frame_state.in_flight) return Busy();
  if (!IsValid(character)) return Stale("character");
  const RagdollId ragdoll = CharacterRagdoll(character);
  return SaveWith(SnapshotKind::kCharacter, out,
                  [&](SnapshotWriter& w) { SaveCharacter(*impl_, character, ragdoll, w); });
}

Error World::RestoreCharacterState(CharacterId character, std::span<const std::byte> in) {
  if (impl_->stepping || impl_->frame_state.in_flight) return Busy();
  if (!IsValid(character)) return Stale("character");
  const RagdollId ragdoll = CharacterRagdoll(character);
  const RagdollId twin = impl_->characters.TwinOf(character);
  return RestoreWith(SnapshotKind::kCharacter, in, [&](SnapshotReader& r) {
    impl_->characters.RestoreInstance(character, r);
    if (!r.failed()) impl_->ragdolls.RestoreInstance(ragdoll, r, &AnchorOf, &impl_->characters);
    const bool has_twin = r.Bool("character.twin");
    if (!r.failed() && has_twin != impl_->ragdolls.IsValid(twin))
      r.Fail(ErrorCode::kBadReference, -1, "character.twin", "one of the two characters has a kinematic copy");
    if (!r.failed() && has_twin) impl_->ragdolls.RestoreInstance(twin, r, &AnchorOf, &impl_->characters);
  });
}

std::size_t World::SavedChainStateSize(ChainId chain) const {
  if (impl_->stepping || impl_->frame_state.in_flight) return 0;  // mid-frame: the state is moving
  if (!impl_->chains.IsValid(chain)) return 0;
  return CountBytes([&](SnapshotWriter& w) { impl_->chains.SaveInstance(chain, w); });
}

Result<std::size_t> World::SaveChainState(ChainId chain, std::span<std::byte> out) const {
  if (impl_->stepping || impl_->frame_state.in_flight) return Busy();
  if (!impl_->chains.IsValid(chain)) return Stale("chain");
  return SaveWith(SnapshotKind::kChain, out, [&](SnapshotWriter& w) { impl_->chains.SaveInstance(chain, w); });
}

Error World::RestoreChainState(ChainId chain, std::span<const std::byte> in) {
  if (impl_->stepping || impl_->frame_state.in_flight) return Busy();
  if (!impl_->chains.IsValid(chain)) return Stale("chain");
  return RestoreWith(SnapshotKind::kChain, in, [&](SnapshotReader& r) { impl_->chains.RestoreInstance(chain, r); });
}

}  // namespace tendon
