// SPDX-License-Identifier: GPL-2.0-only
// test/fuzz/fuzz_loader.cc: libFuzzer target for the ELF+BTF loader. Any
// input must load or give an error status; crashes, sanitizer reports and
// hangs are bugs. Extern resolution runs against the memcg kfuncs so that
// path is covered too. Seed corpus: the compiled test/progs objects.
#include <cstddef>
#include <cstdint>

#include "bpfvm/kfunc.h"
#include "bpfvm/loader.h"
#include "bpfvm/object_dump.h"

namespace {

using namespace umemcg;
using namespace umemcg::emu;

u64 nop_kfunc(u64, u64, u64, u64, u64) { return 0; }

const KfuncRegistry &registry()
{
	static KfuncRegistry *reg = [] {
		auto *r = new KfuncRegistry;
		auto add = [r](KfuncDesc d) {
			d.fn = nop_kfunc;
			(void)r->add(std::move(d));
		};
		add({"bpf_get_mem_cgroup", KfuncArg::ptr_to("mem_cgroup"),
		     {KfuncArg::ptr_to("cgroup_subsys_state")}, KF_ACQUIRE | KF_RET_NULL | KF_RCU});
		add({"bpf_put_mem_cgroup", KfuncArg::void_(), {KfuncArg::ptr_to("mem_cgroup")}, KF_RELEASE});
		add({"bpf_mem_cgroup_usage", KfuncArg::scalar(8), {KfuncArg::ptr_to("mem_cgroup")}, 0});
		add({"bpf_mem_cgroup_flush_stats", KfuncArg::void_(), {KfuncArg::ptr_to("mem_cgroup")},
		     KF_SLEEPABLE});
		add({"bpf_proactive_reclaim", KfuncArg::scalar(8, true),
		     {KfuncArg::ptr_to("mem_cgroup"), KfuncArg::scalar(8), KfuncArg::scalar(4, true)},
		     KF_SLEEPABLE});
		return r;
	}();
	return *reg;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	LoadOptions opts;
	opts.kfuncs = &registry();
	absl::StatusOr<BpfObject> obj = load_object(absl::Span<const u8>(data, size), opts);
	if (obj.ok()) {
		// Walk everything a consumer would: the dump touches every
		// program, relocation, map and struct_ops member.
		std::string d = dump_object(*obj);
		(void)d;
	}
	return 0;
}
