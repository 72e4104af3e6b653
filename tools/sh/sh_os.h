// SPDX-License-Identifier: GPL-2.0-only
// tools/sh/sh_os.h: ShellOs, what the cgroup shell asks of the machine it drives.
//
// The shell (tools/sh/) is user space: everything it does to the emulated machine goes through
// this interface, one virtual per system call it would make on a real cgroup2 machine (open,
// read, write, close, mkdir, rmdir, getdents, stat, inotify, eventfd, fork+exec into a cgroup,
// waitpid, kill, nanosleep, and the bpf() commands bpftool issues). Paths are absolute: the
// shell resolves them against its working directory before calling (an empty operand stays
// empty, and fails with ENOENT as the kernel's getname() makes it). Errors are negative errnos,
// as the kernel's system call entry returns them.
//
// Mirrors: the system call boundary a shell and bpftool sit on (open(2), pread(2), write(2),
//          close(2), mkdir(2), rmdir(2), getdents64(2), stat(2), inotify_add_watch(2), read(2)
//          of an inotify descriptor, eventfd(2) and read(2) of it, clone(2) + a cgroup.procs
//          write, waitpid(2), kill(2), nanosleep(2), bpf(2)).
// Emulation: one machine per shell; read() returns the whole remainder of the file from an
//   offset (the shell's `cat` reads files whole), and spawn() takes a workload description
//   instead of a program image (the workloads are the emulator's processes).
#pragma once

#include <cerrno>
#include <cstdint>
#include <string>
#include <vector>

namespace umemcg::sh {

// What an emulated process does (../shared/spec/cgroup-shell.md, Workloads). The shell validates
// the words of a `run`/`spawn` into this; the machine runs it.
struct WorkloadSpec {
  enum class Kind { kAnon, kPagecache, kMlock, kSleep };
  Kind kind = Kind::kSleep;
  uint64_t size = 0;        // bytes (anon, pagecache, mlock)
  uint64_t sleep_ns = 0;    // sleep
  bool hold = false;        // anon, pagecache: keep the memory until killed
  std::string file;         // pagecache --file NAME; empty: a file private to the process
  int oom_score_adj = 0;    // --oom-score-adj, -1000..1000
};

// One inotify event as read(2) of the inotify descriptor returns it (the name is not used: the
// shell watches files and cgroup directories themselves).
struct ShEvent {
  int wd = 0;
  uint32_t mask = 0;  // IN_* bits of <sys/inotify.h>
};

// One element of a BPF map, as BPF_MAP_GET_NEXT_KEY + BPF_MAP_LOOKUP_ELEM return it. A per-CPU
// map has one value per possible CPU.
struct BpfMapEntry {
  std::string key;                  // key_size bytes
  std::vector<std::string> values;  // one value (value_size bytes), or one per CPU
};

struct BpfMapDump {
  bool percpu = false;
  uint32_t key_size = 0;
  uint32_t value_size = 0;
  std::vector<BpfMapEntry> entries;
};

/**
 * ShellOs - the machine under the cgroup shell.
 *
 * Every call is made by the shell's own task (a process in the root cgroup); results are what
 * the system call would return. A negative value is -errno. The shell never calls two methods
 * at once.
 */
class ShellOs {
 public:
  virtual ~ShellOs() = default;

  // open(2) with O_RDONLY / O_WRONLY|O_APPEND / O_RDWR (<fcntl.h> values): a descriptor >= 0.
  virtual int open(const std::string &path, int flags) = 0;
  // pread(2) from @offset to the end of the file, into *out: 0 or -errno.
  virtual int read(int fd, uint64_t offset, std::string *out) = 0;
  // write(2) of @bytes in one call: the count written or -errno.
  virtual long write(int fd, const std::string &bytes) = 0;
  virtual int close(int fd) = 0;

  virtual int mkdir(const std::string &path) = 0;
  virtual int rmdir(const std::string &path) = 0;
  // getdents64(2): the names in the directory, without "." and "..", in any order.
  virtual int readdir(const std::string &path, std::vector<std::string> *names) = 0;
  // stat(2): 0 and *is_dir, or -errno (ENOENT, ENOTDIR).
  virtual int stat(const std::string &path, bool *is_dir) = 0;

  // inotify_add_watch(2) with IN_MODIFY|IN_DELETE_SELF: the watch descriptor (1, 2, ...).
  virtual int watch(const std::string &path) = 0;
  // Waits up to @timeout_ns of machine time for the next event: 1 and *ev, 0 on timeout.
  virtual int next_event(uint64_t timeout_ns, ShEvent *ev) = 0;

  // eventfd(2) (initial value 0, no flags): a descriptor that close() closes, or -errno. Its
  // number is what cgroup.event_control's "<event_fd> <control_fd> <args>" names, as are the
  // numbers open() returns. A machine without eventfds returns -ENOSYS.
  virtual int eventfd() { return -ENOSYS; }
  // read(2) of an eventfd, waiting up to @timeout_ns of machine time for a non-zero count:
  // 1 and *count (the counter drops back to 0), 0 on timeout, or -errno (-EINVAL: not an
  // eventfd, -EBADF).
  virtual int eventfd_read(int /*fd*/, uint64_t /*timeout_ns*/, uint64_t * /*count*/) {
    return -ENOSYS;
  }

  // Starts a process in the cgroup at @cgroup_path (its cgroup.procs written before it runs):
  // its pid, or the errno of the refused placement (then no process exists).
  virtual int spawn(const std::string &cgroup_path, const WorkloadSpec &w) = 0;
  // waitpid(2): @pid > 0 or -1 (any child). The pid reaped and *status in waitpid's encoding
  // (<sys/wait.h> W* macros), or -ECHILD. When nothing can ever end the wait (simulated mode:
  // every task blocked and no timer pending), -EDEADLK instead of a hang.
  virtual int wait(int pid, int *status) = 0;
  virtual int kill(int pid, int sig) = 0;
  // getpid(2) of the shell's own task ($$).
  virtual int getpid() = 0;
  // nanosleep(2) in the machine's time (virtual in the simulated mode).
  virtual int sleep(uint64_t ns) = 0;

  // bpftool prog loadall: opens, loads and verifies the object at the host path @file under
  // @name. On a verifier rejection *log holds the verifier's log.
  virtual int bpf_load(const std::string &file, const std::string &name, std::string *log) = 0;
  // Attaches (detaches) the program or struct_ops map @item of object @obj; @cgroup_path is
  // the cgroup for a struct_ops map, empty for a program linked to its hook.
  virtual int bpf_attach(const std::string &obj, const std::string &item,
                         const std::string &cgroup_path) = 0;
  virtual int bpf_detach(const std::string &obj, const std::string &item,
                         const std::string &cgroup_path) = 0;
  // BPF_PROG_TEST_RUN of a SYSCALL program with @args as its context's u64 words.
  virtual int bpf_run(const std::string &obj, const std::string &prog,
                      const std::vector<uint64_t> &args, uint64_t *retval) = 0;
  virtual int bpf_map_dump(const std::string &obj, const std::string &map, BpfMapDump *out) = 0;
  // Consumes the records waiting in a ring buffer map.
  virtual int bpf_ringbuf(const std::string &obj, const std::string &map,
                          std::vector<std::string> *records) = 0;
  virtual int bpf_unload(const std::string &name) = 0;
};

}  // namespace umemcg::sh
