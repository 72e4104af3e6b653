// SPDX-License-Identifier: GPL-2.0-only
// tools/fuzz/fuzz_run.h: running one case of `umemcg fuzz` and judging it.
//
// Each case runs in a forked child process: the cgroup shell on a freshly booted simulated
// machine (tools/sh/machine_os.h), so that a crash, an abort or a hang of the emulated kernel
// is a finding about the case instead of the end of the campaign. What counts as a failure:
//   - crash: the child died of a signal (a BUG(), an abort, a fault);
//   - timeout: the child ran past the wall-clock limit (a hang);
//   - warning: the emulated kernel warned (WARN_ON and the charge-path checks: a counter
//     gone negative, a charge left behind or a css reference leaked at teardown, the LRU
//     check at the shell's exit, and a high_policy deferring more memory.high debt than the
//     case's high_debt_limit: see memcg_boot_params::high_debt_limit; a policy that defers moves
//     the payment to the return to user mode, which a long kernel entry, or a task that never
//     returns (a kernel thread), postpones without bound while usage runs past memory.high);
//   - stall: a process could never finish (the shell's wait found the machine idle with the
//     process blocked: a deadlock or a debt never paid), or a task stayed blocked in the kernel
//     past the case's bound (hung_task_timeout_ns: the machine's hung-task check);
//   - assert: the policy author's variable (--assert) was non-zero after the run.
#pragma once

#include <string>
#include <vector>

#include "bpfvm/coverage.h"
#include "tools/fuzz/fuzz_case.h"

namespace umemcg::fuzz {

struct FuzzOutcome {
  enum class Kind { kOk, kCrash, kTimeout, kWarning, kStall, kAssert };
  Kind kind = Kind::kOk;
  std::string detail;  // what failed, one line
  std::string out;     // the shell's standard output
  std::string err;     // the shell's standard error
  // The coverage of the object's programs in this case (bpfvm/coverage.h; empty when the child
  // gave no report: a crash or a timeout).
  std::vector<emu::BpfCoverageProg> coverage;
  bool failed() const { return kind != Kind::kOk; }
};

const char *fuzz_kind_name(FuzzOutcome::Kind k);

struct FuzzRunOptions {
  int timeout_s = 60;       // wall-clock limit of one case
  int assert_offset = -1;   // the --assert variable in its section, bytes
  int assert_size = 0;
};

// Runs c in a child process and judges it (see the banner).
FuzzOutcome fuzz_run_case(const FuzzCase &c, const FuzzRunOptions &o);
// Runs c in this process and judges it: no timeout, and a crash of the emulated kernel is this
// process's (for an in-process fuzzer, whose engine catches both). One machine exists at a
// time: not concurrent with another run in the process.
FuzzOutcome fuzz_run_case_here(const FuzzCase &c, const FuzzRunOptions &o);

// The same failure: same kind (and, for warnings, the same warning).
bool fuzz_same_failure(const FuzzOutcome &a, const FuzzOutcome &b);

}  // namespace umemcg::fuzz
