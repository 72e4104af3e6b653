// SPDX-License-Identifier: GPL-2.0-only
// tools/verifier_corpus.cc: umemcg-verifier-corpus, one object file's programs verified by the
// host kernel and by bpfvm's verifier, one JSON line per program (tools/verifier_corpus.py
// compiles the kernel's verifier selftests and sums the lines up).
//
//   umemcg-verifier-corpus FILE.o...
//
// Every program of the object (autoload or not, a '?' section included) is loaded alone as a
// SYSCALL program (BPF_F_SLEEPABLE, as libbpf loads SEC("syscall")), whatever its section:
//  - the kernel: libbpf opens the object, turns autoload off for the others, sets the type to
//    BPF_PROG_TYPE_SYSCALL and loads it with its maps at log level 1. The verdict counts only
//    when the verifier ran (its log has a "processed" line); the first error line is the line
//    before it.
//  - bpfvm: load_object_file() without kfuncs, CO-RE relocations resolved against the emulated
//    kernel's types (bpf_kernel_env(), as libbpf resolves them against vmlinux BTF), bpf_check()
//    with bpf_syscall_prog_type() as a privileged loader (allow_ptr_leaks, allow_uninit_stack)
//    on the host's CPU count, its log fixed up as libbpf's (bpf_fixup_verifier_log()), the
//    first error line being the last line of bpf_verifier_result::error.
// The selftests' own expectations (BTF decl tags "comment:test_expect_failure" and
// "comment:test_expect_success" on the program's FUNC) are printed beside them: they describe a
// load as the section's own type, so they are a cross-check only.
//
// Mirrors: tools/testing/selftests/bpf/test_loader.c (the expectation tags) (Linux 6.19)
// Emulation: the kernel is asked through libbpf (the loader the selftests use); bpf_check() sees
//   bpfvm's loader's instructions, so a program our loader refuses is reported as such.
#include "shim/thread_annotations.h"  // before abseil, see bpfvm/map.h

#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "bpfvm/kernel_env.h"
#include "bpfvm/loader.h"
#include "bpfvm/prog_type.h"
#include "bpfvm/verifier.h"
#include "bpfvm/verifier_obj.h"
#include "test/support/host_libbpf.h"

using namespace umemcg;
using namespace umemcg::emu;

namespace {

// Allocated once, before any child is forked (a child writes into its copy).
std::vector<char> logbuf(16u << 20);

struct Verdict {
  bool verified = false;
  bool ok = false;
  unsigned processed = 0;
  std::string error;
};

std::string json_str(const std::string &s) {
  std::string o = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      o += '\\';
      o += (char)c;
    } else if (c < 0x20) {
      char b[8];
      std::snprintf(b, sizeof(b), "\\u%04x", c);
      o += b;
    } else {
      o += (char)c;
    }
  }
  return o + "\"";
}

// The line before "processed N insns" of a kernel log, and N.
void parse_kernel_log(const std::string &log, Verdict *v) {
  const size_t at = log.rfind("processed ");
  if (at == std::string::npos || (at > 0 && log[at - 1] != '\n')) return;
  v->verified = true;
  v->processed = (unsigned)std::strtoul(log.c_str() + at + 10, nullptr, 10);
  if (at < 2) return;
  const size_t b = log.rfind('\n', at - 2);
  const size_t from = b == std::string::npos ? 0 : b + 1;
  v->error = log.substr(from, at - 1 - from);
}

Verdict kernel_verify_here(const char *path, const std::string &prog) {
  Verdict v;
  const std::optional<int> err =
      umemcg::test::host_load_program(path, prog, logbuf, 1, [](bpf_program *target) {
        bpf_program__set_type(target, BPF_PROG_TYPE_SYSCALL);
        bpf_program__set_expected_attach_type(target, (bpf_attach_type)0);
        bpf_program__set_flags(target, BPF_F_SLEEPABLE);
      });
  if (!err) return v;
  parse_kernel_log(logbuf.data(), &v);
  // A load that fails after the verifier accepted the program (libbpf filling a prog-array
  // slot with a program it did not load) leaves no error line before the statistics.
  v.ok = v.verified && (*err == 0 || v.error.empty());
  if (v.ok) v.error.clear();
  return v;
}

// The host kernel's nr_cpu_ids (one past the last possible CPU, "0-1" -> 2), which bounds
// bpf_get_smp_processor_id() for its verifier; 0 (bpfvm's default) if unknown.
u32 host_nr_cpu_ids() {
  FILE *f = std::fopen("/sys/devices/system/cpu/possible", "r");
  if (!f) return 0;
  char buf[256] = {};
  const size_t n = std::fread(buf, 1, sizeof(buf) - 1, f);
  std::fclose(f);
  const std::string s(buf, n);
  const size_t sep = s.find_last_of("-,");
  return (u32)std::strtoul(s.c_str() + (sep == std::string::npos ? 0 : sep + 1), nullptr, 10) + 1;
}

// Emulation: libbpf 1.1 dereferences a missing vmlinux BTF when a program of a section that
// attaches by BTF id is loaded as another type; such loads run in a child (a crashed one
// counts as not verified), the others here, where libbpf's feature probes are cached.
Verdict kernel_verify(const char *path, const std::string &prog, const std::string &sec) {
  static const char *const kBtfAttach[] = {"fentry", "fexit", "fmod_ret", "tp_btf", "lsm",
                                           "iter", "freplace", "struct_ops"};
  bool attach = false;
  for (const char *a : kBtfAttach)
    attach |= sec.rfind(a, 0) == 0 || (sec.size() > 1 && sec[0] == '?' && sec.rfind(a, 1) == 1);
  if (!attach) return kernel_verify_here(path, prog);
  Verdict v;
  int fds[2];
  if (pipe(fds)) return v;
  const pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    const Verdict c = kernel_verify_here(path, prog);
    std::string msg = std::string(c.verified ? "1" : "0") + (c.ok ? "1" : "0") +
                      std::to_string(c.processed) + "\n" + c.error;
    size_t done = 0;
    while (done < msg.size()) {
      const ssize_t n = write(fds[1], msg.data() + done, msg.size() - done);
      if (n <= 0) break;
      done += (size_t)n;
    }
    _exit(0);
  }
  close(fds[1]);
  std::string msg;
  char buf[4096];
  for (ssize_t n; (n = read(fds[0], buf, sizeof(buf))) > 0;) msg.append(buf, (size_t)n);
  close(fds[0]);
  int status = 0;
  if (pid > 0) waitpid(pid, &status, 0);
  const size_t nl = msg.find('\n');
  if (pid < 0 || !WIFEXITED(status) || msg.size() < 3 || nl == std::string::npos) return v;
  v.verified = msg[0] == '1';
  v.ok = msg[1] == '1';
  v.processed = (unsigned)std::strtoul(msg.c_str() + 2, nullptr, 10);
  v.error = msg.substr(nl + 1);
  return v;
}

// The selftest's expectation for a privileged load: "success", "failure" or "".
std::string expectation(const btf *b, const std::string &prog) {
  if (!b) return "";
  const s32 fid = btf__find_by_name_kind(b, prog.c_str(), BTF_KIND_FUNC);
  if (fid <= 0) return "";
  std::string out;
  const u32 n = btf__type_cnt(b);
  for (u32 id = 1; id < n; id++) {
    const btf_type *t = btf__type_by_id(b, id);
    if (!btf_is_decl_tag(t) || t->type != (u32)fid || btf_decl_tag(t)->component_idx != -1)
      continue;
    const char *s = btf__name_by_offset(b, t->name_off);
    if (!s) continue;
    if (!std::strcmp(s, "comment:test_expect_failure")) out = "failure";
    if (!std::strcmp(s, "comment:test_expect_success") && out.empty()) out = "success";
  }
  return out;
}

void one_file(const char *path) {
  // The program names as libbpf sees them (our loader may refuse the object).
  std::vector<std::string> names, secs;
  bpf_object *lobj = bpf_object__open_file(path, nullptr);
  std::vector<std::string> expects;
  if (lobj) {
    bpf_program *p;
    const btf *b = bpf_object__btf(lobj);
    bpf_object__for_each_program(p, lobj) {
      names.push_back(bpf_program__name(p));
      secs.push_back(bpf_program__section_name(p));
      expects.push_back(expectation(b, names.back()));
    }
    bpf_object__close(lobj);
  } else {
    std::printf("{\"file\":%s,\"open_error\":true}\n", json_str(path).c_str());
    return;
  }
  LoadOptions lo;
  lo.core_types = &bpf_kernel_env().types();
  absl::StatusOr<BpfObject> obj = load_object_file(path, lo);
  BpfVerifierInputs in;
  if (obj.ok()) in = bpf_verifier_inputs(*obj);
  for (size_t i = 0; i < names.size(); i++) {
    const std::string &name = names[i];
    const Verdict k = kernel_verify(path, name, secs[i]);
    Verdict u;
    std::string loader_error;
    if (!obj.ok()) {
      loader_error = std::string(obj.status().message());
    } else {
      const int pi = obj->program_index(name);
      if (pi < 0) {
        loader_error = "no such program";
      } else {
        const BpfProgram &prog = obj->progs[(size_t)pi];
        bpf_verifier_opts o = bpf_verifier_opts_for(*obj, prog, in, &bpf_syscall_prog_type());
        o.sleepable = true;
        o.allow_ptr_leaks = true;
        o.allow_uninit_stack = true;
        o.nr_cpu_ids = host_nr_cpu_ids();
        bpf_verifier_result r = bpf_check(prog.insns, o);
        bpf_fixup_verifier_log(prog, r);
        u.verified = true;
        u.ok = r.ok();
        u.processed = r.insn_processed;
        if (!u.ok) {
          const size_t nl = r.error.rfind('\n');
          u.error = nl == std::string::npos ? r.error : r.error.substr(nl + 1);
        }
      }
    }
    std::printf(
        "{\"file\":%s,\"prog\":%s,\"expect\":%s,"
        "\"k_verified\":%s,\"k_ok\":%s,\"k_processed\":%u,\"k_error\":%s,"
        "\"u_loaded\":%s,\"u_ok\":%s,\"u_processed\":%u,\"u_error\":%s}\n",
        json_str(path).c_str(), json_str(name).c_str(), json_str(expects[i]).c_str(),
        k.verified ? "true" : "false", k.ok ? "true" : "false", k.processed,
        json_str(k.error).c_str(), u.verified ? "true" : "false", u.ok ? "true" : "false",
        u.processed, json_str(u.verified ? u.error : loader_error).c_str());
    std::fflush(stdout);
  }
}

}  // namespace

int main(int argc, char **argv) {
  if (argc < 2 || !std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h")) {
    std::fprintf(stderr, "usage: umemcg-verifier-corpus FILE.o...\n");
    return argc < 2 ? 2 : 0;
  }
  libbpf_set_print(umemcg::test::libbpf_quiet);
  for (int i = 1; i < argc; i++) one_file(argv[i]);
  return 0;
}
