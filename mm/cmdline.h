// SPDX-License-Identifier: GPL-2.0-only
// mm/cmdline.h: memparse(), the kernel's "number with a K/M/G/T/P/E suffix" parser, the
// simple_strto*() it is built on; the strict kstrto*() parsers of control-file writes are
// kernel/kstrtox.h (included here for mm's callers).
//
// Mirrors: lib/cmdline.c (memparse), lib/vsprintf.c (simple_strtoull, simple_strtol),
//          lib/kstrtox.c (_parse_integer_fixup_radix, _parse_integer) (Linux 6.19)
// Emulation: the kernel keeps these in lib/; here they live in mm/, with their users
//   (page_counter_memparse(), memory.reclaim's argument parser).
// Emulation: a null string is rejected by page_counter_memparse(); these two functions, like the
//   kernel's, require a valid NUL-terminated string.
#pragma once

#include "kernel/kstrtox.h"

namespace umemcg {

/**
 * simple_strtoull - parse an unsigned integer prefix of a string
 * @cp: start of the string
 * @endp: (output, optional) the first character not consumed
 * @base: 0 (auto: "0x" + hex digit = 16, leading "0" = 8, else 10), 8, 10 or 16
 *
 * No whitespace skipping and no sign: "-1" and "+1" consume nothing. Overflow wraps silently.
 * Returns the parsed value (0 when no digit was consumed, with *@endp == @cp).
 */
unsigned long long simple_strtoull(const char *cp, char **endp, unsigned int base);

/**
 * memparse - parse a string with a memory suffix into a number
 * @ptr: where parsing begins
 * @retptr: (output, optional) the first character after the number and its suffix
 *
 * Base-0 simple_strtoull() followed by at most one suffix letter, K, M, G, T, P or E in either
 * case, each a further factor of 1024. The suffix is consumed even when no digit was ("K" is 0).
 * Shifts wrap silently ("16E" is 0).
 */
unsigned long long memparse(const char *ptr, char **retptr);

// simple_strtol(): a leading '-' negates what simple_strtoull() parses after it (so "-" alone
// consumes the '-' and is 0).
long simple_strtol(const char *cp, char **endp, unsigned int base);

}  // namespace umemcg
