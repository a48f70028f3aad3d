// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* libFuzzer: any bytes as a probe set and as agent settings. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[] = "/tmp/dc-fuzz-yaml.XXXXXX", err[1024];
	struct dc_probe_set set;
	struct dc_settings s = { .mode = -1, .uid = -1 };
	int fd = mkstemp(path);

	if (fd < 0)
		return 0;
	if (write(fd, data, size) == (ssize_t)size) {
		if (dc_probe_set_load(path, &set, err, sizeof(err)) == 0)
			dc_probe_set_free(&set);
		dc_settings_load(path, &s, err, sizeof(err));
		dc_settings_free(&s);
	}
	close(fd);
	unlink(path);
	return 0;
}
