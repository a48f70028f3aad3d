/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The records DataCrumbs moves around: produced by the BPF programs, carried
 * through the ring buffer, written to node files by dc-agent and read back by
 * the tools that read node files. Both the BPF side and user space include this header; the
 * includer provides the __u64-style types (vmlinux.h or <linux/types.h>).
 */
#ifndef DC_EVENT_H
#define DC_EVENT_H

/* A whole path, as the kernel takes it (PATH_MAX, with its NUL): a longer
 * one fails with ENAMETOOLONG, so no path a call used is ever cut. */
#define DC_PATH_MAX 4096
#define DC_COMM_LEN 16
#define DC_MAX_DEPTH 8
/* Kernel functions open at once on a thread (kernel: probe sets). */
#define DC_MAX_KDEPTH 16
#define DC_MAX_FUNCS 4096
/* The BPF side's ring buffers, one per CPU: CPUs past this many share. */
#define DC_MAX_RINGS 1024

/*
 * A probe's attach cookie tells the shared BPF programs which function fired
 * and where its interesting arguments are, so one program serves every probe.
 * Argument slots hold 1..6 (the C argument position) or 0 (absent).
 */
#define DC_COOKIE_FUNC_BITS 12
#define DC_SLOT_BITS 3
enum dc_slot {
	DC_SLOT_PATH,   /* const char * path */
	DC_SLOT_FD,     /* int fd */
	DC_SLOT_HANDLE, /* opaque handle: FILE *, DIR *, MPI_File, hid_t */
	DC_SLOT_BYTES,  /* byte count (or item size when DC_SLOT_MUL is set) */
	DC_SLOT_MUL,    /* multiplies DC_SLOT_BYTES (fread/fwrite nmemb) */
	DC_SLOT_OFFSET, /* file offset */
	DC_SLOT_DTYPE,  /* MPI datatype: DC_SLOT_BYTES counts items of its size */
	DC_SLOT_HANDLE_OUT, /* where the call stores a new handle (MPI_File *) */
	DC_SLOT_PARENT, /* the handle a new one is made or opened in (H5Dcreate's loc_id) */
	DC_SLOT_DIRFD,  /* the folder a relative path is in (openat's dirfd; AT_FDCWD) */
	DC_SLOT_IOV,    /* a struct iovec array: DC_SLOT_BYTES counts its entries (system calls only) */
	DC_SLOT_FD2,    /* int fd the data comes from, in a call that moves it to DC_SLOT_FD's file */
	/* A second name (rename's and link's new one). With DC_SLOT_DIRFD, the
	 * folder it is relative to is the argument just before it
	 * (renameat's newdirfd): the slots' bits are all taken. */
	DC_SLOT_PATH2,
	DC_NR_SLOTS,
};
#define DC_COOKIE_RET_SHIFT (DC_COOKIE_FUNC_BITS + DC_NR_SLOTS * DC_SLOT_BITS)
#define DC_COOKIE_RET_BITS 4
#define DC_COOKIE_RET_MASK (15ull << DC_COOKIE_RET_SHIFT)
/* A slot's place and value in a cookie, and the return kind's: one
 * expression for the BPF programs, the probe sets' parser and the sites. */
#define DC_SLOT_SHIFT(s) (DC_COOKIE_FUNC_BITS + (s) * DC_SLOT_BITS)
#define DC_SLOT_MASK ((1ull << DC_SLOT_BITS) - 1)
#define DC_COOKIE_SLOT(cookie, s) (((cookie) >> DC_SLOT_SHIFT(s)) & DC_SLOT_MASK)
#define DC_COOKIE_SET_SLOT(cookie, s, pos)                                                         \
	(((cookie) & ~(DC_SLOT_MASK << DC_SLOT_SHIFT(s))) | ((__u64)(pos) << DC_SLOT_SHIFT(s)))
#define DC_COOKIE_RET(cookie) (((cookie) >> DC_COOKIE_RET_SHIFT) & 15)
#define DC_COOKIE_FLAG(n) (1ull << (DC_COOKIE_RET_SHIFT + DC_COOKIE_RET_BITS + (n)))
/* The function releases the fd or handle it names (close, fclose). */
#define DC_COOKIE_CLOSES DC_COOKIE_FLAG(0)
/* The function reads or writes (io_kind.h): a system call's bytes count
 * toward an open call of the same kind whose bytes come from below. */
#define DC_COOKIE_READS DC_COOKIE_FLAG(1)
#define DC_COOKIE_WRITES DC_COOKIE_FLAG(2)
/* The call's bytes are what its thread's traced system calls of its kind
 * moved while it ran (H5Dwrite, H5Dread: their arguments do not say). */
#define DC_COOKIE_BYTES_NESTED DC_COOKIE_FLAG(3)
/* Its handles are C library streams (FILE *, a set's handles: stdio): the
 * call is on the file the kernel has behind the descriptor of the stream
 * it takes, or of the one it returns (fopen, freopen). */
#define DC_COOKIE_STREAM DC_COOKIE_FLAG(4)
/* Its DC_SLOT_BYTES argument is a C string, read at the return (fputs'
 * text, fgets' buffer): its length is the bytes asked, and moved when the
 * call succeeds as its return kind says (a pointer: when not NULL). */
#define DC_COOKIE_TEXT DC_COOKIE_FLAG(5)
/* It takes no stream: it is on the standard input if it reads, on the
 * standard output if it writes (printf, puts, getchar). */
#define DC_COOKIE_STD DC_COOKIE_FLAG(6)
/* A system call that submits or reaps Linux AIO requests (io_submit,
 * io_getevents): its requests are walked after it (the aio set). */
#define DC_COOKIE_AIO DC_COOKIE_FLAG(7)
#define DC_COOKIE_NFLAGS 8
/* Marks a dc_syscalls entry as traced, so function 0 with no arguments is not 0. */
#define DC_COOKIE_ON (1ull << 63)
/* The same bit in a uprobe's cookie (no uprobe's is a dc_syscalls entry):
 * a probe of a link on every process, where uprobes were on the job's
 * processes only until too many of them ran at once (agent/uprobe_scope.h),
 * counted from the switch on, and the processes' own links no longer, so
 * that no call is seen twice or missed while both are attached. */
#define DC_COOKIE_EVERY (1ull << 63)
/* The cookie's bit budget, shared by the agent and the BPF programs. */
_Static_assert(DC_MAX_FUNCS <= (1 << DC_COOKIE_FUNC_BITS), "function ids fit their bits");
_Static_assert(6 < (1 << DC_SLOT_BITS), "an argument position 1-6 fits a slot");
_Static_assert(DC_COOKIE_RET_SHIFT + DC_COOKIE_RET_BITS + DC_COOKIE_NFLAGS <= 63,
	       "slots, return kind and the flag bits stay below DC_COOKIE_ON");
#define DC_MAX_SYSCALLS 512
/* The most entries of an iovec array a system call takes (UIO_MAXIOV). */
#define DC_IOV_MAX 1024

/*
 * Where the kernel gives no attach cookie (kprobes and uprobes before 5.15,
 * fentry/fexit programs), each probe gets a copy of its program in which
 * dc-agent replaces the 64-bit constant DC_CLONE_COOKIE_MAGIC with the
 * probe's cookie, and DC_CLONE_NARGS_MAGIC with the number of arguments of
 * the function (where fexit finds the return value). Plain numbers, no
 * suffix: the BPF side writes them into instructions.
 */
#define DC_CLONE_COOKIE_MAGIC 0x7a11dc00c00c1e01
#define DC_CLONE_NARGS_MAGIC 0x7a11dc00a7650002
#define DC_STR_(x) #x
#define DC_STR(x) DC_STR_(x)

/* What a function's return value means. */
enum dc_ret {
	DC_RET_PLAIN,  /* nothing special, kept as is */
	DC_RET_FD,     /* a new file descriptor, a C int (open, creat, openat) */
	DC_RET_HANDLE, /* a new handle (fopen, opendir) */
	DC_RET_BYTES,  /* bytes moved (read, write, fprintf) */
	DC_RET_ITEMS,  /* items moved, each DC_SLOT_BYTES long (fread) */
	DC_RET_INT,    /* a C int (close, stat): only the low 32 bits are set */
	DC_RET_INT_BYTES, /* bytes moved, as a C int (fprintf) */
	DC_RET_STATUS, /* a C int, 0 on success: then the bytes asked were moved (MPI) */
	DC_RET_CHAR,   /* a C int, EOF (-1) on failure, else one byte moved (fputc, getc) */
	DC_RET_LINE,   /* a C int, not negative on success: then the text and a newline were written (puts) */
	DC_RET_REFS,   /* a C int, the references left to the handle (H5Idec_ref): at 0 it is released */
};
_Static_assert(DC_RET_REFS < (1 << DC_COOKIE_RET_BITS), "return kinds fit the cookie's bits");

/* dc_event.flags: X(name, bit, meaning), one list for the code and the
 * outputs that explain them (the HDF5 file's description). */
#define DC_EV_FLAGS(X)                                                                             \
	X(DC_EV_FD, 0x01, "fd set")                                                                \
	X(DC_EV_OFFSET, 0x02, "offset set")                                                        \
	X(DC_EV_HANDLE, 0x04, "the call named a handle")                                           \
	X(DC_EV_SYSCALL, 0x08, "observed at a system call")                                        \
	X(DC_EV_PATHARG, 0x10, "path was an argument, not looked up from the fd")                  \
	X(DC_EV_KERNEL, 0x20, "a kernel event, not a call (block request, page cache)")            \
	X(DC_EV_NEW_HANDLE, 0x40, "the handle is one the call just made (fopen, MPI_File_open)")   \
	X(DC_EV_CLOSES, 0x80, "the call released its fd or handle (close, fclose)")

enum dc_ev_flag {
#define DC_EV_ENUM(name, bit, text) name = bit,
	DC_EV_FLAGS(DC_EV_ENUM)
#undef DC_EV_ENUM
};

/* dc_func.flags (a node file's function table): the DC_EV_SYSCALL and
 * DC_EV_KERNEL bits of how the function is observed, and this one. */
#define DC_FUNC_KFUNC 0x100 /* a kernel function of a kernel: probe set */
/* Recorded inside the process by libdcpmpi.so (a wrapper set), not probed.
 * A flag readers that do not know it ignore: no new node-format version. */
#define DC_FUNC_WRAPPER 0x200
/* Its calls' bytes are those of the system calls nested in them
 * (DC_COOKIE_BYTES_NESTED): a flag readers may ignore, as the one above. */
#define DC_FUNC_BYTES_NESTED 0x400
/* Its calls' bytes are the selection's elements times the memory type's
 * size (HDF5's dataspaces, asked by libdcpmpi.so): as the one above. */
#define DC_FUNC_BYTES_DATASPACE 0x800

/* One traced call: a record of a node file's EVENTS chunk. */
struct dc_event {
	__u64 ts;     /* entry, CLOCK_MONOTONIC nanoseconds */
	__u64 dur;    /* nanoseconds */
	__u32 pid;    /* thread group id */
	__u32 tid;
	__u32 func;   /* index into the node file's function table */
	__u16 cpu;
	__u8 depth;   /* user-level calls open on this thread at entry */
	__u8 flags;
	__s64 ret;    /* raw return value */
	__u64 req;    /* bytes asked for */
	__u64 bytes;  /* bytes moved */
	__s64 offset;
	__s32 fd;
	__u32 path;   /* string id, 0 for none */
	/* A second file or name (node format 4): the one data comes from in
	 * a call that moves it between two (copy_file_range, sendfile,
	 * splice, tee), by its descriptor and its name; a rename's or link's
	 * new name; the name an open was given, where the kernel names its
	 * file otherwise. -1 and 0 for none. */
	__s32 fd2;
	__u32 path2;
};

/* Process life: a record of a node file's PROCS chunk. */
enum dc_proc_kind {
	DC_PROC_START = 1, /* traced from the start (the command, --pid) */
	DC_PROC_FORK,
	DC_PROC_EXEC,
	DC_PROC_EXIT,
	/* It left the job, for the reason in exit_code (enum dc_left_why), and
	 * nothing more of it or its later children is recorded. A kind older
	 * readers skip: no new node-format version. */
	DC_PROC_LEFT,
	/* The BPF side to the agent alone, never in a node file: a program
	 * of the job's user whose environment --match-env could not read
	 * whole, so that it may have been missed. */
	DC_PROC_ENV_UNREAD,
};

enum dc_left_why {
	/* It ran a program that gave it credentials other than the job user's
	 * own (set-user-id, set-group-id, file capabilities): what it does is
	 * withheld from the job's user as the kernel withholds it from ptrace. */
	DC_LEFT_PRIVILEGES = 1,
};

struct dc_proc {
	__u64 ts;
	__u32 pid;
	__u32 ppid;
	__u32 kind;
	__s32 exit_code; /* wait status for DC_PROC_EXIT: signal in low 7 bits */
	char comm[DC_COMM_LEN];
};

/* MPI: which pid is which rank, a RANKS record (from the control socket). */
enum dc_rank_kind {
	DC_RANK_REGISTER = 1, /* after MPI_Init */
	DC_RANK_FINALIZE,     /* in MPI_Finalize */
	DC_RANK_NO_FINALIZE,  /* the process ended without calling MPI_Finalize */
	/* A Slurm task, from its environment when it joined: rank is its
	 * SLURM_PROCID, world_size 0; no clock offset. New in node-format
	 * version 2. */
	DC_RANK_SLURM_TASK,
};

struct dc_rank {
	__u64 ts;
	__u32 pid;
	__s32 rank;
	__s32 world_size;
	__u32 kind;
	__s64 clock_offset_ns; /* add to this node's CLOCK_REALTIME for rank 0's */
	__u64 clock_error_ns;
};

/* PROFILE mode: cumulative totals per (pid, function), a COUNTERS record. */
struct dc_counter {
	__u64 ts; /* when the totals were read, CLOCK_MONOTONIC ns */
	__u32 pid;
	__u32 func;
	__u64 count;
	__u64 time_ns;
	__u64 bytes;
};

/* Ring buffer messages: each starts with its type. */
enum dc_msg_type {
	DC_MSG_CALL = 1,
	DC_MSG_PROC,
	DC_MSG_FILE,
};

/* A call as the BPF side reports it; the ring buffer carries only the
 * bytes of path[] filled (DC_MSG_CALL_SIZE). Not the on-disk record: the
 * agent turns it into a struct dc_event and string ids.
 *
 * path[] holds the name the call was given (path_len bytes, with its NUL),
 * its second name (DC_SLOT_PATH2: path2_len bytes), then the kernel's own
 * names (kpath_len bytes, then kpath2_len, each with its NUL): with a new
 * descriptor (an open), its file's absolute path; else the absolute path
 * of the folder the first relative name is in, and, when the second name
 * is relative to another folder, that folder's. Other calls on a
 * descriptor carry only its file, named by an open or a DC_MSG_FILE. */
struct dc_msg_call {
	__u32 type;
	__u16 path_len;
	__u16 kpath_len;
	__u16 path2_len;
	__u16 kpath2_len;
	__u32 reserved;
	__u64 handle;
	__u64 parent; /* DC_SLOT_PARENT's handle, 0 for none */
	/* The kernel's struct file the call's descriptor named, and its inode:
	 * the key the agent keeps names by (never written out; the inode
	 * tells a file from a later one at the same address, which a message
	 * from another CPU may name first); 0 for none. */
	__u64 file;
	__u64 inode;
	/* The same of DC_SLOT_FD2's descriptor, taken at the call's return. */
	__u64 file2;
	__u64 inode2;
	struct dc_event ev;
	char path[4 * DC_PATH_MAX];
};
#define DC_MSG_CALL_BASE (sizeof(struct dc_msg_call) - 4 * DC_PATH_MAX)
#define DC_MSG_CALL_SIZE(m) (DC_MSG_CALL_BASE + (m)->path_len + (m)->path2_len + (m)->kpath_len + (m)->kpath2_len)

/* The absolute path of a file the agent has no path of, told at the entry
 * of the first call on it (while the file surely lives: a close may let it
 * go before its return). path_len 0: the kernel gave none (too deep), and
 * the file is named by nothing. */
struct dc_msg_file {
	__u32 type;
	__u32 path_len; /* bytes of path[], with the NUL */
	__u64 file;
	__u64 inode;
	__u64 ts;
	char path[DC_PATH_MAX];
};
#define DC_MSG_FILE_BASE (sizeof(struct dc_msg_file) - DC_PATH_MAX)

/* The slots of a hook's program array of namers, the programs that walk a
 * file's path (bpf/namers.bpf.h), which the agent fills after the load. */
#define DC_NAMER_ENTRY 0
#define DC_NAMER_EXIT 1
/* Not a namer: in the system calls' exit arrays, the walk of the AIO
 * requests a call submitted or reaped (bpf/aio.bpf.c). */
#define DC_NAMER_AIO 2

struct dc_msg_proc {
	__u32 type;
	__u32 slurm_task; /* DC_PROC_START by --match-env: SLURM_PROCID + 1, 0 if none */
	struct dc_proc proc;
};

/*
 * A library file a traced process maps for execution (bpf/libs.bpf.c,
 * agent/lib_files.c): its file system's device, as the kernel numbers it
 * (major << 20 | minor), and its inode.
 */
struct dc_lib_file {
	__u64 dev;
	__u64 ino;
};

/*
 * A process held stopped until the agent has done with it: at its mmap of
 * a file, and the descriptor it mapped (bpf/libs.bpf.c), or, where uprobes
 * are placed per process, at its fork or exec (fd -1, file 0), for its own
 * links. start: the process's start (task->start_boottime, ns), which
 * /proc/PID/stat shows in clock ticks, so that the agent wakes that
 * process and no later one under its pid.
 */
struct dc_lib_stop {
	struct dc_lib_file file;
	__u32 pid;
	__s32 fd;
	__u64 start;
};

/* Files the agent has looked at, and processes stopped at once, at most. */
#define DC_LIB_SEEN_MAX 1024
#define DC_LIB_STOPS_MAX 64
/* A library's stem: its file name up to the first '.' or '-' ("libc" of
 * libc.so.6 and of libc-2.31.so, "libmpi" of libmpi.so.40.30.5). Only a
 * file whose stem is a probe set's library's stops a process. */
#define DC_LIB_STEM_LEN 32
#define DC_LIB_STEMS_MAX 64

/* What dc-agent tells the BPF programs (the one entry of dc_config). */
enum dc_mode { DC_MODE_TRACE = 0, DC_MODE_PROFILE = 1 };

#define DC_ENV_MATCH_MAX 64
/* --match-env's walk of an environment, in steps (a variable, or 4 KiB of a
 * long one): with bpf_loop, and in a bounded loop (before Linux 5.17), whose
 * every turn the verifier walks. An environment is at most a quarter of the
 * stack limit (2 MiB at the usual 8 MiB): 512 steps of long variables. */
#define DC_ENV_MAX_STEPS 16384
#define DC_ENV_MAX_STEPS_BOUNDED 256
/* Programs --match-env does not take, by their file name (--skip-program). */
#define DC_SKIP_COMMS 4

/* io_uring's operations (IORING_OP_*) a ring may carry, a power of two. */
#define DC_URING_OPS 64
/* Linux AIO's operations (IOCB_CMD_*), a power of two; the requests of one
 * io_submit or io_getevents walked, at most. */
#define DC_AIO_OPS 16
#define DC_AIO_BATCH 4096

/* Kernel-level events that no call carries: function ids set by dc-agent. */
enum dc_kfunc {
	DC_KFUNC_BLOCK_RQ,     /* a block request, issue to completion */
	DC_KFUNC_PAGE_ADD,     /* a page (folio) added to the page cache */
	DC_KFUNC_PAGE_DELETE,  /* ...and removed from it */
	DC_KFUNC_MMAP_READ,    /* a load faulted a page of a shared file mapping in */
	DC_KFUNC_MMAP_WRITE,   /* a store made a page of a shared file mapping dirty */
	DC_NR_KFUNCS,
};

/*
 * What dc-agent tells the BPF programs after load, as probes are attached
 * (the one entry of dc_config). Settings known before load (the mode, the
 * MPI datatype size offset, the environment match) are read-only globals of
 * the BPF object instead: see maps.bpf.h.
 */
struct dc_config {
	__u32 kernel_func[DC_NR_KFUNCS];
	/* io_uring requests (the io_uring set): 1 + the function each
	 * operation (IORING_OP_*) is reported under, 0 for none (function 0
	 * is one); the bit of each whose positive result is bytes moved. */
	__u32 uring_func[DC_URING_OPS];
	__u64 uring_moves;
	/* Linux AIO requests (the aio set), as io_uring's; and the numbers
	 * of the system calls that submit and reap them (read only where
	 * their cookies say DC_COOKIE_AIO). */
	__u32 aio_func[DC_AIO_OPS];
	__u64 aio_moves;
	__s32 aio_submit_nr, aio_getevents_nr, aio_pgetevents_nr;
};

/* Keys and values of maps that user space reads too. */
struct dc_profile_key {
	__u32 pid;
	__u32 func;
};

struct dc_profile_val {
	__u64 count;
	__u64 time_ns;
	__u64 bytes;
};

/* Slots of the per-CPU statistics array. */
enum dc_stat {
	DC_STAT_LOST,       /* ring buffer full: event dropped */
	DC_STAT_STACK_FULL, /* deeper than DC_MAX_DEPTH, or no memory for a thread's frame */
	DC_STAT_MAP_FULL,   /* a profile or tracking map was full */
	DC_NR_STATS,
};

#endif /* DC_EVENT_H */
