// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * I/O through file mappings, with the kernel's own count of the faults
 * each phase took (getrusage of this thread around it, where nothing but
 * the mapping is touched), printed for the test to hold the trace to:
 *   mmap_io DIR PAGES
 * 1. DIR/shared.dat, PAGES pages, mapped shared: one store in each page;
 *    msync; printed "stores N".
 * 2. The same file opened read-only, mapped shared: one load in each page;
 *    printed "loads N".
 * 3. Again mapped shared, read(2) from DIR/source.dat into the mapping (the
 *    kernel's stores on the process's behalf); printed "kernel N".
 * 4. DIR/private.dat, mapped private: loads and stores, none the file's.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#define PAGE 4096

static long faults(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_THREAD, &ru)) {
		perror("getrusage");
		exit(1);
	}
	return ru.ru_minflt + ru.ru_majflt;
}

static int open_file(const char *dir, const char *name, int flags, size_t size)
{
	char path[4096];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, flags, 0644);
	if (fd < 0 || (size && ftruncate(fd, (off_t)size))) {
		perror(path);
		exit(1);
	}
	return fd;
}

static volatile char *map(int fd, size_t size, int prot, int flags)
{
	void *p = mmap(NULL, size, prot, flags, fd, 0);

	if (p == MAP_FAILED) {
		perror("mmap");
		exit(1);
	}
	return p;
}

int main(int argc, char **argv)
{
	size_t pages = argc > 2 ? strtoul(argv[2], NULL, 10) : 0, size = pages * PAGE;
	volatile char *m;
	long before, sum = 0;
	char *buf;
	int fd, src;

	if (argc != 3 || !pages) {
		fprintf(stderr, "usage: mmap_io DIR PAGES\n");
		return 2;
	}
	/* 1: stores through a shared mapping. */
	fd = open_file(argv[1], "shared.dat", O_RDWR | O_CREAT | O_TRUNC, size);
	m = map(fd, size, PROT_READ | PROT_WRITE, MAP_SHARED);
	before = faults();
	for (size_t i = 0; i < pages; i++)
		m[i * PAGE] = (char)(i + 1);
	printf("stores %ld\n", faults() - before);
	msync((void *)m, size, MS_SYNC);
	munmap((void *)m, size);
	close(fd);

	/* 2: loads through a shared mapping of the file opened read-only. */
	fd = open_file(argv[1], "shared.dat", O_RDONLY, 0);
	m = map(fd, size, PROT_READ, MAP_SHARED);
	before = faults();
	for (size_t i = 0; i < pages; i++)
		sum += m[i * PAGE];
	printf("loads %ld\n", faults() - before);
	munmap((void *)m, size);
	close(fd);

	/* 3: the kernel stores into the mapping, for read(2). */
	src = open_file(argv[1], "source.dat", O_RDWR | O_CREAT | O_TRUNC, 0);
	buf = calloc(1, size);
	if (!buf || write(src, buf, size) != (ssize_t)size || lseek(src, 0, SEEK_SET)) {
		perror("source.dat");
		return 1;
	}
	fd = open_file(argv[1], "shared.dat", O_RDWR, 0);
	m = map(fd, size, PROT_READ | PROT_WRITE, MAP_SHARED);
	before = faults();
	if (read(src, (void *)m, size) != (ssize_t)size) {
		perror("read");
		return 1;
	}
	printf("kernel %ld\n", faults() - before);
	munmap((void *)m, size);
	close(fd);
	close(src);

	/* 4: a private mapping: its stores stay in the process. */
	fd = open_file(argv[1], "private.dat", O_RDWR | O_CREAT | O_TRUNC, size);
	m = map(fd, size, PROT_READ | PROT_WRITE, MAP_PRIVATE);
	for (size_t i = 0; i < pages; i++) {
		sum += m[i * PAGE];
		m[i * PAGE] = 1;
	}
	munmap((void *)m, size);
	close(fd);
	free(buf);
	return sum < 0; /* the loads' sum, so that they are made */
}
