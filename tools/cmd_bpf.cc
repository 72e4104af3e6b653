// SPDX-License-Identifier: GPL-2.0-only
// tools/cmd_bpf.cc: `umemcg bpf verify | disasm | dump` and the bpf verb table.
//
//   verify FILE.o [--log-level N]
//                   each program's verdict and verifier log (level N, 1 by default); exit 0 when all are accepted, 1 when
//                   one is rejected, 2 when the object cannot be loaded or linked. Without a
//                   verifier in the build it loads and links the object and says so (exit 0).
//   disasm FILE.o   each program in the verifier log's syntax, with relocations named (maps,
//                   global data, kfuncs, callbacks) and subprogram labels.
//   dump FILE.o     the loader's view of the object (programs, relocations, maps, externs).
#include "shim/thread_annotations.h"  // before abseil, see bpfvm/map.h

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "absl/strings/str_format.h"
#include "bpfvm/disasm.h"
#include "bpfvm/kernel_env.h"
#include "bpfvm/loader.h"
#include "bpfvm/object_dump.h"
#include "bpfvm/runtime.h"
#include "bpfvm/runtime_verify.h"
#include "shim/machine.h"
#include "tools/cmd_bpf.h"

namespace umemcg::cli {

int cmd_bpf_run(std::span<char *const> args);  // tools/cmd_bpf_run.cc

namespace {

using namespace umemcg::emu;

// Objects load against the kfuncs and layouts (CO-RE) the subsystems registered at boot.
LoadOptions load_options() { return bpf_kernel_load_options(); }

bool one_file(std::span<char *const> args, const char *verb) {
  if (args.size() == 1) return true;
  std::fprintf(stderr, "usage: umemcg bpf %s FILE.o\n", verb);
  return false;
}

int verify_usage() {
  std::fprintf(stderr, "usage: umemcg bpf verify FILE.o [--log-level N]\n");
  return kExitUsage;
}

int verify(std::span<char *const> args) {
  const char *file = nullptr;
  BpfLinkOptions lopts;
  for (size_t i = 0; i < args.size(); i++) {
    if (!std::strcmp(args[i], "--log-level")) {
      if (i + 1 >= args.size()) return verify_usage();
      char *end = nullptr;
      const unsigned long lvl = std::strtoul(args[++i], &end, 0);
      if (!end || *end || lvl > 2) {
        std::fprintf(stderr, "umemcg bpf verify: --log-level: 0, 1 or 2, not '%s'\n", args[i]);
        return kExitUsage;
      }
      lopts.log_level = (u32)lvl;
    } else if (args[i][0] == '-' && args[i][1]) {
      std::fprintf(stderr, "umemcg bpf verify: unknown option '%s'\n", args[i]);
      return verify_usage();
    } else if (file) {
      return verify_usage();
    } else {
      file = args[i];
    }
  }
  if (!file) return verify_usage();
  auto obj = load_object_file(file, load_options());
  if (!obj.ok()) {
    std::fprintf(stderr, "umemcg bpf verify: cannot load %s\n",
                 std::string(obj.status().message()).c_str());
    return kExitUsage;
  }
  std::printf("object %s: %zu programs, %zu maps, license \"%s\"\n", obj->name.c_str(),
              obj->progs.size(), obj->maps.size(), obj->license.c_str());
  const size_t nprogs = obj->progs.size();
  // Per-CPU maps need a machine: link on a fresh simulated one.
  MachineConfig cfg;
  cfg.mode = Mode::simulated;
  Machine m(cfg);
  absl::StatusOr<std::unique_ptr<BpfLoadedObject>> linked = absl::UnknownError("not linked");
  m.exec([&] { linked = BpfLoadedObject::link(std::move(*obj), lopts); });
  if (!linked.ok()) {
    std::fprintf(stderr, "umemcg bpf verify: cannot link %s: %s\n", file,
                 std::string(linked.status().message()).c_str());
    return kExitUsage;
  }
  for (const std::string &w : (*linked)->warnings()) std::printf("warning: %s\n", w.c_str());
  if (!bpf_verifier_available()) {
    std::printf("verification is not available in this build: %zu programs loaded and linked; "
                "they run in the checked interpreter\n", nprogs);
  }
  int rejected = 0;
  for (BpfLoadedProg &p : (*linked)->programs()) {
    const BpfVerdict &v = p.verdict();
    const char *type = bpf_prog_type_name(p.prog_type());
    if (!p.spec().autoload) {
      std::printf("program %s (?%s, %s): not loaded (autoload off)\n", p.name().c_str(),
                  p.spec().section.c_str(), type);
      continue;
    }
    if (!v.available) {
      std::printf("program %s (%s, %s): linked, not verified\n", p.name().c_str(),
                  p.spec().section.c_str(), type);
      continue;
    }
    std::printf("program %s (%s, %s): %s\n", p.name().c_str(), p.spec().section.c_str(), type,
                v.accepted ? "accepted" : "REJECTED");
    if (!v.accepted) {
      rejected++;
      std::printf("  reason: %s\n", v.error.c_str());
    }
    if (!v.log.empty()) std::printf("%s%s", v.log.c_str(), v.log.back() == '\n' ? "" : "\n");
  }
  m.exec([&] { linked->reset(); });  // maps go away on the machine that made them
  return rejected ? kExitFailed : kExitOk;
}

// disasm annotations: what each relocated instruction refers to.
std::string reloc_note(const BpfObject &obj, const Reloc &r) {
  auto map_name = [&](u32 i) { return i < obj.maps.size() ? obj.maps[i].name : std::string("?"); };
  auto ext_name = [&](u32 i) { return i < obj.externs.size() ? obj.externs[i].name : std::string("?"); };
  switch (r.kind) {
    case RelocKind::kMapFd: return "map " + map_name(r.map_idx);
    case RelocKind::kMapValue: return absl::StrFormat("%s+%u", map_name(r.map_idx), r.offset);
    case RelocKind::kKfuncCall: return "kfunc " + ext_name(r.extern_idx);
    case RelocKind::kKsymAddr: return "ksym " + ext_name(r.extern_idx);
    case RelocKind::kSubprogAddr: {
      std::string n = absl::StrFormat("insn %u", r.target_insn);
      return "callback " + n;
    }
  }
  return "";
}

const char *kfunc_namer(s32 btf_id, s16, void *opaque) {
  const BpfObject *obj = static_cast<const BpfObject *>(opaque);
  if (btf_id < 0 || (size_t)btf_id >= obj->externs.size()) return nullptr;
  return obj->externs[btf_id].name.c_str();
}

int disasm(std::span<char *const> args) {
  if (!one_file(args, "disasm")) return kExitUsage;
  auto obj = load_object_file(args[0], load_options());
  if (!obj.ok()) {
    std::fprintf(stderr, "umemcg bpf disasm: cannot load %s\n",
                 std::string(obj.status().message()).c_str());
    return kExitUsage;
  }
  BpfDisasmOpts opts;
  opts.kfunc_name = kfunc_namer;
  opts.opaque = &*obj;
  for (const BpfProgram &p : obj->progs) {
    std::printf("program %s (section %s, %s):\n", p.name.c_str(), p.section.c_str(),
                bpf_prog_type_name(p.prog_type));
    size_t ri = 0;
    for (size_t i = 0; i < p.insns.size(); i++) {
      for (const Subprog &s : p.subprogs)
        if (s.start == i) std::printf("%s:\n", s.name.c_str());
      std::string line = absl::StrFormat("%4zu: %s", i, bpf_disasm_insn(p.insns, i, opts));
      while (ri < p.relocs.size() && p.relocs[ri].insn_idx < i) ri++;
      for (size_t k = ri; k < p.relocs.size() && p.relocs[k].insn_idx == i; k++) {
        std::string note = reloc_note(*obj, p.relocs[k]);
        if (p.relocs[k].kind == RelocKind::kSubprogAddr)
          for (const Subprog &s : p.subprogs)
            if (s.start == p.relocs[k].target_insn) note = "callback " + s.name;
        line += "  ; " + note;
      }
      std::printf("%s\n", line.c_str());
      if (bpf_is_ldimm64(p.insns[i])) i++;
    }
    std::printf("\n");
  }
  return kExitOk;
}

int dump(std::span<char *const> args) {
  if (!one_file(args, "dump")) return kExitUsage;
  auto obj = load_object_file(args[0], load_options());
  if (!obj.ok()) {
    std::fprintf(stderr, "umemcg bpf dump: cannot load %s\n",
                 std::string(obj.status().message()).c_str());
    return kExitUsage;
  }
  std::printf("%s", dump_object(*obj).c_str());
  return kExitOk;
}

const Command kBpfCommands[] = {
    {"verify", "FILE.o [--log-level N]", "verify every program, print verdicts and logs", verify,
     "  --log-level N   0: verdicts only; 1 (default): the kernel's log level 1 (the path to a\n"
     "                  rejection, the statistics line); 2: every instruction of every path with\n"
     "                  its register and stack state\n"
     "exit: 0 all accepted, 1 a program was rejected, 2 bad arguments or an object that cannot\n"
     "      be loaded or linked\n"},
    {"disasm", "FILE.o", "disassemble every program with relocations named", disasm,
     "exit: 0, or 2 when the object cannot be loaded\n"},
    {"run", "FILE.o PROG [ARGS...] [--ctx HEX|@HEXFILE] [--ctx-u64 N] [--ctx-cgroup PATH] "
            "[--sh SCRIPT] [--cpus N] [--memory SIZE] [--swap SIZE] [--seed N] [--unverified]",
     "test-run a SYSCALL program in a task of the machine `umemcg sh` boots", cmd_bpf_run,
     "The machine: cgroup v2 mounted at /sys/fs/cgroup with the memory controller, kernfs and\n"
     "the memory model, simulated; the program runs in a process of the root cgroup. The\n"
     "context is built from these words in their order:\n"
     "  ARGS            u64 words (decimal, 0x hex; -N is its two's complement), as the\n"
     "                  shell's `bpf run NAME/PROG [ARGS...]`\n"
     "  --ctx-u64 N     one u64 word\n"
     "  --ctx-cgroup PATH\n"
     "                  the id of that cgroup as a u64 word (PATH absolute, or relative to\n"
     "                  /sys/fs/cgroup), looked up after --sh ran\n"
     "  --ctx HEX       bytes in hex (@FILE reads them from FILE)\n"
     "Options:\n"
     "  --sh SCRIPT     a `umemcg sh` script run first on the same machine, as `umemcg sh -e`\n"
     "                  runs it (make cgroups, set limits, `spawn CGROUP anon SIZE --hold`)\n"
     "  --cpus N, --memory SIZE, --swap SIZE, --seed N\n"
     "                  the machine, as `umemcg sh` takes them (defaults 4, 4G, 0, 1)\n"
     "  --unverified    run a program the verifier rejects in the checked interpreter\n"
     "After the run, when the program called memcg kfuncs: the calls by kfunc, the machine they\n"
     "ran on, each lookup and reclaim with its result, and a line \"lacks: ...\" for each call\n"
     "that returned NULL or nothing because the machine lacks what it needs (no cgroup with\n"
     "that id, no memory css, no pages or no swap to reclaim), \"bad argument: ...\" for each\n"
     "argument a kfunc refused.\n"
     "exit: 0 the program ran, 1 the test run failed or the machine did not boot, 2 bad\n"
     "      arguments, an object that cannot be loaded, no such program, a --sh script that\n"
     "      cannot be read or fails, or a --ctx-cgroup that names no cgroup\n"},
    {"dump", "FILE.o", "print the loaded object (programs, maps, relocations)", dump,
     "exit: 0, or 2 when the object cannot be loaded\n"},
};

}  // namespace

std::span<const Command> bpf_commands() { return kBpfCommands; }

}  // namespace umemcg::cli
