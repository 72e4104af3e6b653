// SPDX-License-Identifier: GPL-2.0-only
// test/bpfvm/verifier_reject_test.cc: one test per verifier rule: a program breaking it is
// rejected with the kernel's message.
#include <catch2/catch.hpp>

#include <chrono>

#include "test/bpfvm/verifier_test_util.h"

using namespace umemcg;
using namespace umemcg::emu::testing;

namespace {

#define REJECT(rule, runner, expect, ...)                                       \
  TEST_CASE("verifier rejects: " rule, "[bpfvm][verifier][reject]") {           \
    VerifierEnv env;                                                            \
    const bpf_verifier_result r = env.runner(Prog{__VA_ARGS__});                \
    CAPTURE(r.error);                                                           \
    CHECK_FALSE(r.ok());                                                        \
    CHECK_THAT(r.error, Catch::Contains(expect));                               \
  }

}  // namespace

// --- registers -----------------------------------------------------------------------------
REJECT("read of an uninitialised register", raw, "R3 !read_ok",
       BPF_MOV64_REG(BPF_REG_0, BPF_REG_3), BPF_EXIT_INSN())
REJECT("exit without setting r0", raw, "R0 !read_ok", BPF_EXIT_INSN())
REJECT("write to r10 (frame pointer is read only)", raw, "frame pointer is read only",
       BPF_MOV64_IMM(BPF_REG_10, 0), RET0)
REJECT("r1-r5 are scratched by a helper call", raw, "R1 !read_ok",
       BPF_EMIT_CALL(BPF_FUNC_ktime_get_ns), BPF_MOV64_REG(BPF_REG_0, BPF_REG_1), BPF_EXIT_INSN())

// --- stack ---------------------------------------------------------------------------------
REJECT("stack write below the 512-byte frame", raw, "invalid write to stack R10 off=-520 size=8",
       BPF_ST_MEM(BPF_DW, BPF_REG_10, -520, 0), RET0)
REJECT("stack read at or above the frame pointer", raw, "invalid read from stack R10 off=0 size=8",
       BPF_LDX_MEM(BPF_DW, BPF_REG_0, BPF_REG_10, 0), BPF_EXIT_INSN())
REJECT("SYSCALL context access not aligned to its size", syscall,
       "invalid bpf_context access off=2 size=4",
       BPF_MOV64_IMM(BPF_REG_0, 0), BPF_STX_MEM(BPF_W, BPF_REG_1, BPF_REG_0, 2), BPF_EXIT_INSN())
REJECT("misaligned stack access", raw, "misaligned stack access off 0+0+-4 size 8",
       BPF_ST_MEM(BPF_DW, BPF_REG_10, -4, 0), RET0)
REJECT("read of uninitialised stack", raw, "invalid read from stack off -8+0 size 8",
       BPF_LDX_MEM(BPF_DW, BPF_REG_0, BPF_REG_10, -8), BPF_EXIT_INSN())
REJECT("read of partly initialised stack", raw, "invalid read from stack off -8+4 size 8",
       BPF_ST_MEM(BPF_W, BPF_REG_10, -8, 1), BPF_LDX_MEM(BPF_DW, BPF_REG_0, BPF_REG_10, -8),
       BPF_EXIT_INSN())
REJECT("variable-offset stack read of uninitialised bytes", raw, "invalid read from stack R3 var_off",
       BPF_LDX_MEM(BPF_B, BPF_REG_2, BPF_REG_1, 0), BPF_ALU64_IMM(BPF_AND, BPF_REG_2, 7),
       BPF_MOV64_REG(BPF_REG_3, BPF_REG_10), BPF_ALU64_IMM(BPF_ADD, BPF_REG_3, -16),
       BPF_ALU64_REG(BPF_ADD, BPF_REG_3, BPF_REG_2), BPF_LDX_MEM(BPF_B, BPF_REG_0, BPF_REG_3, 0),
       BPF_EXIT_INSN())
REJECT("variable-offset stack access beyond the frame", raw, "invalid variable-offset read from stack R3",
       BPF_LDX_MEM(BPF_B, BPF_REG_2, BPF_REG_1, 0), BPF_MOV64_REG(BPF_REG_3, BPF_REG_10),
       BPF_ALU64_IMM(BPF_ADD, BPF_REG_3, -16), BPF_ALU64_REG(BPF_ADD, BPF_REG_3, BPF_REG_2),
       BPF_LDX_MEM(BPF_B, BPF_REG_0, BPF_REG_3, 0), BPF_EXIT_INSN())
REJECT("pointer spill narrower than 8 bytes", raw, "invalid size of register spill",
       BPF_STX_MEM(BPF_W, BPF_REG_10, BPF_REG_10, -8), RET0)
REJECT("partial overwrite of a spilled pointer", raw, "attempt to corrupt spilled pointer on stack",
       BPF_STX_MEM(BPF_DW, BPF_REG_10, BPF_REG_1, -8), BPF_ST_MEM(BPF_W, BPF_REG_10, -8, 0), RET0)
REJECT("partial fill of a spilled pointer", raw, "invalid size of register fill",
       BPF_STX_MEM(BPF_DW, BPF_REG_10, BPF_REG_1, -8),
       BPF_LDX_MEM(BPF_W, BPF_REG_0, BPF_REG_10, -8), BPF_EXIT_INSN())

// --- context -------------------------------------------------------------------------------
REJECT("ctx access outside the program type's fields", ops, "invalid bpf_context access off=40 size=8",
       BPF_LDX_MEM(BPF_DW, BPF_REG_0, BPF_REG_1, 40), RET0)
REJECT("ctx access with a size the field does not allow", ops, "invalid bpf_context access off=0 size=2",
       BPF_LDX_MEM(BPF_H, BPF_REG_0, BPF_REG_1, 0), RET0)
REJECT("ctx pointer field read narrower than the pointer", ops, "invalid bpf_context access off=16 size=4",
       BPF_LDX_MEM(BPF_W, BPF_REG_0, BPF_REG_1, kCtxTask), RET0)
REJECT("ctx write to a read-only field", ops, "invalid bpf_context access off=0 size=8",
       BPF_MOV64_IMM(BPF_REG_2, 0), BPF_STX_MEM(BPF_DW, BPF_REG_1, BPF_REG_2, 0), RET0)
REJECT("ctx store of an immediate", ops, "BPF_ST stores into R1 ctx is not allowed",
       BPF_ST_MEM(BPF_W, BPF_REG_1, kCtxB, 1), RET0)
REJECT("dereference of a modified ctx pointer", ops, "dereference of modified ctx ptr R1 off=8 disallowed",
       BPF_ALU64_IMM(BPF_ADD, BPF_REG_1, 8), BPF_LDX_MEM(BPF_DW, BPF_REG_0, BPF_REG_1, 0), RET0)
REJECT("variable ctx offset", ops, "variable ctx access var_off=(0x0; 0x8) disallowed",
       BPF_LDX_MEM(BPF_DW, BPF_REG_2, BPF_REG_1, 0), BPF_ALU64_IMM(BPF_AND, BPF_REG_2, 8),
       BPF_ALU64_REG(BPF_ADD, BPF_REG_1, BPF_REG_2), BPF_LDX_MEM(BPF_DW, BPF_REG_0, BPF_REG_1, 0),
       RET0)
REJECT("syscall ctx access at a negative offset", syscall, "invalid bpf_context access off=-1 size=1",
       BPF_LDX_MEM(BPF_B, BPF_REG_0, BPF_REG_1, -1), RET0)
REJECT("a context with a fixed layout is not helper memory", ops,
       "R2 type=ctx expected=fp",
       BPF_MOV64_REG(BPF_REG_2, BPF_REG_1), BPF_LD_MAP_FD(BPF_REG_1, kHash),
       BPF_EMIT_CALL(BPF_FUNC_map_lookup_elem), RET0)
// The kernel's mem_types have no context pointer: a SYSCALL program's context is not helper
// memory either, whole or moved (the 6.18 kernel's words).
REJECT("a SYSCALL context pointer passed to a helper as its map key", syscall,
       "R2 type=ctx expected=fp, pkt, pkt_meta, map_key, map_value, mem, ringbuf_mem, buf, trusted_ptr_",
       BPF_MOV64_REG(BPF_REG_2, BPF_REG_1), BPF_LD_MAP_FD(BPF_REG_1, kHash),
       BPF_EMIT_CALL(BPF_FUNC_map_lookup_elem), RET0)
REJECT("a modified SYSCALL context pointer passed to a helper", syscall,
       "R2 type=ctx expected=fp, pkt, pkt_meta, map_key, map_value, mem, ringbuf_mem, buf, trusted_ptr_",
       BPF_MOV64_REG(BPF_REG_2, BPF_REG_1), BPF_ALU64_IMM(BPF_ADD, BPF_REG_2, 4),
       BPF_LD_MAP_FD(BPF_REG_1, kHash), BPF_EMIT_CALL(BPF_FUNC_map_lookup_elem), RET0)
REJECT("a scalar passed as a helper's map key", syscall,
       "R2 type=scalar expected=fp, pkt, pkt_meta, map_key, map_value, mem, ringbuf_mem, buf, trusted_ptr_",
       BPF_MOV64_IMM(BPF_REG_2, 0), BPF_LD_MAP_FD(BPF_REG_1, kHash),
       BPF_EMIT_CALL(BPF_FUNC_map_lookup_elem), RET0)
REJECT("pointer stored into the ctx", syscall, "R10 leaks addr into ctx",
       BPF_STX_MEM(BPF_DW, BPF_REG_1, BPF_REG_10, 0), RET0)

// --- map values and memory -----------------------------------------------------------------
REJECT("map value read past value_size", raw, "invalid access to map value, value_size=48 off=48 size=8",
       LOOKUP(kArray), BPF_JMP_IMM(BPF_JEQ, BPF_REG_0, 0, 1),
       BPF_LDX_MEM(BPF_DW, BPF_REG_1, BPF_REG_0, 48), RET0)
REJECT("map value access with an unbounded variable offset", raw,
       "R0 unbounded memory access, make sure to bounds check any such access",
       LOOKUP(kArray), BPF_JMP_IMM(BPF_JEQ, BPF_REG_0, 0, 3),
       BPF_LDX_MEM(BPF_W, BPF_REG_1, BPF_REG_0, 0), BPF_ALU64_REG(BPF_ADD, BPF_REG_0, BPF_REG_1),
       BPF_LDX_MEM(BPF_B, BPF_REG_2, BPF_REG_0, 0), RET0)
REJECT("map value access with a possibly negative offset", raw, "R0 min value is negative",
       LOOKUP(kArray), BPF_JMP_IMM(BPF_JEQ, BPF_REG_0, 0, 4),
       BPF_LDX_MEM(BPF_B, BPF_REG_1, BPF_REG_0, 0), BPF_ALU64_IMM(BPF_SUB, BPF_REG_1, 4),
       BPF_ALU64_REG(BPF_ADD, BPF_REG_0, BPF_REG_1), BPF_LDX_MEM(BPF_B, BPF_REG_2, BPF_REG_0, 0),
       RET0)
REJECT("map value access whose variable offset may exceed the value", raw,
       "R0 max value is outside of the allowed memory range",
       LOOKUP(kArray), BPF_JMP_IMM(BPF_JEQ, BPF_REG_0, 0, 3),
       BPF_LDX_MEM(BPF_B, BPF_REG_1, BPF_REG_0, 0), BPF_ALU64_REG(BPF_ADD, BPF_REG_0, BPF_REG_1),
       BPF_LDX_MEM(BPF_B, BPF_REG_2, BPF_REG_0, 0), RET0)
REJECT("dereference of map_value_or_null before the NULL check", raw,
       "R0 invalid mem access 'map_value_or_null'",
       LOOKUP(kArray), BPF_LDX_MEM(BPF_DW, BPF_REG_1, BPF_REG_0, 0), RET0)
REJECT("NULL branch of a map lookup is a scalar zero", raw, "R0 invalid mem access 'scalar'",
       LOOKUP(kArray), BPF_JMP_IMM(BPF_JNE, BPF_REG_0, 0, 1),
       BPF_LDX_MEM(BPF_DW, BPF_REG_1, BPF_REG_0, 0), RET0)
REJECT("dereference of a scalar", raw, "R1 invalid mem access 'scalar'",
       BPF_MOV64_IMM(BPF_REG_1, 0), BPF_LDX_MEM(BPF_DW, BPF_REG_0, BPF_REG_1, 0), BPF_EXIT_INSN())
REJECT("dereference of a map pointer without CAP_PERFMON", raw,
       "'struct bpf_array' access is allowed only to CAP_PERFMON and CAP_SYS_ADMIN",
       BPF_LD_MAP_FD(BPF_REG_1, kArray), BPF_LDX_MEM(BPF_DW, BPF_REG_0, BPF_REG_1, 0),
       BPF_EXIT_INSN())
REJECT("PTR_TO_MEM read past its size", raw, "invalid access to memory, mem_size=64 off=64 size=1",
       BPF_LDX_MEM(BPF_B, BPF_REG_0, BPF_REG_1, 64), BPF_EXIT_INSN())
REJECT("ring-buffer record write past its size", ops, "invalid access to memory, mem_size=16 off=16 size=8",
       RESERVE16, BPF_JMP_IMM(BPF_JEQ, BPF_REG_0, 0, 4), BPF_ST_MEM(BPF_DW, BPF_REG_0, 16, 0),
       BPF_MOV64_REG(BPF_REG_1, BPF_REG_0), BPF_MOV64_IMM(BPF_REG_2, 0),
       BPF_EMIT_CALL(BPF_FUNC_ringbuf_submit), RET0)
REJECT("write into a frozen read-only map", raw, "write into map forbidden, value_size=16 off=0 size=4",
       BPF_LD_MAP_VALUE(BPF_REG_1, kRodata, 0), BPF_ST_MEM(BPF_W, BPF_REG_1, 0, 1), RET0)
REJECT("direct value access past the value", raw, "invalid access to map value pointer, value_size=32 off=40",
       BPF_LD_MAP_VALUE(BPF_REG_1, kData, 40), RET0)
REJECT("pointer stored into a map value", raw, "R10 leaks addr into map",
       BPF_LD_MAP_VALUE(BPF_REG_1, kData, 0), BPF_STX_MEM(BPF_DW, BPF_REG_1, BPF_REG_10, 0), RET0)
REJECT("load/store of a bpf_spin_lock", ops, "bpf_spin_lock cannot be accessed directly by load/store",
       LOOKUP(kLocked), BPF_JMP_IMM(BPF_JEQ, BPF_REG_0, 0, 1),
       BPF_LDX_MEM(BPF_W, BPF_REG_1, BPF_REG_0, 0), RET0)
REJECT("invalid map index in ld_imm64", raw, "fd 50 is not pointing to valid bpf_map",
       BPF_LD_MAP_FD(BPF_REG_1, 50), RET0)

// --- pointer arithmetic --------------------------------------------------------------------
REJECT("pointer multiplied by pointer", raw, "R1 pointer *= pointer prohibited",
       BPF_ALU64_REG(BPF_MUL, BPF_REG_1, BPF_REG_10), RET0)
REJECT("pointer minus pointer", raw, "R1 pointer -= pointer prohibited",
       BPF_ALU64_REG(BPF_SUB, BPF_REG_1, BPF_REG_10), RET0)
REJECT("32-bit arithmetic on a pointer", raw, "R1 32-bit pointer arithmetic prohibited",
       BPF_ALU32_IMM(BPF_ADD, BPF_REG_1, 4), RET0)
REJECT("bitwise operation on a pointer", raw, "R1 bitwise operator &= on pointer prohibited",
       BPF_ALU64_IMM(BPF_AND, BPF_REG_1, 7), RET0)
REJECT("multiplication of a pointer", raw, "R1 pointer arithmetic with *= operator prohibited",
       BPF_ALU64_IMM(BPF_MUL, BPF_REG_1, 2), RET0)
REJECT("scalar minus pointer", raw, "R2 tried to subtract pointer from scalar",
       BPF_MOV64_IMM(BPF_REG_2, 0), BPF_ALU64_REG(BPF_SUB, BPF_REG_2, BPF_REG_1), RET0)
REJECT("arithmetic on a map pointer", raw, "R1 pointer arithmetic on map_ptr prohibited",
       BPF_LD_MAP_FD(BPF_REG_1, kArray), BPF_ALU64_IMM(BPF_ADD, BPF_REG_1, 8), RET0)
REJECT("arithmetic on map_value_or_null", raw,
       "R0 pointer arithmetic on map_value_or_null prohibited, null-check it first",
       LOOKUP(kArray), BPF_ALU64_IMM(BPF_ADD, BPF_REG_0, 8), RET0)
REJECT("unbounded scalar added to a pointer", raw,
       "math between map_value pointer and register with unbounded min value is not allowed",
       LOOKUP(kArray), BPF_JMP_IMM(BPF_JEQ, BPF_REG_0, 0, 2),
       BPF_LDX_MEM(BPF_DW, BPF_REG_1, BPF_REG_0, 0), BPF_ALU64_REG(BPF_ADD, BPF_REG_0, BPF_REG_1),
       RET0)
REJECT("32-bit copy of a pointer", raw, "R1 partial copy of pointer",
       BPF_MOV32_REG(BPF_REG_0, BPF_REG_1), BPF_EXIT_INSN())
REJECT("negation of a pointer", raw, "R1 pointer arithmetic prohibited",
       BPF_RAW(BPF_ALU64 | BPF_NEG, BPF_REG_1, 0, 0, 0), RET0)
REJECT("comparison of a pointer with a non-NULL constant", raw, "R1 pointer comparison prohibited",
       BPF_JMP_IMM(BPF_JGT, BPF_REG_1, 5, 0), RET0)

// --- return values -------------------------------------------------------------------------
REJECT("pointer returned as the program's result", raw, "R0 leaks addr as return value",
       BPF_MOV64_REG(BPF_REG_0, BPF_REG_10), BPF_EXIT_INSN())
REJECT("return value outside the program type's range", ops,
       "At program exit the register R0 has smin=2 smax=2 should have been in [0, 1]",
       BPF_MOV64_IMM(BPF_REG_0, 2), BPF_EXIT_INSN())
REJECT("unbounded return value for a ranged program type", ops,
       "At program exit the register R0 has unknown scalar value should have been in [0, 1]",
       BPF_LDX_MEM(BPF_DW, BPF_REG_0, BPF_REG_1, 0), BPF_EXIT_INSN())
REJECT("pointer returned by a ranged program type", ops,
       "At program exit the register R0 is not a known value (fp)",
       BPF_MOV64_REG(BPF_REG_0, BPF_REG_10), BPF_EXIT_INSN())

// --- helpers -------------------------------------------------------------------------------
REJECT("helper argument of the wrong type", raw, "R1 type=scalar expected=map_ptr",
       BPF_ST_MEM(BPF_W, BPF_REG_10, -4, 0), BPF_MOV64_IMM(BPF_REG_1, 0),
       BPF_MOV64_REG(BPF_REG_2, BPF_REG_10), BPF_ALU64_IMM(BPF_ADD, BPF_REG_2, -4),
       BPF_EMIT_CALL(BPF_FUNC_map_lookup_elem), RET0)
REJECT("map key on uninitialised stack", raw, "invalid read from stack R2 off -4+0 size 4",
       BPF_MOV64_REG(BPF_REG_2, BPF_REG_10), BPF_ALU64_IMM(BPF_ADD, BPF_REG_2, -4),
       BPF_LD_MAP_FD(BPF_REG_1, kArray), BPF_EMIT_CALL(BPF_FUNC_map_lookup_elem), RET0)
REJECT("unknown helper id", raw, "invalid func unknown#999", BPF_EMIT_CALL(999), RET0)
REJECT("helper not allowed for the program type", ops,
       "program of this type cannot use helper bpf_trace_printk#6",
       BPF_EMIT_CALL(BPF_FUNC_trace_printk), RET0)
REJECT("ring buffer map passed to map_lookup_elem", raw,
       "cannot pass map_type 27 into func bpf_map_lookup_elem#1", LOOKUP(kRingbuf), RET0)
REJECT("array map passed to ringbuf_reserve", raw,
       "cannot pass map_type 2 into func bpf_ringbuf_reserve#131",
       BPF_LD_MAP_FD(BPF_REG_1, kArray), BPF_MOV64_IMM(BPF_REG_2, 16), BPF_MOV64_IMM(BPF_REG_3, 0),
       BPF_EMIT_CALL(BPF_FUNC_ringbuf_reserve), RET0)
REJECT("ringbuf_reserve size not a known constant", ops, "R2 is not a known constant'",
       BPF_LDX_MEM(BPF_DW, BPF_REG_2, BPF_REG_1, 0), BPF_LD_MAP_FD(BPF_REG_1, kRingbuf),
       BPF_MOV64_IMM(BPF_REG_3, 0), BPF_EMIT_CALL(BPF_FUNC_ringbuf_reserve), RET0)
REJECT("helper memory size possibly negative", ops,
       "R3 min value is negative, either use unsigned or 'var &= const'",
       BPF_LDX_MEM(BPF_DW, BPF_REG_3, BPF_REG_1, 0), BPF_ST_MEM(BPF_DW, BPF_REG_10, -8, 0),
       BPF_MOV64_REG(BPF_REG_2, BPF_REG_10), BPF_ALU64_IMM(BPF_ADD, BPF_REG_2, -8),
       BPF_LD_MAP_FD(BPF_REG_1, kRingbuf), BPF_MOV64_IMM(BPF_REG_4, 0),
       BPF_EMIT_CALL(BPF_FUNC_ringbuf_output), RET0)
REJECT("helper memory larger than the buffer", ops, "invalid read from stack R2 off=-8 size=16",
       BPF_ST_MEM(BPF_DW, BPF_REG_10, -8, 0), BPF_MOV64_REG(BPF_REG_2, BPF_REG_10),
       BPF_ALU64_IMM(BPF_ADD, BPF_REG_2, -8), BPF_MOV64_IMM(BPF_REG_3, 16),
       BPF_LD_MAP_FD(BPF_REG_1, kRingbuf), BPF_MOV64_IMM(BPF_REG_4, 0),
       BPF_EMIT_CALL(BPF_FUNC_ringbuf_output), RET0)
REJECT("zero-sized helper memory where the size must be positive", ops, "R2 invalid zero-sized read",
       BPF_MOV64_REG(BPF_REG_1, BPF_REG_10), BPF_ALU64_IMM(BPF_ADD, BPF_REG_1, -16),
       BPF_MOV64_IMM(BPF_REG_2, 0), BPF_EMIT_CALL(BPF_FUNC_get_current_comm), RET0)
REJECT("pointer passed as a scalar helper argument", ops, "R2 leaks addr into helper function",
       RESERVE16, BPF_JMP_IMM(BPF_JEQ, BPF_REG_0, 0, 3), BPF_MOV64_REG(BPF_REG_1, BPF_REG_0),
       BPF_MOV64_REG(BPF_REG_2, BPF_REG_10), BPF_EMIT_CALL(BPF_FUNC_ringbuf_submit), RET0)
REJECT("task storage with an untrusted task", ops, "R2 must be referenced or trusted",
       BPF_LDX_MEM(BPF_DW, BPF_REG_2, BPF_REG_1, kCtxTask), BPF_LDX_MEM(BPF_DW, BPF_REG_2, BPF_REG_2, 24),
       BPF_LD_MAP_FD(BPF_REG_1, kTaskStorage), BPF_MOV64_IMM(BPF_REG_3, 0), BPF_MOV64_IMM(BPF_REG_4, 0),
       BPF_EMIT_CALL(BPF_FUNC_task_storage_get), RET0)
REJECT("helper call while holding a spin lock", ops, "function calls are not allowed while holding a lock",
       LOOKUP(kLocked), BPF_JMP_IMM(BPF_JEQ, BPF_REG_0, 0, 3), BPF_MOV64_REG(BPF_REG_1, BPF_REG_0),
       BPF_EMIT_CALL(BPF_FUNC_spin_lock), BPF_EMIT_CALL(BPF_FUNC_ktime_get_ns), RET0)
REJECT("exit with a spin lock held", ops,
       "BPF_EXIT instruction in main prog cannot be used inside bpf_spin_lock-ed region",
       LOOKUP(kLocked), BPF_JMP_IMM(BPF_JEQ, BPF_REG_0, 0, 2), BPF_MOV64_REG(BPF_REG_1, BPF_REG_0),
       BPF_EMIT_CALL(BPF_FUNC_spin_lock), RET0)
REJECT("spin lock in a map without one", ops, "map 'arr' has no valid bpf_spin_lock",
       LOOKUP(kArray), BPF_JMP_IMM(BPF_JEQ, BPF_REG_0, 0, 2), BPF_MOV64_REG(BPF_REG_1, BPF_REG_0),
       BPF_EMIT_CALL(BPF_FUNC_spin_lock), RET0)
REJECT("bpf_loop callback that is not a function", raw, "R2 type=scalar expected=func",
       BPF_MOV64_IMM(BPF_REG_1, 10), BPF_MOV64_IMM(BPF_REG_2, 0), BPF_MOV64_IMM(BPF_REG_3, 0),
       BPF_MOV64_IMM(BPF_REG_4, 0), BPF_EMIT_CALL(BPF_FUNC_loop), BPF_EXIT_INSN())
REJECT("bpf_loop callback returning outside [0, 1]", raw,
       "At callback return the register R0 has smin=5 smax=5 should have been in [0, 1]",
       BPF_MOV64_IMM(BPF_REG_1, 10), BPF_LD_FUNC(BPF_REG_2, 5), BPF_MOV64_IMM(BPF_REG_3, 0),
       BPF_MOV64_IMM(BPF_REG_4, 0), BPF_EMIT_CALL(BPF_FUNC_loop), BPF_EXIT_INSN(),
       BPF_MOV64_IMM(BPF_REG_0, 5), BPF_EXIT_INSN())

// --- ring buffer references ----------------------------------------------------------------
// The kernel's ids: the may-be-NULL record takes id 1, its reference id 2.
REJECT("ring-buffer record never submitted (leak at exit)", ops,
       "Unreleased reference id=2 alloc_insn=4\nBPF_EXIT instruction in main prog would lead to reference leak",
       RESERVE16, RET0)
REJECT("ring-buffer record leaked on one path", ops, "Unreleased reference id=",
       RESERVE16, BPF_JMP_IMM(BPF_JEQ, BPF_REG_0, 0, 1), BPF_ST_MEM(BPF_DW, BPF_REG_0, 0, 0), RET0)
REJECT("ring-buffer submit of a map value", ops, "R1 type=map_value expected=ringbuf_mem",
       LOOKUP(kArray), BPF_JMP_IMM(BPF_JEQ, BPF_REG_0, 0, 3), BPF_MOV64_REG(BPF_REG_1, BPF_REG_0),
       BPF_MOV64_IMM(BPF_REG_2, 0), BPF_EMIT_CALL(BPF_FUNC_ringbuf_submit), RET0)
REJECT("ring-buffer record submitted twice", ops, "R6 !read_ok",
       RESERVE16, BPF_JMP_IMM(BPF_JEQ, BPF_REG_0, 0, 7), BPF_MOV64_REG(BPF_REG_6, BPF_REG_0),
       BPF_MOV64_REG(BPF_REG_1, BPF_REG_6), BPF_MOV64_IMM(BPF_REG_2, 0),
       BPF_EMIT_CALL(BPF_FUNC_ringbuf_submit), BPF_MOV64_REG(BPF_REG_1, BPF_REG_6),
       BPF_MOV64_IMM(BPF_REG_2, 0), BPF_EMIT_CALL(BPF_FUNC_ringbuf_discard), RET0)
REJECT("ring-buffer submit of a moved pointer", ops, "R1 must have zero offset when passed to release func or trusted arg to kfunc",
       RESERVE16, BPF_JMP_IMM(BPF_JEQ, BPF_REG_0, 0, 4), BPF_MOV64_REG(BPF_REG_1, BPF_REG_0),
       BPF_ALU64_IMM(BPF_ADD, BPF_REG_1, 8), BPF_MOV64_IMM(BPF_REG_2, 0),
       BPF_EMIT_CALL(BPF_FUNC_ringbuf_submit), RET0)
REJECT("ring-buffer record used before the NULL check", ops, "R0 invalid mem access 'ringbuf_mem_or_null'",
       RESERVE16, BPF_ST_MEM(BPF_DW, BPF_REG_0, 0, 0), RET0)
REJECT("ring-buffer record used after submit", ops, "R6 !read_ok",
       RESERVE16, BPF_JMP_IMM(BPF_JEQ, BPF_REG_0, 0, 5), BPF_MOV64_REG(BPF_REG_6, BPF_REG_0),
       BPF_MOV64_REG(BPF_REG_1, BPF_REG_6), BPF_MOV64_IMM(BPF_REG_2, 0),
       BPF_EMIT_CALL(BPF_FUNC_ringbuf_submit), BPF_ST_MEM(BPF_DW, BPF_REG_6, 0, 0), RET0)

// --- kfuncs --------------------------------------------------------------------------------
REJECT("KF_ACQUIRE result never released", ops, "Unreleased reference id=",
       BPF_LDX_MEM(BPF_DW, BPF_REG_1, BPF_REG_1, kCtxTask), BPF_CALL_KFUNC(kTaskAcquire), RET0)
REJECT("KF_RELEASE twice on one reference", ops, "R6 !read_ok",
       BPF_LDX_MEM(BPF_DW, BPF_REG_1, BPF_REG_1, kCtxTask), BPF_CALL_KFUNC(kTaskAcquire),
       BPF_JMP_IMM(BPF_JEQ, BPF_REG_0, 0, 5), BPF_MOV64_REG(BPF_REG_6, BPF_REG_0),
       BPF_MOV64_REG(BPF_REG_1, BPF_REG_6), BPF_CALL_KFUNC(kTaskRelease),
       BPF_MOV64_REG(BPF_REG_1, BPF_REG_6), BPF_CALL_KFUNC(kTaskRelease), RET0)
REJECT("KF_RET_NULL result passed on without a NULL check", ops,
       "Possibly NULL pointer passed to trusted arg0",
       BPF_LDX_MEM(BPF_DW, BPF_REG_1, BPF_REG_1, kCtxTask), BPF_CALL_KFUNC(kTaskAcquire),
       BPF_MOV64_REG(BPF_REG_1, BPF_REG_0), BPF_CALL_KFUNC(kTaskRelease), RET0)
REJECT("KF_RET_NULL result dereferenced without a NULL check", ops,
       "R0 invalid mem access 'trusted_ptr_or_null_'",
       BPF_LDX_MEM(BPF_DW, BPF_REG_1, BPF_REG_1, kCtxTask), BPF_CALL_KFUNC(kTaskAcquire),
       BPF_LDX_MEM(BPF_W, BPF_REG_1, BPF_REG_0, 0), RET0)
REJECT("KF_SLEEPABLE kfunc in a non-sleepable program", ops,
       "program must be sleepable to call sleepable kfunc bpf_mem_cgroup_flush_stats",
       BPF_LDX_MEM(BPF_DW, BPF_REG_1, BPF_REG_1, kCtxMemcg), BPF_JMP_IMM(BPF_JEQ, BPF_REG_1, 0, 1),
       BPF_CALL_KFUNC(kFlush), RET0)
REJECT("kfunc not registered for the program type", ops,
       "calling kernel function bpf_proactive_reclaim is not allowed",
       BPF_LDX_MEM(BPF_DW, BPF_REG_1, BPF_REG_1, kCtxMemcg), BPF_JMP_IMM(BPF_JEQ, BPF_REG_1, 0, 3),
       BPF_MOV64_IMM(BPF_REG_2, 4096), BPF_MOV64_IMM(BPF_REG_3, -1), BPF_CALL_KFUNC(kReclaim), RET0)
REJECT("KF_RELEASE of a pointer that holds no reference", ops,
       "release kernel function bpf_task_release expects refcounted PTR_TO_BTF_ID",
       BPF_LDX_MEM(BPF_DW, BPF_REG_1, BPF_REG_1, kCtxTask), BPF_CALL_KFUNC(kTaskRelease), RET0)
REJECT("kfunc argument of the wrong struct type", ops,
       "kernel function bpf_mem_cgroup_usage args#0 expected pointer to STRUCT mem_cgroup but R1 has a pointer to STRUCT task_struct",
       BPF_LDX_MEM(BPF_DW, BPF_REG_1, BPF_REG_1, kCtxTask), BPF_CALL_KFUNC(kUsage), RET0)
REJECT("untrusted pointer passed to a trusted-args kfunc", ops, "R1 must be referenced or trusted",
       BPF_LDX_MEM(BPF_DW, BPF_REG_1, BPF_REG_1, kCtxTask), BPF_LDX_MEM(BPF_DW, BPF_REG_1, BPF_REG_1, 24),
       BPF_CALL_KFUNC(kTaskPid), RET0)
REJECT("untrusted pointer passed to a KF_RCU kfunc", ops, "R1 must be a rcu pointer",
       BPF_LDX_MEM(BPF_DW, BPF_REG_1, BPF_REG_1, kCtxTask), BPF_LDX_MEM(BPF_DW, BPF_REG_1, BPF_REG_1, 24),
       BPF_CALL_KFUNC(kTaskAcquire), RET0)
REJECT("scalar passed as a kfunc struct pointer", ops,
       "arg#0 expected pointer to STRUCT task_struct but R1 is scalar",
       BPF_MOV64_IMM(BPF_REG_1, 0), BPF_CALL_KFUNC(kTaskPid), RET0)
REJECT("call of an unresolved weak kfunc", ops,
       "invalid kernel function call not eliminated in verifier pass",
       BPF_CALL_KFUNC(kUnresolved), RET0)
REJECT("kfunc index outside the kfunc table", ops, "kernel btf_id 77 is not a function",
       BPF_CALL_KFUNC(77), RET0)

// --- kernel-object fields ------------------------------------------------------------------
REJECT("kernel-object read beyond the struct", ops, "access beyond struct task_struct at off 64 size 8",
       BPF_LDX_MEM(BPF_DW, BPF_REG_1, BPF_REG_1, kCtxTask), BPF_LDX_MEM(BPF_DW, BPF_REG_0, BPF_REG_1, 64),
       RET0)
REJECT("kernel-object read of an unexposed field", ops,
       "struct task_struct has no readable field at off 40 size 8",
       BPF_LDX_MEM(BPF_DW, BPF_REG_1, BPF_REG_1, kCtxTask), BPF_LDX_MEM(BPF_DW, BPF_REG_0, BPF_REG_1, 40),
       RET0)
REJECT("write through a kernel-object pointer", ops, "only read is supported",
       BPF_LDX_MEM(BPF_DW, BPF_REG_1, BPF_REG_1, kCtxTask), BPF_ST_MEM(BPF_W, BPF_REG_1, 0, 1), RET0)
REJECT("nullable ctx pointer dereferenced without a NULL check", ops,
       "R1 invalid mem access 'trusted_ptr_or_null_'",
       BPF_LDX_MEM(BPF_DW, BPF_REG_1, BPF_REG_1, kCtxMemcg), BPF_LDX_MEM(BPF_DW, BPF_REG_0, BPF_REG_1, 0),
       RET0)

// --- control flow --------------------------------------------------------------------------
REJECT("jump out of range", raw, "jump out of range from insn 0 to 9",
       BPF_JMP_A(8), RET0)
REJECT("unreachable instruction", raw, "unreachable insn 2", RET0, RET0)
REJECT("fall-through off the end of the program", raw, "last insn is not an exit or jmp",
       BPF_MOV64_IMM(BPF_REG_0, 0))
REJECT("jump from one subprogram into another", raw, "jump out of range from insn 3 to 1",
       BPF_CALL_REL(2), BPF_MOV64_IMM(BPF_REG_0, 0), BPF_EXIT_INSN(), BPF_JMP_A(-3), BPF_EXIT_INSN())
REJECT("infinite loop", raw, "infinite loop detected at insn 1",
       BPF_MOV64_IMM(BPF_REG_0, 0), BPF_JMP_A(-1))

TEST_CASE("verifier rejects: an infinite loop with both states, as the kernel reports it", "[bpfvm][verifier][reject]") {
  VerifierEnv env;
  // The kernel (6.18, as a SYSCALL program: R1=ctx()): the reason, then the current state and
  // the explored one it equals, whole.
  const bpf_verifier_result r = env.raw(Prog{BPF_MOV64_IMM(BPF_REG_0, 0), BPF_JMP_A(-1)}, BPF_LOG_LEVEL1);
  CHECK(r.error ==
        "infinite loop detected at insn 1\n"
        "cur state: R0=0 R1=mem(sz=64) R2=64 R10=fp0\n"
        "old state: R0=0 R1=mem(sz=64) R2=64 R10=fp0");
  CHECK_THAT(r.log, Catch::Contains(
      "1: (05) goto pc-1\ninfinite loop detected at insn 1\n"
      "cur state: R0=0 R1=mem(sz=64) R2=64 R10=fp0\n"
      "old state: R0=0 R1=mem(sz=64) R2=64 R10=fp0\n"
      "processed 9 insns (limit 1000000) "));
}

TEST_CASE("verifier rejects: an infinite loop's explored state marks its precise registers", "[bpfvm][verifier][reject]") {
  VerifierEnv env;
  // r0 = 0; l1: goto l0; l0: if r0 < 4 goto l1; exit (verifier_loops1.c of the kernel's
  // selftests). The kernel (6.18) marks r0 precise in the explored state, not in the current.
  const bpf_verifier_result r =
      env.raw(Prog{BPF_MOV64_IMM(BPF_REG_0, 0), BPF_JMP_A(0), BPF_JMP_IMM(BPF_JLT, BPF_REG_0, 4, -2),
                   BPF_EXIT_INSN()});
  CHECK(r.error ==
        "infinite loop detected at insn 1\n"
        "cur state: R0=0 R1=mem(sz=64) R2=64 R10=fp0\n"
        "old state: R0=P0 R1=mem(sz=64) R2=64 R10=fp0");
}

REJECT("a context pointer moved below its start", ops, "negative offset ctx ptr R1 off=-8 disallowed",
       BPF_ALU64_IMM(BPF_ADD, BPF_REG_1, -8), BPF_LDX_MEM(BPF_DW, BPF_REG_0, BPF_REG_1, 0), RET0)

TEST_CASE("verifier rejects: a write or a negative offset through a map pointer", "[bpfvm][verifier][reject]") {
  VerifierEnv env;
  bpf_verifier_opts o = env.opts(&umemcg::emu::bpf_raw_mem_prog_type());
  o.allow_ptr_leaks = true;  // the kernel's messages after its CAP_PERFMON check
  bpf_verifier_result r =
      bpf_check(Prog{BPF_LD_MAP_FD(BPF_REG_1, kArray), BPF_ST_MEM(BPF_W, BPF_REG_1, 0, 0), RET0}, o);
  CHECK(r.error == "only read from bpf_array is supported");
  r = bpf_check(Prog{BPF_LD_MAP_FD(BPF_REG_1, kHash), BPF_LDX_MEM(BPF_DW, BPF_REG_0, BPF_REG_1, -8),
                     BPF_EXIT_INSN()},
                o);
  CHECK(r.error == "R1 is bpf_htab invalid negative access: off=-8");
  // Reads walk the kernel's struct bpf_array, struct bpf_map first (Linux 6.18 layout): a
  // scalar field in part or whole, a pointer field only whole.
  r = bpf_check(Prog{BPF_LD_MAP_FD(BPF_REG_1, kArray), BPF_LDX_MEM(BPF_W, BPF_REG_0, BPF_REG_1, 76),
                     BPF_EXIT_INSN()},
                o);
  CHECK(r.ok());
  CHECK(r.map_field_reads);
  r = bpf_check(Prog{BPF_LD_MAP_FD(BPF_REG_1, kArray), BPF_LDX_MEM(BPF_W, BPF_REG_0, BPF_REG_1, 44),
                     BPF_EXIT_INSN()},
                o);
  CHECK(r.error == "cannot access ptr member ops with moff 40 in struct bpf_map with off 44 size 4");
  r = bpf_check(Prog{BPF_LD_MAP_FD(BPF_REG_1, kHash), BPF_LDX_MEM(BPF_DW, BPF_REG_0, BPF_REG_1, 64),
                     BPF_EXIT_INSN()},
                o);
  CHECK(r.error ==
        "access beyond the end of member map_type (mend:68) in struct bpf_map with off 64 size 8");
  r = bpf_check(Prog{BPF_LD_MAP_FD(BPF_REG_1, kHash), BPF_LDX_MEM(BPF_W, BPF_REG_0, BPF_REG_1, 900),
                     BPF_EXIT_INSN()},
                o);
  CHECK(r.error == "access beyond struct bpf_htab at off 900 size 4");
}
REJECT("loop whose exit condition never changes", raw, "infinite loop detected",
       BPF_MOV64_IMM(BPF_REG_0, 0), BPF_LDX_MEM(BPF_B, BPF_REG_2, BPF_REG_1, 0),
       BPF_JMP_IMM(BPF_JEQ, BPF_REG_2, 7, 1), BPF_JMP_A(-2), BPF_EXIT_INSN())
REJECT("recursion deeper than 8 frames", raw, "the call stack of 9 frames is too deep",
       BPF_CALL_REL(1), BPF_EXIT_INSN(), BPF_CALL_REL(-1), BPF_EXIT_INSN())
// The kernel walks the call graph whatever decides the calls (check_max_stack_depth): a
// recursion the exploration bounds at 4 frames is still refused.
REJECT("recursion bounded by a constant argument", raw, "the call stack of 8 frames is too deep !",
       BPF_MOV64_IMM(BPF_REG_1, 3), BPF_CALL_REL(1), BPF_EXIT_INSN(),
       BPF_JMP_IMM(BPF_JEQ, BPF_REG_1, 0, 2), BPF_ALU64_IMM(BPF_SUB, BPF_REG_1, 1),
       BPF_CALL_REL(-3), RET0)
// BPF_F_RDONLY_PROG / BPF_F_WRONLY_PROG maps (check_map_access_type, record_func_map).
REJECT("store into a BPF_F_RDONLY_PROG map value", raw, "write into map forbidden, value_size=8 off=4 size=4",
       BPF_ST_MEM(BPF_W, BPF_REG_10, -4, 0), BPF_MOV64_REG(BPF_REG_2, BPF_REG_10),
       BPF_ALU64_IMM(BPF_ADD, BPF_REG_2, -4), BPF_LD_MAP_FD(BPF_REG_1, kRdonlyProg),
       BPF_EMIT_CALL(BPF_FUNC_map_lookup_elem), BPF_JMP_IMM(BPF_JEQ, BPF_REG_0, 0, 1),
       BPF_ST_MEM(BPF_W, BPF_REG_0, 4, 1), RET0)
REJECT("load from a BPF_F_WRONLY_PROG map value", raw, "read from map forbidden, value_size=8 off=0 size=8",
       BPF_ST_MEM(BPF_W, BPF_REG_10, -4, 0), BPF_MOV64_REG(BPF_REG_2, BPF_REG_10),
       BPF_ALU64_IMM(BPF_ADD, BPF_REG_2, -4), BPF_LD_MAP_FD(BPF_REG_1, kWronlyProg),
       BPF_EMIT_CALL(BPF_FUNC_map_lookup_elem), BPF_JMP_IMM(BPF_JEQ, BPF_REG_0, 0, 1),
       BPF_LDX_MEM(BPF_DW, BPF_REG_0, BPF_REG_0, 0), RET0)
REJECT("bpf_map_update_elem on a BPF_F_RDONLY_PROG map", raw, "write into map forbidden",
       BPF_ST_MEM(BPF_DW, BPF_REG_10, -8, 0), BPF_MOV64_REG(BPF_REG_2, BPF_REG_10),
       BPF_ALU64_IMM(BPF_ADD, BPF_REG_2, -4), BPF_MOV64_REG(BPF_REG_3, BPF_REG_10),
       BPF_ALU64_IMM(BPF_ADD, BPF_REG_3, -8), BPF_MOV64_IMM(BPF_REG_4, 0),
       BPF_LD_MAP_FD(BPF_REG_1, kRdonlyProg), BPF_EMIT_CALL(BPF_FUNC_map_update_elem), RET0)
REJECT("a helper reading a BPF_F_WRONLY_PROG map value", raw, "read from map forbidden, value_size=8 off=0 size=8",
       BPF_ST_MEM(BPF_W, BPF_REG_10, -4, 0), BPF_MOV64_REG(BPF_REG_2, BPF_REG_10),
       BPF_ALU64_IMM(BPF_ADD, BPF_REG_2, -4), BPF_LD_MAP_FD(BPF_REG_1, kWronlyProg),
       BPF_EMIT_CALL(BPF_FUNC_map_lookup_elem), BPF_JMP_IMM(BPF_JEQ, BPF_REG_0, 0, 5),
       BPF_MOV64_REG(BPF_REG_3, BPF_REG_0), BPF_MOV64_REG(BPF_REG_2, BPF_REG_10),
       BPF_ALU64_IMM(BPF_ADD, BPF_REG_2, -4), BPF_LD_MAP_FD(BPF_REG_1, kWronlyProg),
       BPF_EMIT_CALL(BPF_FUNC_map_update_elem), RET0)
REJECT("combined stack of a call chain over 512 bytes", raw, "combined stack size of",
       BPF_ST_MEM(BPF_DW, BPF_REG_10, -512, 0), BPF_CALL_REL(1), BPF_EXIT_INSN(),
       BPF_ST_MEM(BPF_DW, BPF_REG_10, -64, 0), RET0)
REJECT("stack pointer returned to the caller", raw, "cannot return stack pointer to the caller frame",
       BPF_CALL_REL(1), BPF_EXIT_INSN(), BPF_MOV64_REG(BPF_REG_0, BPF_REG_10), BPF_EXIT_INSN())
REJECT("unknown opcode", raw, "unknown opcode ff", BPF_RAW(0xff, 0, 0, 0, 0), RET0)
REJECT("reserved field set", raw, "BPF_ALU uses reserved fields",
       BPF_RAW(BPF_ALU64 | BPF_ADD | BPF_K, 0, 1, 0, 0), RET0)
REJECT("callx (not a kernel instruction)", raw, "callx is not supported",
       BPF_MOV64_IMM(BPF_REG_1, 5), BPF_RAW(BPF_JMP | BPF_CALL | BPF_X, 1, 0, 0, 0), RET0)
REJECT("legacy packet load", raw, "BPF_LD_[ABS|IND] instructions not allowed",
       BPF_MOV64_REG(BPF_REG_6, BPF_REG_1), BPF_RAW(BPF_LD | BPF_ABS | BPF_W, 0, 0, 0, 0), BPF_EXIT_INSN())

TEST_CASE("verifier rejects: GPL-only helper from a non-GPL program", "[bpfvm][verifier][reject]") {
  VerifierEnv env;
  bpf_verifier_opts o = env.opts(&umemcg::emu::bpf_raw_mem_prog_type());
  o.gpl_compatible = false;
  const Prog p = {BPF_MOV64_REG(BPF_REG_1, BPF_REG_10), BPF_ALU64_IMM(BPF_ADD, BPF_REG_1, -8),
                  BPF_MOV64_IMM(BPF_REG_2, 8), BPF_MOV64_IMM(BPF_REG_3, 0),
                  BPF_EMIT_CALL(BPF_FUNC_probe_read_kernel), RET0};
  const bpf_verifier_result r = bpf_check(p, o);
  CHECK_THAT(r.error, Catch::Contains("cannot call GPL-restricted function from non-GPL compatible program"));
  o.gpl_compatible = true;
  CHECK(bpf_check(p, o).ok());
}

TEST_CASE("verifier rejects: sleepable program of a type that cannot sleep", "[bpfvm][verifier][reject]") {
  VerifierEnv env;
  bpf_prog_type_desc t = *env.test_ops;
  t.sleepable = bpf_sleepable::never;
  bpf_verifier_opts o = env.opts(&t);
  o.sleepable = true;
  const bpf_verifier_result r = bpf_check(Prog{RET0}, o);
  CHECK_THAT(r.error, Catch::Contains("can be sleepable"));
}

TEST_CASE("verifier rejects: the 1M processed-instruction complexity limit", "[bpfvm][verifier][reject]") {
  VerifierEnv env;
  // A loop whose counter never repeats: each iteration is a new state.
  const Prog p = {BPF_MOV64_IMM(BPF_REG_0, 0), BPF_ALU64_IMM(BPF_ADD, BPF_REG_0, 1),
                  BPF_JMP_IMM(BPF_JNE, BPF_REG_0, 0, -2), BPF_EXIT_INSN()};
  const auto t0 = std::chrono::steady_clock::now();
  const bpf_verifier_result r = env.raw(p, BPF_LOG_LEVEL1);
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  CHECK_THAT(r.error, Catch::Contains("BPF program is too large. Processed 1000001 insn"));
  CHECK(r.err == -E2BIG);
  WARN("1M-insn limit reached in " << secs << " s");
}

TEST_CASE("verifier rejects: a sleepable program naming a map type it may not use, even in dead code",
          "[bpfvm][verifier][reject]") {
  VerifierEnv env;
  env.maps[0].map_type = BPF_MAP_TYPE_SOCKMAP;
  bpf_verifier_opts o = env.opts(&umemcg::emu::bpf_syscall_prog_type());
  o.sleepable = true;
  // The ld_imm64 is on a branch never taken: the kernel checks every map reference up front
  // (resolve_pseudo_ldimm64 -> check_map_prog_compatibility).
  Prog p = {BPF_MOV64_IMM(BPF_REG_0, 0), BPF_JMP_IMM(BPF_JEQ, BPF_REG_0, 0, 2)};
  for (bpf_insn in : Prog{BPF_LD_MAP_FD(BPF_REG_1, kArray)}) p.push_back(in);
  p.push_back(BPF_EXIT_INSN());
  bpf_verifier_result r = bpf_check(p, o);
  CHECK(r.error == "Sleepable programs can only use array, hash, ringbuf and local storage maps");
  CHECK(r.error_insn == 2);
  o.sleepable = false;
  CHECK(bpf_check(p, o).ok());
  o.sleepable = true;
  for (u32 t : {BPF_MAP_TYPE_ARRAY, BPF_MAP_TYPE_HASH, BPF_MAP_TYPE_RINGBUF, BPF_MAP_TYPE_QUEUE,
                BPF_MAP_TYPE_ARRAY_OF_MAPS, BPF_MAP_TYPE_TASK_STORAGE}) {
    env.maps[0].map_type = t;
    CHECK(bpf_check(p, o).ok());
  }
  env.maps[0].map_type = BPF_MAP_TYPE_STRUCT_OPS;
  r = bpf_check(p, o);
  CHECK(r.error == "bpf_struct_ops map cannot be used in prog");
}

TEST_CASE("verifier rejects: a layout error is the kernel's line, its index apart",
          "[bpfvm][verifier][reject]") {
  VerifierEnv env;
  bpf_verifier_result r = env.raw(Prog{BPF_JMP_A(8), RET0});
  CHECK(r.error == "jump out of range from insn 0 to 9");
  CHECK(r.error_insn == 0);
  r = env.raw(Prog{BPF_MOV64_IMM(BPF_REG_0, 0), BPF_RAW(BPF_ALU64 | BPF_MOV | BPF_X, 15, 0, 0, 0),
                   BPF_EXIT_INSN()});
  CHECK(r.error == "R15 is invalid");
  CHECK(r.error_insn == 1);
}

REJECT("one store through the context on a path and the stack on another", syscall,
       "same insn cannot be used with different pointers",
       BPF_MOV64_IMM(BPF_REG_0, 0), BPF_LDX_MEM(BPF_W, BPF_REG_3, BPF_REG_1, 0),
       BPF_MOV64_REG(BPF_REG_2, BPF_REG_10), BPF_ALU64_IMM(BPF_ADD, BPF_REG_2, -8),
       BPF_JMP_IMM(BPF_JEQ, BPF_REG_3, 0, 1), BPF_MOV64_REG(BPF_REG_2, BPF_REG_1),
       BPF_STX_MEM(BPF_DW, BPF_REG_2, BPF_REG_0, 0), BPF_EXIT_INSN())
REJECT("one load from the context on a path and the stack on another", syscall,
       "same insn cannot be used with different pointers",
       BPF_ST_MEM(BPF_DW, BPF_REG_10, -8, 0), BPF_LDX_MEM(BPF_W, BPF_REG_3, BPF_REG_1, 0),
       BPF_MOV64_REG(BPF_REG_2, BPF_REG_10), BPF_ALU64_IMM(BPF_ADD, BPF_REG_2, -8),
       BPF_JMP_IMM(BPF_JEQ, BPF_REG_3, 0, 1), BPF_MOV64_REG(BPF_REG_2, BPF_REG_1),
       BPF_LDX_MEM(BPF_DW, BPF_REG_0, BPF_REG_2, 0), BPF_EXIT_INSN())

// Two lookups in a map with a bpf_spin_lock: each non-NULL value keeps its lookup's id, which
// names its lock (the kernel keeps reg->id where the value may hold a spin lock).
REJECT("unlock of another element's bpf_spin_lock", syscall, "bpf_spin_unlock of different lock",
       LOOKUP(kLocked), BPF_JMP_IMM(BPF_JNE, BPF_REG_0, 0, 1), BPF_EXIT_INSN(),
       BPF_MOV64_REG(BPF_REG_6, BPF_REG_0), BPF_MOV64_REG(BPF_REG_2, BPF_REG_10),
       BPF_ALU64_IMM(BPF_ADD, BPF_REG_2, -4), BPF_LD_MAP_FD(BPF_REG_1, kLocked),
       BPF_EMIT_CALL(BPF_FUNC_map_lookup_elem), BPF_JMP_IMM(BPF_JNE, BPF_REG_0, 0, 1),
       BPF_EXIT_INSN(), BPF_MOV64_REG(BPF_REG_7, BPF_REG_0),
       BPF_MOV64_REG(BPF_REG_1, BPF_REG_6), BPF_EMIT_CALL(BPF_FUNC_spin_lock),
       BPF_MOV64_REG(BPF_REG_1, BPF_REG_7), BPF_EMIT_CALL(BPF_FUNC_spin_unlock), RET0)

TEST_CASE("verifier: a map-in-map lookup's non-NULL value is the inner map",
          "[bpfvm][verifier][reject]") {
  VerifierEnv env;
  bpf_verifier_map inner = env.maps[kHash];
  bpf_verifier_map outer;
  outer.name = "outer";
  outer.map_type = BPF_MAP_TYPE_ARRAY_OF_MAPS;
  outer.key_size = 4;
  outer.value_size = 4;
  outer.max_entries = 2;
  outer.inner_map = &inner;
  env.maps[kArray] = outer;
  // r0 = outer[0]; if r0: r0 = inner[fp-8]
  Prog lookup = {LOOKUP(kArray), BPF_JMP_IMM(BPF_JNE, BPF_REG_0, 0, 1), BPF_EXIT_INSN(),
                 BPF_MOV64_REG(BPF_REG_1, BPF_REG_0)};
  Prog ok = lookup;
  for (bpf_insn in : Prog{BPF_ST_MEM(BPF_DW, BPF_REG_10, -8, 0),
                          BPF_MOV64_REG(BPF_REG_2, BPF_REG_10), BPF_ALU64_IMM(BPF_ADD, BPF_REG_2, -8),
                          BPF_EMIT_CALL(BPF_FUNC_map_lookup_elem), RET0})
    ok.push_back(in);
  bpf_verifier_result r = env.syscall(ok);
  CAPTURE(r.error);
  CHECK(r.ok());
  Prog bad = lookup;
  for (bpf_insn in : Prog{BPF_ALU64_IMM(BPF_ADD, BPF_REG_1, 8), RET0}) bad.push_back(in);
  r = env.syscall(bad);
  CHECK(r.error == "R1 pointer arithmetic on map_ptr prohibited");
}

// bpf_strtoul(buf, len, flags, long *res): res is fixed-size memory the helper writes, aligned.
#define STRTOUL_RES_AT(off)                                                                   \
  BPF_ST_MEM(BPF_DW, BPF_REG_10, -32, 0x31), BPF_MOV64_REG(BPF_REG_1, BPF_REG_10),             \
      BPF_ALU64_IMM(BPF_ADD, BPF_REG_1, -32), BPF_MOV64_IMM(BPF_REG_2, 1),                     \
      BPF_MOV64_IMM(BPF_REG_3, 0), BPF_MOV64_REG(BPF_REG_4, BPF_REG_10),                      \
      BPF_ALU64_IMM(BPF_ADD, BPF_REG_4, off), BPF_EMIT_CALL(BPF_FUNC_strtoul)
REJECT("bpf_strtoul result slot past the frame", syscall, "invalid write to stack R4 off=-4 size=8",
       STRTOUL_RES_AT(-4), RET0)
REJECT("bpf_strtoul result slot misaligned", syscall, "misaligned stack access off 0+-20+0 size 8",
       STRTOUL_RES_AT(-20), RET0)

TEST_CASE("verifier: bpf_strtoul writes its uninitialised result slot", "[bpfvm][verifier]") {
  VerifierEnv env;
  const bpf_verifier_result r =
      env.syscall(Prog{STRTOUL_RES_AT(-16), BPF_LDX_MEM(BPF_DW, BPF_REG_0, BPF_REG_10, -16),
                       BPF_EXIT_INSN()});
  CAPTURE(r.error);
  CHECK(r.ok());
}

REJECT("subtraction from a stack pointer", raw, "R1 subtraction from stack pointer prohibited",
       BPF_MOV64_IMM(BPF_REG_0, 0), BPF_MOV64_REG(BPF_REG_1, BPF_REG_10),
       BPF_ALU64_IMM(BPF_SUB, BPF_REG_1, 8), BPF_STX_MEM(BPF_DW, BPF_REG_1, BPF_REG_0, 0),
       BPF_EXIT_INSN())
// A context pointer compared with 0 is not known non-NULL (reg_not_null()): both sides are
// explored, so the path storing through the stack and the one storing through the context meet
// at one instruction.
REJECT("a context pointer compared with 0 explores both sides", syscall,
       "same insn cannot be used with different pointers",
       BPF_MOV64_IMM(BPF_REG_0, 0), BPF_MOV64_REG(BPF_REG_2, BPF_REG_10),
       BPF_ALU64_IMM(BPF_ADD, BPF_REG_2, -8), BPF_JMP_IMM(BPF_JEQ, BPF_REG_1, 0, 1),
       BPF_MOV64_REG(BPF_REG_2, BPF_REG_1), BPF_STX_MEM(BPF_DW, BPF_REG_2, BPF_REG_0, 0),
       BPF_EXIT_INSN())
// Only the bounds that say something are printed (verbose_invalid_scalar()).
REJECT("bpf_loop callback returning a value only bounded below", raw,
       "At callback return the register R0 has smin=2 should have been in [0, 1]",
       BPF_MOV64_IMM(BPF_REG_1, 10), BPF_LD_FUNC(BPF_REG_2, 5), BPF_MOV64_IMM(BPF_REG_3, 0),
       BPF_MOV64_IMM(BPF_REG_4, 0), BPF_EMIT_CALL(BPF_FUNC_loop), BPF_EXIT_INSN(),
       BPF_EMIT_CALL(BPF_FUNC_get_prandom_u32), BPF_MOV64_REG(BPF_REG_6, BPF_REG_0),
       BPF_EMIT_CALL(BPF_FUNC_get_prandom_u32), BPF_ALU64_IMM(BPF_LSH, BPF_REG_0, 32),
       BPF_ALU64_REG(BPF_OR, BPF_REG_0, BPF_REG_6),  // r0: any 64-bit value
       BPF_JMP_IMM(BPF_JSGT, BPF_REG_0, 1, 1), BPF_MOV64_IMM(BPF_REG_0, 0), BPF_EXIT_INSN())

TEST_CASE("verifier rejects: part of a spilled pointer, ptr leaks allowed or not",
          "[bpfvm][verifier][reject]") {
  VerifierEnv env;
  bpf_verifier_opts o = env.opts(&umemcg::emu::bpf_syscall_prog_type());
  o.allow_ptr_leaks = true;
  const Prog p = {BPF_STX_MEM(BPF_DW, BPF_REG_10, BPF_REG_10, -8),
                  BPF_LDX_MEM(BPF_W, BPF_REG_0, BPF_REG_10, -8), RET0};
  const bpf_verifier_result r = bpf_check(p, o);
  CHECK(r.error == "invalid size of register fill");
}
// A zero-sized helper access through a variable stack pointer that may point above the frame
// (check_stack_access_within_bounds() with size 0).
REJECT("zero-sized helper write through a stack pointer reaching above the frame", syscall,
       "invalid variable-offset write to stack R1 var_off=",
       BPF_MOV64_IMM(BPF_REG_0, 0), BPF_STX_MEM(BPF_DW, BPF_REG_10, BPF_REG_0, -16),
       BPF_STX_MEM(BPF_DW, BPF_REG_10, BPF_REG_0, -8), BPF_LDX_MEM(BPF_W, BPF_REG_1, BPF_REG_1, 0),
       BPF_ALU64_IMM(BPF_AND, BPF_REG_1, 63), BPF_ALU64_IMM(BPF_ADD, BPF_REG_1, -16),
       BPF_ALU64_REG(BPF_ADD, BPF_REG_1, BPF_REG_10), BPF_MOV64_IMM(BPF_REG_2, 0),
       BPF_MOV64_IMM(BPF_REG_3, 0), BPF_EMIT_CALL(BPF_FUNC_probe_read_kernel), BPF_EXIT_INSN())

TEST_CASE("verifier rejects: a socket or inode storage map passed to bpf_map_lookup_elem",
          "[bpfvm][verifier][reject]") {
  for (u32 type : {BPF_MAP_TYPE_SK_STORAGE, BPF_MAP_TYPE_INODE_STORAGE}) {
    VerifierEnv env;
    env.maps[kArray].map_type = type;
    const bpf_verifier_result r = env.syscall(Prog{LOOKUP(kArray), RET0});
    CHECK(r.error == "cannot pass map_type " + std::to_string(type) +
                         " into func bpf_map_lookup_elem#1");
  }
}
REJECT("a subprogram's unset r0 read by its caller", raw, "R0 !read_ok",
       BPF_CALL_REL(1), BPF_EXIT_INSN(), BPF_MOV64_IMM(BPF_REG_1, 1), BPF_EXIT_INSN())
// bpf_get_socket_cookie (the tracing variant a SYSCALL program gets): a socket or NULL; no
// register holds a socket here, and the kernel's message lists its socket types.
REJECT("bpf_get_socket_cookie of the context", syscall,
       "R1 type=ctx expected=sock_common, sock, tcp_sock, xdp_sock, ptr_, trusted_ptr_",
       BPF_EMIT_CALL(BPF_FUNC_get_socket_cookie), RET0)
// A bpf_loop callback safe on its first iteration only: it reads r4 (unset) once the context
// slot it sets is non-zero. The kernel walks the callback again from the call, and the slot
// decides a branch, so it is not widened: the second walk fails (verifier_iterating_callbacks.c's
// unsafe_on_2nd_iter is the same shape). One iteration (nr_loops 1) is accepted
// (verifier_accept_test.cc).
#define CB_SECOND_ITER(nr_loops)                                                            \
  BPF_MOV64_IMM(BPF_REG_1, 0), BPF_STX_MEM(BPF_DW, BPF_REG_10, BPF_REG_1, -8),              \
      BPF_MOV64_IMM(BPF_REG_1, nr_loops), BPF_LD_FUNC(BPF_REG_2, 7),                        \
      BPF_MOV64_REG(BPF_REG_3, BPF_REG_10), BPF_ALU64_IMM(BPF_ADD, BPF_REG_3, -8),          \
      BPF_MOV64_IMM(BPF_REG_4, 0), BPF_EMIT_CALL(BPF_FUNC_loop), RET0,                      \
      BPF_LDX_MEM(BPF_DW, BPF_REG_3, BPF_REG_2, 0), BPF_JMP_IMM(BPF_JEQ, BPF_REG_3, 0, 1),  \
      BPF_LDX_MEM(BPF_DW, BPF_REG_0, BPF_REG_4, 0), BPF_MOV64_IMM(BPF_REG_3, 1),            \
      BPF_STX_MEM(BPF_DW, BPF_REG_2, BPF_REG_3, 0), RET0
REJECT("bpf_loop callback unsafe on its second iteration", syscall, "R4 !read_ok",
       CB_SECOND_ITER(2))
// The socket casts take a socket, never NULL (verifier_sock.c's of_bpf_skc_to_helpers).
REJECT("bpf_skc_to_tcp_sock of NULL", syscall,
       "R1 type=scalar expected=sock_common, sock, tcp_sock, xdp_sock, ptr_, trusted_ptr_",
       BPF_MOV64_IMM(BPF_REG_1, 0), BPF_EMIT_CALL(BPF_FUNC_skc_to_tcp_sock), RET0)
