// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The merge: every event of every node, once, in wall-clock order. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "merge.h"
#include "nodeset.h"
#include "output.h"

#define NODES 11 /* more than the merge keeps spare buffers for */
#define PER_NODE 40000

static char dir[] = "/tmp/dc-merge-unit.XXXXXX";

/*
 * Node n's clock starts n ms after node 0's in wall time; its events are
 * 1 us apart, so the nodes interleave. Event 5 of each node lasts a whole
 * second and is written last, as a long call is: its chunk starts early.
 */
static void write_node(int n)
{
	struct dc_node_header h = { 0 };
	char path[512], err[256];
	struct dc_writer *w;
	__u64 mono0 = 5000000000ull * (n + 1);

	snprintf(h.job_id, sizeof(h.job_id), "unit");
	snprintf(h.hostname, sizeof(h.hostname), "n%02d", n);
	h.monotonic_ref_ns = mono0;
	h.realtime_ref_ns = 1700000000000000000ull + n * 1000000ull;
	snprintf(path, sizeof(path), "%s/n%02d.dcnode", dir, n);
	w = dc_writer_create(path, &h, -1, -1, 0600, err, sizeof(err));
	assert_non_null(w);
	struct dc_func f = { 0, dc_writer_string(w, "write"), dc_writer_string(w, "posix"), 0 };
	dc_writer_func(w, &f);
	struct dc_proc p = { mono0, 100 + n, 1, DC_PROC_START, 0, "app" };
	dc_writer_proc(w, &p);
	for (int i = 0; i < PER_NODE; i++) {
		/* Slot 5 is skipped in order and written at the very end. */
		int k = i == PER_NODE - 1 ? 5 : i < 5 ? i : i + 1;
		struct dc_event e = { .ts = mono0 + 1000ull * k, .dur = k == 5 ? 1000000000ull : 100,
				      .pid = 100 + n, .tid = 100 + n, .func = 0, .ret = k, .bytes = n };

		assert_int_equal(dc_writer_event(w, &e), 0);
	}
	assert_int_equal(dc_writer_close(w, NULL), 0);
}

static void test_all_events_in_order(void **state)
{
	struct dc_job job;
	struct dc_merge *m;
	struct dc_merge_item it;
	char err[512];
	unsigned long long per_node[NODES] = { 0 }, total = 0;
	__u64 last = 0;
	int k, long_calls = 0;

	assert_int_equal(dc_job_open(dir, "unit", &job, err, sizeof(err)), 0);
	assert_int_equal(job.nnodes, NODES);
	assert_int_equal(job.events, (unsigned long long)NODES * PER_NODE);
	m = dc_merge_new(&job);
	while ((k = dc_merge_next(m, &it)) > 0) {
		const struct dc_event *e = it.rec;

		assert_int_equal(it.type, DC_CHUNK_EVENTS);
		assert_true(it.wall_ns >= last);
		last = it.wall_ns;
		/* The record is the node's own: its bytes field names the node. */
		assert_int_equal(e->bytes, it.node->index);
		assert_int_equal(e->pid, 100 + it.node->index);
		assert_int_equal(it.wall_ns, e->ts + it.node->clock_shift_ns);
		per_node[it.node->index]++;
		long_calls += e->dur == 1000000000ull;
		total++;
	}
	assert_int_equal(k, 0);
	assert_int_equal(total, (unsigned long long)NODES * PER_NODE);
	for (int n = 0; n < NODES; n++)
		assert_int_equal(per_node[n], PER_NODE);
	assert_int_equal(long_calls, NODES);
	/* Chunks overlap only a little in time: memory stays a few chunks a node. */
	assert_true(dc_merge_peak_chunks(m) <= 3 * NODES);
	dc_merge_free(m);
	dc_job_close(&job);
}

static void test_processes_and_origin(void **state)
{
	struct dc_job job;
	char err[512];

	assert_int_equal(dc_job_open(dir, "unit", &job, err, sizeof(err)), 0);
	for (size_t n = 0; n < job.nnodes; n++) {
		const struct dc_process *p = dc_node_process(&job.nodes[n], 100 + job.nodes[n].index);
		char label[128];

		assert_non_null(p);
		assert_string_equal(p->comm, "app");
		dc_process_label(&job.nodes[n], p, label, sizeof(label));
		assert_non_null(strstr(label, "app (n"));
	}
	assert_int_equal(job.origin_ns, 1700000000000000000ull);
	dc_job_close(&job);
}

static void test_wrong_job_and_empty(void **state)
{
	struct dc_job job;
	char err[512];

	assert_int_equal(dc_job_open(dir, "other", &job, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "none of the node files"));
	assert_int_equal(dc_job_open("/nonexistent-dir", "unit", &job, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "cannot open /nonexistent-dir"));
}

/* A record longer than the JSON writer's buffer (a path of megabytes, with
 * characters to escape) comes out whole, in place, escaped. */
static void test_json_record_longer_than_buffer(void **state)
{
	enum { LEN = 3 << 20 };
	char jdir[] = "/tmp/dc-merge-json.XXXXXX", path[512], err[512], *long_path = malloc(LEN + 1), *text;
	struct dc_node_header h = { .monotonic_ref_ns = 1000, .realtime_ref_ns = 1700000000000000000ull };
	struct dc_merge_item it;
	int out_fd;
	struct dc_writer *nw;
	struct dc_merge *m;
	struct dc_job job;
	size_t escaped_len = 0;
	void *jw;
	FILE *f;
	long size;

	(void)state;
	assert_non_null(mkdtemp(jdir));
	for (size_t i = 0; i < LEN; i++)
		long_path[i] = i % 1000 == 999 ? '"' : 'a' + i % 26;
	long_path[LEN] = 0;
	snprintf(h.job_id, sizeof(h.job_id), "long");
	snprintf(h.hostname, sizeof(h.hostname), "n0");
	snprintf(path, sizeof(path), "%s/n0.dcnode", jdir);
	nw = dc_writer_create(path, &h, -1, -1, 0600, err, sizeof(err));
	assert_non_null(nw);
	struct dc_func fn = { 0, dc_writer_string(nw, "open"), dc_writer_string(nw, "posix"), 0 };
	dc_writer_func(nw, &fn);
	for (int i = 0; i < 3; i++) {
		struct dc_event e = { .ts = 2000 + i, .dur = 10, .pid = 7, .tid = 7, .path = dc_writer_string(nw, long_path) };

		assert_int_equal(dc_writer_event(nw, &e), 0);
	}
	assert_int_equal(dc_writer_close(nw, NULL), 0);

	assert_int_equal(dc_job_open(jdir, "long", &job, err, sizeof(err)), 0);
	snprintf(path, sizeof(path), "%s/out.json", jdir);
	out_fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_true(out_fd >= 0);
	jw = dc_json_output.open(path, out_fd, &job, err, sizeof(err));
	close(out_fd);
	assert_non_null(jw);
	m = dc_merge_new(&job);
	while (dc_merge_next(m, &it) > 0)
		assert_int_equal(dc_json_output.event(jw, it.node, it.rec, it.wall_ns), 0);
	dc_merge_free(m);
	assert_int_equal(dc_json_output.close(jw, 1, err, sizeof(err)), 0);
	dc_job_close(&job);

	f = fopen(path, "r");
	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	size = ftell(f);
	rewind(f);
	text = malloc(size + 1);
	assert_int_equal(fread(text, 1, size, f), size);
	text[size] = 0;
	fclose(f);
	/* Three events, each with the whole path, its quotes escaped. */
	for (char *p = text; (p = strstr(p, "\"path\":\"")); escaped_len++) {
		char *end = p += 8;

		while (*end != '"' || end[-1] == '\\')
			end++;
		assert_int_equal(end - p, LEN + LEN / 1000);
		assert_memory_equal(p, "abcdefghij", 10);
		assert_memory_equal(p + 999, "\\\"", 2);
		p = end;
	}
	assert_int_equal(escaped_len, 3);
	assert_non_null(strstr(text, "\"otherData\""));
	free(text);
	free(long_path);
	snprintf(path, sizeof(path), "rm -rf %s", jdir);
	assert_int_equal(system(path), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_all_events_in_order),
		cmocka_unit_test(test_processes_and_origin),
		cmocka_unit_test(test_wrong_job_and_empty),
		cmocka_unit_test(test_json_record_longer_than_buffer),
	};
	char cmd[128];
	int rc;

	if (!mkdtemp(dir))
		return 1;
	for (int n = 0; n < NODES; n++)
		write_node(n);
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd))
		return 1;
	return rc;
}
