// SPDX-License-Identifier: GPL-2.0-only
// shim/list.h: circular doubly linked lists embedded in their elements (struct list_head).
//
// Mirrors: include/linux/list.h (Linux 6.19): the operations umemcg uses
// Emulation: no list poisoning; list_del() leaves the entry self-linked (list_del_init), so a
//   stale second deletion is harmless instead of a crash.
#pragma once

#include <cstddef>

namespace umemcg {

struct list_head {
  list_head *next = this;
  list_head *prev = this;
};

inline void INIT_LIST_HEAD(list_head *l) { l->next = l->prev = l; }
inline bool list_empty(const list_head *h) { return h->next == h; }

inline void __list_add(list_head *n, list_head *prev, list_head *next) {
  next->prev = n;
  n->next = next;
  n->prev = prev;
  prev->next = n;
}
// Adds @n right after @head (at the head of the list).
inline void list_add(list_head *n, list_head *head) { __list_add(n, head, head->next); }
// Adds @n right before @head (at the tail of the list).
inline void list_add_tail(list_head *n, list_head *head) { __list_add(n, head->prev, head); }
inline void list_del_init(list_head *e) {
  e->next->prev = e->prev;
  e->prev->next = e->next;
  INIT_LIST_HEAD(e);
}
inline void list_del(list_head *e) { list_del_init(e); }
inline void list_move(list_head *e, list_head *head) {
  list_del_init(e);
  list_add(e, head);
}
inline void list_move_tail(list_head *e, list_head *head) {
  list_del_init(e);
  list_add_tail(e, head);
}

}  // namespace umemcg

#define list_entry(ptr, type, member) \
  reinterpret_cast<type *>(reinterpret_cast<char *>(ptr) - offsetof(type, member))
