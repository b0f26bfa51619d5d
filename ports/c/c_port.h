// ports/c/c_port.h: what the C ABI's files (ports/c/c_*.cpp) share.
//
// What it does: the C handles' C++ insides (TendonWorld, TendonDeviceProfile), the port's
// own generation-checked objects (VRM kinds and avatars, over tendon::detail::HandleTable),
// the error plumbing (an Error or a refusal into a TendonResult, with the message kept per
// thread and per world; Guard, which lets no exception out), the argument checks every
// domain repeats, and the pose streams that chains, ragdolls and characters all bind.
// Each domain's struct mirrors (c_mirror.h) live in its own file, beside their conversions.
// What it does NOT do: declare any entry point (tendon/tendon_c.h does) or convert a
// domain's structs.
// Threading: as the C++ World: one thread at a time per world. The last error is per
// thread (thread_local). Memory: recording an error may allocate its message; an
// allocation failure there loses the message, never the code.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <memory>
#include <new>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "kernel/core/handle_table.h"
#include "ports/c/c_mirror.h"
#include "ports/gltf/vrm_avatar.h"
#include "tendon/device_profile.h"
#include "tendon/errors.h"
#include "tendon/ids.h"
#include "tendon/pose_layout.h"
#include "tendon/tendon_c.h"
#include "tendon/trace.h"
#include "tendon/world.h"

// The C value types are the C++ ones, bit for bit: spans and pointers of them are read in
// place (kBitCompatible), and a field added to either side fails here.
static_assert(sizeof(TendonVec3) == sizeof(tendon::Vec3) && offsetof(TendonVec3, z) == offsetof(tendon::Vec3, z) &&
                  tendon::ports::capi::FieldSlots<TendonVec3>() == tendon::ports::capi::FieldSlots<tendon::Vec3>(),
              "TendonVec3 is tendon::Vec3 bit for bit");
static_assert(sizeof(TendonQuat) == sizeof(tendon::Quat) && offsetof(TendonQuat, w) == offsetof(tendon::Quat, w) &&
                  tendon::ports::capi::FieldSlots<TendonQuat>() == tendon::ports::capi::FieldSlots<tendon::Quat>(),
              "TendonQuat is tendon::Quat bit for bit");
static_assert(sizeof(TendonTransform) == sizeof(tendon::Transform) &&
                  offsetof(TendonTransform, rotation) == offsetof(tendon::Transform, rotation) &&
                  offsetof(TendonTransform, scale) == offsetof(tendon::Transform, scale) &&
                  tendon::ports::capi::FieldSlots<TendonTransform>() == tendon::ports::capi::FieldSlots<tendon::Transform>(),
              "TendonTransform is tendon::Transform bit for bit");
static_assert(static_cast<int>(tendon::ErrorCode::kInUse) == TENDON_ERROR_IN_USE, "TendonResult mirrors ErrorCode");

namespace tendon::ports::capi {

struct VrmKindTag;
struct VrmAvatarTag;
using VrmKindId = Id<VrmKindTag>;
using VrmAvatarId = Id<VrmAvatarTag>;

// The port's own objects behind generation-checked ids: the kernel's one handle table, and
// the payload in a vector indexed by Id::index (HandleTable holds no payload).
template <class IdT, class T>
class PortObjects {
 public:
  // The new object's id. Capacity for the slot (and for freeing it later) is reserved
  // first, so a failed allocation leaves the table as it was, and Remove never allocates.
  IdT Add(T value) {
    if (handles_.LiveCount() == handles_.SlotCount() && payload_.size() == payload_.capacity()) {
      const std::size_t grown = std::max<std::size_t>(8, 2 * payload_.size());
      payload_.reserve(grown);
      handles_.Reserve(static_cast<uint32_t>(grown));
    }
    const IdT id = handles_.Allocate();
    payload_.resize(handles_.SlotCount());  // within the capacity reserved above
    payload_[id.index] = std::move(value);
    return id;
  }
  T* Find(IdT id) { return handles_.IsLive(id) ? &payload_[id.index] : nullptr; }
  const T* Find(IdT id) const { return handles_.IsLive(id) ? &payload_[id.index] : nullptr; }
  // Destroys the object and frees its slot; every copy of `id` is stale from then on.
  void Remove(IdT id) {
    if (!handles_.IsLive(id)) return;
    payload_[id.index] = T{};
    handles_.Free(id);
  }
  template <class F>
  void ForEachLive(F&& f) {
    for (uint32_t i = 0; i < handles_.SlotCount(); ++i)
      if (handles_.IsLiveAt(i)) f(payload_[i]);
  }

 private:
  detail::HandleTable<IdT> handles_;
  std::vector<T> payload_;
};

}  // namespace tendon::ports::capi

struct TendonDeviceProfile {
  tendon::DeviceProfile profile;
};

// Member order matters: avatars unbind themselves (their destructors) before the World goes.
struct TendonWorld {
  std::unique_ptr<tendon::World> world;
  tendon::TraceWriter trace;
  std::string last_error;
  tendon::ports::capi::PortObjects<tendon::ports::capi::VrmKindId, std::shared_ptr<const tendon::ports::VrmAvatarArchetype>>
      vrm_kinds;
  tendon::ports::capi::PortObjects<tendon::ports::capi::VrmAvatarId, std::unique_ptr<tendon::ports::VrmAvatar>>
      vrm_avatars;
  // The host's C callbacks (c_world.cpp): the World calls a trampoline with this world as
  // its context, which calls these. Written only outside a frame (stepping is false and no
  // frame is in flight), so the frame reading them never sees them change.
  TendonWindSampleFn wind_sample = nullptr;
  void* wind_user = nullptr;
  TendonSimulatePredicateFn simulate_predicate = nullptr;
  void* predicate_user = nullptr;
  // True inside tendon_world_step and tendon_world_begin_step: their callbacks run there.
  bool stepping = false;
};

namespace tendon::ports::capi {

// ---- errors ----

// Keeps the message (this thread's and the world's); if even that cannot allocate, the code
// alone is returned.
TendonResult Record(TendonWorld* w, TendonResult code, std::string message, std::string field = {}, int32_t item = -1);
// An Error from the kernel: TENDON_OK for kNone, else its code with its message recorded.
TendonResult Record(TendonWorld* w, const Error& e);
// A refusal of `field` before any World call; the message is built where an allocation
// failure only loses it.
TendonResult Refuse(TendonWorld* w, TendonResult code, const char* field, const char* why);
TendonResult NullArgument(TendonWorld* w, const char* what);
// What a call that a frame in flight forbids gets (between begin_step and finish_step).
TendonResult InFlight(TendonWorld* w);
TendonResult BadArrayError(TendonWorld* w, const char* field);
TendonResult BadEnum(TendonWorld* w, const char* field);
// The calling thread's last error (tendon_last_error and its field and item).
const char* LastErrorMessage();
const char* LastErrorField();
int32_t LastErrorItem();

// A const world's calls still record their errors on it (its last error is not its state).
inline TendonWorld* Mutable(const TendonWorld* w) { return const_cast<TendonWorld*>(w); }

// Runs a body that returns a TendonResult; no exception leaves the C ABI.
template <class F>
TendonResult Guard(TendonWorld* w, F&& body) {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    return Record(w, TENDON_ERROR_INTERNAL, "out of memory");
  } catch (const std::exception& e) {
    return Record(w, TENDON_ERROR_INTERNAL, std::string("internal error: ") + e.what());
  } catch (...) {
    return Record(w, TENDON_ERROR_INTERNAL, "internal error");
  }
}

// A Result's id into *out, or its error recorded.
template <class R, class Out>
TendonResult Take(TendonWorld* w, R&& result, Out* out) {
  if (!result.ok()) return Record(w, result.error());
  *out = ToC(result.value());
  return TENDON_OK;
}

// ---- argument checks ----

// A negative count, or a count with a NULL pointer.
inline bool BadArray(const void* p, int32_t n) { return n < 0 || (n > 0 && p == nullptr); }
// A C enum value outside [0, last], refused before it is narrowed to the C++ enum.
inline bool OutOfEnum(int value, int last) { return value < 0 || value > last; }

// A path a loader is about to read: TENDON_ERROR_IO naming it and the system's reason when
// it cannot be opened or is a directory, before the loader sees it.
TendonResult CheckReadable(const char* path, const char* field);

// ---- ragdoll settings (c_ragdolls.cpp), also read by characters (c_characters.cpp) ----

// The arrays and enums of a TendonRagdollSettings; `field` names it in refusals ("settings"
// or "ragdoll").
TendonResult CheckRagdollSettings(TendonWorld* w, const TendonRagdollSettings& c, const char* field);
// Its C++ settings (after CheckRagdollSettings).
RagdollSettings RagdollSettingsToCpp(const TendonRagdollSettings& c);
// The C form of a part (its name left NULL) and of the ragdoll's own fields (its text and
// arrays left NULL and 0): the loaders that lend settings (c_assets.cpp) fill those.
TendonPartSettings PartSettingsToC(const PartSettings& p);
TendonRagdollSettings RagdollSettingsToC(const RagdollSettings& s);

// ---- pose streams (c_pose_streams.cpp) ----

// The C streams as PoseStreams, in `storage` (which the binding's span points into). The
// layout, order and form cross as the ints they are: the bind refuses those out of range
// naming pose_streams[i] and the field.
std::span<const PoseStream> PoseStreamsToCpp(const TendonPoseStream* c, int32_t count, std::vector<PoseStream>* storage);
// The pointer-and-count checks of a binding's streams.
TendonResult CheckPoseStreams(TendonWorld* w, const TendonPoseStream* c, int32_t count);

}  // namespace tendon::ports::capi
