// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "links.h"

#include <pthread.h>
#include <bpf/libbpf.h>

#define DETACH_THREADS 64

struct detach_work {
	struct bpf_link **links;
	size_t n, stride;
};

static void *detach_some(void *arg)
{
	struct detach_work *w = arg;

	for (size_t i = 0; i < w->n; i += w->stride)
		bpf_link__destroy(w->links[i]);
	return NULL;
}

/*
 * Removing a uprobe waits for an RCU grace period (~100 ms here), one after
 * another when done in a loop: 90 probes took 10 s. Waiters on several
 * threads share grace periods, so the links are destroyed side by side.
 */
void dc_links_destroy(struct bpf_link **links, size_t n)
{
	pthread_t tids[DETACH_THREADS];
	struct detach_work work[DETACH_THREADS];
	size_t nthreads = n < DETACH_THREADS ? n : DETACH_THREADS, started = 0;

	for (size_t t = 0; t < nthreads; t++) {
		work[t] = (struct detach_work){ links + t, n - t, nthreads };
		if (pthread_create(&tids[t], NULL, detach_some, &work[t]))
			break;
		started++;
	}
	for (size_t t = 0; t < started; t++)
		pthread_join(tids[t], NULL);
	/* Whatever a thread could not be started for is done here. */
	for (size_t t = started; t < nthreads; t++)
		detach_some(&work[t]);
}
