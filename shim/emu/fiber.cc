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
  getcontext(&ctx_);
  ctx_.uc_stack.ss_sp = static_cast<char *>(mem) + page;
  ctx_.uc_stack.ss_size = stack_size_;
  ctx_.uc_link = nullptr;
  auto p = reinterpret_cast<std::uintptr_t>(this);
  makecontext(&ctx_, reinterpret_cast<void (*)()>(&Fiber::trampoline), 2,
              static_cast<unsigned int>(p & 0xffffffffu), static_cast<unsigned int>(p >> 32));
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
  auto *self = reinterpret_cast<Fiber *>(static_cast<std::uintptr_t>(lo) |
                                         (static_cast<std::uintptr_t>(hi) << 32));
#ifdef UMEMCG_ASAN
  __sanitizer_finish_switch_fiber(nullptr, &t_thread_stack_bottom, &t_thread_stack_size);
#endif
  self->entry_(self->arg_);
  // entry_ must leave through exit_to(); returning here would end the thread.
  std::fprintf(stderr, "umemcg: fiber entry returned\n");
  std::abort();
}

void Fiber::switch_to(Fiber *from, Fiber *to) {
#ifdef UMEMCG_ASAN
  __sanitizer_start_switch_fiber(&from->asan_fake_stack_,
                                 stack_bottom(to, to->is_thread_, to->stack_),
                                 to->is_thread_ ? t_thread_stack_size : to->stack_size_);
#endif
#ifdef UMEMCG_TSAN
  __tsan_switch_to_fiber(to->tsan_fiber_, 0);
#endif
  swapcontext(&from->ctx_, &to->ctx_);
  from->after_switch();
}

void Fiber::exit_to(Fiber *from, Fiber *to) {
#ifdef UMEMCG_ASAN
  __sanitizer_start_switch_fiber(nullptr, stack_bottom(to, to->is_thread_, to->stack_),
                                 to->is_thread_ ? t_thread_stack_size : to->stack_size_);
#endif
#ifdef UMEMCG_TSAN
  __tsan_switch_to_fiber(to->tsan_fiber_, 0);
#endif
  (void)from;
  setcontext(&to->ctx_);
  std::abort();
}

}  // namespace umemcg::emu
