// kernel/simd/lanes.h: the lane layout constant and aligned storage for blocks.
//
// Design: every chain block stores kBlockLanes instances side by side. The number is a
// layout constant of the build, chosen so that the widest chain kernel (AVX2, 8 floats)
// processes a node of a block in one batch and narrower kernels (SSE and NEON, 4 floats)
// in two. Ragdoll blocks take their World's width (below). Kernels never assume a width:
// they loop over the block in steps of their batch size. Storage is aligned to a cache
// line so that aligned loads are valid for every instruction set up to AVX-512.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>

namespace tendon::detail {

inline constexpr int32_t kBlockLanes = 8;
inline constexpr std::size_t kCacheLine = 64;

// A cache-line-aligned float array, sized once (at build or bind time), never in a step.
class AlignedFloats {
 public:
  AlignedFloats() = default;
  explicit AlignedFloats(std::size_t count) { Resize(count); }
  ~AlignedFloats() { std::free(data_); }
  AlignedFloats(const AlignedFloats&) = delete;
  AlignedFloats& operator=(const AlignedFloats&) = delete;
  AlignedFloats(AlignedFloats&& o) noexcept : data_(o.data_), size_(o.size_) {
    o.data_ = nullptr;
    o.size_ = 0;
  }
  AlignedFloats& operator=(AlignedFloats&& o) noexcept {
    if (this != &o) {
      std::free(data_);
      data_ = o.data_;
      size_ = o.size_;
      o.data_ = nullptr;
      o.size_ = 0;
    }
    return *this;
  }
  void Resize(std::size_t count) {
    std::free(data_);
    const std::size_t bytes = ((count * sizeof(float) + kCacheLine - 1) / kCacheLine) * kCacheLine;
    data_ = static_cast<float*>(std::aligned_alloc(kCacheLine, bytes == 0 ? kCacheLine : bytes));
    if (data_ == nullptr) throw std::bad_alloc();
    std::memset(data_, 0, bytes == 0 ? kCacheLine : bytes);
    size_ = count;
  }
  float* data() { return data_; }
  const float* data() const { return data_; }
  std::size_t size() const { return size_; }

 private:
  float* data_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace tendon::detail
