// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * I/O through shared file mappings (the mmap set): each page fault a traced
 * thread takes on a file it mapped MAP_SHARED is one event, "mmap_read"
 * for a load that brings a page of the file into the process, "mmap_write"
 * for a store that makes a page of the file dirty, the write the kernel
 * will later send to the file. Faults taken in the kernel on the
 * process's behalf (read(2) into a mapped file) count as well.
 *
 * A load maps the pages around it that the page cache already holds with
 * the faulting one (fault-around): its event counts one page, the one
 * faulted. A store faults once a page until the page is written back.
 * Private mappings (how programs and libraries are loaded, MAP_PRIVATE
 * files) and executable ones are left out: their pages are never written
 * to the file.
 *
 * The x86 exception tracepoints give the address; the mapping behind it,
 * and so its file, comes from bpf_find_vma (Linux 5.17).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include "namers.bpf.h"

#define DC_VM_EXEC 0x4ull     /* VM_EXEC */
#define DC_VM_MAYSHARE 0x80ull /* VM_MAYSHARE: MAP_SHARED, even of a file opened read-only */
#define DC_PF_WRITE 0x2ull    /* X86_PF_WRITE in the error code */
#define DC_PAGE 4096ull

struct fault_vma {
	__u64 addr;
	__u64 file;
	__s64 offset;
};

/* The file and the offset in it of the page at v->addr, when it is a
 * shared, not executable, mapping of one. */
static long vma_file(struct task_struct *task, struct vm_area_struct *vma, void *ctx)
{
	struct fault_vma *v = ctx;
	__u64 flags = vma->vm_flags;

	if (!vma->vm_file || !(flags & DC_VM_MAYSHARE) || (flags & DC_VM_EXEC))
		return 0;
	v->file = (__u64)vma->vm_file;
	v->offset = (__s64)((v->addr & ~(DC_PAGE - 1)) - vma->vm_start + (vma->vm_pgoff << 12));
	return 0;
}

/* page_fault_user and page_fault_kernel: (address, regs, error_code). */
SEC("raw_tp")
int dc_mmap_fault(struct bpf_raw_tracepoint_args *ctx)
{
	__u64 id = bpf_get_current_pid_tgid(), now, inode;
	struct fault_vma v = { .addr = ctx->args[0] };
	struct dc_config *cfg;
	bool write;

	if (dc_stopped || !dc_is_tracked(id >> 32))
		return 0;
	if (bpf_find_vma(bpf_get_current_task_btf(), v.addr, vma_file, &v, 0) || !v.file)
		return 0;
	cfg = dc_settings();
	if (!cfg)
		return 0;
	write = ctx->args[2] & DC_PF_WRITE;
	now = dc_now();
	inode = dc_file_inode(v.file);
	if (dc_mode == DC_MODE_TRACE && !dc_file_known(v.file, inode))
		dc_file_send(v.file, inode, dc_file_walk(v.file, false, 0), now - 1);
	dc_emit_kernel_event(cfg->kernel_func[write ? DC_KFUNC_MMAP_WRITE : DC_KFUNC_MMAP_READ], id >> 32, (__u32)id,
			     now, 0, DC_PAGE, v.offset, 0, DC_EV_OFFSET, v.file, inode);
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
