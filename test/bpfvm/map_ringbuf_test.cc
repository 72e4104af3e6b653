// SPDX-License-Identifier: GPL-2.0-only
// test/bpfvm/map_ringbuf_test.cc: the BPF ring buffer: creation checks, records consumed in
// reservation order with out-of-order submit/discard, wrap-around, a full ring, query, the
// wake-up rules, and a consumer waiting for data in both machine modes.
#include "shim/bug.h"
#undef WARN
#include <catch2/catch.hpp>

#include <cstring>
#include <vector>

#include "bpfvm/ringbuf.h"
#include "shim/errno.h"
#include "shim/jiffies.h"
#include "shim/machine.h"
#include "test/support/machine_fixture.h"

using namespace umemcg;
using umemcg::test::config;

namespace {

std::unique_ptr<bpf_map> make_rb(u32 size) {
  BpfMapAttr a{BPF_MAP_TYPE_RINGBUF, 0, 0, size, 0, "rb", -1};
  auto m = bpf_map_create(a);
  REQUIRE(m.ok());
  return std::move(*m);
}

int rb_errno(u32 key, u32 value, u32 size, u32 flags = 0) {
  BpfMapAttr a{BPF_MAP_TYPE_RINGBUF, key, value, size, flags, "rb", -1};
  return bpf_status_errno(bpf_map_create(a).status());
}

void *reserve_u32(bpf_ringbuf *rb, u32 v) {
  auto *p = static_cast<u32 *>(__bpf_ringbuf_reserve(rb, sizeof(u32)));
  if (p) *p = v;
  return p;
}

}  // namespace

TEST_CASE("ringbuf: creation checks", "[bpfvm][ringbuf]") {
  CHECK(rb_errno(0, 0, 4096) == 0);
  CHECK(rb_errno(0, 0, 4096 * 4) == 0);
  CHECK(rb_errno(0, 0, 4096 * 3) == -EINVAL);  // not a power of 2
  CHECK(rb_errno(0, 0, 2048) == -EINVAL);      // not a page multiple
  CHECK(rb_errno(0, 0, 0) == -EINVAL);
  CHECK(rb_errno(4, 0, 4096) == -EINVAL);
  CHECK(rb_errno(0, 8, 4096) == -EINVAL);
  CHECK(rb_errno(0, 0, 4096, BPF_F_NO_PREALLOC) == -EINVAL);
  auto m = make_rb(4096);
  u32 k = 0;
  u8 v[8];
  CHECK(sys_map_lookup_elem(m.get(), &k, v) == -ENOTSUPP);
  CHECK(sys_map_update_elem(m.get(), &k, v) == -ENOTSUPP);
  CHECK(sys_map_get_next_key(m.get(), nullptr, &k) == -ENOTSUPP);
  CHECK(bpf_ringbuf_of(m.get()) != nullptr);
}

TEST_CASE("ringbuf: records are consumed in reservation order", "[bpfvm][ringbuf]") {
  auto m = make_rb(4096);
  bpf_ringbuf *rb = bpf_ringbuf_of(m.get());
  std::vector<u32> got;
  emu::RingBuffer cons;
  REQUIRE(cons.add(m.get(), [&](const void *d, u32 sz) {
    CHECK(sz == 4);
    got.push_back(*static_cast<const u32 *>(d));
    return 0;
  }) == 0);
  CHECK(cons.add(nullptr, [](const void *, u32) { return 0; }) == -EINVAL);
  void *a = reserve_u32(rb, 1), *b = reserve_u32(rb, 2), *c = reserve_u32(rb, 3);
  REQUIRE((a && b && c));
  CHECK(bpf_ringbuf_restore_from_rec(b) == rb);
  bpf_ringbuf_commit(c, 0, false);
  CHECK(cons.consume() == 0);  // a is still BUSY: nothing passes it
  bpf_ringbuf_commit(a, 0, true);
  CHECK(cons.consume() == 0);  // a discarded (skipped), b still BUSY
  CHECK(bpf_ringbuf_query(rb, BPF_RB_CONS_POS) == bpf_ringbuf_record_len(4));
  bpf_ringbuf_commit(b, 0, false);
  CHECK(cons.consume() == 2);
  CHECK(got == std::vector<u32>{2, 3});
  CHECK(bpf_ringbuf_query(rb, BPF_RB_AVAIL_DATA) == 0);
  CHECK(bpf_ringbuf_query(rb, BPF_RB_PROD_POS) == 3 * bpf_ringbuf_record_len(4));
  CHECK(bpf_ringbuf_query(rb, BPF_RB_RING_SIZE) == 4096);
  CHECK(bpf_ringbuf_query(rb, 99) == 0);
  // A callback error stops consumption after that record.
  emu::RingBuffer stop;
  stop.add(m.get(), [](const void *, u32) { return -7; });
  void *d = reserve_u32(rb, 4), *e = reserve_u32(rb, 5);
  bpf_ringbuf_commit(d, 0, false);
  bpf_ringbuf_commit(e, 0, false);
  CHECK(stop.consume() == -7);
  CHECK(cons.consume() == 1);
  CHECK(got.back() == 5);
}

TEST_CASE("ringbuf: records wrap around the end contiguously", "[bpfvm][ringbuf]") {
  auto m = make_rb(4096);
  bpf_ringbuf *rb = bpf_ringbuf_of(m.get());
  u32 seen = 0;
  bool intact = true;
  emu::RingBuffer cons;
  cons.add(m.get(), [&](const void *d, u32 sz) {
    const u8 *p = static_cast<const u8 *>(d);
    for (u32 i = 0; i < sz; i++) intact &= p[i] == (u8)(seen + i);
    seen++;
    return 0;
  });
  for (u32 n = 0; n < 40; n++) {
    auto *p = static_cast<u8 *>(__bpf_ringbuf_reserve(rb, 1000));
    REQUIRE(p);
    for (u32 i = 0; i < 1000; i++) p[i] = (u8)(n + i);
    bpf_ringbuf_commit(p, 0, false);
    REQUIRE(cons.consume() == 1);
  }
  CHECK(seen == 40);
  CHECK(intact);
  CHECK(bpf_ringbuf_query(rb, BPF_RB_PROD_POS) > 4096 * 9);  // wrapped many times
}

TEST_CASE("ringbuf: a full ring refuses reservations", "[bpfvm][ringbuf]") {
  auto m = make_rb(4096);
  bpf_ringbuf *rb = bpf_ringbuf_of(m.get());
  CHECK(__bpf_ringbuf_reserve(rb, 4096 - 8) == nullptr);  // would fill the ring exactly
  CHECK(__bpf_ringbuf_reserve(rb, 1ull << 31) == nullptr);
  void *big = __bpf_ringbuf_reserve(rb, 4096 - 16);
  REQUIRE(big);
  CHECK(__bpf_ringbuf_reserve(rb, 1) == nullptr);
  CHECK(bpf_ringbuf_query(rb, BPF_RB_AVAIL_DATA) == 4088);
  bpf_ringbuf_commit(big, 0, true);
  CHECK(__bpf_ringbuf_reserve(rb, 1) == nullptr);  // discarded but not consumed yet
  emu::RingBuffer cons;
  cons.add(m.get(), [](const void *, u32) { return 0; });
  CHECK(cons.consume() == 0);
  void *p = __bpf_ringbuf_reserve(rb, 1);
  CHECK(p);
  bpf_ringbuf_commit(p, 0, false);
}

TEST_CASE("ringbuf: adaptive, forced and suppressed wake-ups", "[bpfvm][ringbuf]") {
  emu::Machine mach(config(emu::Mode::simulated, 1));
  mach.exec([] {
    auto m = make_rb(4096);
    bpf_ringbuf *rb = bpf_ringbuf_of(m.get());
    emu::RingBuffer cons;
    cons.add(m.get(), [](const void *, u32) { return 0; });
    void *a = reserve_u32(rb, 1), *b = reserve_u32(rb, 2);
    bpf_ringbuf_commit(b, 0, false);  // the consumer waits for a, not b: no wake-up
    CHECK(bpf_ringbuf_wakeups(rb) == 0);
    bpf_ringbuf_commit(a, 0, false);  // consumer_pos == a's position: wake up
    CHECK(bpf_ringbuf_wakeups(rb) == 1);
    CHECK(cons.consume() == 2);
    void *c = reserve_u32(rb, 3);
    bpf_ringbuf_commit(c, BPF_RB_NO_WAKEUP, false);
    CHECK(bpf_ringbuf_wakeups(rb) == 1);
    void *d = reserve_u32(rb, 4);
    bpf_ringbuf_commit(d, BPF_RB_FORCE_WAKEUP, false);  // even though the consumer is behind
    CHECK(bpf_ringbuf_wakeups(rb) == 2);
  });
}

TEST_CASE("ringbuf: a consumer waits for data and is woken", "[bpfvm][ringbuf]") {
  for (emu::Mode mode : test::kBothModes) {
    for (u64 flags : {u64{0}, u64{BPF_RB_NO_WAKEUP}}) {
      INFO(test::mode_name(mode) << " flags " << flags);
      emu::Machine mach(config(mode, 2));
      auto m = make_rb(4096);
      bpf_ringbuf *rb = bpf_ringbuf_of(m.get());
      int got = -1;
      u64 waited = 0;
      const int timeout_ms = 300;
      mach.spawn("consumer", [&] {
        emu::KernelEntry ke;
        emu::RingBuffer cons;
        cons.add(m.get(), [](const void *, u32) { return 0; });
        const u64 t0 = ktime_get_ns();
        got = cons.poll(timeout_ms);
        waited = ktime_get_ns() - t0;
      });
      mach.spawn("producer", [&] {
        emu::KernelEntry ke;
        msleep(20);
        void *p = reserve_u32(rb, 42);
        bpf_ringbuf_commit(p, flags, false);
      });
      mach.run();
      CHECK(got == 1);
      if (flags == 0) {
        CHECK(waited < (u64)timeout_ms * NSEC_PER_MSEC);  // woken by the commit
      } else {
        CHECK(waited >= (u64)timeout_ms * NSEC_PER_MSEC);  // slept until the timeout
      }
    }
  }
  emu::RingBuffer none;
  CHECK(none.poll(0) == 0);
}
