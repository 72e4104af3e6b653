// SPDX-License-Identifier: GPL-2.0-only
// test/pch/test_pch.h: the precompiled header of the test executables (meson's cpp_pch):
// Catch2's single header and the standard headers most test files include. Each test file
// still includes what it uses itself; this only saves parsing them once per file (about
// 1.3 s of a gcc -O2 -g compile of a test file).
// No include guard: meson compiles this file as a main file, where #pragma once is an error
// under -Werror; it is included once, first, in each file of its executable.

#include <catch2/catch.hpp>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>
