// SPDX-License-Identifier: GPL-2.0-only
// kernel/kstrtox.h: string to integer conversion with the kernel's rules.
//
// Mirrors: lib/kstrtox.c (kstrtoull, kstrtoll, kstrtoint, kstrtouint) (Linux 6.19)
// Rules: base 0 picks 16 for "0x"/"0X", 8 for a leading "0", else 10; a leading '+' is allowed
// (and '-' for the signed ones); at least one digit; one trailing newline is accepted and
// nothing else after the digits (no leading blanks either). Returns 0, -EINVAL (syntax) or
// -ERANGE (overflow).
#pragma once

#include "shim/types.h"

namespace umemcg {

int kstrtoull(const char *s, unsigned int base, unsigned long long *res);
int kstrtoll(const char *s, unsigned int base, long long *res);
int kstrtoint(const char *s, unsigned int base, int *res);
int kstrtouint(const char *s, unsigned int base, unsigned int *res);

}  // namespace umemcg
