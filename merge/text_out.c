// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The text outputs' buffered, threaded, optionally gzipped writing. */
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include "pf_deflate.h"
#include "text_out.h"

/* A struct sink's bytes, as they are (or gzipped): also dc_pf_deflate's writer. */
static int raw_write(void *sink, const void *p, size_t n)
{
	struct sink *o = sink;

	if (o->gz ? gzwrite(o->gz, p, n) != (int)n : fwrite(p, 1, n, o->f) != n)
		return errno ? errno : EIO;
	return 0;
}

static int sink_write(struct sink *o, const char *p, size_t n)
{
	if (o->pf)
		return dc_pf_deflate(o->pf, (const uint8_t *)p, n, raw_write, o);
	return raw_write(o, p, n);
}

static void *sink_main(void *arg)
{
	struct sink *o = arg;

	pthread_mutex_lock(&o->mu);
	for (;;) {
		while (!o->data && !o->quit)
			pthread_cond_wait(&o->cv, &o->mu);
		if (!o->data)
			break;
		const char *p = o->data;
		size_t n = o->len;
		int err;

		pthread_mutex_unlock(&o->mu);
		err = sink_write(o, p, n);
		pthread_mutex_lock(&o->mu);
		if (err && !o->err)
			o->err = err;
		o->data = NULL;
		pthread_cond_broadcast(&o->cv);
	}
	pthread_mutex_unlock(&o->mu);
	return NULL;
}

/* Waits until the buffer handed over last is written. */
static void sink_idle(struct sink *o)
{
	pthread_mutex_lock(&o->mu);
	while (o->data)
		pthread_cond_wait(&o->cv, &o->mu);
	pthread_mutex_unlock(&o->mu);
}

static void sink_hand(struct sink *o, const char *p, size_t n)
{
	pthread_mutex_lock(&o->mu);
	while (o->data)
		pthread_cond_wait(&o->cv, &o->mu);
	o->data = p;
	o->len = n;
	pthread_cond_broadcast(&o->cv);
	pthread_mutex_unlock(&o->mu);
}

void dc_text_out_flush(struct text_out *w)
{
	if (!w->len || w->err)
		return;
	if (!w->out.threaded) {
		w->err = sink_write(&w->out, w->buf, w->len);
		w->len = 0;
		return;
	}
	/* Once it is handed over, the other buffer (handed before) is free. */
	sink_hand(&w->out, w->buf, w->len);
	w->cur ^= 1;
	w->buf = w->bufs[w->cur];
	w->len = 0;
}

int dc_text_out_open(struct text_out *o, int fd, enum dc_out_codec codec, const char *path, char *err,
		     size_t errlen)
{
	/* Never reopened by name: the descriptor dc-merge created or checked. */
	int own = fcntl(fd, F_DUPFD_CLOEXEC, 3);

	*o = (struct text_out){ 0 };
	if (!(o->bufs[0] = malloc(OUT_BUF)) || !(o->bufs[1] = malloc(OUT_BUF))) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	o->caps[0] = o->caps[1] = OUT_BUF;
	o->buf = o->bufs[0];
	if (codec == DC_OUT_PERFETTO_DEFLATE && !(o->out.pf = dc_pf_deflater_new())) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	if (own >= 0 && codec == DC_OUT_GZIP)
		o->out.gz = gzdopen(own, "wb1");
	else if (own >= 0)
		o->out.f = fdopen(own, "w");
	if (!o->out.gz && !o->out.f) {
		snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
		goto fail;
	}
	pthread_mutex_init(&o->out.mu, NULL);
	pthread_cond_init(&o->out.cv, NULL);
	/* Without a thread, the output is written in place: slower, the same. */
	o->out.threaded = pthread_create(&o->out.thread, NULL, sink_main, &o->out) == 0;
	return 0;
fail:
	if (own >= 0 && !o->out.gz && !o->out.f)
		close(own);
	dc_pf_deflater_free(o->out.pf);
	free(o->bufs[0]);
	free(o->bufs[1]);
	return -1;
}

int dc_text_out_close(struct text_out *w)
{
	dc_text_out_flush(w);
	if (w->out.threaded) {
		sink_idle(&w->out);
		pthread_mutex_lock(&w->out.mu);
		w->out.quit = true;
		pthread_cond_broadcast(&w->out.cv);
		pthread_mutex_unlock(&w->out.mu);
		pthread_join(w->out.thread, NULL);
	}
	if (w->out.err && !w->err)
		w->err = w->out.err;
	if (w->out.gz && gzclose(w->out.gz) != Z_OK && !w->err)
		w->err = EIO;
	if (w->out.f && fclose(w->out.f) && !w->err)
		w->err = errno;
	pthread_mutex_destroy(&w->out.mu);
	pthread_cond_destroy(&w->out.cv);
	dc_pf_deflater_free(w->out.pf);
	free(w->bufs[0]);
	free(w->bufs[1]);
	return w->err;
}
