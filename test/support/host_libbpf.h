// SPDX-License-Identifier: GPL-2.0-only
// test/support/host_libbpf.h: one program of a BPF object file loaded by the host kernel through
// the host's libbpf, with its verifier log, for the differential tests against the kernel
// (test/bpfvm/kernel_diff_test.cc, test/bpfvm/kernel_log_diff_test.cc) and
// umemcg-verifier-corpus (tools/verifier_corpus.cc).
#pragma once

#include <bpf/libbpf.h>

#include <cstdarg>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace umemcg::test {

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
