// SPDX-License-Identifier: GPL-2.0-only
// test/tools/fake_os.h: FakeOs, an in-memory ShellOs for the cgroup shell's tests and fuzz
// target: a small tree of directories and files that record what is written to them and
// return the errnos a test gives them, a process table whose workloads finish, sleep, hold or
// get killed, a clock that only sleep, wait and event move, queued inotify events, and a
// catalogue of BPF objects. Every system call is logged, one line each, so a test can check
// exactly what the shell asked of the machine (one write, its bytes, the open flags).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "tools/sh/sh_os.h"

namespace umemcg::sh::test {

class FakeOs : public ShellOs {
 public:
  struct File {
    bool is_dir = false;
    std::string content;
    std::vector<std::string> writes;  // every write's bytes, in order
    int open_errno = 0, read_errno = 0, write_errno = 0;
    // When set: what a read through descriptor id @fd returns / what a write does (bytes or
    // -errno), so a test can give a file per-open-file state.
    std::function<std::string(int fd)> on_read;
    std::function<long(int fd, const std::string &bytes)> on_write;
  };
  struct Proc {
    std::string cgroup;
    WorkloadSpec spec;
    int pid = 0;
    bool running = true;
    bool reaped = false;
    int wstatus = 0;
    uint64_t end_ns = 0;  // sleep workloads: when they finish
  };
  struct Event {
    uint64_t at_ns;
    int wd;
    uint32_t mask;
  };
  struct BpfObject {
    std::set<std::string> progs, maps;
    std::string reject_log;  // non-empty: the verifier rejects the object with this log
    uint64_t retval = 0;
    std::map<std::string, BpfMapDump> dumps;
    std::map<std::string, std::vector<std::string>> ringbufs;
  };

  FakeOs();

  // The tree. Paths are absolute. New cgroups (mkdir under /sys/fs/cgroup) get cgroup_files.
  void add_dir(const std::string &path);
  File &add_file(const std::string &path, const std::string &content = "");
  File &file(const std::string &path) { return tree_.at(path); }
  bool exists(const std::string &path) const { return tree_.count(path) != 0; }
  std::vector<std::string> cgroup_files = {"cgroup.procs", "cgroup.controllers",
                                           "cgroup.subtree_control", "cgroup.events",
                                           "memory.current", "memory.max", "memory.peak"};

  // Processes: the errno a spawn into @cgroup returns; how the next spawned process ends.
  std::map<std::string, int> spawn_errno;
  int next_kill_signal = 0;  // non-zero: the next workload is killed by this signal (OOM: 9)
  std::vector<Proc> procs;

  uint64_t now_ns = 0;
  std::vector<Event> events;  // queued; delivered earliest first, in queue order at equal times
  std::vector<std::string> watches;  // watch descriptor i + 1 watches watches[i]

  std::map<std::string, BpfObject> bpf_catalog;  // by file path: what loading it gives
  std::map<std::string, BpfObject> bpf_loaded;   // by object name
  std::vector<std::string> bpf_links;            // "obj/item@cgroup"

  std::vector<std::string> log;  // one line per call

  // ShellOs
  int open(const std::string &path, int flags) override;
  int read(int fd, uint64_t offset, std::string *out) override;
  long write(int fd, const std::string &bytes) override;
  int close(int fd) override;
  int mkdir(const std::string &path) override;
  int rmdir(const std::string &path) override;
  int readdir(const std::string &path, std::vector<std::string> *names) override;
  int stat(const std::string &path, bool *is_dir) override;
  int watch(const std::string &path) override;
  int next_event(uint64_t timeout_ns, ShEvent *ev) override;
  int spawn(const std::string &cgroup_path, const WorkloadSpec &w) override;
  int wait(int pid, int *status) override;
  int kill(int pid, int sig) override;
  int getpid() override { return 1000; }
  int sleep(uint64_t ns) override;
  int bpf_load(const std::string &file, const std::string &name, std::string *log) override;
  int bpf_attach(const std::string &obj, const std::string &item,
                 const std::string &cgroup_path) override;
  int bpf_detach(const std::string &obj, const std::string &item,
                 const std::string &cgroup_path) override;
  int bpf_run(const std::string &obj, const std::string &prog,
              const std::vector<uint64_t> &args, uint64_t *retval) override;
  int bpf_map_dump(const std::string &obj, const std::string &map, BpfMapDump *out) override;
  int bpf_ringbuf(const std::string &obj, const std::string &map,
                  std::vector<std::string> *records) override;
  int bpf_unload(const std::string &name) override;

  size_t open_fds() const { return fds_.size(); }

 private:
  struct OpenFile {
    std::string path;
    int flags;
  };
  std::map<std::string, File> tree_;
  std::map<int, OpenFile> fds_;
  int next_fd_ = 3;
  int next_pid_ = 100;
  Proc *find_proc(int pid);
  void settle(Proc &p);
};

}  // namespace umemcg::sh::test
