// tests/net_channel.h: an in-memory network channel for tests of following (follow_test):
// it drops a given fraction of the packets sent and delays the rest by a uniform random
// time in [min_delay, max_delay] seconds, from a fixed seed, so a run is repeatable.
// Packets arrive in arrival-time order (a later packet may overtake an earlier one, as on
// a real network). Not thread-safe; allocates as packets queue.
#pragma once

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

namespace tendon::test {

template <class Packet>
class NetChannel {
 public:
  NetChannel(uint64_t seed, double drop_fraction, double min_delay, double max_delay)
      : state_(seed), drop_(drop_fraction), min_delay_(min_delay), max_delay_(max_delay) {}

  // Sends `packet` at time `now` (s): dropped, or queued to arrive at now + a delay.
  void Send(double now, Packet packet) {
    ++sent_;
    if (Uniform() < drop_) {
      ++dropped_;
      return;
    }
    const double arrival = now + min_delay_ + (max_delay_ - min_delay_) * Uniform();
    queue_.push_back({arrival, next_++, std::move(packet)});
  }

  // Hands every packet that has arrived by `now` to deliver(const Packet&), earliest
  // arrival first (ties in the order sent), and forgets them.
  template <class F>
  void Deliver(double now, F&& deliver) {
    std::stable_sort(queue_.begin(), queue_.end(),
                     [](const Entry& a, const Entry& b) { return a.arrival < b.arrival || (a.arrival == b.arrival && a.order < b.order); });
    std::size_t n = 0;
    while (n < queue_.size() && queue_[n].arrival <= now) deliver(queue_[n++].packet);
    queue_.erase(queue_.begin(), queue_.begin() + static_cast<std::ptrdiff_t>(n));
  }

  int64_t sent() const { return sent_; }
  int64_t dropped() const { return dropped_; }

 private:
  struct Entry {
    double arrival;
    int64_t order;
    Packet packet;
  };
  // splitmix64: the same sequence on every platform (the standard distributions are not).
  double Uniform() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return static_cast<double>(z >> 11) * (1.0 / 9007199254740992.0);
  }

  uint64_t state_;
  double drop_, min_delay_, max_delay_;
  std::vector<Entry> queue_;
  int64_t next_ = 0, sent_ = 0, dropped_ = 0;
};

}  // namespace tendon::test
