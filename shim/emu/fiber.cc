// SPDX-License-Identifier: GPL-2.0-only
// shim/emu/fiber.cc: ucontext fibers with sanitizer annotations (see fiber.h).
#include "shim/emu/fiber.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UMEMCG_ASAN 1
#endif
#if __has_feature(thread_sanitizer)
#define UMEMCG_TSAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define UMEMCG_ASAN 1
#endif
#if defined(__SANITIZE_THREAD__)
#define UMEMCG_TSAN 1
#endif

#ifdef UMEMCG_ASAN
extern "C" {
void __sanitizer_start_switch_fiber(void **fake_stack_save, const void *bottom, size_t size);
void __sanitizer_finish_switch_fiber(void *fake_stack_save, const void **bottom_old,
                                     size_t *size_old);
}
#endif
#ifdef UMEMCG_TSAN
extern "C" {
void *__tsan_get_current_fiber(void);
void *__tsan_create_fiber(unsigned flags);
void __tsan_destroy_fiber(void *fiber);
void __tsan_switch_to_fiber(void *fiber, unsigned flags);
}
#endif

#if defined(__x86_64__)
// umemcg_fiber_switch(save, next): pushes the callee-saved registers (System V: rbp, rbx,
// r12-r15) and the floating-point control state (MXCSR, x87 control word) on the current stack,
// stores the stack pointer in *save, loads `next` and pops the same frame from it. A new fiber's
// stack is prepared with such a frame whose return address is umemcg_fiber_start, and rbx = the
// Fiber, so the first switch into it "returns" into the start stub.
extern "C" void umemcg_fiber_switch(void **save, void *next);
extern "C" void umemcg_fiber_start();
extern "C" void umemcg_fiber_start_c(umemcg::emu::Fiber *self) { umemcg::emu::Fiber::start(self); }
asm(R"(
  .text
  .globl umemcg_fiber_switch
  .type umemcg_fiber_switch, @function
umemcg_fiber_switch:
  pushq %rbp
  pushq %rbx
  pushq %r12
  pushq %r13
  pushq %r14
  pushq %r15
  subq $8, %rsp
  stmxcsr (%rsp)
  fnstcw 4(%rsp)
  movq %rsp, (%rdi)
  movq %rsi, %rsp
  ldmxcsr (%rsp)
  fldcw 4(%rsp)
  addq $8, %rsp
  popq %r15
  popq %r14
  popq %r13
  popq %r12
  popq %rbx
  popq %rbp
  ret
  .size umemcg_fiber_switch, .-umemcg_fiber_switch

  .globl umemcg_fiber_start
  .type umemcg_fiber_start, @function
umemcg_fiber_start:
  .cfi_startproc
  .cfi_undefined rip
  xorl %ebp, %ebp
  movq %rbx, %rdi
  call umemcg_fiber_start_c
  ud2
  .cfi_endproc
  .size umemcg_fiber_start, .-umemcg_fiber_start
)");
#endif

namespace umemcg::emu {

#ifdef UMEMCG_ASAN
namespace {
// Stack bounds of the OS thread that runs the scheduler, learnt from the first switch into a
// fiber; needed to announce switches back to it.
thread_local const void *t_thread_stack_bottom = nullptr;
thread_local size_t t_thread_stack_size = 0;

const void *stack_bottom(const Fiber *f, bool is_thread, void *stack) {
  if (is_thread) return t_thread_stack_bottom;
  (void)f;
  return static_cast<char *>(stack) + sysconf(_SC_PAGESIZE);
}
}  // namespace
#endif

Fiber::Fiber() : is_thread_(true) {
#ifdef UMEMCG_TSAN
  tsan_fiber_ = __tsan_get_current_fiber();
#endif
}

Fiber::Fiber(entry_t entry, void *arg, std::size_t stack_size)
    : stack_size_(stack_size), entry_(entry), arg_(arg) {
  const std::size_t page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  // One guard page below the stack turns an overflow into a fault instead of corruption.
  void *mem = mmap(nullptr, stack_size_ + page, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (mem == MAP_FAILED) {
    std::perror("umemcg: fiber stack mmap");
    std::abort();
  }
  mprotect(mem, page, PROT_NONE);
  stack_ = mem;
#if defined(__x86_64__)
  // The first frame umemcg_fiber_switch pops, below a 16-byte aligned top: control words, r15,
  // r14, r13, r12, rbx (= this), rbp, return address (the start stub). After the pops the stack
  // pointer is top - 16, 16-byte aligned, as the stub's call needs.
  auto top = (reinterpret_cast<std::uintptr_t>(mem) + page + stack_size_) & ~std::uintptr_t{15};
  auto *frame = reinterpret_cast<std::uint64_t *>(top - 16 - 8 * 8);
  std::uint32_t mxcsr;
  std::uint16_t fcw;
  asm volatile("stmxcsr %0" : "=m"(mxcsr));
  asm volatile("fnstcw %0" : "=m"(fcw));
  frame[0] = mxcsr | (std::uint64_t{fcw} << 32);
  frame[1] = frame[2] = frame[3] = frame[4] = 0;  // r15..r12
  frame[5] = reinterpret_cast<std::uint64_t>(this);  // rbx
  frame[6] = 0;                                       // rbp
  frame[7] = reinterpret_cast<std::uint64_t>(&umemcg_fiber_start);
  reinterpret_cast<std::uint64_t *>(top - 16)[0] = 0;  // no caller beyond the stub
  sp_ = frame;
#else
  getcontext(&ctx_);
  ctx_.uc_stack.ss_sp = static_cast<char *>(mem) + page;
  ctx_.uc_stack.ss_size = stack_size_;
  ctx_.uc_link = nullptr;
  auto p = reinterpret_cast<std::uintptr_t>(this);
  makecontext(&ctx_, reinterpret_cast<void (*)()>(&Fiber::trampoline), 2,
              static_cast<unsigned int>(p & 0xffffffffu), static_cast<unsigned int>(p >> 32));
#endif
#ifdef UMEMCG_TSAN
  tsan_fiber_ = __tsan_create_fiber(0);
#endif
}

Fiber::~Fiber() {
  if (is_thread_) return;
#ifdef UMEMCG_TSAN
  if (tsan_fiber_) __tsan_destroy_fiber(tsan_fiber_);
#endif
  const std::size_t page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  munmap(stack_, stack_size_ + page);
}

void Fiber::after_switch() {
#ifdef UMEMCG_ASAN
  __sanitizer_finish_switch_fiber(asan_fake_stack_, nullptr, nullptr);
#endif
}

void Fiber::trampoline(unsigned int lo, unsigned int hi) {
  start(reinterpret_cast<Fiber *>(static_cast<std::uintptr_t>(lo) |
                                  (static_cast<std::uintptr_t>(hi) << 32)));
}

void Fiber::start(Fiber *self) {
#ifdef UMEMCG_ASAN
  __sanitizer_finish_switch_fiber(nullptr, &t_thread_stack_bottom, &t_thread_stack_size);
#endif
  self->entry_(self->arg_);
  // entry_ must leave through exit_to(); returning here would end the thread.
  std::fprintf(stderr, "umemcg: fiber entry returned\n");
  std::abort();
}

// Always inline: ASan's switch announcement runs in the switching function's own frame.
[[gnu::always_inline]] inline void Fiber::announce_switch([[maybe_unused]] void **fake_stack,
                                                          [[maybe_unused]] Fiber *to) {
#ifdef UMEMCG_ASAN
  __sanitizer_start_switch_fiber(fake_stack, stack_bottom(to, to->is_thread_, to->stack_),
                                 to->is_thread_ ? t_thread_stack_size : to->stack_size_);
#endif
#ifdef UMEMCG_TSAN
  __tsan_switch_to_fiber(to->tsan_fiber_, 0);
#endif
}

void Fiber::switch_to(Fiber *from, Fiber *to) {
  announce_switch(&from->asan_fake_stack_, to);
#if defined(__x86_64__)
  umemcg_fiber_switch(&from->sp_, to->sp_);
#else
  swapcontext(&from->ctx_, &to->ctx_);
#endif
  from->after_switch();
}

void Fiber::exit_to(Fiber *from, Fiber *to) {
  announce_switch(nullptr, to);
#if defined(__x86_64__)
  // The dying fiber's own slot takes its last stack pointer (never resumed). Not a local:
  // with ASan's use-after-return detection (clang 15's default) an address-taken local lives
  // on the fake stack, which announce_switch(nullptr, ...) above (ASan's
  // __sanitizer_start_switch_fiber) has just destroyed.
  umemcg_fiber_switch(&from->sp_, to->sp_);
#else
  (void)from;
  setcontext(&to->ctx_);
#endif
  std::abort();
}

}  // namespace umemcg::emu
