/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef DC_OPTIONS_H
#define DC_OPTIONS_H

#include <sys/types.h>

#include "config.h"
#include "dc_event.h"

#define DC_MAX_PIDS 256

struct dc_options {
	struct dc_settings s; /* from --config, then overridden by the command line */
	char *config_file;
	char *ready_file;
	char *socket_path;
	char *match_env;
	char skip_comm[DC_SKIP_COMMS][DC_COMM_LEN];
	int nskip_comm;
	pid_t pids[DC_MAX_PIDS];
	int npids;
	int verbose;
	int group_read; /* node files 0640 instead of 0600 */
	int check;      /* --check: say what this kernel offers, and stop */
	int daemon;     /* --daemon: run until told to stop, tracing the ranks that register */
	int no_preload; /* --no-preload: the command gets no libdcpreload.so */
	char **command; /* argv after --, NULL in daemon mode */
};

/* Returns 0 to run, 1 after --help/--version, -1 on a usage error (printed). */
int dc_options_parse(int argc, char **argv, struct dc_options *o);
void dc_options_free(struct dc_options *o);

#endif
