// SPDX-License-Identifier: GPL-2.0-only
// shim/gfp.h: allocation flags and the predicates the charge path asks of them.
//
// Mirrors: include/linux/gfp_types.h, include/linux/gfp.h (Linux 6.19). Bit order as in 6.19.
#pragma once

#include "shim/types.h"

namespace umemcg {

enum : unsigned {
  ___GFP_DMA_BIT, ___GFP_HIGHMEM_BIT, ___GFP_DMA32_BIT, ___GFP_MOVABLE_BIT,
  ___GFP_RECLAIMABLE_BIT, ___GFP_HIGH_BIT, ___GFP_IO_BIT, ___GFP_FS_BIT, ___GFP_ZERO_BIT,
  ___GFP_UNUSED_BIT, ___GFP_DIRECT_RECLAIM_BIT, ___GFP_KSWAPD_RECLAIM_BIT, ___GFP_WRITE_BIT,
  ___GFP_NOWARN_BIT, ___GFP_RETRY_MAYFAIL_BIT, ___GFP_NOFAIL_BIT, ___GFP_NORETRY_BIT,
  ___GFP_MEMALLOC_BIT, ___GFP_COMP_BIT, ___GFP_NOMEMALLOC_BIT, ___GFP_HARDWALL_BIT,
  ___GFP_THISNODE_BIT, ___GFP_ACCOUNT_BIT, ___GFP_ZEROTAGS_BIT,
};

inline constexpr gfp_t __GFP_DMA = 1u << ___GFP_DMA_BIT;
inline constexpr gfp_t __GFP_HIGHMEM = 1u << ___GFP_HIGHMEM_BIT;
inline constexpr gfp_t __GFP_DMA32 = 1u << ___GFP_DMA32_BIT;
inline constexpr gfp_t __GFP_MOVABLE = 1u << ___GFP_MOVABLE_BIT;
inline constexpr gfp_t __GFP_RECLAIMABLE = 1u << ___GFP_RECLAIMABLE_BIT;
inline constexpr gfp_t __GFP_HIGH = 1u << ___GFP_HIGH_BIT;
inline constexpr gfp_t __GFP_IO = 1u << ___GFP_IO_BIT;
inline constexpr gfp_t __GFP_FS = 1u << ___GFP_FS_BIT;
inline constexpr gfp_t __GFP_ZERO = 1u << ___GFP_ZERO_BIT;
inline constexpr gfp_t __GFP_DIRECT_RECLAIM = 1u << ___GFP_DIRECT_RECLAIM_BIT;
inline constexpr gfp_t __GFP_KSWAPD_RECLAIM = 1u << ___GFP_KSWAPD_RECLAIM_BIT;
inline constexpr gfp_t __GFP_WRITE = 1u << ___GFP_WRITE_BIT;
inline constexpr gfp_t __GFP_NOWARN = 1u << ___GFP_NOWARN_BIT;
inline constexpr gfp_t __GFP_RETRY_MAYFAIL = 1u << ___GFP_RETRY_MAYFAIL_BIT;
inline constexpr gfp_t __GFP_NOFAIL = 1u << ___GFP_NOFAIL_BIT;
inline constexpr gfp_t __GFP_NORETRY = 1u << ___GFP_NORETRY_BIT;
inline constexpr gfp_t __GFP_MEMALLOC = 1u << ___GFP_MEMALLOC_BIT;
inline constexpr gfp_t __GFP_COMP = 1u << ___GFP_COMP_BIT;
inline constexpr gfp_t __GFP_NOMEMALLOC = 1u << ___GFP_NOMEMALLOC_BIT;
inline constexpr gfp_t __GFP_HARDWALL = 1u << ___GFP_HARDWALL_BIT;
inline constexpr gfp_t __GFP_THISNODE = 1u << ___GFP_THISNODE_BIT;
inline constexpr gfp_t __GFP_ACCOUNT = 1u << ___GFP_ACCOUNT_BIT;

inline constexpr gfp_t __GFP_RECLAIM = __GFP_DIRECT_RECLAIM | __GFP_KSWAPD_RECLAIM;

inline constexpr gfp_t GFP_ATOMIC = __GFP_HIGH | __GFP_KSWAPD_RECLAIM;
inline constexpr gfp_t GFP_KERNEL = __GFP_RECLAIM | __GFP_IO | __GFP_FS;
inline constexpr gfp_t GFP_KERNEL_ACCOUNT = GFP_KERNEL | __GFP_ACCOUNT;
inline constexpr gfp_t GFP_NOWAIT = __GFP_KSWAPD_RECLAIM | __GFP_NOWARN;
inline constexpr gfp_t GFP_NOIO = __GFP_RECLAIM;
inline constexpr gfp_t GFP_NOFS = __GFP_RECLAIM | __GFP_IO;
inline constexpr gfp_t GFP_USER = __GFP_RECLAIM | __GFP_IO | __GFP_FS | __GFP_HARDWALL;
inline constexpr gfp_t GFP_HIGHUSER = GFP_USER | __GFP_HIGHMEM;
inline constexpr gfp_t GFP_HIGHUSER_MOVABLE = GFP_HIGHUSER | __GFP_MOVABLE;
inline constexpr gfp_t GFP_TRANSHUGE_LIGHT =
    (GFP_HIGHUSER_MOVABLE | __GFP_COMP | __GFP_NOMEMALLOC | __GFP_NOWARN) & ~__GFP_RECLAIM;
inline constexpr gfp_t GFP_TRANSHUGE = GFP_TRANSHUGE_LIGHT | __GFP_DIRECT_RECLAIM;

// May the caller sleep (enter direct reclaim)?
inline bool gfpflags_allow_blocking(gfp_t gfp) { return gfp & __GFP_DIRECT_RECLAIM; }
// May the caller spin on locks? False only for masks with no reclaim bit at all
// (the kmalloc_nolock() / try_alloc_pages() style of caller).
inline bool gfpflags_allow_spinning(gfp_t gfp) { return gfp & __GFP_RECLAIM; }

}  // namespace umemcg
