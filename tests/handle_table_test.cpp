// The one handle table (kernel/core/handle_table.h) every system and the C ABI use.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "kernel/core/handle_table.h"

namespace tendon {
namespace {

struct WidgetTag;
using WidgetId = Id<WidgetTag>;
using Table = detail::HandleTable<WidgetId>;

TEST(HandleTable, HandlesAreLiveUntilFreedAndNullIsNever) {
  Table t;
  EXPECT_FALSE(t.IsLive(WidgetId{}));
  const WidgetId a = t.Allocate();
  const WidgetId b = t.Allocate();
  EXPECT_EQ(a.index, 0u);
  EXPECT_EQ(b.index, 1u);
  EXPECT_FALSE(a.IsNull());
  EXPECT_TRUE(t.IsLive(a));
  EXPECT_TRUE(t.IsLive(b));
  EXPECT_EQ(t.LiveCount(), 2u);
  t.Free(a);
  EXPECT_FALSE(t.IsLive(a));
  EXPECT_FALSE(t.IsLiveAt(0));
  EXPECT_TRUE(t.IsLive(b));
  EXPECT_EQ(t.LiveCount(), 1u);
  // A handle for an index never made, or with generation 0, is not live.
  EXPECT_FALSE(t.IsLive(WidgetId{7, 1}));
  EXPECT_FALSE(t.IsLive(WidgetId{1, 0}));
}

TEST(HandleTable, AFreedSlotIsReusedLastFreedFirstUnderANewGeneration) {
  Table t;
  std::vector<WidgetId> ids;
  for (int i = 0; i < 4; ++i) ids.push_back(t.Allocate());
  t.Free(ids[1]);
  t.Free(ids[3]);
  const WidgetId c = t.Allocate();
  EXPECT_EQ(c.index, 3u);  // the last freed
  EXPECT_NE(c.generation, ids[3].generation);
  EXPECT_FALSE(t.IsLive(ids[3]));  // the old handle stays stale after its slot is reused
  EXPECT_TRUE(t.IsLive(c));
  EXPECT_EQ(t.Allocate().index, 1u);
  EXPECT_EQ(t.Allocate().index, 4u);  // nothing free: appended
  EXPECT_EQ(t.SlotCount(), 5u);
  EXPECT_EQ(t.HandleAt(3), c);
}

TEST(HandleTable, FreeingAStaleOrNullHandleChangesNothing) {
  Table t;
  const WidgetId a = t.Allocate();
  t.Free(a);
  const WidgetId b = t.Allocate();  // same slot, next generation
  t.Free(a);                        // stale: must not free b
  t.Free(WidgetId{});
  t.Free(WidgetId{99, 1});
  EXPECT_TRUE(t.IsLive(b));
  EXPECT_EQ(t.LiveCount(), 1u);
  EXPECT_EQ(t.Allocate().index, 1u);  // slot 0 was not put on the free list twice
}

TEST(HandleTable, EveryReuseOfASlotAnswersToTheNextGeneration) {
  Table t;
  WidgetId id = t.Allocate();
  uint32_t last = id.generation;
  for (int i = 0; i < 1000; ++i) {
    t.Free(id);
    id = t.Allocate();
    EXPECT_EQ(id.index, 0u);
    EXPECT_EQ(id.generation, last + 1);
    EXPECT_NE(id.generation, 0u);
    last = id.generation;
  }
}

}  // namespace
}  // namespace tendon
