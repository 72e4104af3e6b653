// SPDX-License-Identifier: GPL-2.0-only
// bpfvm/ringbuf.cc: the BPF ring buffer map, its producer operations and the user-space consumer.
// Mirrors: kernel/bpf/ringbuf.c, tools/lib/bpf/ringbuf.c (Linux 6.19)
// Emulation: see bpfvm/ringbuf.h.
#include "bpfvm/ringbuf.h"

#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <climits>

#include "bpfvm/map_internal.h"
#include "shim/errno.h"
#include "shim/jiffies.h"
#include "shim/sched.h"
#include "shim/spinlock.h"
#include "shim/wait.h"

namespace umemcg {

namespace {

constexpr u32 kBusy = BPF_RINGBUF_BUSY_BIT;
constexpr u32 kDiscard = BPF_RINGBUF_DISCARD_BIT;
constexpr u64 kMaxRecordSz = UINT_MAX / 4;  // RINGBUF_MAX_RECORD_SZ
// RINGBUF_MAX_DATA_SZ: the page offset of a record (u32 pages) must reach back to the ring.
constexpr u64 kMaxDataSz = ((1ull << 24) - 4) * PAGE_SIZE;

}  // namespace

// Layout of the mapping: one meta page holding the back pointer to this object, then the data
// pages twice. Positions are free-running byte counters; (pos & mask) indexes the data.
struct bpf_ringbuf {
  wait_queue_head waitq;
  u64 mask = 0;
  spinlock_t spinlock;                  // serialises reservations
  std::atomic<u64> consumer_pos{0};     // written by the consumer only (release)
  std::atomic<u64> producer_pos{0};     // written under spinlock (release)
  u64 pending_pos = 0;                  // under spinlock: oldest record maybe still BUSY
  u8 *base = nullptr;                   // meta page
  u8 *data = nullptr;                   // base + PAGE_SIZE
  size_t map_len = 0;
  std::atomic<u64> wakeups{0};
};

namespace {

inline u32 roundup_len(u32 len) {
  len &= ~(kBusy | kDiscard);
  return (len + BPF_RINGBUF_HDR_SZ + 7) & ~7u;
}

// bpf_ringbuf_area_alloc(): the data pages come from a memfd mapped twice after the meta page.
bool ringbuf_area_alloc(bpf_ringbuf *rb, u64 data_sz) {
  const size_t total = PAGE_SIZE + 2 * data_sz;
  void *area = mmap(nullptr, total, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (area == MAP_FAILED) return false;
  u8 *base = static_cast<u8 *>(area);
  bool ok = mmap(base, PAGE_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED,
                 -1, 0) != MAP_FAILED;
  int fd = ok ? memfd_create("bpf-ringbuf", MFD_CLOEXEC) : -1;
  ok = fd >= 0 && ftruncate(fd, (off_t)data_sz) == 0;
  for (int copy = 0; ok && copy < 2; copy++)
    ok = mmap(base + PAGE_SIZE + copy * data_sz, data_sz, PROT_READ | PROT_WRITE,
              MAP_SHARED | MAP_FIXED, fd, 0) != MAP_FAILED;
  if (fd >= 0) close(fd);
  if (!ok) {
    munmap(area, total);
    return false;
  }
  *reinterpret_cast<bpf_ringbuf **>(base) = rb;
  rb->base = base;
  rb->data = base + PAGE_SIZE;
  rb->map_len = total;
  rb->mask = data_sz - 1;
  return true;
}

class bpf_ringbuf_map final : public bpf_map {
 public:
  explicit bpf_ringbuf_map(const BpfMapAttr &attr) : bpf_map(attr) {
    init_waitqueue_head(&rb.waitq);
    rb.waitq.name = "bpf_ringbuf";
  }
  ~bpf_ringbuf_map() override {
    if (rb.base) munmap(rb.base, rb.map_len);
  }
  void *map_lookup_elem(const void *) override { return ERR_PTR<void>(-ENOTSUPP); }
  long map_update_elem(const void *, const void *, u64) override { return -ENOTSUPP; }
  long map_delete_elem(const void *) override { return -ENOTSUPP; }
  int map_get_next_key(const void *, void *) override { return -ENOTSUPP; }

  bpf_ringbuf rb;
};

}  // namespace

bpf_ringbuf *bpf_ringbuf_of(bpf_map *map) {
  if (!map || map->map_type != BPF_MAP_TYPE_RINGBUF) return nullptr;
  return &static_cast<bpf_ringbuf_map *>(map)->rb;
}

u32 bpf_ringbuf_record_len(u64 size) { return (u32)((size + BPF_RINGBUF_HDR_SZ + 7) & ~7ull); }

void *__bpf_ringbuf_reserve(bpf_ringbuf *rb, u64 size) {
  if (size > kMaxRecordSz) return nullptr;
  const u32 len = bpf_ringbuf_record_len(size);
  if (len > rb->mask + 1) return nullptr;

  const u64 cons_pos = rb->consumer_pos.load(std::memory_order_acquire);
  unsigned long flags;
  spin_lock_irqsave(&rb->spinlock, flags);
  const u64 prod_pos = rb->producer_pos.load(std::memory_order_relaxed);
  const u64 new_prod_pos = prod_pos + len;
  // Advance pending_pos past the records committed since: the oldest still BUSY one bounds the
  // ring from behind as well (a reservation may not overrun a record being written).
  u64 pend_pos = rb->pending_pos;
  while (pend_pos < prod_pos) {
    auto *h = reinterpret_cast<bpf_ringbuf_hdr *>(rb->data + (pend_pos & rb->mask));
    const u32 hdr_len = std::atomic_ref<u32>(h->len).load(std::memory_order_acquire);
    if (hdr_len & kBusy) break;
    pend_pos += roundup_len(hdr_len);
  }
  rb->pending_pos = pend_pos;
  if (new_prod_pos - cons_pos > rb->mask || new_prod_pos - pend_pos > rb->mask) {
    spin_unlock_irqrestore(&rb->spinlock, flags);
    return nullptr;
  }
  auto *hdr = reinterpret_cast<bpf_ringbuf_hdr *>(rb->data + (prod_pos & rb->mask));
  hdr->pg_off = (u32)(((u8 *)hdr - rb->base) >> PAGE_SHIFT);
  std::atomic_ref<u32>(hdr->len).store((u32)size | kBusy, std::memory_order_relaxed);
  // Pairs with the consumer's acquire of producer_pos: it sees the BUSY header.
  rb->producer_pos.store(new_prod_pos, std::memory_order_release);
  spin_unlock_irqrestore(&rb->spinlock, flags);
  return reinterpret_cast<u8 *>(hdr) + BPF_RINGBUF_HDR_SZ;
}

bpf_ringbuf *bpf_ringbuf_restore_from_rec(void *sample) {
  auto *hdr = reinterpret_cast<bpf_ringbuf_hdr *>(static_cast<u8 *>(sample) - BPF_RINGBUF_HDR_SZ);
  const uintptr_t addr = (uintptr_t)hdr;
  const uintptr_t base = (addr & ~(uintptr_t)(PAGE_SIZE - 1)) - ((uintptr_t)hdr->pg_off << PAGE_SHIFT);
  return *reinterpret_cast<bpf_ringbuf **>(base);
}

void bpf_ringbuf_commit(void *sample, u64 flags, bool discard) {
  auto *hdr = reinterpret_cast<bpf_ringbuf_hdr *>(static_cast<u8 *>(sample) - BPF_RINGBUF_HDR_SZ);
  bpf_ringbuf *rb = bpf_ringbuf_restore_from_rec(sample);
  u32 new_len = hdr->len ^ kBusy;
  if (discard) new_len |= kDiscard;
  // The final length: a full barrier (xchg), pairs with the consumer's acquire of the header.
  std::atomic_ref<u32>(hdr->len).exchange(new_len, std::memory_order_seq_cst);

  // If the consumer caught up and may be waiting for this very record, notify it.
  const u64 rec_pos = (u64)((u8 *)hdr - rb->data);
  const u64 cons_pos = rb->consumer_pos.load(std::memory_order_acquire) & rb->mask;
  bool wake = false;
  if (flags & BPF_RB_FORCE_WAKEUP)
    wake = true;
  else if (cons_pos == rec_pos && !(flags & BPF_RB_NO_WAKEUP))
    wake = true;
  if (wake) {
    rb->wakeups.fetch_add(1, std::memory_order_relaxed);
    wake_up_all(&rb->waitq);
  }
}

u64 bpf_ringbuf_query(bpf_ringbuf *rb, u64 flags) {
  switch (flags) {
    case BPF_RB_AVAIL_DATA:
      return rb->producer_pos.load(std::memory_order_acquire) -
             rb->consumer_pos.load(std::memory_order_acquire);
    case BPF_RB_RING_SIZE:
      return rb->mask + 1;
    case BPF_RB_CONS_POS:
      return rb->consumer_pos.load(std::memory_order_acquire);
    case BPF_RB_PROD_POS:
      return rb->producer_pos.load(std::memory_order_acquire);
    default:
      return 0;
  }
}

u64 bpf_ringbuf_wakeups(bpf_ringbuf *rb) { return rb->wakeups.load(std::memory_order_relaxed); }

namespace emu {

absl::StatusOr<std::unique_ptr<bpf_map>> ringbuf_map_alloc(const BpfMapAttr &attr) {
  const std::string who = "map '" + attr.name + "'";
  const u64 sz = attr.max_entries;
  if ((attr.map_flags & ~(u32)BPF_F_NUMA_NODE) || attr.key_size || attr.value_size ||
      sz == 0 || (sz & (sz - 1)) || (sz % PAGE_SIZE))
    return bpf_errno_status(-EINVAL, who + ": ring buffer needs no key/value and a size that is a "
                                           "power of 2 and a multiple of the page size, not " +
                                           std::to_string(sz));
  if (sz > kMaxDataSz) return bpf_errno_status(-E2BIG, who + ": ring buffer too large");
  auto map = std::make_unique<bpf_ringbuf_map>(attr);
  if (!ringbuf_area_alloc(&map->rb, sz))
    return bpf_errno_status(-ENOMEM, who + ": cannot map the ring buffer");
  return std::unique_ptr<bpf_map>(std::move(map));
}

int RingBuffer::add(bpf_map *map, SampleFn fn) {
  bpf_ringbuf *rb = bpf_ringbuf_of(map);
  if (!rb || !fn) return -EINVAL;
  rings_.push_back({rb, std::move(fn)});
  return 0;
}

// ringbuf_process_ring(): consume committed records from consumer_pos, stop at a BUSY one.
int RingBuffer::process_ring(Ring &r) {
  bpf_ringbuf *rb = r.rb;
  int cnt = 0;
  u64 cons_pos = rb->consumer_pos.load(std::memory_order_acquire);
  bool got_new_data;
  do {
    got_new_data = false;
    const u64 prod_pos = rb->producer_pos.load(std::memory_order_acquire);
    while (cons_pos < prod_pos) {
      auto *hdr = reinterpret_cast<bpf_ringbuf_hdr *>(rb->data + (cons_pos & rb->mask));
      const u32 len = std::atomic_ref<u32>(hdr->len).load(std::memory_order_acquire);
      if (len & kBusy) return cnt;  // not committed yet: records stay in order
      got_new_data = true;
      cons_pos += roundup_len(len);
      if (!(len & kDiscard)) {
        int err = r.fn(reinterpret_cast<u8 *>(hdr) + BPF_RINGBUF_HDR_SZ, len & ~(kBusy | kDiscard));
        if (err < 0) {
          rb->consumer_pos.store(cons_pos, std::memory_order_release);
          return err;
        }
        cnt++;
      }
      // Pairs with the producer's acquire of consumer_pos: the space is free again.
      rb->consumer_pos.store(cons_pos, std::memory_order_release);
    }
  } while (got_new_data);
  return cnt;
}

int RingBuffer::consume() {
  long total = 0;
  for (Ring &r : rings_) {
    int n = process_ring(r);
    if (n < 0) return n;
    total += n;
  }
  return total > INT_MAX ? INT_MAX : (int)total;
}

bool RingBuffer::any_data() const {
  for (const Ring &r : rings_)
    if (bpf_ringbuf_query(r.rb, BPF_RB_AVAIL_DATA)) return true;
  return false;
}

int RingBuffer::poll(int timeout_ms) {
  if (timeout_ms != 0 && !any_data()) {
    if (!current) return -EINVAL;
    long left = timeout_ms < 0 ? MAX_SCHEDULE_TIMEOUT : (long)msecs_to_jiffies((unsigned)timeout_ms);
    if (timeout_ms > 0 && left == 0) left = 1;
    std::vector<wait_queue_entry> entries(rings_.size());
    for (;;) {
      for (size_t i = 0; i < rings_.size(); i++)
        prepare_to_wait(&rings_[i].rb->waitq, &entries[i], TASK_INTERRUPTIBLE);
      if (any_data() || left == 0) break;
      if (signal_pending(current)) break;
      emu::set_wait_reason("ring_buffer__poll");
      left = schedule_timeout(left);
    }
    for (size_t i = 0; i < rings_.size(); i++) finish_wait(&rings_[i].rb->waitq, &entries[i]);
    if (!any_data()) return signal_pending(current) ? -EINTR : 0;
  }
  return consume();
}

}  // namespace emu
}  // namespace umemcg
