/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef DC_START_HEAP_H
#define DC_START_HEAP_H

/*
 * The agent's heap in transparent huge pages while it starts. At every
 * start libbpf reads the kernel's BTF (5 MB) into fresh memory and copies
 * it once more; on a virtual machine the first touch of each 4 KiB page
 * traps to the hypervisor (28 ms for 8 MiB on a test machine, 1-5 ms in
 * 2 MiB pages), which made half of the BPF load. So, from main() on, the
 * heap grows in one step of DC_START_HEAP bytes marked MADV_HUGEPAGE, and
 * allocations up to that size stay in it rather than in fresh mmaps. Where
 * transparent huge pages are "never", nothing changes but where memory
 * comes from; where "always", nothing is needed and nothing is lost.
 */
#define DC_START_HEAP (32u << 20)

void dc_start_heap(void);
/* Once loaded: malloc's defaults, so that the agent, which runs as long
 * as the job, gives memory back as usual. */
void dc_start_heap_done(void);

#endif
