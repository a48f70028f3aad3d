// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * register_client SOCKET PID RANK WORLD [FILE]: sends a registration
 * claiming PID (0: this process) to an agent, as libdcpmpi.so would. Prints
 * the agent's answer; exit 0 when accepted, 1 when refused. With FILE: writes
 * 3 bytes to it one at a time before registering and 5 after (or
 * $DC_TEST_WRITES), and prints its pid after "accepted": a process the agent
 * did not trace joins the job.
 *
 * DC_TEST_RING=KIND sends an MPI-IO ring with the registration, as a rank
 * that means harm might. Not a ring: "pipe", "fifo" (DC_TEST_RING_PATH),
 * "socket", "file" (DC_TEST_RING_PATH, opened for reading), "unsealed" (a
 * memfd it could still shrink). A true ring, then two good records of
 * MPI_File_write_at (7 bytes each), then: "good" nothing more; "damaged" a
 * record that claims more slots than the ring holds; "times" two records
 * dated before the ring was made and in the future; "truncate" tries to
 * shrink the ring and unmaps it (prints "shrink refused" when the seal
 * holds); "flood" as many records as fit, for a second; "shared" hands the
 * same ring to a child that registers it as its own (prints the child's
 * answer). Each waits 0.5 s for the agent to read what it wrote.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "wrapper_funcs.h"
#include "rank_ring.h"
#include "register.h"

static struct dc_ring_head *ring;

/* The fd of the ring DC_TEST_RING asks for, or -1 for none. */
static int make_ring(const char *kind)
{
	int fd = -1, p[2];

	if (!kind || !*kind)
		return -1;
	if (strcmp(kind, "pipe") == 0) {
		if (pipe(p))
			return -1;
		close(p[1]);
		return p[0];
	}
	if (strcmp(kind, "fifo") == 0 || strcmp(kind, "file") == 0)
		return open(getenv("DC_TEST_RING_PATH"), O_RDONLY | O_NONBLOCK);
	if (strcmp(kind, "socket") == 0) {
		if (socketpair(AF_UNIX, SOCK_STREAM, 0, p))
			return -1;
		return p[0];
	}
	if (strcmp(kind, "unsealed") == 0) {
		fd = memfd_create("hostile", MFD_ALLOW_SEALING);
		if (fd >= 0 && ftruncate(fd, DC_RING_HEAD_SIZE + 64 * DC_RING_SLOT_SIZE))
			return -1;
		return fd;
	}
	ring = dc_ring_create(64, &fd);
	return ring ? fd : -1;
}

static __u64 now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000000000ull + t.tv_nsec;
}

/* Two good records of MPI_File_write_at, then what kind asks for. */
static void write_records(const char *kind, const char *sock, int ring_fd)
{
	struct dc_ring_rec r = { .tid = getpid(), .func = DC_MPI_File_write_at, .req = 7, .bytes = 7, .dur = 10 };
	struct dc_ring_rec *slots = (struct dc_ring_rec *)((char *)ring + DC_RING_HEAD_SIZE);
	unsigned long long n = 0;

	for (int i = 0; i < 2; i++) {
		r.ts = now_ns() - 100;
		dc_ring_put(ring, &r, NULL, 0);
	}
	if (strcmp(kind, "damaged") == 0) {
		slots[2] = r;
		slots[2].commit = DC_RING_COMMITTED | 0x7fff;
		__atomic_store_n(&ring->head, 3, __ATOMIC_RELEASE);
	} else if (strcmp(kind, "times") == 0) {
		r.ts = 1;
		dc_ring_put(ring, &r, NULL, 0);
		r.ts = now_ns() + 3600ull * 1000000000ull;
		dc_ring_put(ring, &r, NULL, 0);
	} else if (strcmp(kind, "truncate") == 0) {
		if (ftruncate(ring_fd, 0) && errno == EPERM)
			printf("shrink refused\n");
		munmap(ring, DC_RING_HEAD_SIZE + 64 * DC_RING_SLOT_SIZE);
	} else if (strcmp(kind, "flood") == 0) {
		__u64 end = now_ns() + 1000000000ull;

		while (r.ts = now_ns(), r.ts < end)
			n += dc_ring_put(ring, &r, NULL, 0) == 0;
		printf("flood: %llu records put\n", n + 2);
	} else if (strcmp(kind, "shared") == 0) {
		pid_t child;

		fflush(stdout);
		child = fork();

		if (child == 0) {
			struct dc_ctl_msg m;
			char why[256];

			dc_register_fill(&m, DC_CTL_REGISTER, 1, 2);
			m.flags = DC_CTL_FLAG_RING;
			if (dc_register_send(sock, &m, ring_fd, why, sizeof(why)))
				printf("child refused: %s\n", why);
			else
				printf("child: %s\n", why);
			fflush(stdout);
			_exit(0);
		}
		waitpid(child, NULL, 0);
	}
	fflush(stdout);
	usleep(500000);
}

static int connect_to(const char *sock)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_SEQPACKET, 0);

	snprintf(a.sun_path, sizeof(a.sun_path), "%s", sock);
	if (fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof(a))) {
		close(fd);
		return -1;
	}
	return fd;
}

/* The message and its reply, printed as "accepted: MSG" or "refused: MSG". */
static int exchange(int fd, const struct dc_ctl_msg *m, int pass_fd)
{
	struct dc_ctl_reply r = { 0 };

	if (dc_send_with_fd(fd, m, sizeof(*m), pass_fd) < 0)
		return 2;
	/* The agent's copy of what was passed is then the last. */
	if (pass_fd >= 0)
		close(pass_fd);
	if (recv(fd, &r, sizeof(r), 0) != sizeof(r))
		return 2;
	r.message[sizeof(r.message) - 1] = 0;
	printf("%s: %s\n", r.status ? "refused" : "accepted", r.message);
	fflush(stdout);
	return r.status ? 1 : 0;
}

/*
 * The pid-reuse attack, run by root so that it is quick: a child of user
 * EVIL connects and exits; the dead child's pid is handed to a process of
 * user VICTIM (ns_last_pid), which reads FILE in a loop; then the
 * registration for that pid goes out on the dead child's connection.
 * Prints "victim PID" and the answer; the victim is left running.
 */
static int register_reused(const char *sock, const char *spec, int rank, int world)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	unsigned eu, eg, vu, vg;
	char file[4096] = "", path[64], status[4096];
	struct dc_ctl_msg m;
	pid_t child, victim;
	int fd = socket(AF_UNIX, SOCK_SEQPACKET, 0);
	FILE *f;

	if (sscanf(spec, "%u:%u:%u:%u:%4095s", &eu, &eg, &vu, &vg, file) != 5 || fd < 0)
		return 2;
	snprintf(a.sun_path, sizeof(a.sun_path), "%s", sock);
	child = fork();
	if (child == 0)
		_exit(setresgid(eg, eg, eg) || setresuid(eu, eu, eu) || connect(fd, (struct sockaddr *)&a, sizeof(a)));
	waitpid(child, NULL, 0);
	for (int tries = 0; tries < 5; tries++) {
		if (!(f = fopen("/proc/sys/kernel/ns_last_pid", "w")))
			return 2;
		fprintf(f, "%d", (int)child - 1);
		fclose(f);
		victim = fork();
		if (victim == 0) {
			if (setresgid(vg, vg, vg) || setresuid(vu, vu, vu))
				_exit(2);
			execl("/bin/sh", "sh", "-c", "while :; do cat \"$0\" >/dev/null; sleep 0.05; done", file,
			      (char *)NULL);
			_exit(2);
		}
		if (victim == child)
			break;
		kill(victim, SIGKILL);
		waitpid(victim, NULL, 0);
	}
	if (victim != child)
		return 2;
	/* Sent once the pid runs as the victim, as an attacker would wait. */
	snprintf(path, sizeof(path), "/proc/%d/status", (int)victim);
	for (int i = 0; i < 1000; i++) {
		unsigned uid = ~0u;
		char *u;
		size_t n;

		if (!(f = fopen(path, "r")))
			break;
		n = fread(status, 1, sizeof(status) - 1, f);
		fclose(f);
		status[n] = 0;
		if ((u = strstr(status, "\nUid:")) && sscanf(u + 5, "%u", &uid) == 1 && uid == vu)
			break;
		usleep(1000);
	}
	printf("victim %d\n", (int)victim);
	dc_register_fill(&m, DC_CTL_REGISTER, rank, world);
	m.pid = victim;
	return exchange(fd, &m, -1);
}

/* A unix socket carrying a TCP socket whose close waits 15 s (SO_LINGER,
 * unsent data to a listener that never reads), or -1. */
static int lingering(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t alen = sizeof(a);
	struct linger l = { 1, 15 };
	static char junk[1 << 20];
	int lst = socket(AF_INET, SOCK_STREAM, 0), tcp = socket(AF_INET, SOCK_STREAM, 0), pair[2];
	int small = 4096;

	if (lst < 0 || tcp < 0 || bind(lst, (struct sockaddr *)&a, sizeof(a)) || listen(lst, 1) ||
	    getsockname(lst, (struct sockaddr *)&a, &alen))
		return -1;
	setsockopt(lst, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small));
	setsockopt(tcp, SOL_SOCKET, SO_SNDBUF, &small, sizeof(small));
	if (connect(tcp, (struct sockaddr *)&a, sizeof(a)))
		return -1;
	fcntl(tcp, F_SETFL, O_NONBLOCK);
	/* The peer is accepted by no one and reads nothing: data stays unsent. */
	while (send(tcp, junk, sizeof(junk), MSG_DONTWAIT) > 0)
		;
	setsockopt(tcp, SOL_SOCKET, SO_LINGER, &l, sizeof(l));
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, pair) || dc_send_with_fd(pair[0], "x", 1, tcp) < 0)
		return -1;
	close(tcp);
	close(pair[0]);
	/* lst stays open (in this process) so the connection is not reset. */
	return pair[1];
}

int main(int argc, char **argv)
{
	const char *kind = getenv("DC_TEST_RING");
	struct dc_ctl_msg m;
	char why[256];
	int fd = -1, ring_fd, rc;

	if (argc != 5 && argc != 6) {
		fprintf(stderr, "usage: register_client SOCKET PID RANK WORLD [FILE]\n");
		return 2;
	}
	if (argc == 6 && (fd = open(argv[5], O_WRONLY | O_CREAT | O_TRUNC, 0600)) < 0) {
		perror(argv[5]);
		return 2;
	}
	for (int i = 0; fd >= 0 && i < 3; i++)
		if (write(fd, "b", 1) != 1)
			return 2;
	if (getenv("DC_TEST_REUSE"))
		return register_reused(argv[1], getenv("DC_TEST_REUSE"), atoi(argv[3]), atoi(argv[4]));
	dc_register_fill(&m, DC_CTL_REGISTER, atoi(argv[3]), atoi(argv[4]));
	if (atoi(argv[2]))
		m.pid = atoi(argv[2]);
	if (getenv("DC_TEST_LINGER")) {
		/* Held while the agent closes: the lingering socket's listener lives here. */
		int sock = connect_to(argv[1]), lfd = lingering();

		m.flags |= DC_CTL_FLAG_RING;
		rc = sock < 0 || lfd < 0 ? 2 : exchange(sock, &m, lfd);
		sleep(5);
		return rc;
	}
	ring_fd = make_ring(kind);
	if (ring_fd >= 0)
		m.flags |= DC_CTL_FLAG_RING;
	rc = dc_register_send(argv[1], &m, ring_fd, why, sizeof(why));
	if (rc) {
		printf("refused: %s\n", why);
		return 1;
	}
	if (!rc && ring && ring->mode != DC_RING_OFF)
		write_records(kind, argv[1], ring_fd);
	if (ring_fd >= 0)
		close(ring_fd);
	if (fd < 0) {
		/* With a ring, what the agent made of it. */
		printf("accepted%s%s\n", kind && *kind ? ": " : "", kind && *kind ? why : "");
		return 0;
	}
	for (long i = 0, n = getenv("DC_TEST_WRITES") ? atol(getenv("DC_TEST_WRITES")) : 5; i < n; i++)
		if (write(fd, "a", 1) != 1)
			return 2;
	close(fd);
	printf("accepted %d\n", (int)getpid());
	return 0;
}
