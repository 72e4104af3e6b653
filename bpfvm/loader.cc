// SPDX-License-Identifier: GPL-2.0-only
// bpfvm/loader.cc: load_object: the phases of opening a BPF object.
// Mirrors: tools/lib/bpf/libbpf.c (bpf_object_open, bpf_object__elf_collect,
//          bpf_object__init_maps, bpf_object__collect_relos) (Linux 6.19)
#include "bpfvm/loader.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "absl/strings/match.h"
#include "absl/strings/str_format.h"
#include "bpfvm/btf_util.h"
#include "bpfvm/elf_reader.h"
#include "bpfvm/loader_internal.h"

namespace umemcg::emu {

namespace {

void read_license(const elf::ElfFile &elf, BpfObject &obj)
{
	const elf::Section *s = elf.by_name("license");
	if (!s)
		return;
	// Bounded: up to the first NUL or the end of the section.
	const u8 *p = s->data.data();
	size_t n = s->data.size();
	const void *nul = n ? std::memchr(p, 0, n) : nullptr;
	size_t len = nul ? static_cast<size_t>(static_cast<const u8 *>(nul) - p) : n;
	obj.license.assign(reinterpret_cast<const char *>(p), len);
}

absl::Status read_version(const elf::ElfFile &elf, BpfObject &obj)
{
	const elf::Section *s = elf.by_name("version");
	if (!s)
		return absl::OkStatus();
	if (s->data.size() != sizeof(u32))
		return absl::InvalidArgumentError(absl::StrFormat(
			"section 'version': %u bytes, expected 4", s->data.size()));
	std::memcpy(&obj.kern_version, s->data.data(), sizeof(u32));
	return absl::OkStatus();
}

std::string name_from_path(const std::string &path)
{
	std::string base = path.substr(path.find_last_of('/') + 1);
	for (const char *suffix : {".o", ".bpf"})
		if (absl::EndsWith(base, suffix))
			base.resize(base.size() - std::strlen(suffix));
	return base;
}

}  // namespace

absl::StatusOr<BpfObject> load_object(absl::Span<const u8> image, const LoadOptions &opts)
{
	absl::StatusOr<elf::ElfFile> elf = elf::read_elf(image);
	if (!elf.ok())
		return elf.status();

	BpfObject obj;
	obj.name = opts.name;
	loader::LoadCtx ctx{*elf, obj};
	ctx.core_types = opts.core_types;
	if (const elf::Section *b = elf->by_name(".BTF")) {
		absl::StatusOr<struct btf *> btf = btf_parse_bytes(b->data);
		if (!btf.ok())
			return btf.status();
		obj.btf.reset(*btf, BtfDeleter());
		ctx.btf = *btf;
		if (absl::Status st = btf_fixup_datasecs(ctx.btf, *elf); !st.ok())
			return st;
	}
	read_license(*elf, obj);
	if (absl::Status st = read_version(*elf, obj); !st.ok())
		return st;
	for (auto phase : {loader::collect_btf_maps, loader::collect_data_maps,
			   loader::collect_externs, loader::collect_programs,
			   loader::collect_struct_ops}) {
		if (absl::Status st = phase(ctx); !st.ok())
			return st;
	}
	if (opts.kfuncs)
		if (absl::Status st = resolve_externs(obj, *opts.kfuncs); !st.ok())
			return st;
	return obj;
}

namespace {

// The bytes of a regular file. A directory, FIFO, socket or device is refused before any read
// (opened non-blocking: a FIFO without a writer would block the open); errors say why.
absl::StatusOr<std::vector<u8>> read_object_file(const std::string &path)
{
	const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return absl::NotFoundError(absl::StrFormat("%s: cannot open: %s", path, std::strerror(errno)));
	struct stat st;
	if (fstat(fd, &st) < 0) {
		const int e = errno;
		close(fd);
		return absl::InvalidArgumentError(absl::StrFormat("%s: cannot stat: %s", path, std::strerror(e)));
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		const char *what = S_ISDIR(st.st_mode)	? "a directory"
				   : S_ISFIFO(st.st_mode) ? "a FIFO"
				   : S_ISSOCK(st.st_mode) ? "a socket"
				   : S_ISCHR(st.st_mode)  ? "a character device"
				   : S_ISBLK(st.st_mode)  ? "a block device"
							  : "not a regular file";
		return absl::InvalidArgumentError(
			absl::StrFormat("%s: cannot load %s: a BPF object is an ELF file", path, what));
	}
	std::vector<u8> bytes;
	bytes.reserve((size_t)st.st_size);
	u8 buf[65536];
	for (;;) {
		const ssize_t n = read(fd, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			const int e = errno;
			close(fd);
			return absl::DataLossError(absl::StrFormat("%s: read error: %s", path, std::strerror(e)));
		}
		if (n == 0)
			break;
		bytes.insert(bytes.end(), buf, buf + n);
	}
	close(fd);
	return bytes;
}

}  // namespace

absl::StatusOr<BpfObject> load_object_file(const std::string &path, const LoadOptions &opts)
{
	absl::StatusOr<std::vector<u8>> read = read_object_file(path);
	if (!read.ok())
		return read.status();
	const std::vector<u8> &bytes = *read;
	LoadOptions o = opts;
	if (o.name.empty())
		o.name = name_from_path(path);
	absl::StatusOr<BpfObject> obj = load_object(bytes, o);
	if (!obj.ok())
		return absl::Status(obj.status().code(),
				    absl::StrFormat("%s: %s", path, obj.status().message()));
	return obj;
}

}  // namespace umemcg::emu
