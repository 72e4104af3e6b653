// SPDX-License-Identifier: GPL-2.0-only
// shim/types.h: the kernel's fixed-width integer names.
// Mirrors: include/linux/types.h, include/uapi/asm-generic/int-ll64.h (Linux 6.19)
#pragma once

#include <cstdint>
#include <climits>

namespace umemcg {
using u8 = std::uint8_t;
using u16 = std::uint16_t;
using u32 = std::uint32_t;
using u64 = std::uint64_t;
using s8 = std::int8_t;
using s16 = std::int16_t;
using s32 = std::int32_t;
using s64 = std::int64_t;
using gfp_t = unsigned int;

inline constexpr unsigned long PAGE_SHIFT = 12;
inline constexpr unsigned long PAGE_SIZE = 1UL << PAGE_SHIFT;
inline constexpr long S8_MAX = 127;
}  // namespace umemcg
