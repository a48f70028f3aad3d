/*
 * Functions whose first instructions test where dc-agent may put a uprobe:
 * each has a known cheapest safe site, or a reason to keep the entry. The
 * unit test checks the sites chosen; the integration test checks that a
 * traced run computes what an untraced one does, with exact call counts.
 */
	.text

/* cmpb (RIP-relative, single-stepped) then je (emulated): site +7. */
	.globl pf_cmp
	.type pf_cmp, @function
pf_cmp:
	cmpb $0, pf_flag(%rip)
	je 1f
	nop
1:	lea (%rdi,%rsi), %rax
	ret
	.size pf_cmp, .-pf_cmp

/* Its own loop branches back into the prefix: the entry. */
	.globl pf_loop
	.type pf_loop, @function
pf_loop:
	xor %eax, %eax
2:	add %rdi, %rax
	dec %rdi
	jnz 2b
	ret
	.size pf_loop, .-pf_loop

/* pf_side jumps into pf_joined's prefix: the entry. */
	.globl pf_joined
	.type pf_joined, @function
pf_joined:
	mov %rdi, %rax
3:	add %rsi, %rax
	jmp 4f
4:	ret
	.size pf_joined, .-pf_joined

	.globl pf_side
	.type pf_side, @function
pf_side:
	push %rbx
	pop %rbx
	mov $100, %rax
	jmp 3b
	.size pf_side, .-pf_side

/* Overwrites its second argument before the first emulated instruction:
 * the entry when a probe reads argument 2, +5 when none is read. */
	.globl pf_clobber
	.type pf_clobber, @function
pf_clobber:
	mov $7, %esi
	jmp 5f
5:	lea (%rdi,%rsi), %rax
	ret
	.size pf_clobber, .-pf_clobber

/* Moves rsp first: the entry. */
	.globl pf_frame
	.type pf_frame, @function
pf_frame:
	sub $8, %rsp
	jmp 6f
6:	add $8, %rsp
	lea 1(%rdi), %rax
	ret
	.size pf_frame, .-pf_frame

/* Stores over its return address's slot first: the entry. */
	.globl pf_store
	.type pf_store, @function
pf_store:
	mov (%rsp), %rax
	mov %rax, (%rsp)
	jmp 7f
7:	lea 2(%rdi), %rax
	ret
	.size pf_store, .-pf_store

/* A push at the entry is emulated: the entry. */
	.globl pf_push
	.type pf_push, @function
pf_push:
	push %rbp
	lea 3(%rdi), %rax
	pop %rbp
	ret
	.size pf_push, .-pf_push

/* A system call and no emulated instruction before it: the entry. */
	.globl pf_getpid
	.type pf_getpid, @function
pf_getpid:
	mov $39, %eax
	syscall
	ret
	.size pf_getpid, .-pf_getpid

/* Moves its arguments to other argument registers before its first emulated
 * instruction, as glibc's stat does before it jumps to fstatat: site +11,
 * argument 1 read in rsi and argument 2 in rdx. */
	.globl pf_moved
	.type pf_moved, @function
pf_moved:
	mov %rsi, %rdx
	mov %rdi, %rsi
	mov $9, %edi
	jmp 8f
8:	lea (%rsi,%rdx), %rax
	add %rdi, %rax
	ret
	.size pf_moved, .-pf_moved

/* Swaps its arguments through rax: site +9, argument 1 read in rsi and
 * argument 2 in rdi. */
	.globl pf_swap
	.type pf_swap, @function
pf_swap:
	mov %rdi, %rax
	mov %rsi, %rdi
	mov %rax, %rsi
	jmp 9f
9:	lea (%rdi,%rsi,2), %rax
	ret
	.size pf_swap, .-pf_swap

/* Keeps its second argument only in rax, which no probe reads: the entry
 * when argument 2 is read. */
	.globl pf_lost
	.type pf_lost, @function
pf_lost:
	mov %rsi, %rax
	mov $1, %esi
	jmp 10f
10:	add %rdi, %rax
	add %rsi, %rax
	ret
	.size pf_lost, .-pf_lost

/* Never called: the kernel will not put a uprobe on an int3. */
	.globl pf_trap
	.type pf_trap, @function
pf_trap:
	int3
	ret
	.size pf_trap, .-pf_trap

/* Never called: the kernel will not probe an instruction with a lock
 * prefix, so the analysis leaves it out before asking. */
	.globl pf_locked
	.type pf_locked, @function
pf_locked:
	lock orq $0, (%rsp)
	lea 4(%rdi), %rax
	ret
	.size pf_locked, .-pf_locked

	.data
pf_flag:
	.byte 0

	.section .note.GNU-stack,"",@progbits
