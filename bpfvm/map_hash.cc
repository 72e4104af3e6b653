// SPDX-License-Identifier: GPL-2.0-only
// bpfvm/map_hash.cc: BPF_MAP_TYPE_HASH, BPF_MAP_TYPE_PERCPU_HASH and BPF_MAP_TYPE_LRU_HASH.
//
// A power-of-2 array of buckets, each an RCU list of elements (key, then the value or the
// per-CPU values) with a spinlock for writers. Readers (lookups, get_next_key) never lock: they
// run inside an RCU read-side section or a sleepable program run, and an element is freed only
// after both grace periods (bpf_call_rcu_both()), so a reader that found an element keeps reading
// its (old) contents while a writer replaces or deletes it.
//
// Update: a new element is linked at the head of its bucket before the old one is unlinked, so a
// concurrent lookup finds one of the two (the kernel's "add new element to the head of the list,
// so that concurrent search will find it before old elem"). Per-CPU values and BPF_F_LOCK
// updates are done in place. The map holds at most max_entries elements: inserting a new key
// into a full map fails with -E2BIG, replacing an existing one never does.
//
// LRU: a lookup by a program sets the element's reference bit. When a new element is needed and
// the map is full, the least recently used element is evicted: the list is scanned from its cold
// end, elements with the reference bit get it cleared and a second chance at the hot end (the
// kernel's inactive-list rotation), the first one without it is deleted. As in the kernel, an
// LRU update takes its new element (evicting if full) before looking at the key, so updating an
// existing key of a full map may also evict another element.
//
// Mirrors: kernel/bpf/hashtab.c (htab_map_alloc_check, htab_map_alloc, lookup_elem_raw,
//          htab_map_lookup_elem, htab_lru_map_lookup_elem, htab_map_update_elem,
//          htab_lru_map_update_elem, htab_percpu_map_update_elem, htab_map_delete_elem,
//          htab_map_get_next_key, pcpu_init_value, bpf_percpu_hash_copy,
//          bpf_for_each_hash_elem), kernel/bpf/bpf_lru_list.c
//          (the reference bit and rotation) (Linux 6.19)
// Emulation:
//  - one LRU list per map under one lock (the kernel has per-CPU local free lists that evict in
//    batches, so it may evict before the map is exactly full); BPF_F_NO_COMMON_LRU is accepted
//    and behaves like the common LRU.
//  - the hash is a fixed-seed function (as with BPF_F_ZERO_SEED), so iteration order is
//    deterministic; elements are allocated on demand whether or not BPF_F_NO_PREALLOC is set.
//  - no per-CPU "map_locked" recursion guard (-EBUSY): programs cannot re-enter here.
#include <atomic>
#include <cstring>

#include "bpfvm/insn.h"
#include "bpfvm/bpf_async.h"
#include "bpfvm/map_internal.h"
#include "shim/errno.h"
#include "shim/smp.h"
#include "shim/spinlock.h"

namespace umemcg::emu {

namespace {

constexpr u32 kAccessMask = BPF_F_RDONLY | BPF_F_WRONLY | BPF_F_RDONLY_PROG | BPF_F_WRONLY_PROG;
constexpr u32 kHtabCreateFlags =
    BPF_F_NO_PREALLOC | BPF_F_NO_COMMON_LRU | BPF_F_NUMA_NODE | kAccessMask | BPF_F_ZERO_SEED;
constexpr u32 kPcpuMinUnitSize = 32 << 10;
constexpr u64 kKmallocMaxSize = 1ull << 22;  // KMALLOC_MAX_SIZE (x86-64, SLUB: order 10 pages)

struct htab_elem {
  std::atomic<htab_elem *> next{nullptr};
  rcu_head rcu;
  u32 hash = 0;
  std::atomic<u8> lru_ref{0};  // LRU: referenced since the last rotation
  bool on_lru = false;        // LRU: guarded by the map's lru_lock
  htab_elem *lru_prev = nullptr, *lru_next = nullptr;
  // Followed by the key (rounded up to 8) and the value, or the per-CPU values.
  u8 *key() { return reinterpret_cast<u8 *>(this + 1); }
};
static_assert(sizeof(htab_elem) % 8 == 0);

struct bucket {
  std::atomic<htab_elem *> head{nullptr};
  spinlock_t lock;
};

// Fixed-seed 64-bit mixing hash over the key bytes.
u32 htab_map_hash(const void *key, u32 len) {
  const u8 *p = static_cast<const u8 *>(key);
  u64 h = 0x9e3779b97f4a7c15ull ^ len;
  while (len >= 8) {
    u64 w;
    std::memcpy(&w, p, 8);
    h = (h ^ w) * 0xff51afd7ed558ccdull;
    h ^= h >> 32;
    p += 8;
    len -= 8;
  }
  u64 w = 0;
  std::memcpy(&w, p, len);
  h = (h ^ w) * 0xc4ceb9fe1a85ec53ull;
  h ^= h >> 29;
  return (u32)h ^ (u32)(h >> 32);
}

bool flags_access_ok(u32 f) {
  return !((f & BPF_F_RDONLY) && (f & BPF_F_WRONLY)) &&
         !((f & BPF_F_RDONLY_PROG) && (f & BPF_F_WRONLY_PROG));
}

class bpf_htab final : public bpf_map {
 public:
  bpf_htab(const BpfMapAttr &attr, u32 n_buckets, u32 ncpus)
      : bpf_map(attr),
        n_buckets_(n_buckets),
        ncpus_(ncpus),
        key_round_(round_up8(attr.key_size)),
        value_stride_(round_up8(attr.value_size)),
        buckets_(new bucket[n_buckets]) {}

  ~bpf_htab() override {
    // No async callback may run on the elements any more.
    bpf_map_release_async(this);
    // No reader is left: free every element now (pending RCU frees own their elements).
    for (u32 i = 0; i < n_buckets_; i++) {
      htab_elem *l = buckets_[i].head.load(std::memory_order_relaxed);
      while (l) {
        htab_elem *n = l->next.load(std::memory_order_relaxed);
        free_elem_now(l);
        l = n;
      }
    }
  }

  // The element's key sits right before its value (kernel: value - round_up(key_size, 8)).
  const void *map_key_of_value(void *value, u32 *) override {
    if (percpu()) return nullptr;
    return static_cast<u8 *>(value) - key_round_;
  }

  void map_for_each_value(void (*fn)(bpf_map *, void *)) override {
    if (percpu()) return;
    for (u32 i = 0; i < n_buckets_; i++) {
      spin_lock(&buckets_[i].lock);
      for (htab_elem *l = buckets_[i].head.load(std::memory_order_relaxed); l;
           l = l->next.load(std::memory_order_relaxed))
        fn(this, value_of(l, 0));
      spin_unlock(&buckets_[i].lock);
    }
  }

  // bpf_for_each_hash_elem(): bucket by bucket, each under RCU; an element's successor is
  // read before its callback runs (the callback may delete it).
  long map_for_each_callback(for_each_fn fn, void *arg, u64 flags) override {
    if (flags) return -EINVAL;
    const u32 cpu = percpu() ? (u32)smp_processor_id() : 0;
    long num_elems = 0;
    for (u32 i = 0; i < n_buckets_; i++) {
      rcu_read_guard g;
      htab_elem *l = buckets_[i].head.load(std::memory_order_acquire);
      while (l) {
        htab_elem *n = l->next.load(std::memory_order_acquire);
        num_elems++;
        if (fn(arg, l->key(), value_of(l, cpu))) return num_elems;  // 1: stop
        l = n;
      }
    }
    return num_elems;
  }

  void *map_lookup_elem(const void *key) override {
    htab_elem *l = lookup(key);
    if (!l) return nullptr;
    if (lru()) {
      // bpf_lru_node_set_ref(): only written when clear, to keep the line clean.
      if (!l->lru_ref.load(std::memory_order_relaxed))
        l->lru_ref.store(1, std::memory_order_relaxed);
    }
    return value_of(l, percpu() ? (u32)smp_processor_id() : 0);
  }

  long map_update_elem(const void *key, const void *value, u64 flags) override {
    if (percpu()) return percpu_update(key, value, flags, false);
    if (lru()) return lru_update(key, value, flags);
    return update(key, value, flags);
  }

  long map_delete_elem(const void *key) override {
    const u32 hash = htab_map_hash(key, key_size);
    bucket &b = select_bucket(hash);
    spin_lock(&b.lock);
    htab_elem *l = lookup_locked(b, hash, key);
    if (!l) {
      spin_unlock(&b.lock);
      return -ENOENT;
    }
    unlink(b, l);
    spin_unlock(&b.lock);
    if (lru()) lru_remove(l);
    count_.fetch_sub(1, std::memory_order_relaxed);
    free_elem_rcu(l);
    return 0;
  }

  int map_get_next_key(const void *key, void *next_key) override {
    u32 i = 0;
    if (key) {
      const u32 hash = htab_map_hash(key, key_size);
      htab_elem *l = lookup_in(select_bucket(hash), hash, key);
      if (l) {
        if (htab_elem *n = l->next.load(std::memory_order_acquire)) {
          std::memcpy(next_key, n->key(), key_size);
          return 0;
        }
        i = (hash & (n_buckets_ - 1)) + 1;  // no more in this bucket: go to the next one
      }
      // A key that is not found restarts from the first element.
    }
    for (; i < n_buckets_; i++) {
      if (htab_elem *l = buckets_[i].head.load(std::memory_order_acquire)) {
        std::memcpy(next_key, l->key(), key_size);
        return 0;
      }
    }
    return -ENOENT;
  }

  int sys_lookup_elem(const void *key, void *value, u64 flags) override {
    rcu_read_guard g;
    // A user-space lookup does not mark an LRU element referenced (htab_lru_map_lookup_elem_sys).
    htab_elem *l = lookup(key);
    if (!l) return -ENOENT;
    if (percpu()) {
      u8 *out = static_cast<u8 *>(value);
      for (u32 cpu = 0; cpu < ncpus_; cpu++, out += value_stride_) {
        std::memcpy(out, value_of(l, cpu), value_size);
        std::memset(out + value_size, 0, value_stride_ - value_size);
      }
      return 0;
    }
    if (flags & BPF_F_LOCK)
      copy_map_value_locked(this, value, value_of(l, 0), true);
    else
      copy_map_value(this, value, value_of(l, 0));
    check_and_init_map_value(this, value);
    return 0;
  }

  int sys_update_elem(const void *key, const void *value, u64 flags) override {
    rcu_read_guard g;
    if (percpu()) return (int)percpu_update(key, value, flags, true);
    return (int)map_update_elem(key, value, flags);
  }

  u32 count() const { return count_.load(std::memory_order_relaxed); }

 private:
  bool percpu() const { return map_type == BPF_MAP_TYPE_PERCPU_HASH; }
  bool lru() const { return map_type == BPF_MAP_TYPE_LRU_HASH; }
  bucket &select_bucket(u32 hash) { return buckets_[hash & (n_buckets_ - 1)]; }
  u8 *value_of(htab_elem *l, u32 cpu) { return l->key() + key_round_ + (u64)cpu * value_stride_; }

  htab_elem *lookup_in(bucket &b, u32 hash, const void *key) {
    for (htab_elem *l = b.head.load(std::memory_order_acquire); l;
         l = l->next.load(std::memory_order_acquire))
      if (l->hash == hash && !std::memcmp(l->key(), key, key_size)) return l;
    return nullptr;
  }
  htab_elem *lookup(const void *key) {
    const u32 hash = htab_map_hash(key, key_size);
    return lookup_in(select_bucket(hash), hash, key);
  }
  htab_elem *lookup_locked(bucket &b, u32 hash, const void *key) { return lookup_in(b, hash, key); }

  // check_flags(): BPF_NOEXIST needs no element, BPF_EXIST needs one.
  static int check_flags(const htab_elem *old, u64 flags) {
    if (old && (flags & ~(u64)BPF_F_LOCK) == BPF_NOEXIST) return -EEXIST;
    if (!old && (flags & ~(u64)BPF_F_LOCK) == BPF_EXIST) return -ENOENT;
    return 0;
  }

  htab_elem *alloc_raw() {
    const size_t sz = sizeof(htab_elem) + key_round_ + (u64)value_stride_ * ncpus_;
    void *mem = ::operator new(sz);
    std::memset(mem, 0, sz);
    return new (mem) htab_elem();
  }
  static void free_elem_now(htab_elem *l) {
    l->~htab_elem();
    ::operator delete(l);
  }
  static void free_elem_cb(rcu_head *head) {
    free_elem_now(reinterpret_cast<htab_elem *>(reinterpret_cast<u8 *>(head) -
                                                offsetof(htab_elem, rcu)));
  }
  // An unlinked element: its async objects are cancelled and freed at once (check_and_free_fields),
  // its memory after the grace periods.
  void free_elem_rcu(htab_elem *l) {
    if (!percpu()) bpf_obj_free_fields(this, value_of(l, 0));
    bpf_call_rcu_both(&l->rcu, free_elem_cb);
  }

  // Reserves room for one more element: -E2BIG when the map holds max_entries.
  bool reserve_slot() {
    if (count_.fetch_add(1, std::memory_order_relaxed) < max_entries) return true;
    count_.fetch_sub(1, std::memory_order_relaxed);
    return false;
  }

  // Writer side, with the bucket lock held: readers see either the old chain or the new head.
  void link_head(bucket &b, htab_elem *l) {
    l->next.store(b.head.load(std::memory_order_relaxed), std::memory_order_relaxed);
    b.head.store(l, std::memory_order_release);  // publishes the element's contents
  }
  void unlink(bucket &b, htab_elem *l) {
    std::atomic<htab_elem *> *pp = &b.head;
    for (htab_elem *c = pp->load(std::memory_order_relaxed); c;
         c = pp->load(std::memory_order_relaxed)) {
      if (c == l) {
        // The unlinked element keeps its next pointer: a reader standing on it continues.
        pp->store(l->next.load(std::memory_order_relaxed), std::memory_order_release);
        return;
      }
      pp = &c->next;
    }
  }

  htab_elem *new_elem(const void *key, u32 hash) {
    htab_elem *l = alloc_raw();
    std::memcpy(l->key(), key, key_size);
    l->hash = hash;
    return l;
  }

  long update(const void *key, const void *value, u64 flags) {
    if ((flags & ~(u64)BPF_F_LOCK) > BPF_EXIST) return -EINVAL;
    const u32 hash = htab_map_hash(key, key_size);
    bucket &b = select_bucket(hash);
    if (flags & BPF_F_LOCK) {
      if (spin_lock_off < 0) return -EINVAL;
      // Without the bucket lock: update an existing element in place, under its value lock.
      htab_elem *old = lookup_in(b, hash, key);
      if (int ret = check_flags(old, flags)) return ret;
      if (old) {
        copy_map_value_locked(this, value_of(old, 0), value, false);
        return 0;
      }
    }
    spin_lock(&b.lock);
    htab_elem *old = lookup_locked(b, hash, key);
    if (int ret = check_flags(old, flags)) {
      spin_unlock(&b.lock);
      return ret;
    }
    if (old && (flags & BPF_F_LOCK)) {
      // Found under the bucket lock after the lock-free look-up missed it.
      copy_map_value_locked(this, value_of(old, 0), value, false);
      spin_unlock(&b.lock);
      return 0;
    }
    if (!old && !reserve_slot()) {
      spin_unlock(&b.lock);
      return -E2BIG;
    }
    htab_elem *l = new_elem(key, hash);
    copy_map_value(this, value_of(l, 0), value);
    link_head(b, l);
    if (old) unlink(b, old);
    spin_unlock(&b.lock);
    if (old) free_elem_rcu(old);
    return 0;
  }

  // onallcpus: the user side gives every vCPU's value; the program side writes this vCPU's copy
  // of an existing element in place, or this vCPU's copy of a new (otherwise zeroed) one.
  long percpu_update(const void *key, const void *value, u64 flags, bool onallcpus) {
    if (flags > BPF_EXIST) return -EINVAL;
    const u32 hash = htab_map_hash(key, key_size);
    bucket &b = select_bucket(hash);
    spin_lock(&b.lock);
    htab_elem *l = lookup_locked(b, hash, key);
    if (int ret = check_flags(l, flags)) {
      spin_unlock(&b.lock);
      return ret;
    }
    const bool fresh = !l;
    if (fresh) {
      if (!reserve_slot()) {
        spin_unlock(&b.lock);
        return -E2BIG;
      }
      l = new_elem(key, hash);
    }
    const u8 *in = static_cast<const u8 *>(value);
    if (onallcpus) {
      for (u32 cpu = 0; cpu < ncpus_; cpu++) std::memcpy(value_of(l, cpu), in + cpu * value_stride_, value_size);
    } else {
      std::memcpy(value_of(l, (u32)smp_processor_id()), in, value_size);
    }
    if (fresh) link_head(b, l);
    spin_unlock(&b.lock);
    return 0;
  }

  long lru_update(const void *key, const void *value, u64 flags) {
    if (flags > BPF_EXIST) return -EINVAL;  // no BPF_F_LOCK for LRU maps
    const u32 hash = htab_map_hash(key, key_size);
    // prealloc_lru_pop(): take a new element first, evicting the coldest one if full.
    while (!reserve_slot()) {
      if (!lru_evict_one()) return -ENOMEM;
    }
    htab_elem *l = new_elem(key, hash);
    copy_map_value(this, value_of(l, 0), value);
    bucket &b = select_bucket(hash);
    spin_lock(&b.lock);
    htab_elem *old = lookup_locked(b, hash, key);
    if (int ret = check_flags(old, flags)) {
      spin_unlock(&b.lock);
      count_.fetch_sub(1, std::memory_order_relaxed);
      free_elem_now(l);  // never published
      return ret;
    }
    link_head(b, l);
    lru_add_hot(l);
    if (old) unlink(b, old);
    spin_unlock(&b.lock);
    if (old) {
      lru_remove(old);
      count_.fetch_sub(1, std::memory_order_relaxed);
      free_elem_rcu(old);
    }
    return 0;
  }

  // --- LRU list: hot end at lru_head_, cold end at lru_tail_, guarded by lru_lock_ ---------------
  void lru_add_hot(htab_elem *l) {
    spin_lock(&lru_lock_);
    lru_push_head(l);
    spin_unlock(&lru_lock_);
  }
  void lru_push_head(htab_elem *l) {
    l->lru_prev = nullptr;
    l->lru_next = lru_head_;
    if (lru_head_) lru_head_->lru_prev = l;
    lru_head_ = l;
    if (!lru_tail_) lru_tail_ = l;
    l->on_lru = true;
  }
  void lru_unlink(htab_elem *l) {
    if (l->lru_prev) l->lru_prev->lru_next = l->lru_next; else lru_head_ = l->lru_next;
    if (l->lru_next) l->lru_next->lru_prev = l->lru_prev; else lru_tail_ = l->lru_prev;
    l->lru_prev = l->lru_next = nullptr;
    l->on_lru = false;
  }
  void lru_remove(htab_elem *l) {
    spin_lock(&lru_lock_);
    if (l->on_lru) lru_unlink(l);
    spin_unlock(&lru_lock_);
  }
  // Picks the coldest unreferenced element and deletes it. False if the list is empty.
  bool lru_evict_one() {
    for (;;) {
      spin_lock(&lru_lock_);
      htab_elem *victim = nullptr;
      // Every referenced element gets one second chance: at most one pass over the list.
      for (u32 scanned = 0, n = count_.load(std::memory_order_relaxed) + 1; lru_tail_ && scanned <= n;
           scanned++) {
        htab_elem *c = lru_tail_;
        lru_unlink(c);
        if (c->lru_ref.load(std::memory_order_relaxed)) {
          c->lru_ref.store(0, std::memory_order_relaxed);
          lru_push_head(c);
          continue;
        }
        victim = c;
        break;
      }
      if (!victim && lru_tail_) {  // everything was referenced: take the coldest anyway
        victim = lru_tail_;
        lru_unlink(victim);
      }
      spin_unlock(&lru_lock_);
      if (!victim) return false;
      // htab_lru_map_delete_node(): unlink it from its bucket unless a delete won the race.
      bucket &b = select_bucket(victim->hash);
      spin_lock(&b.lock);
      bool linked = false;
      for (htab_elem *c = b.head.load(std::memory_order_relaxed); c;
           c = c->next.load(std::memory_order_relaxed))
        if (c == victim) linked = true;
      if (linked) unlink(b, victim);
      spin_unlock(&b.lock);
      if (!linked) continue;  // its deleter frees it
      count_.fetch_sub(1, std::memory_order_relaxed);
      free_elem_rcu(victim);
      return true;
    }
  }

  const u32 n_buckets_;
  const u32 ncpus_;
  const u32 key_round_;
  const u32 value_stride_;
  std::unique_ptr<bucket[]> buckets_;
  std::atomic<u32> count_{0};
  spinlock_t lru_lock_;
  htab_elem *lru_head_ = nullptr;  // guarded by lru_lock_
  htab_elem *lru_tail_ = nullptr;  // guarded by lru_lock_
};

}  // namespace

absl::StatusOr<std::unique_ptr<bpf_map>> htab_map_alloc(const BpfMapAttr &attr) {
  const std::string who = "map '" + attr.name + "'";
  const bool percpu = attr.map_type == BPF_MAP_TYPE_PERCPU_HASH;
  const bool lru = attr.map_type == BPF_MAP_TYPE_LRU_HASH;
  const bool prealloc = !(attr.map_flags & BPF_F_NO_PREALLOC);
  if ((attr.map_flags & ~kHtabCreateFlags) || !flags_access_ok(attr.map_flags))
    return bpf_errno_status(-EINVAL, who + ": invalid hash map flags");
  if (!lru && (attr.map_flags & BPF_F_NO_COMMON_LRU))
    return bpf_errno_status(-EINVAL, who + ": BPF_F_NO_COMMON_LRU without an LRU map");
  if (lru && !prealloc)
    return bpf_errno_status(-ENOTSUPP, who + ": LRU maps must be preallocated");
  if (attr.max_entries == 0 || attr.key_size == 0 || attr.value_size == 0)
    return bpf_errno_status(-EINVAL, who + ": hash needs key_size, value_size and max_entries > 0");
  if (attr.key_size > MAX_BPF_STACK)
    return bpf_errno_status(-E2BIG, who + ": key larger than the BPF stack");
  if ((u64)attr.value_size >= kKmallocMaxSize - MAX_BPF_STACK - sizeof(htab_elem))
    return bpf_errno_status(-E2BIG, who + ": value too large");
  if (percpu && round_up8(attr.value_size) > kPcpuMinUnitSize)
    return bpf_errno_status(-E2BIG, who + ": per-CPU value larger than 32 KiB");
  u64 n_buckets = 1;
  while (n_buckets < attr.max_entries) n_buckets <<= 1;  // roundup_pow_of_two
  if (n_buckets > UINT32_MAX / sizeof(bucket))
    return bpf_errno_status(-E2BIG, who + ": too many buckets");
  u32 ncpus = 1;
  if (percpu) {
    if (absl::Status s = need_cpus(attr); !s.ok()) return s;
    ncpus = nr_cpu_ids;
  }
  return std::unique_ptr<bpf_map>(new bpf_htab(attr, (u32)n_buckets, ncpus));
}

}  // namespace umemcg::emu
