// SPDX-License-Identifier: GPL-2.0-only
// tools/fuzz/fuzz_case.h: the cases `umemcg fuzz` generates for a policy object: `umemcg sh`
// scripts.
//
// A case is a script of the cgroup shell (../shared/spec/cgroup-shell.md) plus the simulated
// scheduler's seed: a random cgroup tree with limits and protections, the policy object loaded
// and attached (every tracing program to its hook point, every struct_ops map to a cgroup of the
// tree, or where --attach says), workloads started in the leaves (anonymous memory, page cache,
// mlock, holds), control-file writes and memory.reclaim while they run, the struct_ops maps
// detached and attached again elsewhere, processes killed, cgroups removed. Every line is one
// shell command, so that the minimizer can drop lines: a command left without what it needed
// just fails, as it would in a shell, and the script goes on.
//
// Mirrors: the kernel memcg selftests' building blocks (tools/testing/selftests/cgroup), which
//   the shell's commands and workloads reproduce.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace umemcg::fuzz {

// What the object offers, found when it is opened.
struct FuzzTarget {
  std::string object;                         // path of the .bpf.o
  std::vector<std::string> struct_ops_maps;   // bpf_memcg_ops (and other struct_ops) maps
  std::vector<std::string> tracing_progs;     // fentry/fexit programs
  // --attach MAP@CGROUP: where a map goes (a path relative to /sys/fs/cgroup); maps not named
  // go to a random cgroup of each case's tree.
  std::vector<std::pair<std::string, std::string>> attach;
  // --assert VAR: the .bss/.data variable whose non-zero value means "violated".
  std::string assert_var;
  std::string assert_section;  // ".bss" or ".data"
  // --debt-limit: the shell's --high-debt-limit for every case (pages; 0: none).
  unsigned long debt_limit = 0;
  // --stall-limit: the shell's --hung-task-timeout for every case (ns of machine time; 0: none).
  std::uint64_t stall_limit_ns = 0;
};

struct FuzzCase {
  std::uint64_t seed = 1;           // the scheduler's seed (umemcg sh --seed)
  unsigned long high_debt_limit = 0;  // umemcg sh --high-debt-limit (0: the option is absent)
  // The case's liveness bound: umemcg sh --hung-task-timeout (ns; 0: the option is absent).
  std::uint64_t hung_task_timeout_ns = 0;
  std::vector<std::string> setup;   // the tree and the object (kept whole by the minimizer)
  std::vector<std::string> body;    // what the minimizer may drop, line by line
  std::vector<std::string> tail;    // teardown and the assertion's dump (kept whole)
};

// The object's name in the scripts (`bpf load FILE p`).
inline constexpr const char *kObjName = "p";
// The line the assertion's dump follows in the output.
inline constexpr const char *kAssertMarker = "@@assert";

// The generator's source of choices: each decision is one below(n), a number in [0, n).
class FuzzChooser {
 public:
  virtual ~FuzzChooser() = default;
  virtual unsigned below(unsigned n) = 0;
};

/**
 * fuzz_generate_case - the case of number @n of a campaign seeded with @campaign_seed
 * The same arguments give the same case (the choices come from a splitmix64 stream).
 */
FuzzCase fuzz_generate_case(const FuzzTarget &t, std::uint64_t campaign_seed, std::uint64_t n);

/**
 * fuzz_generate_case_from - the case that the choices of @ch make
 * What a structure-aware fuzzer calls with a chooser decoding its input bytes (FuzzByteChooser):
 * every input is a well-formed case, and a change of one choice changes one decision.
 */
FuzzCase fuzz_generate_case_from(const FuzzTarget &t, FuzzChooser &ch);

/**
 * fuzz_mutate_case - a case derived from @parent by the choices of @ch
 * Keeps the parent's setup (its tree, limits, the object and its attachments) and makes one to
 * three changes: a new scheduler seed, a body line dropped, a new body step inserted, a body
 * line replaced by a new step (new steps name the parent's cgroups and maps, as generated ones
 * name their own tree). The tail kills every process the new body starts, then tears down as
 * the parent's does. A parent whose setup makes no cgroup only gets a new seed.
 */
FuzzCase fuzz_mutate_case(const FuzzTarget &t, const FuzzCase &parent, FuzzChooser &ch);

/**
 * fuzz_mutate_pool_case - case @n of a campaign seeded with @campaign_seed, as a mutation
 * Picks a parent in @pool (not empty) and mutates it (fuzz_mutate_case()), both by a stream of
 * choices of its own for (@campaign_seed, @n); *@parent is the parent's index. The same
 * arguments give the same case.
 */
FuzzCase fuzz_mutate_pool_case(const FuzzTarget &t, const std::vector<const FuzzCase *> &pool,
                               std::uint64_t campaign_seed, std::uint64_t n, std::size_t *parent);

// Choices decoded from bytes, FuzzedDataProvider-style: below(n) takes the fewest bytes that
// can hold n - 1 (none when n == 1), little-endian, modulo n; once the bytes run out every
// choice is 0.
class FuzzByteChooser : public FuzzChooser {
 public:
  FuzzByteChooser(const std::uint8_t *data, std::size_t size) : p_(data), left_(size) {}
  unsigned below(unsigned n) override;

 private:
  const std::uint8_t *p_;
  std::size_t left_;
};

// The shell options that replay the case: "--seed N" and, if set, "--high-debt-limit N" and
// "--hung-task-timeout SECONDS".
std::string fuzz_case_sh_options(const FuzzCase &c);

// The case as a script, with a header saying how to replay it.
std::string fuzz_case_script(const FuzzCase &c, bool header = true);

}  // namespace umemcg::fuzz
