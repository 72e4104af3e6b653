// SPDX-License-Identifier: GPL-2.0-only
// test/bpfvm/verifier_linfo_test.cc: .BTF.ext line info from the loader to the verifier log.
//  - The loader hands each program the line_info records of its own range and of every .text
//    subprogram appended to it, shifted to where it was appended.
//  - The log prints "; <source line> @ <file>:<line>" before the first instruction of each
//    source line (level 2), and before the failing instruction (level 1).
//  - Bad line info is a clear error: a malformed .BTF.ext line_info part refuses the object
//    (crafted bytes), and records out of order, out of the program, on an ld_imm64's second
//    slot, naming no string or missing a subprogram's first instruction are refused by the
//    verifier with the kernel's check_btf_line() messages.
#include <catch2/catch.hpp>

#include <bpf/btf.h>
#include <elf.h>

#include <cstring>
#include <memory>

#include "bpfvm/verifier_obj.h"
#include "test/bpfvm/loader_test_util.h"
#include "test/bpfvm/verifier_test_util.h"

using namespace umemcg;
using namespace umemcg::emu;
using namespace umemcg::emu::testing;

namespace {

absl::StatusOr<BpfObject> load(const std::vector<u8> &img) {
  static KfuncRegistry *reg = [] {
    auto *r = new KfuncRegistry;
    add_memcg_kfuncs(*r);
    return r;
  }();
  LoadOptions lo;
  lo.kfuncs = reg;
  return load_object(img, lo);
}

const BpfProgram *find_prog(const BpfObject &obj, const std::string &name) {
  const int i = obj.program_index(name);
  return i < 0 ? nullptr : &obj.progs[(size_t)i];
}

// Verifies a SYSCALL program of obj at log_level.
bpf_verifier_result verify(const BpfObject &obj, const BpfProgram &p, u32 log_level) {
  const BpfVerifierInputs in = bpf_verifier_inputs(obj);
  bpf_verifier_opts o = bpf_verifier_opts_for(obj, p, in, &bpf_syscall_prog_type());
  o.log_level = log_level;
  return bpf_check(p.insns, o);
}

// The .BTF.ext line_info part of an object image: where its records are.
struct LineInfoBytes {
  std::vector<u8> img;
  size_t rec_size_at = 0;  // the record size word
  size_t first_rec = 0;    // the first record of the first section block
  u32 rec_size = 0;
  u32 num = 0;             // records in the first section block

  explicit LineInfoBytes(std::vector<u8> b) : img(std::move(b)) {
    Elf64_Ehdr eh;
    std::memcpy(&eh, img.data(), sizeof(eh));
    auto shdr = [&](size_t i) {
      Elf64_Shdr s;
      std::memcpy(&s, img.data() + eh.e_shoff + i * sizeof(s), sizeof(s));
      return s;
    };
    const Elf64_Shdr strtab = shdr(eh.e_shstrndx);
    for (size_t i = 1; i < eh.e_shnum; i++) {
      const Elf64_Shdr s = shdr(i);
      if (std::strcmp(reinterpret_cast<const char *>(img.data() + strtab.sh_offset + s.sh_name),
                      ".BTF.ext"))
        continue;
      const u32 hdr_len = rd(s.sh_offset + 4), li_off = rd(s.sh_offset + 16);
      rec_size_at = s.sh_offset + hdr_len + li_off;
      rec_size = rd(rec_size_at);
      num = rd(rec_size_at + 8);
      first_rec = rec_size_at + 12;
    }
    REQUIRE(rec_size_at);
  }
  u32 rd(size_t at) const {
    u32 v;
    std::memcpy(&v, img.data() + at, 4);
    return v;
  }
  void wr(size_t at, u32 v) { std::memcpy(img.data() + at, &v, 4); }
  size_t rec(u32 i) const { return first_rec + (size_t)i * rec_size; }
};

TEST_CASE("line info: programs get their own records, appended subprograms theirs", "[bpfvm][verifier][linfo]") {
  absl::StatusOr<BpfObject> obj = load(prog_bytes("rt_loop"));
  REQUIRE(obj.ok());
  const BpfProgram *p = find_prog(*obj, "loops");
  REQUIRE(p);
  REQUIRE(p->subprogs.size() == 2);
  REQUIRE_FALSE(p->line_info.empty());
  CHECK(p->line_info.front().insn_off == 0);
  // Sorted, inside the program, and a record at each appended subprogram's first instruction.
  for (size_t i = 1; i < p->line_info.size(); i++)
    CHECK(p->line_info[i].insn_off > p->line_info[i - 1].insn_off);
  CHECK(p->line_info.back().insn_off < p->insns.size());
  for (const Subprog &sp : p->subprogs) {
    CAPTURE(sp.name);
    bool found = false;
    for (const bpf_line_info &li : p->line_info) found |= li.insn_off == sp.start;
    CHECK(found);
  }
  const bpf_verifier_result r = verify(*obj, *p, BPF_LOG_LEVEL2);
  CAPTURE(r.log);
  REQUIRE(r.ok());
  // The main program's lines and the callback's (a .text function appended after it).
  CHECK_THAT(r.log, Catch::Contains("; int loops(struct loop_args *a) @ rt_loop.bpf.c:37\n0: (bf) r6 = r1"));
  CHECK_THAT(r.log, Catch::Contains("; l->sum += i; @ rt_loop.bpf.c:24\n"));
}

TEST_CASE("verifier log: source lines before the instructions they cover", "[bpfvm][verifier][linfo][log]") {
  absl::StatusOr<BpfObject> obj = load(prog_bytes("cli_edges"));
  REQUIRE(obj.ok());
  const BpfProgram *p = find_prog(*obj, "probe_read");
  REQUIRE(p);
  const bpf_verifier_result r = verify(*obj, *p, BPF_LOG_LEVEL2);
  CAPTURE(r.log);
  REQUIRE(r.ok());
  // As the kernel (6.18) prints it: the line's text without its indent, the file's basename.
  CHECK_THAT(r.log, Catch::StartsWith(
      "func#0 @0\n"
      "0: R1=ctx() R10=fp0\n"
      "; int probe_read(struct probe_args *a) @ cli_edges.bpf.c:25\n"
      "0: (bf) r6 = r1                       ; R1=ctx() R6=ctx()\n"
      "; __u64 v = 0; @ cli_edges.bpf.c:27\n"
      "1: (7a) *(u64 *)(r10 -8) = 0          ; R10=fp0 fp-8=0\n"
      "; a->err = bpf_probe_read_kernel(&v, sizeof(v), (void *)a->src); @ cli_edges.bpf.c:29\n"
      "2: (79) r3 = *(u64 *)(r6 +0)          ; R3=scalar() R6=ctx()\n"));
  // One source line, printed once, however many instructions it covers.
  size_t n = 0;
  for (size_t at = 0; (at = r.log.find("@ cli_edges.bpf.c:29\n", at)) != std::string::npos; at++) n++;
  CHECK(n == 1);
  // Without a log the line info changes nothing.
  const bpf_verifier_result quiet = verify(*obj, *p, 0);
  CHECK(quiet.ok());
  CHECK(quiet.log.empty());
}

TEST_CASE("verifier log: level 1 prints the path to the error with its source lines", "[bpfvm][verifier][linfo][log]") {
  absl::StatusOr<BpfObject> obj = load(prog_bytes("cli_edges"));
  REQUIRE(obj.ok());
  BpfProgram p = *find_prog(*obj, "probe_read");
  // probe_read with the helper call's r2 (the size) made unknown: w2 = 8 becomes w2 = *(u32 *)(r6 +0).
  REQUIRE(p.insns[5].code == (BPF_ALU | BPF_MOV | BPF_K));
  p.insns[5] = BPF_LDX_MEM(BPF_W, BPF_REG_2, BPF_REG_6, 0);
  const bpf_verifier_result r = verify(*obj, p, BPF_LOG_LEVEL1);
  CAPTURE(r.log);
  REQUIRE_FALSE(r.ok());
  REQUIRE(r.error_insn == 6);
  // The walk from the entry state, each source line before its first instruction, the failing
  // call and the reason last (kernel 6.18's level 1).
  CHECK_THAT(r.log, Catch::StartsWith(
      "0: R1=ctx() R10=fp0\n"
      "; int probe_read(struct probe_args *a) @ cli_edges.bpf.c:25\n"
      "0: (bf) r6 = r1                       ; R1=ctx() R6=ctx()\n"
      "; __u64 v = 0; @ cli_edges.bpf.c:27\n"
      "1: (7a) *(u64 *)(r10 -8) = 0          ; R10=fp0 fp-8=0\n"
      "; a->err = bpf_probe_read_kernel(&v, sizeof(v), (void *)a->src); @ cli_edges.bpf.c:29\n"
      "2: (79) r3 = *(u64 *)(r6 +0)          ; R3=scalar() R6=ctx()\n"));
  CHECK_THAT(r.log, Catch::Contains(
      "6: (85) call bpf_probe_read_kernel#113\n"
      "R2 unbounded memory access, use 'var &= const' or 'if (var < const)'\n"
      "processed 7 insns"));
}

TEST_CASE("line info: a malformed .BTF.ext line_info part refuses the object", "[bpfvm][loader][linfo][malformed]") {
  const LineInfoBytes base(prog_bytes("cli_edges"));
  REQUIRE(base.rec_size == sizeof(bpf_line_info));
  REQUIRE(base.num >= 2);
  {
    LineInfoBytes b = base;
    b.wr(b.rec_size_at, 8);
    absl::StatusOr<BpfObject> obj = load(b.img);
    REQUIRE_FALSE(obj.ok());
    CHECK_THAT(std::string(obj.status().message()), Catch::Contains(".BTF.ext: line_info record size 8"));
  }
  {
    LineInfoBytes b = base;
    b.wr(b.rec(1), 0x7fff0);  // insn_off, far beyond the section
    absl::StatusOr<BpfObject> obj = load(b.img);
    REQUIRE_FALSE(obj.ok());
    CHECK_THAT(std::string(obj.status().message()),
               Catch::Contains("record 1: insn_off 524272 outside the section"));
  }
  {
    LineInfoBytes b = base;
    b.wr(b.rec(0), 4);  // misaligned
    absl::StatusOr<BpfObject> obj = load(b.img);
    REQUIRE_FALSE(obj.ok());
    CHECK_THAT(std::string(obj.status().message()), Catch::Contains("record 0: insn_off 4 outside"));
  }
  {
    LineInfoBytes b = base;
    b.wr(b.rec_size_at + 8, 0x10000000);  // the record count, past the part's end
    absl::StatusOr<BpfObject> obj = load(b.img);
    REQUIRE_FALSE(obj.ok());
    CHECK_THAT(std::string(obj.status().message()), Catch::Contains("line_info records out of bounds"));
  }
  {
    // A string offset no string starts at: loaded, then refused by the verifier.
    LineInfoBytes b = base;
    b.wr(b.rec(0) + 8, 0x7fffffff);  // line_off
    absl::StatusOr<BpfObject> obj = load(b.img);
    REQUIRE(obj.ok());
    const BpfProgram *p = find_prog(*obj, "dead_fp_write");
    REQUIRE(p);
    const bpf_verifier_result r = verify(*obj, *p, BPF_LOG_LEVEL1);
    CHECK(r.err == -EINVAL);
    CHECK(r.error == "Invalid line_info[0].line_off or .file_name_off");
  }
  {
    // Two records of one instruction: unsorted.
    LineInfoBytes b = base;
    b.wr(b.rec(1), b.rd(b.rec(0)));
    absl::StatusOr<BpfObject> obj = load(b.img);
    REQUIRE(obj.ok());
    const BpfProgram *p = find_prog(*obj, "dead_fp_write");
    REQUIRE(p);
    const bpf_verifier_result r = verify(*obj, *p, BPF_LOG_LEVEL1);
    CHECK(r.err == -EINVAL);
    CHECK_THAT(r.error, Catch::StartsWith("Invalid line_info[1].insn_off:0 (prev_offset:0 prog->len:"));
  }
}

// A BTF holding a file name and a source line, for hand-made line info.
struct LinfoBtf {
  std::unique_ptr<struct btf, void (*)(struct btf *)> btf{btf__new_empty(), btf__free};
  u32 file = 0, line = 0;
  LinfoBtf() {
    REQUIRE(btf.get());
    file = (u32)btf__add_str(btf.get(), "/src/dir/prog.bpf.c");
    line = (u32)btf__add_str(btf.get(), "\t  return x;");
  }
  bpf_line_info rec(u32 insn_off, u32 line_no) const { return {insn_off, file, line, line_no << 10 | 3}; }
};

bpf_verifier_result check_linfo(const Prog &p, const std::vector<bpf_line_info> &linfo,
                                const LinfoBtf &b, u32 log_level = BPF_LOG_LEVEL1) {
  VerifierEnv env;
  bpf_verifier_opts o = env.opts(&bpf_syscall_prog_type());
  o.line_info = linfo;
  o.btf = b.btf.get();
  o.log_level = log_level;
  return bpf_check(p, o);
}

TEST_CASE("line info: check_btf_line refuses bad records with the kernel's messages", "[bpfvm][verifier][linfo]") {
  const LinfoBtf b;
  // main: r1 = 1 ll; call sub; exit.  sub (insn 4): r0 = 0; exit.
  const Prog p = {BPF_LD_IMM64(BPF_REG_1, 1), BPF_CALL_REL(1), BPF_EXIT_INSN(),
                  BPF_MOV64_IMM(BPF_REG_0, 0), BPF_EXIT_INSN()};
  SECTION("good records are accepted and printed, the indent skipped, the basename kept") {
    const bpf_verifier_result r = check_linfo(p, {b.rec(0, 10), b.rec(2, 11), b.rec(4, 20)}, b,
                                              BPF_LOG_LEVEL2);
    CAPTURE(r.log);
    CHECK(r.ok());
    CHECK_THAT(r.log, Catch::Contains("; return x; @ prog.bpf.c:10\n0: (18) r1 = 0x1"));
    CHECK_THAT(r.log, Catch::Contains("; R1=1\n; return x; @ prog.bpf.c:11\n2: (85) call pc+1"));
    CHECK_THAT(r.log, Catch::Contains("; return x; @ prog.bpf.c:20\n4: (b7) r0 = 0"));
  }
  SECTION("a second record of the same line prints nothing more") {
    const bpf_verifier_result r = check_linfo(p, {b.rec(0, 10), b.rec(2, 10), b.rec(4, 20)}, b,
                                              BPF_LOG_LEVEL2);
    CAPTURE(r.log);
    CHECK(r.ok());
    CHECK_THAT(r.log, Catch::Contains("; return x; @ prog.bpf.c:10\n0: (18) r1 = 0x1"));
    CHECK_THAT(r.log, Catch::Contains("; R1=1\n2: (85) call pc+1"));
    CHECK_THAT(r.log, Catch::Contains("; return x; @ prog.bpf.c:20\n4: (b7) r0 = 0"));
  }
  SECTION("unsorted") {
    const bpf_verifier_result r = check_linfo(p, {b.rec(0, 10), b.rec(4, 11), b.rec(2, 20)}, b);
    CHECK(r.err == -EINVAL);
    CHECK(r.error == "Invalid line_info[2].insn_off:2 (prev_offset:4 prog->len:6)");
  }
  SECTION("beyond the program") {
    const bpf_verifier_result r = check_linfo(p, {b.rec(0, 10), b.rec(4, 11), b.rec(6, 20)}, b);
    CHECK(r.error == "Invalid line_info[2].insn_off:6 (prev_offset:4 prog->len:6)");
  }
  SECTION("the second slot of an ld_imm64") {
    const bpf_verifier_result r = check_linfo(p, {b.rec(0, 10), b.rec(1, 11), b.rec(4, 20)}, b);
    CHECK(r.error == "Invalid insn code at line_info[1].insn_off");
  }
  SECTION("a string offset past the strings") {
    std::vector<bpf_line_info> li = {b.rec(0, 10), b.rec(4, 11)};
    li[1].file_name_off = 1u << 30;
    const bpf_verifier_result r = check_linfo(p, li, b);
    CHECK(r.error == "Invalid line_info[1].line_off or .file_name_off");
  }
  SECTION("a subprogram's first instruction without a record") {
    const bpf_verifier_result r = check_linfo(p, {b.rec(2, 10), b.rec(4, 11)}, b);
    CHECK(r.error == "missing bpf_line_info for func#0");
    const bpf_verifier_result r2 = check_linfo(p, {b.rec(0, 10), b.rec(5, 11)}, b);
    CHECK(r2.error == "missing bpf_line_info for func#1");
    const bpf_verifier_result r3 = check_linfo(p, {b.rec(0, 10), b.rec(2, 11)}, b);
    CHECK(r3.error == "missing bpf_line_info for 1 funcs starting from func#1");
  }
  SECTION("records without a BTF") {
    VerifierEnv env;
    bpf_verifier_opts o = env.opts(&bpf_syscall_prog_type());
    const std::vector<bpf_line_info> li = {b.rec(0, 10), b.rec(4, 11)};
    o.line_info = li;
    CHECK(bpf_check(p, o).error == "Invalid line_info[0].line_off or .file_name_off");
  }
}

}  // namespace
