// SPDX-License-Identifier: GPL-2.0-only
// test/pch/mm_pch.h: the precompiled header of test-mm (meson's cpp_pch): test_pch.h's
// headers and the memcg test environment that nearly every test of mm/ includes (with it the
// headers of mm/, kernel/ and shim/ it pulls in: about two thirds of a test file's compile
// time). Each test file still includes what it uses itself.
// No include guard: meson compiles this file as a main file, where #pragma once is an error
// under -Werror; it is included once, first, in each file of its executable.

#include "test/pch/test_pch.h"
#include "test/support/memcg_env.h"
