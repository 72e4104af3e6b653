// SPDX-License-Identifier: GPL-2.0-only
// shim/kthread.h: kernel threads.
//
// Mirrors: include/linux/kthread.h, kernel/kthread.c (Linux 6.19)
// kthread_run() creates and starts a kernel thread (PF_KTHREAD, kernel mode for its whole life,
// no mm); kthread_stop() asks it to stop (kthread_should_stop() turns true and the thread is
// woken), waits for it to exit and returns its threadfn's return value.
// Emulation: threads start at once (no separate wake_up_process after kthread_create); a
//   kthread is not a daemon (the machine's run() waits for it) unless it is started with
//   kthread_run_daemon(): a thread that lives as long as the machine and sleeps until woken
//   (kswapd), which run() does not wait for and which is no deadlock while it sleeps; whoever
//   started it stops it with kthread_stop() before the machine goes.
#pragma once

#include "shim/sched.h"

namespace umemcg {

task_struct *kthread_run(int (*threadfn)(void *data), void *data, const char *name);
// Pins the thread to a vCPU before it runs kernel code (kthread_create_on_cpu()).
task_struct *kthread_run_on_cpu(int (*threadfn)(void *data), void *data, int cpu,
                                const char *name);
task_struct *kthread_run_daemon(int (*threadfn)(void *data), void *data, const char *name);
bool kthread_should_stop();
int kthread_stop(task_struct *k);

}  // namespace umemcg
