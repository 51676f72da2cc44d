/*
 * Which metric series describe what a phase ran on (DESIGN.md: metrics
 * attach to phases by host, per-GPU metrics by device index).
 *
 * A phase's host is its track's (a step keeps its manifest host as a
 * track), else its source's (a process or rank node), else that of the
 * sources below it (a step or workflow): one host, or every host when they
 * name none or several.  Its device is its track's (model.c: a GPU
 * stream's index); nodes without one (workflow, step, rank, process) stand
 * for every device of their host.  A series'
 * device is N of resource "gpuN" (nvidia-smi) or of a "gpu=N" label
 * (Prometheus, DCGM's exporter); others are host-wide.
 *
 * A series attaches to a phase when their hosts are the same (two unknown
 * hosts are the same) and the series is host-wide, or on the phase's own
 * device, or the phase stands for every device.  A CPU thread's phase therefore sees
 * the host's CPU, memory, disk and network but no GPU's, and a kernel sees
 * those and its own GPU's.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/analysis/attach.h"
#include "model/analysis/attrib.h"
#include "model/util/sbuf.h"
#include "model/store/store.h"
#include "model/util/xalloc.h"

/* The N of "gpuN" (all of it) or of a "gpu=N" label in "k=v,k=v"; -1. */
static int gpu_index(const char *s, size_t n)
{
	if (n < 1 || n > 4)
		return -1;
	int v = 0;
	for (size_t i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (s[i] - '0');
	}
	return v;
}

int mseries_device(const struct mseries *s)
{
	const char *r = s->resource;
	if (!r)
		return -1;
	if (!strncmp(r, "gpu", 3) && gpu_index(r + 3, strlen(r + 3)) >= 0)
		return gpu_index(r + 3, strlen(r + 3));
	for (const char *p = r; *p; p += strcspn(p, ",")) {
		p += *p == ',';
		if (!strncmp(p, "gpu=", 4)) {
			const char *v = p + 4;
			size_t n = strcspn(v, ",");
			if (n >= 2 && v[0] == '"' && v[n - 1] == '"')
				return gpu_index(v + 1, n - 2);
			return gpu_index(v, n);
		}
	}
	return -1;
}

/* What a phase ran on: a host (NULL: unknown) and a device (-1: a CPU
 * thread; -2: every device of the host), or every host. */
struct akey {
	const char *host;
	int device, every_host;
};

/* The one host of the sources of n (sql: ?1 is n's id), or every host
 * when they name none or several. */
static void source_host(struct model *m, const char *sql, int64_t id, struct akey *k)
{
	sqlite3_stmt *q;
	k->every_host = 1;
	if (sqlite3_prepare_v2(store_db(model_store(m)), sql, -1, &q, NULL) != SQLITE_OK)
		return;
	sqlite3_bind_int64(q, 1, id);
	int rows = 0;
	while (sqlite3_step(q) == SQLITE_ROW && ++rows == 1)
		k->host = model_intern_col(m, q, 0);
	sqlite3_finalize(q);
	if (rows == 1 && k->host)
		k->every_host = 0;
	else
		k->host = NULL;
}

static void key_of(struct model *m, const struct mnode *n, struct akey *k)
{
	const struct mtrack *t = model_track(m, n->track_id);
	*k = (struct akey){.device = -2};
	if (t) {
		k->host = t->host;
		if (strcmp(t->kind, "host"))
			k->device = t->device;
	} else if (n->source_id > 0) {
		source_host(m, "SELECT host FROM sources WHERE id = ?1", n->source_id, k);
	} else {
		/* a step or workflow without a host of its own: its sources' */
		source_host(m,
			    "SELECT DISTINCT s.host FROM phases p JOIN sources s"
			    " ON s.id = p.source_id WHERE p.parent_id = ?1 LIMIT 2",
			    n->id, k);
	}
}

static int matches(const struct akey *k, const struct mseries *s)
{
	if (k->every_host)
		return 1;
	if (k->host != s->host && (!k->host || !s->host || strcmp(k->host, s->host)))
		return 0;
	int sd = mseries_device(s);
	return sd < 0 || k->device == -2 || k->device == sd;
}

int model_attached(struct model *m, const struct mnode *n, const struct mseries *s)
{
	struct akey k;
	key_of(m, n, &k);
	return matches(&k, s);
}

/* Series that say how idle or how free a resource is rather than how
 * busy: left out of "busiest". */
static int is_slack(const char *name)
{
	return strstr(name, "idle") || strstr(name, "free") || strstr(name, "avail");
}

static int by_share(const void *a, const void *b)
{
	const struct mbusy *x = a, *y = b;
	double sx = x->mean / x->s->capacity, sy = y->mean / y->s->capacity;
	return sx < sy ? 1 : sx > sy ? -1 : (x->s->id > y->s->id) - (x->s->id < y->s->id);
}

/* Every attached series with a capacity that holds a value during n, but
 * those measuring slack, with its mean and peak there: *all, *count. */
static int collect(struct model *m, const struct mnode *n, struct mbusy **all, size_t *count,
		   char **err)
{
	const struct mseries *s;
	size_t ns, k = 0, alloc = 0;
	*all = NULL;
	*count = 0;
	if (model_series(m, &s, &ns, err) < 0)
		return -1;
	int64_t t0 = n->start_ns, t1 = n->start_ns + n->dur_ns;
	struct akey key;
	key_of(m, n, &key);
	for (size_t i = 0; i < ns; i++) {
		if (!(s[i].capacity > 0) || is_slack(s[i].name) || s[i].t1 < t0 || s[i].t0 > t1 ||
		    !matches(&key, &s[i]))
			continue;
		double mean, peak;
		if (model_series_window(m, &s[i], t0, t1, &mean, &peak, NULL, err) < 0) {
			free(*all);
			*all = NULL;
			return -1;
		}
		if (isnan(mean))
			continue;
		XGROW(*all, k + 1, alloc);
		(*all)[k++] = (struct mbusy){.s = &s[i], .mean = mean, .max = peak};
	}
	*count = k;
	return 0;
}

/* Appends the busiest of all[0..k) that are not yet in out[0..*n) and
 * change over the trace (one that never does says nothing about a phase)
 * up to max. */
static void add_busiest(struct mbusy *all, size_t k, struct mbusy *out, size_t max, size_t *n)
{
	if (k)
		qsort(all, k, sizeof(*all), by_share);
	for (size_t i = 0; i < k && *n < max; i++) {
		int dup = 0;
		for (size_t j = 0; j < *n; j++)
			dup |= out[j].s == all[i].s;
		if (!dup && all[i].s->max > all[i].s->min)
			out[(*n)++] = all[i];
	}
}

int model_busiest(struct model *m, const struct mnode *n, struct mbusy *out, size_t max,
		  size_t *count, char **err)
{
	struct mbusy *all;
	size_t k;
	*count = 0;
	if (collect(m, n, &all, &k, err) < 0)
		return -1;
	add_busiest(all, k, out, max, count);
	free(all);
	return 0;
}

/* The series of all[0..k) that best shows bound b: the highest peak share
 * (then mean), or NULL. */
static const struct mbusy *behind(const struct mbusy *all, size_t k, int b)
{
	const struct mbusy *best = NULL;
	for (size_t i = 0; i < k; i++) {
		int sb = attrib_series_bound(all[i].s->resource, all[i].s->name);
		if (b == ATTRIB_SOFTWARE ? sb < 0 || sb == ATTRIB_IOWAIT : sb != b)
			continue;
		double p = all[i].max / all[i].s->capacity, q = all[i].mean / all[i].s->capacity;
		if (!best || p > best->max / best->s->capacity ||
		    (p == best->max / best->s->capacity && q > best->mean / best->s->capacity))
			best = &all[i];
	}
	return best;
}

/* The GPU figure of r's traced device work (model/analysis/attrib.h: the share of
 * the time its trace covers in which some of that work ran) as a series
 * of n's host and device, "gpuN device work" (or "gpu" for every GPU). */
static struct mbusy devwork(struct model *m, const struct mnode *n, const struct attrib_row *r)
{
	struct akey k;
	char res[16] = "gpu";
	key_of(m, n, &k);
	if (k.device >= 0)
		snprintf(res, sizeof(res), "gpu%d", k.device);
	double f = (double)r->devbusy_ns / (double)r->traced_ns;
	return (struct mbusy){model_derived(m, "device work", k.host, res, 100), 100 * f,
			      r->devbusy_ns > 0 ? 100 : 0};
}

int model_evidence(struct model *m, const struct mnode *n, const struct attrib_row *r,
		   struct mbusy *out, size_t max, size_t *count, char **err)
{
	struct mbusy *all;
	struct attrib_bneck b[ATTRIB_NBNECK];
	size_t k, nb = r ? attrib_bottlenecks(r, b) : 0;
	int traced = r && r->traced_ns > 0;
	*count = 0;
	if (collect(m, n, &all, &k, err) < 0)
		return -1;
	for (size_t i = 0; i < nb && *count < max; i++) {
		if (traced && (b[i].res == ATTRIB_GPU || b[i].res == ATTRIB_SOFTWARE)) {
			out[(*count)++] = devwork(m, n, r);
			traced = 0;
			if (*count == max)
				break;
		}
		int want[2] = {b[i].res, b[i].res == ATTRIB_DISK ? ATTRIB_IOWAIT : -1};
		for (int w = 0; w < 2 && want[w] >= 0 && *count < max; w++) {
			const struct mbusy *e = behind(all, k, want[w]);
			int dup = 0;
			for (size_t j = 0; e && j < *count; j++)
				dup |= out[j].s == e->s;
			if (e && !dup)
				out[(*count)++] = *e;
		}
	}
	if (traced && *count < max)
		out[(*count)++] = devwork(m, n, r);
	add_busiest(all, k, out, max, count);
	free(all);
	return 0;
}

void model_busy_text(const struct mbusy *b, size_t n, struct sbuf *out)
{
	for (size_t i = 0; i < n; i++) {
		const struct mbusy *u = &b[i];
		const char *r = u->s->resource;
		size_t rn = r ? strlen(r) : 0;
		int named = rn && !(strncmp(u->s->name, r, rn) == 0 && u->s->name[rn] == '.');
		sbuf_addf(out, "%s%s%s%s %.0f%% (peak %.0f%%)", i ? "; " : "", named ? r : "",
			  named ? " " : "", u->s->name, 100 * u->mean / u->s->capacity,
			  100 * u->max / u->s->capacity);
	}
}
