// SPDX-License-Identifier: GPL-2.0-only
// bpfvm/ringbuf.h: BPF_MAP_TYPE_RINGBUF: the producer side the ring-buffer helpers use, and a
// user-space consumer in the shape of libbpf's ring_buffer__new/add/poll/consume.
//
// One ring of max_entries bytes (a power of 2 and a multiple of the page size) shared by all
// CPUs. A record is an 8-byte header (struct bpf_ringbuf_hdr: length with BUSY bit 31 and
// DISCARD bit 30, and the page offset back to the ring) followed by the data, padded to 8 bytes.
// Reservations are serialised by a spinlock and advance producer_pos; commits (submit/discard)
// only flip the header's bits, in any order, so a consumer reading from consumer_pos stops at the
// first record still BUSY: records are consumed in reservation order. A reservation fails when
// the ring would hold more than its size from consumer_pos, or from the oldest record not yet
// committed (pending_pos).
//
// The data pages are mapped twice back to back, as the kernel does, so a record that wraps past
// the end is contiguous in memory for the program and the consumer.
//
// Wake-ups: after a commit the consumer is woken if BPF_RB_FORCE_WAKEUP, never if
// BPF_RB_NO_WAKEUP, and otherwise only if it has consumed everything before this record
// (consumer_pos == the record's position: it may be sleeping on it).
//
// Mirrors: kernel/bpf/ringbuf.c (bpf_ringbuf_area_alloc, __bpf_ringbuf_reserve,
//          bpf_ringbuf_commit, bpf_ringbuf_query, ringbuf_map_poll_kern) and
//          tools/lib/bpf/ringbuf.c (ring_buffer__new, ring_buffer__add, ringbuf_process_ring,
//          ring_buffer__poll, ring_buffer__consume) (Linux 6.19)
// Emulation: the kernel defers the wake-up to irq_work; here the committing context calls
//   wake_up_all() itself. The consumer waits on the ring's wait queue (no epoll): it must run as
//   a task of the machine (spawned, exec'd or an attached thread) to wait; in simulated mode the
//   waiting consumer is a blocked task like any other.
#pragma once

#include <functional>
#include <vector>

#include "bpfvm/map.h"

namespace umemcg {

struct bpf_ringbuf_hdr {
  u32 len;
  u32 pg_off;
};

struct bpf_ringbuf;

// The ring of a BPF_MAP_TYPE_RINGBUF map, nullptr for any other map.
bpf_ringbuf *bpf_ringbuf_of(bpf_map *map);

// Program side. __bpf_ringbuf_reserve() returns the record's data or nullptr (no room, or size
// larger than the ring or than RINGBUF_MAX_RECORD_SZ).
void *__bpf_ringbuf_reserve(bpf_ringbuf *rb, u64 size);
// Submits (discard = false) or discards a reserved record; flags BPF_RB_NO_WAKEUP /
// BPF_RB_FORCE_WAKEUP.
void bpf_ringbuf_commit(void *sample, u64 flags, bool discard);
// The ring a record belongs to (from its header's page offset).
bpf_ringbuf *bpf_ringbuf_restore_from_rec(void *sample);
// BPF_RB_AVAIL_DATA / RING_SIZE / CONS_POS / PROD_POS, 0 for anything else.
u64 bpf_ringbuf_query(bpf_ringbuf *rb, u64 flags);
// The size a reserve of `size` bytes takes in the ring (header, rounded up to 8).
u32 bpf_ringbuf_record_len(u64 size);

// Number of consumer wake-ups the ring has issued (for tests and statistics).
u64 bpf_ringbuf_wakeups(bpf_ringbuf *rb);

namespace emu {

// libbpf's struct ring_buffer: one or more rings, each with a sample callback.
class RingBuffer {
 public:
  // Returns < 0 to stop consuming (the error is returned by consume()/poll()).
  using SampleFn = std::function<int(const void *data, u32 size)>;

  RingBuffer() = default;
  RingBuffer(const RingBuffer &) = delete;
  RingBuffer &operator=(const RingBuffer &) = delete;

  // ring_buffer__add(): -EINVAL if map is not a ring buffer.
  int add(bpf_map *map, SampleFn fn);
  // ring_buffer__consume(): consumes every committed record; returns how many were passed to
  // callbacks (discarded ones are skipped), or a callback's negative result.
  int consume();
  // ring_buffer__poll(): waits up to timeout_ms (< 0: forever, 0: not at all) until a ring has
  // data (the kernel's poll: producer_pos != consumer_pos), then consumes. Returns the number of
  // records consumed (0 on timeout) or an error; waiting needs a task context (-EINVAL without).
  int poll(int timeout_ms);

 private:
  struct Ring {
    bpf_ringbuf *rb;
    SampleFn fn;
  };
  int process_ring(Ring &r);
  bool any_data() const;
  std::vector<Ring> rings_;
};

}  // namespace emu
}  // namespace umemcg
