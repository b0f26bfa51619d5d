// ports/wasm/tendon_wasm.cpp: the few C entry points the WebAssembly module adds to the C ABI
// for tendon.mjs, where calling back into JavaScript per primitive would cost more than the
// work: the debug draw written as line segments into one array, and malloc's count of bytes
// held (the Node tests' leak check).
//
// What it does NOT do: anything tendon_c.h does not (every other call goes straight to the
// C ABI), or allocate: the caller owns the output array.
// Threading: as the C ABI (one thread per world). Memory: none of its own.
#include <malloc.h>

#include <cmath>
#include <cstdint>
#include <initializer_list>

#include "tendon/tendon_c.h"

namespace {

// Where the segments go: 14 floats each (two vertices of x y z r g b a). Counts every
// segment, written or not, so the caller can size the array and draw again.
struct LineSink {
  float* out;
  int32_t capacity;  // segments
  int32_t count;
};

constexpr float kPi = 3.14159265358979f;
constexpr int kCircleSegments = 12;

void Line(LineSink& sink, TendonVec3 a, TendonVec3 b, uint32_t color) {
  if (sink.count < sink.capacity) {
    float* f = sink.out + static_cast<ptrdiff_t>(sink.count) * 14;
    const float r = static_cast<float>((color >> 24) & 0xffu) / 255.0f;
    const float g = static_cast<float>((color >> 16) & 0xffu) / 255.0f;
    const float bl = static_cast<float>((color >> 8) & 0xffu) / 255.0f;
    const float al = static_cast<float>(color & 0xffu) / 255.0f;
    const float v[14] = {a.x, a.y, a.z, r, g, bl, al, b.x, b.y, b.z, r, g, bl, al};
    for (int i = 0; i < 14; ++i) f[i] = v[i];
  }
  ++sink.count;
}

TendonVec3 Add(TendonVec3 a, TendonVec3 b) { return {a.x + b.x, a.y + b.y, a.z + b.z}; }
TendonVec3 Scale(TendonVec3 a, float s) { return {a.x * s, a.y * s, a.z * s}; }
TendonVec3 Cross(TendonVec3 a, TendonVec3 b) {
  return {a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x};
}
TendonVec3 Normalized(TendonVec3 a) {
  const float length = std::sqrt(a.x * a.x + a.y * a.y + a.z * a.z);
  return length > 1e-12f ? Scale(a, 1.0f / length) : TendonVec3{0, 1, 0};
}
TendonVec3 Rotate(TendonQuat q, TendonVec3 v) {
  const TendonVec3 u{q.x, q.y, q.z};
  const TendonVec3 t = Scale(Cross(u, v), 2.0f);
  return Add(Add(v, Scale(t, q.w)), Cross(u, t));
}

// A circle of `radius` about `centre` in the plane spanned by unit vectors u and v.
void Circle(LineSink& sink, TendonVec3 centre, TendonVec3 u, TendonVec3 v, float radius, uint32_t color) {
  TendonVec3 previous = Add(centre, Scale(u, radius));
  for (int i = 1; i <= kCircleSegments; ++i) {
    const float angle = 2.0f * kPi * static_cast<float>(i) / kCircleSegments;
    const TendonVec3 next =
        Add(centre, Add(Scale(u, radius * std::cos(angle)), Scale(v, radius * std::sin(angle))));
    Line(sink, previous, next, color);
    previous = next;
  }
}

void DrawLine(TendonVec3 from, TendonVec3 to, uint32_t color, void* user) {
  Line(*static_cast<LineSink*>(user), from, to, color);
}

void DrawPoint(TendonVec3 p, float size, uint32_t color, void* user) {
  LineSink& sink = *static_cast<LineSink*>(user);
  const float h = 0.5f * size;
  Line(sink, {p.x - h, p.y, p.z}, {p.x + h, p.y, p.z}, color);
  Line(sink, {p.x, p.y - h, p.z}, {p.x, p.y + h, p.z}, color);
  Line(sink, {p.x, p.y, p.z - h}, {p.x, p.y, p.z + h}, color);
}

void DrawSphere(TendonVec3 c, float radius, uint32_t color, void* user) {
  LineSink& sink = *static_cast<LineSink*>(user);
  Circle(sink, c, {1, 0, 0}, {0, 1, 0}, radius, color);
  Circle(sink, c, {0, 1, 0}, {0, 0, 1}, radius, color);
  Circle(sink, c, {0, 0, 1}, {1, 0, 0}, radius, color);
}

void DrawCapsule(TendonVec3 a, TendonVec3 b, float radius_a, float radius_b, uint32_t color, void* user) {
  LineSink& sink = *static_cast<LineSink*>(user);
  const TendonVec3 axis = Normalized(Add(b, Scale(a, -1.0f)));
  const TendonVec3 helper = std::fabs(axis.y) < 0.9f ? TendonVec3{0, 1, 0} : TendonVec3{1, 0, 0};
  const TendonVec3 u = Normalized(Cross(axis, helper));
  const TendonVec3 v = Cross(axis, u);
  Circle(sink, a, u, v, radius_a, color);
  Circle(sink, b, u, v, radius_b, color);
  // The outline: four sides, and each end's cap as a half circle in two planes.
  const TendonVec3 sides[4] = {u, v, Scale(u, -1.0f), Scale(v, -1.0f)};
  for (const TendonVec3& side : sides) Line(sink, Add(a, Scale(side, radius_a)), Add(b, Scale(side, radius_b)), color);
  for (int end = 0; end < 2; ++end) {
    const TendonVec3 centre = end == 0 ? a : b;
    const float radius = end == 0 ? radius_a : radius_b;
    const TendonVec3 out = end == 0 ? Scale(axis, -1.0f) : axis;
    for (const TendonVec3& side : {u, v}) {
      TendonVec3 previous = Add(centre, Scale(side, radius));
      for (int i = 1; i <= kCircleSegments; ++i) {
        const float angle = kPi * static_cast<float>(i) / kCircleSegments;
        const TendonVec3 next =
            Add(centre, Add(Scale(side, radius * std::cos(angle)), Scale(out, radius * std::sin(angle))));
        Line(sink, previous, next, color);
        previous = next;
      }
    }
  }
}

void DrawBox(TendonTransform frame, TendonVec3 h, uint32_t color, void* user) {
  LineSink& sink = *static_cast<LineSink*>(user);
  TendonVec3 corner[8];
  for (int i = 0; i < 8; ++i) {
    const TendonVec3 local{(i & 1) ? h.x : -h.x, (i & 2) ? h.y : -h.y, (i & 4) ? h.z : -h.z};
    corner[i] = Add(frame.translation, Rotate(frame.rotation, local));
  }
  for (int i = 0; i < 8; ++i)
    for (int bit = 1; bit < 8; bit <<= 1)
      if ((i & bit) == 0) Line(sink, corner[i], corner[i | bit], color);
}

}  // namespace

extern "C" {

// The debug view as line segments: up to `capacity` segments of 14 floats into `out` (may be
// NULL with capacity 0); *segment_count receives how many the view has (more than capacity:
// draw again with a larger array). Refusals are tendon_world_draw_debug's.
TENDON_C_API TendonResult tendon_wasm_debug_lines(const TendonWorld* world, uint32_t flags, float* out,
                                                  int32_t capacity, int32_t* segment_count) {
  LineSink sink{out, out != nullptr && capacity > 0 ? capacity : 0, 0};
  TendonDebugDraw draw;
  tendon_debug_draw_defaults(&draw);
  draw.draw_line = DrawLine;
  draw.draw_point = DrawPoint;
  draw.draw_sphere = DrawSphere;
  draw.draw_capsule = DrawCapsule;
  draw.draw_box = DrawBox;
  draw.user = &sink;
  const TendonResult result = tendon_world_draw_debug(world, &draw, flags);
  if (segment_count != nullptr) *segment_count = sink.count;
  return result;
}

// Bytes malloc holds now.
TENDON_C_API int32_t tendon_wasm_allocated_bytes(void) { return static_cast<int32_t>(mallinfo().uordblks); }

}  // extern "C"
