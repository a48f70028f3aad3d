// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The decoded-library cache (agent/site_cache.c): what is stored comes
 * back whole, and a file or folder that cannot be trusted is ignored. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "crc32.h"
#include "site_cache.h"

static const char id[] = "93ac61ec5a8eb1396f9fbd350e3169a558528a40";
static const uint64_t targets[] = { 16, 17, 4096, 65536, 1u << 30 };
#define N (sizeof(targets) / sizeof(targets[0]))
static char dir[64], file[256];

static int setup(void **state)
{
	snprintf(dir, sizeof(dir), "/tmp/dc-sites.XXXXXX");
	assert_non_null(mkdtemp(dir));
	snprintf(file, sizeof(file), "%s/%s.v%d", dir, id, DC_SITE_CACHE_VERSION);
	return 0;
}

static int teardown(void **state)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return system(cmd);
}

static int load(uint64_t size, size_t *n)
{
	uint64_t *v = NULL;
	int rc = dc_site_cache_load(dir, id, size, &v, n);

	if (rc == 0) {
		assert_int_equal(*n, N);
		assert_memory_equal(v, targets, sizeof(targets));
	}
	free(v);
	return rc;
}

static void store(void)
{
	unlink(file);
	dc_site_cache_store(dir, id, 12345, targets, N);
}

/* Rewrites the offsets (count stays) and, if asked, a CRC that fits them. */
static void forge(const uint32_t *v, int fix_crc)
{
	FILE *f = fopen(file, "r+");
	uint32_t crc = dc_crc32(v, N * 4);
	long crc_at = 8 + 4 + 4 + 48 + 8;

	assert_non_null(f);
	fseek(f, -(long)(N * 4), SEEK_END);
	fwrite(v, 4, N, f);
	if (fix_crc) {
		fseek(f, crc_at, SEEK_SET);
		fwrite(&crc, 4, 1, f);
	}
	fclose(f);
}

static void test_round_trip(void **state)
{
	size_t n;

	store();
	assert_int_equal(load(12345, &n), 0);
	/* Another build, or another size of the same: not this entry. */
	assert_int_equal(load(12346, &n), -1);
	assert_int_equal(dc_site_cache_load(dir, "ab", 12345, &(uint64_t *){ 0 }, &n), -1);
	/* Not a build id: never a file name. */
	assert_int_equal(dc_site_cache_load(dir, "../../etc/x", 12345, &(uint64_t *){ 0 }, &n), -1);
	/* Offsets that do not fit the reader's 32 bits are not stored. */
	unlink(file);
	dc_site_cache_store(dir, id, 12345, (const uint64_t[]){ 1, 1ull << 33 }, 2);
	assert_int_equal(access(file, F_OK), -1);
}

static void test_damage(void **state)
{
	uint32_t v[N] = { 16, 17, 4096, 65536, 1u << 30 }, unsorted[N] = { 17, 16, 4096, 65536, 1u << 30 };
	size_t n;

	store();
	v[2] = 4097;
	forge(v, 0);
	assert_int_equal(load(12345, &n), -1); /* CRC */
	forge(unsorted, 1);
	assert_int_equal(load(12345, &n), -1); /* a CRC that fits, out of order */
	store();
	assert_int_equal(truncate(file, 90), 0); /* the header (80 bytes) and part of the offsets */
	assert_int_equal(load(12345, &n), -1); /* cut short */
}

static void test_trust(void **state)
{
	size_t n;

	store();
	assert_int_equal(chmod(file, 0666), 0);
	assert_int_equal(load(12345, &n), -1); /* writable by others */
	store();
	assert_int_equal(chown(file, 65534, 65534), 0);
	assert_int_equal(load(12345, &n), -1); /* another user's */
	store();
	assert_int_equal(rename(file, "/tmp/dc-sites-moved"), 0);
	assert_int_equal(symlink("/tmp/dc-sites-moved", file), 0);
	assert_int_equal(load(12345, &n), -1); /* a link */
	unlink("/tmp/dc-sites-moved");
	store();
	assert_int_equal(load(12345, &n), 0);
	assert_int_equal(chmod(dir, 0777), 0);
	assert_int_equal(load(12345, &n), -1); /* a folder others may write */
	assert_int_equal(chmod(dir, 0700), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_round_trip, setup, teardown),
		cmocka_unit_test_setup_teardown(test_damage, setup, teardown),
		cmocka_unit_test_setup_teardown(test_trust, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
