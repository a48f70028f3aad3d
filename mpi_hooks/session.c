// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "session.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rank_ring.h"
#include "record.h"
#include "register.h"

static void warn_once(struct dc_session *s, const char *what, const char *why)
{
	if (s->warned)
		return;
	s->warned = true;
	fprintf(stderr, "%s: warning: %s: %s: %s; this job runs on untraced\n", s->lib, s->who, what, why);
}

/* DC_RING_SLOTS: a power of two; anything else is the default, with a word. */
static unsigned ring_slots(const struct dc_session *s)
{
	const char *env = getenv("DC_RING_SLOTS");
	char *end;
	unsigned long n;

	if (!env || !*env)
		return DC_RING_SLOTS_DEFAULT;
	n = strtoul(env, &end, 10);
	if (*end || n < 64 || n > DC_RING_SLOTS_MAX || (n & (n - 1))) {
		fprintf(stderr, "%s: warning: %s: DC_RING_SLOTS=%s is not a power of two from 64 to %u; using %u\n",
			s->lib, s->who, env, DC_RING_SLOTS_MAX, DC_RING_SLOTS_DEFAULT);
		return DC_RING_SLOTS_DEFAULT;
	}
	return n;
}

/* One message, with a new ring where it starts a session: 0 when the agent
 * took the message. */
static int say(struct dc_session *s, struct dc_ctl_msg *m, bool starts)
{
	char path[108], why[256];
	struct dc_ring_head *r = NULL;
	int ring_fd = -1, rc;

	if (dc_ctl_socket_path(m->job_id, path, sizeof(path))) {
		if (!s->quiet_unnamed)
			warn_once(s, "no DataCrumbs agent socket known", "set DC_AGENT_SOCKET or DC_JOB_ID");
		return -1;
	}
	/* No ring (no memfd here): registered all the same, its levels unrecorded. */
	if (starts && (r = dc_ring_create(ring_slots(s), &ring_fd)))
		m->flags |= DC_CTL_FLAG_RING;
	rc = dc_register_send(path, m, ring_fd, why, sizeof(why));
	if (ring_fd >= 0)
		close(ring_fd); /* the agent holds its own */
	if (rc) {
		dc_ring_destroy(r);
		warn_once(s, "the DataCrumbs agent did not register this process", why);
		return -1;
	}
	if (r && r->mode != DC_RING_OFF) {
		if (r->mode == DC_RING_TRACE && s->prefault)
			dc_ring_prefault(r);
		s->ring = r;
		dc_record_start(r);
		dc_stdio_start();
	} else {
		dc_ring_destroy(r);
	}
	return 0;
}

int dc_session_start(struct dc_session *s, int type, int rank, int world_size, int64_t offset, uint64_t error)
{
	struct dc_ctl_msg m;

	dc_register_fill(&m, type, rank, world_size);
	m.clock_offset_ns = offset;
	m.clock_error_ns = error;
	if (say(s, &m, true))
		return -1;
	s->registered = true;
	return 0;
}

void dc_session_end(struct dc_session *s, int type, int rank, int world_size)
{
	struct dc_ctl_msg m;

	/* The last records are in the ring before the agent hears of the
	 * end; the mapping stays until the process ends. */
	if (s->ring) {
		dc_stdio_stop();
		dc_record_stop();
	}
	if (!s->registered)
		return;
	dc_register_fill(&m, type, rank, world_size);
	say(s, &m, false);
	s->registered = false;
}
