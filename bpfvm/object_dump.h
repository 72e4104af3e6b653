// SPDX-License-Identifier: GPL-2.0-only
// bpfvm/object_dump.h: a human-readable summary of a loaded BPF object
// (programs with their relocations, maps, struct_ops layouts, externs), for
// the `umemcg bpf` verbs and for test failure messages.
// Mirrors: nothing in the kernel; the role of `bpftool gen skeleton`'s view
// of an object.
#pragma once

#include <string>

#include "bpfvm/object.h"

namespace umemcg::emu {

std::string dump_object(const BpfObject &obj);

const char *bpf_prog_type_name(u32 type);
const char *bpf_map_type_name(u32 type);

}  // namespace umemcg::emu
