// SPDX-License-Identifier: GPL-2.0-only
// bpfvm/map_internal.h: each map type's allocation (its map_alloc_check() + map_alloc()),
// called by bpf_map_create(). Not for users of bpfvm/.
// Mirrors: the per-type struct bpf_map_ops tables (kernel/bpf/arraymap.c, hashtab.c,
//          ringbuf.c, bpf_task_storage.c, bpf_cgrp_storage.c) (Linux 6.19)
#pragma once

#include "shim/thread_annotations.h"  // before abseil, see bpfvm/map.h
#include <memory>

#include "absl/status/statusor.h"
#include "bpfvm/map.h"

namespace umemcg::emu {

absl::StatusOr<std::unique_ptr<bpf_map>> array_map_alloc(const BpfMapAttr &attr);
absl::StatusOr<std::unique_ptr<bpf_map>> htab_map_alloc(const BpfMapAttr &attr);
absl::StatusOr<std::unique_ptr<bpf_map>> ringbuf_map_alloc(const BpfMapAttr &attr);
absl::StatusOr<std::unique_ptr<bpf_map>> local_storage_map_alloc(const BpfMapAttr &attr);

// Per-CPU maps need the machine's vCPU count.
absl::Status need_cpus(const BpfMapAttr &attr);

}  // namespace umemcg::emu
