// SPDX-License-Identifier: GPL-2.0-only
// test/tools/fake_os.cc: FakeOs (see fake_os.h).
#include "test/tools/fake_os.h"

#include <fcntl.h>
#include <sys/inotify.h>
#include <sys/wait.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>

namespace umemcg::sh::test {
namespace {

std::string parent_of(const std::string &p) {
  size_t s = p.rfind('/');
  return s == 0 ? "/" : p.substr(0, s);
}

bool is_child(const std::string &dir, const std::string &p) {
  return p.size() > dir.size() && p.compare(0, dir.size(), dir) == 0 &&
         (dir == "/" || p[dir.size()] == '/') &&
         p.find('/', dir == "/" ? 1 : dir.size() + 1) == std::string::npos;
}

}  // namespace

FakeOs::FakeOs() {
  for (const char *d : {"/", "/sys", "/sys/fs", "/sys/fs/cgroup"}) add_dir(d);
  add_file("/sys/fs/cgroup/cgroup.procs", "1000\n");
  add_file("/sys/fs/cgroup/cgroup.controllers", "memory\n");
  add_file("/sys/fs/cgroup/cgroup.subtree_control", "");
  add_dir("/proc");
  add_file("/proc/swaps", "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n");
}

void FakeOs::add_dir(const std::string &path) { tree_[path].is_dir = true; }

FakeOs::File &FakeOs::add_file(const std::string &path, const std::string &content) {
  File &f = tree_[path];
  f.is_dir = false;
  f.content = content;
  return f;
}

int FakeOs::open(const std::string &path, int flags) {
  char b[32];
  std::snprintf(b, sizeof(b), " 0x%x", flags);
  log.push_back("open " + path + b);
  auto it = tree_.find(path);
  if (it == tree_.end()) return -ENOENT;
  if (it->second.is_dir && (flags & O_ACCMODE) != O_RDONLY) return -EISDIR;
  if (it->second.open_errno) return -it->second.open_errno;
  int fd = next_fd_++;
  fds_[fd] = OpenFile{path, flags};
  return fd;
}

int FakeOs::read(int fd, uint64_t offset, std::string *out) {
  log.push_back("read " + std::to_string(fd) + " " + std::to_string(offset));
  auto it = fds_.find(fd);
  if (it == fds_.end() || (it->second.flags & O_ACCMODE) == O_WRONLY) return -EBADF;
  auto f = tree_.find(it->second.path);
  if (f == tree_.end()) return -ENODEV;  // removed while open
  if (f->second.is_dir) return -EISDIR;
  if (f->second.read_errno) return -f->second.read_errno;
  std::string text = f->second.on_read ? f->second.on_read(fd) : f->second.content;
  *out = offset < text.size() ? text.substr(offset) : "";
  return 0;
}

long FakeOs::write(int fd, const std::string &bytes) {
  std::string shown;
  for (char ch : bytes) shown += ch == '\n' ? std::string("\\n") : ch == '\0' ? std::string("\\0") : std::string(1, ch);
  log.push_back("write " + std::to_string(fd) + " " + shown);
  auto it = fds_.find(fd);
  if (it == fds_.end() || (it->second.flags & O_ACCMODE) == O_RDONLY) return -EBADF;
  auto f = tree_.find(it->second.path);
  if (f == tree_.end()) return -ENODEV;
  if (f->second.write_errno) return -f->second.write_errno;
  f->second.writes.push_back(bytes);
  if (f->second.on_write) return f->second.on_write(fd, bytes);
  return static_cast<long>(bytes.size());
}

int FakeOs::close(int fd) {
  log.push_back("close " + std::to_string(fd));
  return fds_.erase(fd) ? 0 : -EBADF;
}

int FakeOs::mkdir(const std::string &path) {
  log.push_back("mkdir " + path);
  if (path.empty() || path[0] != '/') return -ENOENT;
  if (tree_.count(path)) return -EEXIST;
  auto parent = tree_.find(parent_of(path));
  if (parent == tree_.end()) return -ENOENT;
  if (!parent->second.is_dir) return -ENOTDIR;
  add_dir(path);
  if (path.compare(0, 15, "/sys/fs/cgroup/") == 0)
    for (const std::string &f : cgroup_files) add_file(path + "/" + f);
  return 0;
}

int FakeOs::rmdir(const std::string &path) {
  log.push_back("rmdir " + path);
  auto it = tree_.find(path);
  if (it == tree_.end()) return -ENOENT;
  if (!it->second.is_dir) return -ENOTDIR;
  for (const auto &[p, f] : tree_)
    if (is_child(path, p) && f.is_dir) return -EBUSY;  // child cgroups
  for (const Proc &p : procs)
    if (p.running && p.cgroup == path) return -EBUSY;  // populated
  for (auto i = tree_.begin(); i != tree_.end();) {
    if (i->first == path || is_child(path, i->first)) i = tree_.erase(i);
    else ++i;
  }
  for (size_t i = 0; i < watches.size(); i++)
    if (watches[i] == path) {
      events.push_back({now_ns, static_cast<int>(i + 1), IN_DELETE_SELF});
      events.push_back({now_ns, static_cast<int>(i + 1), IN_IGNORED});
    }
  return 0;
}

int FakeOs::readdir(const std::string &path, std::vector<std::string> *names) {
  log.push_back("readdir " + path);
  auto it = tree_.find(path);
  if (it == tree_.end()) return -ENOENT;
  if (!it->second.is_dir) return -ENOTDIR;
  names->clear();
  // Reverse order: the shell must sort.
  for (auto i = tree_.rbegin(); i != tree_.rend(); ++i)
    if (is_child(path, i->first)) names->push_back(i->first.substr(path == "/" ? 1 : path.size() + 1));
  return 0;
}

int FakeOs::stat(const std::string &path, bool *is_dir) {
  auto it = tree_.find(path);
  if (it == tree_.end()) {
    // A path through a file is ENOTDIR, as path walks report it.
    for (std::string p = parent_of(path); !path.empty() && p != "/"; p = parent_of(p))
      if (tree_.count(p) && !tree_.at(p).is_dir) return -ENOTDIR;
    return -ENOENT;
  }
  *is_dir = it->second.is_dir;
  return 0;
}

int FakeOs::watch(const std::string &path) {
  log.push_back("watch " + path);
  if (!tree_.count(path)) return -ENOENT;
  watches.push_back(path);
  return static_cast<int>(watches.size());
}

int FakeOs::next_event(uint64_t timeout_ns, ShEvent *ev) {
  log.push_back("next_event " + std::to_string(timeout_ns));
  // The earliest event; among equal times the first queued (min_element keeps the first).
  auto first = std::min_element(events.begin(), events.end(),
                                 [](const Event &a, const Event &b) { return a.at_ns < b.at_ns; });
  if (first != events.end() && first->at_ns <= now_ns + timeout_ns) {
    now_ns = std::max(now_ns, first->at_ns);
    ev->wd = first->wd;
    ev->mask = first->mask;
    events.erase(first);
    return 1;
  }
  now_ns += timeout_ns;
  return 0;
}

int FakeOs::spawn(const std::string &cgroup_path, const WorkloadSpec &w) {
  log.push_back("spawn " + cgroup_path);
  auto it = tree_.find(cgroup_path);
  if (it == tree_.end()) return -ENOENT;
  if (!it->second.is_dir) return -ENOTDIR;
  auto e = spawn_errno.find(cgroup_path);
  if (e != spawn_errno.end()) return -e->second;
  Proc p;
  p.cgroup = cgroup_path;
  p.spec = w;
  p.pid = next_pid_++;
  if (next_kill_signal) {
    p.running = false;
    p.wstatus = next_kill_signal;  // WIFSIGNALED encoding: the signal in the low 7 bits
    next_kill_signal = 0;
  } else if (w.kind == WorkloadSpec::Kind::kSleep) {
    p.end_ns = now_ns + w.sleep_ns;
  } else if (!w.hold) {
    p.running = false;  // the workload completed
  }
  procs.push_back(p);
  return p.pid;
}

FakeOs::Proc *FakeOs::find_proc(int pid) {
  for (Proc &p : procs)
    if (p.pid == pid) return &p;
  return nullptr;
}

// A sleep workload whose time has come exits.
void FakeOs::settle(Proc &p) {
  if (p.running && p.spec.kind == WorkloadSpec::Kind::kSleep && p.end_ns <= now_ns) p.running = false;
}

int FakeOs::wait(int pid, int *status) {
  log.push_back("wait " + std::to_string(pid));
  Proc *target = nullptr;
  if (pid > 0) {
    target = find_proc(pid);
    if (!target || target->reaped) return -ECHILD;
  } else {
    // Any child: one that has ended, else the sleeper that ends first.
    for (Proc &p : procs) {
      if (p.reaped) continue;
      settle(p);
      if (!p.running) {
        target = &p;
        break;
      }
      if (p.spec.kind == WorkloadSpec::Kind::kSleep && (!target || p.end_ns < target->end_ns)) target = &p;
    }
    if (!target) {
      for (Proc &p : procs)
        if (!p.reaped) return -EDEADLK;  // only holders: nothing ends them
      return -ECHILD;
    }
  }
  settle(*target);
  if (target->running) {
    if (target->spec.kind != WorkloadSpec::Kind::kSleep) return -EDEADLK;
    now_ns = std::max(now_ns, target->end_ns);
    target->running = false;
  }
  target->reaped = true;
  *status = target->wstatus;
  return target->pid;
}

int FakeOs::kill(int pid, int sig) {
  log.push_back("kill " + std::to_string(pid) + " " + std::to_string(sig));
  Proc *p = find_proc(pid);
  if (!p || p->reaped) return -ESRCH;
  settle(*p);
  if (sig && p->running) {
    p->running = false;
    p->wstatus = sig;
  }
  return 0;
}

int FakeOs::sleep(uint64_t ns) {
  log.push_back("sleep " + std::to_string(ns));
  now_ns += ns;
  return 0;
}

int FakeOs::bpf_load(const std::string &file, const std::string &name, std::string *out_log) {
  log.push_back("bpf_load " + file + " " + name);
  auto it = bpf_catalog.find(file);
  if (it == bpf_catalog.end()) return -ENOENT;
  if (bpf_loaded.count(name)) return -EEXIST;
  if (!it->second.reject_log.empty()) {
    *out_log = it->second.reject_log;
    return -EACCES;
  }
  bpf_loaded[name] = it->second;
  return 0;
}

int FakeOs::bpf_attach(const std::string &obj, const std::string &item,
                       const std::string &cgroup_path) {
  log.push_back("bpf_attach " + obj + "/" + item + " " + cgroup_path);
  auto it = bpf_loaded.find(obj);
  if (it == bpf_loaded.end()) return -ENOENT;
  bool is_map = it->second.maps.count(item) != 0;
  if (!is_map && !it->second.progs.count(item)) return -ENOENT;
  if (is_map == cgroup_path.empty()) return -EINVAL;  // a map needs a cgroup, a program none
  if (is_map && !tree_.count(cgroup_path)) return -ENOENT;
  std::string link = obj + "/" + item + "@" + cgroup_path;
  if (std::find(bpf_links.begin(), bpf_links.end(), link) != bpf_links.end()) return -EBUSY;
  bpf_links.push_back(link);
  return 0;
}

int FakeOs::bpf_detach(const std::string &obj, const std::string &item,
                       const std::string &cgroup_path) {
  log.push_back("bpf_detach " + obj + "/" + item + " " + cgroup_path);
  auto l = std::find(bpf_links.begin(), bpf_links.end(), obj + "/" + item + "@" + cgroup_path);
  if (l == bpf_links.end()) return -ENOENT;
  bpf_links.erase(l);
  return 0;
}

int FakeOs::bpf_run(const std::string &obj, const std::string &prog,
                    const std::vector<uint64_t> &args, uint64_t *retval) {
  std::string a;
  for (uint64_t v : args) a += " " + std::to_string(v);
  log.push_back("bpf_run " + obj + "/" + prog + a);
  auto it = bpf_loaded.find(obj);
  if (it == bpf_loaded.end() || !it->second.progs.count(prog)) return -ENOENT;
  *retval = it->second.retval;
  return 0;
}

int FakeOs::bpf_map_dump(const std::string &obj, const std::string &map, BpfMapDump *out) {
  auto it = bpf_loaded.find(obj);
  if (it == bpf_loaded.end() || !it->second.dumps.count(map)) return -ENOENT;
  *out = it->second.dumps.at(map);
  return 0;
}

int FakeOs::bpf_ringbuf(const std::string &obj, const std::string &map,
                        std::vector<std::string> *records) {
  auto it = bpf_loaded.find(obj);
  if (it == bpf_loaded.end() || !it->second.ringbufs.count(map)) return -ENOENT;
  *records = std::move(it->second.ringbufs.at(map));
  it->second.ringbufs.at(map).clear();
  return 0;
}

int FakeOs::bpf_unload(const std::string &name) {
  log.push_back("bpf_unload " + name);
  if (!bpf_loaded.erase(name)) return -ENOENT;
  std::erase_if(bpf_links, [&](const std::string &l) { return l.compare(0, name.size() + 1, name + "/") == 0; });
  return 0;
}

}  // namespace umemcg::sh::test
