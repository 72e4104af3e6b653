// SPDX-License-Identifier: GPL-2.0-only
// test/bpfvm/loader_test_util.h: helpers shared by the loader tests: paths
// of the compiled test programs, raw object bytes, a kfunc registry with
// the memcg kfuncs' signatures, the host kernel's CPU count.
#pragma once

#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <vector>

#include "bpfvm/kfunc.h"
#include "bpfvm/loader.h"
#include "test/bpfvm/memcg_kfunc_descs.h"

#ifndef UMEMCG_BPF_PROGS_DIR
#error "UMEMCG_BPF_PROGS_DIR must name the directory of the compiled test/progs objects"
#endif

namespace umemcg::emu::testing {

inline std::string prog_path(const std::string &name)
{
	return std::string(UMEMCG_BPF_PROGS_DIR) + "/" + name + ".bpf.o";
}

inline std::vector<u8> read_bytes(const std::string &path)
{
	std::ifstream in(path, std::ios::binary);
	return std::vector<u8>((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// The host kernel's nr_cpu_ids, which bounds bpf_get_smp_processor_id() for its verifier
// (bpf_verifier_opts::nr_cpu_ids in the differential tests): one past the last possible CPU
// ("0-1" -> 2); 0 (the verifier's default) if unknown.
inline u32 host_nr_cpu_ids()
{
	std::ifstream in("/sys/devices/system/cpu/possible");
	std::string s;
	if (!std::getline(in, s) || s.empty())
		return 0;
	const size_t sep = s.find_last_of("-,");
	return (u32)std::stoul(s.substr(sep == std::string::npos ? 0 : sep + 1)) + 1;
}

// The bytes of a compiled test program; throws (failing the test case) if
// the object was not built.
inline std::vector<u8> prog_bytes(const std::string &name)
{
	std::vector<u8> b = read_bytes(prog_path(name));
	if (b.empty())
		throw std::runtime_error(prog_path(name) + ": missing or empty (build test/progs first)");
	return b;
}

inline u64 fake_kfunc(u64, u64, u64, u64, u64) { return 0; }

// The memcg kfuncs the test objects call (kernel-semantics.md 5.1, 5.5).
inline void add_memcg_kfuncs(KfuncRegistry &reg, bool with_reclaim = true)
{
	auto add = [&reg](KfuncDesc d) {
		d.fn = fake_kfunc;
		absl::Status st = reg.add(std::move(d));
		if (!st.ok())
			throw std::runtime_error(std::string(st.message()));
	};
	for (KfuncDesc &d : memcg_kfunc_descs(with_reclaim))
		add(std::move(d));
}

}  // namespace umemcg::emu::testing
