// ports/c/c_contact_events.cpp: the C ABI's contact and impact events
// (tendon/contact_events.h): the world's queue drained into an array of TendonContactEvent.
//
// TendonContactEvent mirrors ContactEvent through the table below (c_mirror.h), checked
// field by field at compile time. The per-archetype settings (TendonContactEventSettings,
// a member of TendonRagdollSettings) and their defaults are c_ragdolls.cpp's, whose table
// converts them.
// What it does NOT do: validate the settings (BuildRagdollArchetype does, naming
// "contact_events.<field>"), or queue anything (World::Step does).
// Threading: as the C++ World. Memory: none (drain copies through a small stack buffer).
#include <algorithm>
#include <span>

#include "ports/c/c_port.h"

namespace tendon::ports::capi {

static_assert(TENDON_CONTACT_BEGAN == static_cast<int>(ContactEventKind::kBegan) &&
                  TENDON_CONTACT_ENDED == static_cast<int>(ContactEventKind::kEnded) &&
                  TENDON_CONTACT_DRIVE_BROKEN == static_cast<int>(ContactEventKind::kDriveBroken),
              "TendonContactEventKind mirrors ContactEventKind");
static_assert(TENDON_CONTACT_SIDE_STATIC_WORLD == static_cast<int>(ContactSideKind::kStaticWorld) &&
                  TENDON_CONTACT_SIDE_RAGDOLL_PART == static_cast<int>(ContactSideKind::kRagdollPart) &&
                  TENDON_CONTACT_SIDE_HOST_BODY == static_cast<int>(ContactSideKind::kHostBody) &&
                  TENDON_CONTACT_SIDE_PART_DRIVE == static_cast<int>(ContactSideKind::kPartDrive),
              "TendonContactSide mirrors ContactSideKind");

template <>
struct MirrorTable<TendonContactEvent, ContactEvent> : TableOf<TendonContactEvent, ContactEvent> {
  using Rows = RowList<Field<&C::kind, &P::kind>, Field<&C::ragdoll, &P::ragdoll>, Field<&C::part, &P::part>,
                       Field<&C::character, &P::character>, Field<&C::b_kind, &P::b_kind>,
                       Field<&C::b_ragdoll, &P::b_ragdoll>, Field<&C::b_part, &P::b_part>,
                       Field<&C::b_host_body, &P::b_host_body>, Field<&C::b_drive, &P::b_drive>,
                       Field<&C::point, &P::point>, Field<&C::normal, &P::normal>,
                       Field<&C::normal_speed, &P::normal_speed>, Field<&C::impulse, &P::impulse>,
                       Field<&C::distance, &P::distance>, Field<&C::time, &P::time>>;
};
TENDON_C_CHECK_MIRROR(TendonContactEvent, tendon::ContactEvent);

}  // namespace tendon::ports::capi

using namespace tendon::ports::capi;

extern "C" {

int32_t tendon_world_drain_contact_events(TendonWorld* world, TendonContactEvent* out, int32_t capacity) {
  if (world == nullptr || out == nullptr || capacity <= 0) return 0;
  tendon::ContactEvent events[64];
  int32_t total = 0;
  while (total < capacity) {
    const int32_t want = std::min<int32_t>(64, capacity - total);
    const int32_t got =
        world->world->DrainContactEvents(std::span<tendon::ContactEvent>(events, static_cast<std::size_t>(want)));
    for (int32_t i = 0; i < got; ++i) out[total++] = ConvertOut<TendonContactEvent>(events[i]);
    if (got < want) break;
  }
  return total;
}

}  // extern "C"
