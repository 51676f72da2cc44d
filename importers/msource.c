/*
 * Metric sources; see msource.h.
 */
#include <stdlib.h>
#include <string.h>

#include "importers/msource.h"
#include "model/util/sbuf.h"
#include "model/util/text.h"
#include "model/util/xalloc.h"

int msource_begin_row(struct msource *s, struct store *st, const struct source_row *src, char **err)
{
	memset(s, 0, sizeof(*s));
	s->st = st;
	s->path = src->path;
	s->host = src->host;
	s->source_id = store_add_source(st, src, err);
	return s->source_id < 0 ? -1 : 0;
}

int msource_begin(struct msource *s, struct store *st, struct input *in, const char *format,
		  const char *anchor, const struct import_opts *o, char **err)
{
	struct source_row src = {.path = input_path(in),
				 .format = format,
				 .compression = input_codec_name(input_codec(in)),
				 .anchor = anchor,
				 .size_bytes = (int64_t)input_file_size(in),
				 .time_offset_ns = o->has_time_offset ? o->time_offset_ns : 0,
				 .rank = -1,
				 .host = o->host};
	return msource_begin_row(s, st, &src, err);
}

int64_t msource_metric(struct msource *s, const char *host, const char *resource, const char *name,
		       const char *unit, const char *value_kind, double capacity, char **err)
{
	if (!host)
		host = s->host;
	struct sbuf key = SBUF_INIT;
	sbuf_adds(&key, host ? host : "");
	sbuf_addc(&key, '\x1f');
	sbuf_adds(&key, resource ? resource : "");
	sbuf_addc(&key, '\x1f');
	sbuf_adds(&key, name);
	struct strmap_ent *e = strmap_get(&s->metrics, key.buf, key.len);
	if (e) {
		sbuf_release(&key);
		return e->value;
	}
	/* names come from files: stored as valid UTF-8 */
	char *h = text_utf8_dup(host), *r = text_utf8_dup(resource);
	char *n = text_utf8_dup(name), *u = text_utf8_dup(unit);
	struct metric_row m = {.source_id = s->source_id,
			       .host = h,
			       .resource = r,
			       .name = n,
			       .unit = u,
			       .value_kind = value_kind,
			       .capacity = capacity};
	int64_t id = store_add_metric(s->st, &m, err);
	free(h);
	free(r);
	free(n);
	free(u);
	if (id >= 0)
		strmap_put(&s->metrics, key.buf, key.len, id, NULL);
	sbuf_release(&key);
	return id;
}

static int flush(struct msource *s, char **err)
{
	size_t n = s->npend;
	s->npend = 0;
	return store_add_samples(s->st, s->pend, n, err);
}

int msource_sample(struct msource *s, int64_t metric, int64_t t_ns, double v, char **err)
{
	s->pend[s->npend++] = (struct sample_row){metric, t_ns, v};
	s->samples++;
	return s->npend == STORE_SAMPLE_BATCH ? flush(s, err) : 0;
}

void msource_diag(struct msource *s, const char *code, const char *message, const char *example,
		  int dropped)
{
	int i = 0;
	while (i < s->ndiag && strcmp(s->diag[i].code, code))
		i++;
	if (i == s->ndiag) {
		if (s->ndiag == MSOURCE_MAX_DIAGS)
			i = MSOURCE_MAX_DIAGS - 1; /* codes are few; never reached */
		else
			s->ndiag++;
		s->diag[i].code = code;
		s->diag[i].message = message;
		s->diag[i].example = text_utf8_dup(example);
	}
	s->diag[i].count++;
	s->dropped += dropped != 0;
}

int msource_end(struct msource *s, char **err)
{
	int rc = flush(s, err);
	for (int i = 0; i < s->ndiag && rc == 0; i++)
		rc = store_add_diagnostic(s->st, s->source_id, s->diag[i].code, s->diag[i].count,
					  s->diag[i].message, s->diag[i].example, err);
	if (rc == 0)
		rc = store_finish_source(s->st, s->source_id, 0, 0, s->samples, s->dropped, err);
	msource_release(s);
	return rc;
}

void msource_release(struct msource *s)
{
	for (int i = 0; i < s->ndiag; i++)
		free(s->diag[i].example);
	s->ndiag = 0;
	strmap_clear(&s->metrics);
}
