// ports/c/c_snapshot.cpp: the C ABI's saved states (World::SaveState, RestoreState and the
// per-instance calls; tendon/snapshot.h).
//
// What it does: checks the host's pointers (a NULL buffer with a non-zero size, a NULL
// `written`), wraps them in spans and forwards; the World's Error (which field, why)
// becomes the world's last error.
// What it does NOT do: own or copy the bytes (the host's buffer is written or read in
// place), or allocate.
// Threading: as the C++ World.
#include <cstddef>
#include <span>

#include "ports/c/c_port.h"

using namespace tendon::ports::capi;

namespace {

// The save calls' shared checks and forwarding: `save` is the World call on the span.
template <class Save>
TendonResult SaveInto(const TendonWorld* world, uint8_t* out, size_t capacity, size_t* written, const Save& save) {
  if (world == nullptr) return NullArgument(nullptr, "world");
  if (written == nullptr) return NullArgument(Mutable(world), "written");
  if (out == nullptr && capacity > 0) return NullArgument(Mutable(world), "out");
  *written = 0;
  return Guard(Mutable(world), [&] {
    const tendon::Result<std::size_t> r = save(std::span<std::byte>(reinterpret_cast<std::byte*>(out), capacity));
    if (!r.ok()) return Record(Mutable(world), r.error());
    *written = r.value();
    return TENDON_OK;
  });
}

template <class Restore>
TendonResult RestoreFrom(TendonWorld* world, const uint8_t* bytes, size_t size, const Restore& restore) {
  if (world == nullptr) return NullArgument(nullptr, "world");
  if (bytes == nullptr && size > 0) return NullArgument(world, "bytes");
  return Guard(world, [&] {
    return Record(world, restore(std::span<const std::byte>(reinterpret_cast<const std::byte*>(bytes), size)));
  });
}

}  // namespace

extern "C" {

size_t tendon_world_saved_state_size(const TendonWorld* world) {
  return world != nullptr ? world->world->SavedStateSize() : 0;
}
TendonResult tendon_world_save_state(const TendonWorld* world, uint8_t* out, size_t capacity, size_t* written) {
  return SaveInto(world, out, capacity, written, [&](std::span<std::byte> s) { return world->world->SaveState(s); });
}
TendonResult tendon_world_restore_state(TendonWorld* world, const uint8_t* bytes, size_t size) {
  return RestoreFrom(world, bytes, size, [&](std::span<const std::byte> s) { return world->world->RestoreState(s); });
}

size_t tendon_saved_ragdoll_state_size(const TendonWorld* world, TendonRagdollId ragdoll) {
  return world != nullptr ? world->world->SavedRagdollStateSize(IdFromC<tendon::RagdollId>(ragdoll)) : 0;
}
TendonResult tendon_save_ragdoll_state(const TendonWorld* world, TendonRagdollId ragdoll, uint8_t* out, size_t capacity,
                                       size_t* written) {
  return SaveInto(world, out, capacity, written, [&](std::span<std::byte> s) {
    return world->world->SaveRagdollState(IdFromC<tendon::RagdollId>(ragdoll), s);
  });
}
TendonResult tendon_restore_ragdoll_state(TendonWorld* world, TendonRagdollId ragdoll, const uint8_t* bytes,
                                          size_t size) {
  return RestoreFrom(world, bytes, size, [&](std::span<const std::byte> s) {
    return world->world->RestoreRagdollState(IdFromC<tendon::RagdollId>(ragdoll), s);
  });
}

size_t tendon_saved_character_state_size(const TendonWorld* world, TendonCharacterId character) {
  return world != nullptr ? world->world->SavedCharacterStateSize(IdFromC<tendon::CharacterId>(character)) : 0;
}
TendonResult tendon_save_character_state(const TendonWorld* world, TendonCharacterId character, uint8_t* out,
                                         size_t capacity, size_t* written) {
  return SaveInto(world, out, capacity, written, [&](std::span<std::byte> s) {
    return world->world->SaveCharacterState(IdFromC<tendon::CharacterId>(character), s);
  });
}
TendonResult tendon_restore_character_state(TendonWorld* world, TendonCharacterId character, const uint8_t* bytes,
                                            size_t size) {
  return RestoreFrom(world, bytes, size, [&](std::span<const std::byte> s) {
    return world->world->RestoreCharacterState(IdFromC<tendon::CharacterId>(character), s);
  });
}

size_t tendon_saved_chain_state_size(const TendonWorld* world, TendonChainId chain) {
  return world != nullptr ? world->world->SavedChainStateSize(IdFromC<tendon::ChainId>(chain)) : 0;
}
TendonResult tendon_save_chain_state(const TendonWorld* world, TendonChainId chain, uint8_t* out, size_t capacity,
                                     size_t* written) {
  return SaveInto(world, out, capacity, written, [&](std::span<std::byte> s) {
    return world->world->SaveChainState(IdFromC<tendon::ChainId>(chain), s);
  });
}
TendonResult tendon_restore_chain_state(TendonWorld* world, TendonChainId chain, const uint8_t* bytes, size_t size) {
  return RestoreFrom(world, bytes, size, [&](std::span<const std::byte> s) {
    return world->world->RestoreChainState(IdFromC<tendon::ChainId>(chain), s);
  });
}

}  // extern "C"
