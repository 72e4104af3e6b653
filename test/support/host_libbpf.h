// SPDX-License-Identifier: GPL-2.0-only
// test/support/host_libbpf.h: the host kernel's BPF through the host's libbpf, for the
// differential tests against the kernel (test/bpfvm/kernel_diff_test.cc,
// test/bpfvm/kernel_log_diff_test.cc) and umemcg-verifier-corpus (tools/verifier_corpus.cc):
// whether the kernel loads programs for us, and one program of an object file loaded with its
// verifier log.
#pragma once

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>
#include <unistd.h>

#include <cstdarg>
#include <cstring>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace umemcg::test {

// Whether the host kernel loads a BPF program for us (privilege, CONFIG_BPF_SYSCALL): a
// two-instruction socket filter. *why says why not.
inline bool host_bpf_allowed(std::string *why) {
  const bpf_insn probe[] = {{BPF_ALU64 | BPF_MOV | BPF_K, 0, 0, 0, 0},
                            {BPF_JMP | BPF_EXIT, 0, 0, 0, 0}};
  const int fd = bpf_prog_load(BPF_PROG_TYPE_SOCKET_FILTER, nullptr, "GPL", probe, 2, nullptr);
  if (fd < 0) {
    *why = std::strerror(-fd);
    return false;
  }
  close(fd);
  return true;
}

// A libbpf print callback that prints nothing (libbpf_set_print(libbpf_quiet)).
inline int libbpf_quiet(enum libbpf_print_level, const char *, va_list) { return 0; }

// Loads the program named prog of the object file at path into the host kernel, alone (autoload
// off for the object's other programs; its maps are created), its verifier log written to buf at
// log level `level`. buf's first byte is cleared first, so a load that does not reach the
// verifier leaves an empty log. prepare, when given, adjusts the program (type, flags) before
// the load. Returns bpf_object__load()'s result, or nullopt when libbpf cannot open the file or
// it holds no such program.
inline std::optional<int> host_load_program(
    const char *path, const std::string &prog, std::vector<char> &buf, unsigned level,
    const std::function<void(bpf_program *)> &prepare = {}) {
  bpf_object *obj = bpf_object__open_file(path, nullptr);
  if (!obj) return std::nullopt;
  bpf_program *p;
  bpf_program *target = nullptr;
  bpf_object__for_each_program(p, obj) {
    const bool me = prog == bpf_program__name(p);
    bpf_program__set_autoload(p, me);
    if (me) target = p;
  }
  std::optional<int> err;
  if (target) {
    if (prepare) prepare(target);
    buf[0] = 0;
    bpf_program__set_log_buf(target, buf.data(), buf.size());
    bpf_program__set_log_level(target, level);
    err = bpf_object__load(obj);
  }
  bpf_object__close(obj);
  return err;
}

}  // namespace umemcg::test
