// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "control_proto.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int bad(char *why, size_t len, const char *what)
{
	snprintf(why, len, "%s", what);
	return -1;
}

static int terminated(const char *s, size_t cap)
{
	return memchr(s, 0, cap) != NULL;
}

int dc_ctl_parse(const void *buf, size_t len, struct dc_ctl_msg *out, char *why, size_t whylen)
{
	if (len != sizeof(*out))
		return bad(why, whylen, len < sizeof(*out) ? "message too short" : "message too long");
	memcpy(out, buf, sizeof(*out));
	if (out->magic != DC_CTL_MAGIC)
		return bad(why, whylen, "not a DataCrumbs message (bad magic)");
	if (out->version != DC_CTL_VERSION)
		return bad(why, whylen, "unsupported protocol version");
	if (out->type < DC_CTL_REGISTER || out->type > DC_CTL_EXIT)
		return bad(why, whylen, "unknown message type");
	if (out->flags & ~DC_CTL_FLAGS_KNOWN)
		return bad(why, whylen, "unknown flags");
	if ((out->flags & DC_CTL_FLAG_RING) && !DC_CTL_STARTS(out->type))
		return bad(why, whylen, "a ring goes with a registration only");
	if (!DC_CTL_OF_RANK(out->type) && (out->rank != -1 || out->world_size != 0))
		return bad(why, whylen, "a process that is no rank says rank -1 of 0");
	if (DC_CTL_OF_RANK(out->type) && (out->world_size <= 0 || out->world_size > DC_CTL_MAX_WORLD ||
					  out->rank < 0 || out->rank >= out->world_size))
		return bad(why, whylen, "rank or world size out of range");
	if (!terminated(out->job_id, sizeof(out->job_id)) || !terminated(out->hostname, sizeof(out->hostname)))
		return bad(why, whylen, "unterminated string");
	return 0;
}

int dc_ctl_socket_path(const char *job_id, char *out, size_t len)
{
	const char *env = getenv("DC_AGENT_SOCKET");

	if (env && *env)
		return (size_t)snprintf(out, len, "%s", env) < len ? 0 : -1;
	char host[65] = "";

	if (!job_id || !*job_id || strchr(job_id, '/'))
		return -1;
	/* Per host: nodes that share a file system (containers, or the test
	 * cluster's namespaces on one machine) each have their own agent. */
	if (gethostname(host, sizeof(host) - 1) || !*host || strchr(host, '/') || host[0] == '.')
		snprintf(host, sizeof(host), "localhost");
	return (size_t)snprintf(out, len, "%s/%s/%s.sock", DC_CTL_SOCKET_DIR, host, job_id) < len ? 0 : -1;
}
