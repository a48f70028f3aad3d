// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "slurm_context.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Slurm's names for the contexts (SLURM_SCRIPT_CONTEXT, Slurm 20.11 on),
 * and the script of ours that each becomes. */
static const struct {
	const char *context, *script;
} contexts[] = {
	{ "prolog_srun", "dc-prolog" },
	{ "epilog_srun", "dc-epilog" },
	{ "prolog_slurmd", "dc-prolog" },
	{ "epilog_slurmd", "dc-epilog" },
};

void dc_slurm_context_take(void)
{
	const char *ctx = getenv("SLURM_SCRIPT_CONTEXT"), *script = NULL;
	char path[PATH_MAX], self[PATH_MAX];
	ssize_t n;

	for (size_t i = 0; ctx && i < sizeof(contexts) / sizeof(contexts[0]); i++)
		if (strcmp(ctx, contexts[i].context) == 0)
			script = contexts[i].script;
	if (!script)
		return;
	/* Not for what the script starts: the agent it runs would take the
	 * same turn, and start the script again. */
	ctx = strdup(ctx);
	unsetenv("SLURM_SCRIPT_CONTEXT");
	/* The script starts this very agent, not whichever dc-agent PATH has. */
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n > 0 && !getenv("DC_AGENT")) {
		self[n] = 0;
		setenv("DC_AGENT", self, 1);
	}
	for (const char *d = DC_SLURM_DIRS; *d;) {
		size_t len = strcspn(d, ":");

		if (len && (size_t)snprintf(path, sizeof(path), "%.*s/%s", (int)len, d, script) < sizeof(path) &&
		    access(path, X_OK) == 0) {
			execl(path, script, (char *)NULL);
			fprintf(stderr, "dc-agent: %s: cannot run %s: %s\n", ctx, path, strerror(errno));
			exit(0);
		}
		d += len + (d[len] == ':');
	}
	fprintf(stderr, "dc-agent: %s: %s not found in %s; this step runs untraced\n", ctx, script, DC_SLURM_DIRS);
	exit(0);
}
