// SPDX-License-Identifier: GPL-2.0-only
// shim/errno.h: errno values. Linux's user-space errno numbers are the kernel's, so <cerrno> is
// used as is; kernel-internal codes that user space never sees are added here.
// Mirrors: include/uapi/asm-generic/errno-base.h, include/linux/errno.h (Linux 6.19)
#pragma once

#include <cerrno>

namespace umemcg {
inline constexpr int ERESTARTSYS = 512;
inline constexpr int ENOTSUPP = 524;
inline constexpr unsigned long MAX_ERRNO = 4095;

template <typename T>
inline T *ERR_PTR(long error) { return reinterpret_cast<T *>(error); }
inline long PTR_ERR(const void *ptr) { return reinterpret_cast<long>(ptr); }
inline bool IS_ERR(const void *ptr) {
  return reinterpret_cast<unsigned long>(ptr) >= static_cast<unsigned long>(-MAX_ERRNO);
}
inline bool IS_ERR_OR_NULL(const void *ptr) { return !ptr || IS_ERR(ptr); }
}  // namespace umemcg
