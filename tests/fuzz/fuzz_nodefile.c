// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* libFuzzer: any bytes as a node file, through both reading walks. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "nodefile.h"

static void walk(const char *path, unsigned skip)
{
	char err[512];
	struct dc_reader *r = dc_reader_open(path, err, sizeof(err));
	struct dc_chunk c;
	char *buf;

	if (!r)
		return;
	while (dc_reader_next_index(r, &c, skip) == DC_READ_OK) {
		if (c.hdr.type == DC_CHUNK_EVENTS && c.data) {
			const struct dc_event *e = c.data;

			for (__u32 i = 0; i < c.hdr.count; i++)
				(void)dc_reader_string(r, e[i].path);
		}
		if (!c.data && (buf = malloc(dc_chunk_data_size(&c.hdr) + 1))) {
			dc_reader_load(r, c.offset, &c.hdr, buf);
			free(buf);
		}
	}
	dc_reader_close(r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[] = "/tmp/dc-fuzz-node.XXXXXX";
	int fd = mkstemp(path);

	if (fd < 0)
		return 0;
	if (write(fd, data, size) == (ssize_t)size) {
		walk(path, 0);
		walk(path, 1u << DC_CHUNK_EVENTS | 1u << DC_CHUNK_COUNTERS);
	}
	close(fd);
	unlink(path);
	return 0;
}
