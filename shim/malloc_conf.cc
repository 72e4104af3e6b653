// SPDX-License-Identifier: GPL-2.0-only
// shim/malloc_conf.cc: jemalloc's run-time options for the executables linked with it
// (tools/umemcg and bench/umemcg-bench; the root meson.build compiles this file into each
// through jemalloc_dep, and only when jemalloc is found).
//
// background_thread:true: dirty pages are returned to the host by jemalloc's own background
// thread. Without it, a thread that exits purges its arena's dirty pages itself before it ends
// (jemalloc's tcache teardown forces a whole decay), so every native-mode task ending after a
// burst of frees paid for all of them: ending the task that had made and removed 10,000 cgroups
// (bench/cgroup_bench.cc, S9) took 370-620 ms of madvise(MADV_DONTNEED) calls on this file's
// development VM, about as long as the 10,000 mkdirs and rmdirs themselves.
// Emulation: none of this is kernel behaviour; it is the host allocator's configuration.
extern "C" {
// jemalloc reads this symbol at its initialisation; the library's own definition is weak.
extern const char *const malloc_conf;
const char *const malloc_conf = "background_thread:true";
}
