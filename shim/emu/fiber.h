// SPDX-License-Identifier: GPL-2.0-only
// shim/emu/fiber.h: user-level execution contexts for the simulated mode.
//
// A fiber is a stack plus a saved stack pointer. Switching is a call, not a thread hand-off: see
// docs/architecture.md for the measured cost against handing a baton between OS threads, and why
// this was chosen. On x86-64 the switch is a few instructions of our own (the System V
// callee-saved registers, MXCSR and the x87 control word pushed on the old stack, the stack
// pointer swapped); elsewhere POSIX ucontext, whose swapcontext() also saves the signal mask with
// a system call on every switch. Switches are annotated for AddressSanitizer
// (__sanitizer_{start,finish}_switch_fiber) and ThreadSanitizer (__tsan_switch_to_fiber).
#pragma once

#if !defined(__x86_64__)
#include <ucontext.h>
#endif

#include <cstddef>

namespace umemcg::emu {

class Fiber {
 public:
  using entry_t = void (*)(void *);
  // The context of the calling OS thread (the scheduler's side).
  Fiber();
  // A new fiber that will run entry(arg) on its own stack of stack_size bytes.
  Fiber(entry_t entry, void *arg, std::size_t stack_size);
  ~Fiber();
  Fiber(const Fiber &) = delete;
  Fiber &operator=(const Fiber &) = delete;

  // Saves the calling context into *from and resumes `to`.
  static void switch_to(Fiber *from, Fiber *to);
  // To be called by the entry function's last act: switch to `to` for good (the fiber is dead).
  [[noreturn]] static void exit_to(Fiber *from, Fiber *to);

 private:
  static void trampoline(unsigned int lo, unsigned int hi);
  // Tells ASan and TSan that the thread moves onto `to`'s stack; *fake_stack keeps the leaving
  // fiber's ASan fake stack (nullptr: the leaving fiber is dead).
  static void announce_switch(void **fake_stack, Fiber *to);
  void after_switch();

 public:
  // The first code a new fiber runs (called from the x86-64 start stub).
  static void start(Fiber *self);

 private:
#if defined(__x86_64__)
  void *sp_ = nullptr;  // saved stack pointer while switched out
#else
  ucontext_t ctx_{};
#endif
  void *stack_ = nullptr;
  std::size_t stack_size_ = 0;
  entry_t entry_ = nullptr;
  void *arg_ = nullptr;
  bool is_thread_ = false;
  [[maybe_unused]] void *tsan_fiber_ = nullptr;
  [[maybe_unused]] void *asan_fake_stack_ = nullptr;
};

}  // namespace umemcg::emu
