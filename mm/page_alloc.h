// SPDX-License-Identifier: GPL-2.0-only
// mm/page_alloc.h: the machine's RAM: every folio the memory model allocates takes its pages
// from it, and an allocation that finds none free enters global direct reclaim and then the
// global OOM killer.
//
// The machine boots with memcg_boot_params::totalram_pages pages (`umemcg sh --memory`) in one
// zone whose watermarks are computed as the kernel computes them at boot
// (init_per_zone_wmark_min): min_free_kbytes = int_sqrt(RAM in KiB * 16) clamped to
// [128, 262144], WMARK_MIN = min_free_kbytes in pages, and the distance to WMARK_LOW, on to
// WMARK_HIGH and on to WMARK_PROMO max(WMARK_MIN / 4, RAM * watermark_scale_factor / 10000)
// with the factor at its default, 10.
//
// The sysctls /proc/sys/vm/min_free_kbytes (0..INT_MAX) and /proc/sys/vm/watermark_scale_factor
// (1..3000) are page_alloc_sysctl_table (kernel/sysctl.h: proc_dointvec_minmax, -EINVAL out of
// range): a write recomputes the watermarks (setup_per_zone_wmarks), which every later
// allocation, kswapd and direct reclaim follow; a min_free_kbytes written is kept as
// user_min_free_kbytes, below which a recalculation (init_per_zone_wmark_min) does not go.
// Both are back at their boot values on every boot of the machine.
//
// folio_alloc() takes a folio's pages from the free count (NR_FREE_PAGES) while the free pages
// stay above the low watermark (get_page_from_freelist with ALLOC_WMARK_LOW,
// zone_watermark_fast). Otherwise __alloc_pages_slowpath wakes kswapd (wakeup_kswapd,
// mm/vmscan.h) and retries at the min watermark (lower for __GFP_HIGH and non-blocking
// callers, none for a PF_MEMALLOC task or __GFP_MEMALLOC, half of it for an OOM victim:
// __gfp_pfmemalloc_flags). Below that it enters direct reclaim over every memcg
// (try_to_free_pages), retried while it makes progress or reclaimable pages would lift the free
// count above the min watermark (should_reclaim_retry, at most MAX_RECLAIM_RETRIES rounds
// without progress), then out_of_memory() with the whole machine as the domain (mm/oom_kill.h)
// under oom_lock after one last try at the high watermark, retried as long as the OOM killer
// makes progress. An OOM victim's allocation that fails even with its reserves fails once the
// killer has run. Freed folios give their pages back (free_unref_folios). Every page taken
// counts PGALLOC_NORMAL and every page given back PGFREE (mm/vmstat.h).
//
// Mirrors: mm/page_alloc.c (__alloc_pages, __alloc_pages_slowpath, get_page_from_freelist,
//   zone_watermark_fast, __zone_watermark_ok, gfp_to_alloc_flags, __gfp_pfmemalloc_flags,
//   wake_all_kswapds, __alloc_pages_direct_reclaim, should_reclaim_retry,
//   __alloc_pages_may_oom, free_unref_folios, nr_free_pages, calculate_min_free_kbytes,
//   __setup_per_zone_wmarks, setup_per_zone_wmarks, init_per_zone_wmark_min,
//   min_free_kbytes_sysctl_handler,
//   watermark_scale_factor_sysctl_handler, page_alloc_sysctl_table), mm/internal.h (ALLOC_*
//   flags), mm/show_mem.c (si_meminfo), mm/swap.c (folio_alloc's caller side) (Linux 6.19)
// Emulation: one node and one zone (ZONE_NORMAL: all of the RAM is lowmem, no lowmem_reserve);
//   no watermark boosting, highatomic reserves, CMA, compaction (every folio here is order 0)
//   or per-CPU page lists: the free count is one atomic counter, taken with a
//   compare-and-exchange that checks the watermark, so the fast path costs one atomic operation
//   per folio (and a per-CPU add for PGALLOC_NORMAL, mm/vmstat.h). A write of a watermark
//   sysctl neither refreshes per-CPU vmstat thresholds nor page lists (there are none) and
//   wakes nobody: kswapd follows the new watermarks from the next allocation that wakes it.
// Emulation: kernel memory charged to memcgs takes RAM for the slab objects charged through the
//   obj stock (mm/obj_cgroup.h: whole pages, as they are charged); a kmem page charged with
//   __memcg_kmem_charge_page is the caller's folio, whose pages its allocation took. Kernel
//   memory of the root (no objcg) and socket memory take none.
// Emulation: when the global OOM killer finds no eligible process the kernel panics ("System
//   is deadlocked on memory"); here the allocation fails instead, and an allocating process is
//   sent SIGKILL so that its fault cannot retry for ever (pagefault_out_of_memory retries).
#pragma once

#include "mm/memcontrol.h"
#include "mm/mm_types.h"

namespace umemcg {

// The machine's RAM in pages when memcg_boot_params::totalram_pages does not say (4 GiB, the
// default of `umemcg sh --memory`).
inline constexpr unsigned long DEFAULT_TOTALRAM_PAGES = (4UL << 30) >> PAGE_SHIFT;
// should_reclaim_retry() allows MAX_RECLAIM_RETRIES (mm/memcontrol.h) rounds of direct reclaim
// without progress before the OOM killer.

// enum zone_watermarks.
enum zone_watermarks { WMARK_MIN, WMARK_LOW, WMARK_HIGH, WMARK_PROMO, NR_WMARK };

// The allocation flags of mm/internal.h: the watermark to check (ALLOC_WMARK_MASK), or none,
// and the reserves the caller may dip into below it.
inline constexpr unsigned int ALLOC_WMARK_MIN = WMARK_MIN;
inline constexpr unsigned int ALLOC_WMARK_LOW = WMARK_LOW;
inline constexpr unsigned int ALLOC_WMARK_HIGH = WMARK_HIGH;
inline constexpr unsigned int ALLOC_NO_WATERMARKS = 0x04;
inline constexpr unsigned int ALLOC_WMARK_MASK = ALLOC_NO_WATERMARKS - 1;
inline constexpr unsigned int ALLOC_OOM = 0x08;
inline constexpr unsigned int ALLOC_NON_BLOCK = 0x10;
inline constexpr unsigned int ALLOC_MIN_RESERVE = 0x20;
inline constexpr unsigned int ALLOC_CPUSET = 0x40;
inline constexpr unsigned int ALLOC_HIGHATOMIC = 0x200;
inline constexpr unsigned int ALLOC_KSWAPD = 0x800;
inline constexpr unsigned int ALLOC_RESERVES =
    ALLOC_NON_BLOCK | ALLOC_MIN_RESERVE | ALLOC_HIGHATOMIC | ALLOC_OOM;

// The default of vm.watermark_scale_factor (in 1/10000 of the zone).
inline constexpr unsigned long WATERMARK_SCALE_FACTOR_DEFAULT = 10;

// Boot and shutdown of the machine's RAM (called by memcg boot and its shutdown hook).
void page_alloc_init(unsigned long totalram_pages);
void page_alloc_shutdown();

// totalram_pages(): the machine's RAM in pages.
unsigned long totalram_pages();
// nr_free_pages(): global_zone_page_state(NR_FREE_PAGES), the pages no folio holds.
unsigned long nr_free_pages();

/**
 * init_per_zone_wmark_min - recompute min_free_kbytes from the RAM and the watermarks from it
 *
 * What boot does and the kernel redoes when memory is onlined: int_sqrt(RAM in KiB * 16)
 * clamped to [128, 262144], unless a write of vm.min_free_kbytes since boot asked for at least
 * that much (user_min_free_kbytes is kept), then setup_per_zone_wmarks().
 * Context: any; does not sleep.
 */
void init_per_zone_wmark_min();
// vm.min_free_kbytes: as init_per_zone_wmark_min() set it, or as last written.
int min_free_kbytes();
// vm.watermark_scale_factor (WATERMARK_SCALE_FACTOR_DEFAULT at boot).
int watermark_scale_factor();
// The zone's watermarks in pages (min_wmark_pages() and friends).
unsigned long min_wmark_pages();
unsigned long low_wmark_pages();
unsigned long high_wmark_pages();
// zone_managed_pages() of the one zone: the machine's RAM.
unsigned long zone_managed_pages();

/**
 * zone_watermark_ok - whether @free_pages free pages are above @mark for an allocation
 * @order: allocation order
 * @mark: watermark in pages
 * @alloc_flags: ALLOC_* flags; the reserves they grant lower @mark (__zone_watermark_ok)
 * @free_pages: the free pages to judge (nr_free_pages(), or what reclaim could make free)
 */
bool __zone_watermark_ok(unsigned int order, unsigned long mark, unsigned int alloc_flags,
                         long free_pages);
// zone_watermark_ok_safe(): __zone_watermark_ok() on the current free count (exact here).
bool zone_watermark_ok_safe(unsigned int order, unsigned long mark);

/**
 * __alloc_pages - take (1 << @order) pages of the machine's RAM
 * @gfp_mask: allocation context; without __GFP_DIRECT_RECLAIM only the free pages are tried
 *   (down to the reserves the context grants), with __GFP_KSWAPD_RECLAIM kswapd is woken
 * @order: allocation order
 *
 * The fast path takes free pages above the low watermark; the slow path wakes kswapd, tries at
 * the min watermark, reclaims globally, then runs the global OOM killer, and retries (see the
 * banner). Returns true with the pages taken, false on failure.
 * Context: task context; may sleep when @gfp_mask allows blocking.
 */
bool __alloc_pages(gfp_t gfp_mask, unsigned int order);
// Gives (1 << @order) pages back to the free count (__free_pages without the struct page).
void __free_pages(unsigned int order);

/**
 * folio_alloc - a new folio with one reference (the caller's), not charged, on no list
 * @gfp: allocation context (GFP_KERNEL for page faults and page-cache reads)
 *
 * Returns nullptr when the machine's RAM is exhausted and neither reclaim nor the OOM killer
 * found any (the caller fails with VM_FAULT_OOM or -ENOMEM).
 */
folio *folio_alloc(gfp_t gfp);
// Frees folios whose last reference is gone and that are off every list and uncharged: their
// pages go back to the machine's RAM.
void free_unref_folios(folio **folios, unsigned int nr);

}  // namespace umemcg
