// SPDX-License-Identifier: GPL-2.0-only
// The Catch2 runner, alone in its file because it is most of the test build time.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
