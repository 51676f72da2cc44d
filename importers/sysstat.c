/*
 * sadf -j output into metric series.
 *
 * The document is {"sysstat": {"hosts": [{host fields..., "statistics":
 * [{sample}, ...], "restarts": [...]}]}}.  A long recording is hundreds of
 * MB, so it is not parsed whole: jcut.c streams it, reports each host's
 * own fields and cuts out each sample object, which jflat.c reads (jansson
 * when jflat declines).  Memory is bounded by the largest sample
 * (SAMPLE_MAX).  A sample holds thousands of values, so the per-value path
 * is kept short: no allocation, and the series found by its place in the
 * sample (struct slot) rather than by name.
 *
 * Each sample becomes one value per numeric field, named resource.field:
 * cpu-load {"cpu": "all"} -> cpu.idle, {"cpu": "3"} -> cpu3.idle, disk
 * {"disk-device": "sda"} -> disk:sda.util-percent, network net-dev
 * {"iface": "eth0"} -> net:eth0.rxkB, memory -> mem.memused, and other
 * activities by their own names (queue.ldavg-1, paging.fault, ...).  Each
 * CPU also gets cpuN.util = 100 - idle.
 *
 * Time: sysstat stamps a sample at the END of its interval and the values
 * are means over it (DESIGN.md, metric time semantics).  Samples are
 * stored at the interval's start, so that under trace.db's step-function
 * convention each value holds over the interval it describes
 * (value_kind "mean").  Times are UTC when the file says so ("utc": 1 or a
 * "tz" of UTC/GMT); otherwise they are taken as UTC and a diagnostic says
 * so.
 */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "importers/jcut.h"
#include "importers/jflat.h"
#include "importers/msource.h"
#include "importers/sniff.h"
#include "importers/sysstat.h"
#include "model/util/sbuf.h"
#include "model/util/xalloc.h"

#define SAMPLE_MAX (8 << 20) /* one sample object, bytes */

struct host {
	char *name; /* nodename, or NULL */
	int ncpu;
	char date[16]; /* mpstat/iostat/pidstat: the day of the samples' times */
};

/* A series met at one place in a sample (see put). */
struct slot {
	char *resource, *field;
	int64_t id;
};

struct sx {
	struct msource ms;
	const struct import_opts *o;
	struct input *in;
	struct host host;
	int64_t samples_seen, timed;
	struct jflat flat; /* the sample being read */
	struct slot *slot; /* the series of the last sample, in the order put met them */
	size_t nslot, slot_alloc;
	size_t at; /* the slot of the next put in this sample */
	char **err;
};

static void clear_slots(struct sx *x)
{
	for (size_t i = 0; i < x->nslot; i++) {
		free(x->slot[i].resource);
		free(x->slot[i].field);
	}
	x->nslot = 0;
}

/* ---- units and capacities ---- */

static int ends_with(const char *s, const char *tail)
{
	size_t n = strlen(s), k = strlen(tail);
	return n >= k && !strcmp(s + n - k, tail);
}

static const char *unit_of(const char *activity, const char *field)
{
	static const char *const kb[] = {
	    "memfree",	"avail",   "memused", "buffers", "cached",  "commit",  "active",
	    "inactive", "dirty",   "anonpg",  "slab",	 "kstack",  "pgtbl",   "vmused",
	    "swpfree",	"swpused", "swpcad",  "hugfree", "hugused", "hugrsvd", "hugsurp"};
	if (!strcmp(activity, "cpu-load") || ends_with(field, "-percent") || field[0] == '%')
		return "%";
	for (size_t i = 0; i < sizeof(kb) / sizeof(*kb); i++)
		if (!strcmp(field, kb[i]))
			return "kB";
	if (!strcmp(field, "rkB") || !strcmp(field, "wkB") || !strcmp(field, "dkB") ||
	    !strcmp(field, "rxkB") || !strcmp(field, "txkB"))
		return "kB/s";
	if (!strcmp(field, "await"))
		return "ms";
	if (!strncmp(field, "MB", 2))
		return "MB";
	return NULL;
}

/* ---- one sample ---- */

/* The resource of an activity's instance: cpu, cpu3, disk:sda, net:eth0... */
static void resource_of(struct sbuf *r, const char *activity, const char *instance)
{
	if (!strcmp(activity, "cpu-load")) {
		sbuf_adds(r, "cpu");
		sbuf_adds(r, !instance || !strcmp(instance, "all") ? "" : instance);
	} else if (!strcmp(activity, "memory")) {
		sbuf_adds(r, "mem");
	} else if (!strcmp(activity, "disk")) {
		sbuf_adds(r, "disk:");
		sbuf_adds(r, instance ? instance : "?");
	} else if (!strcmp(activity, "net-dev") || !strcmp(activity, "net-edev")) {
		sbuf_adds(r, "net:");
		sbuf_adds(r, instance ? instance : "?");
	} else {
		sbuf_adds(r, activity);
		if (instance) {
			sbuf_addc(r, ':');
			sbuf_adds(r, instance);
		}
	}
}

static int is_number(const struct jflat *f, uint32_t i)
{
	return f->n[i].type == JF_INTEGER || f->n[i].type == JF_REAL;
}

static const char *string_of(const struct jflat *f, uint32_t i)
{
	return f->n[i].type == JF_STRING ? f->n[i].str : NULL;
}

/* The total of a memory object, from memused and memused-percent; 0 when
 * unknown. */
static double memory_total(const struct jflat *f, uint32_t obj)
{
	uint32_t used = jflat_get(f, obj, "memused"), pct = jflat_get(f, obj, "memused-percent");
	if (is_number(f, used) && is_number(f, pct) && f->n[pct].num > 0)
		return f->n[used].num * 100 / f->n[pct].num;
	return 0;
}

/* One value of resource.field (a member of obj).  The series is found
 * through x->slot, by its place in the sample, when it is where it was in
 * the last sample; else by name (msource_metric), made on first use. */
static int put(struct sx *x, const char *resource, const char *activity, const char *field,
	       uint32_t obj, int64_t t, double v)
{
	struct slot *c = x->at < x->nslot ? &x->slot[x->at] : NULL;
	if (!c || strcmp(c->field, field) || strcmp(c->resource, resource)) {
		const char *unit = unit_of(activity, field);
		double cap = unit && !strcmp(unit, "%")	 ? 100
			     : !strcmp(field, "memused") ? memory_total(&x->flat, obj)
							 : 0;
		struct sbuf name = SBUF_INIT;
		sbuf_adds(&name, resource);
		sbuf_addc(&name, '.');
		sbuf_adds(&name, field);
		int64_t id = msource_metric(&x->ms, x->o->host ? NULL : x->host.name, resource,
					    name.buf, unit, "mean", cap, x->err);
		sbuf_release(&name);
		if (id < 0)
			return -1;
		if (!c) {
			XGROW(x->slot, x->nslot + 1, x->slot_alloc);
			c = &x->slot[x->nslot++];
		} else {
			free(c->resource);
			free(c->field);
		}
		c->resource = xstrdup(resource);
		c->field = xstrdup(field);
		c->id = id;
	}
	x->at++;
	return msource_sample(&x->ms, c->id, t, v, x->err);
}

/* The first string member of an array element names the instance. */
static const char *instance_of(const struct jflat *f, uint32_t obj)
{
	for (uint32_t c = jflat_child(f, obj); c; c = f->n[c].next)
		if (f->n[c].type == JF_STRING)
			return f->n[c].str;
	return NULL;
}

/* The numbers of one object: one series each. */
static int put_object(struct sx *x, const char *activity, const char *instance, uint32_t obj,
		      int64_t t)
{
	const struct jflat *f = &x->flat;
	struct sbuf res = SBUF_INIT;
	resource_of(&res, activity, instance);
	int rc = 0;
	for (uint32_t c = jflat_child(f, obj); c; c = f->n[c].next) {
		if (is_number(f, c) &&
		    (rc = put(x, res.buf, activity, f->n[c].key, obj, t, f->n[c].num)) < 0)
			break;
	}
	uint32_t idle = jflat_get(f, obj, "idle");
	if (rc == 0 && !strcmp(activity, "cpu-load") && is_number(f, idle))
		rc = put(x, res.buf, activity, "util", obj, t, 100 - f->n[idle].num);
	/* instances inside an instance (mpstat's interrupts per CPU): "cpu/name" */
	for (uint32_t c = jflat_child(f, obj); c && rc >= 0 && instance; c = f->n[c].next) {
		if (f->n[c].type != JF_ARRAY)
			continue; /* an activity's own arrays are put_activity's */
		for (uint32_t e = jflat_child(f, c); e; e = f->n[e].next) {
			if (f->n[e].type != JF_OBJECT)
				continue;
			struct sbuf in = SBUF_INIT;
			const char *inner = instance_of(f, e);
			sbuf_adds(&in, instance);
			sbuf_addc(&in, '/');
			sbuf_adds(&in, inner ? inner : "?");
			rc = put_object(x, activity, in.buf, e, t);
			sbuf_release(&in);
			if (rc < 0)
				break;
		}
	}
	sbuf_release(&res);
	return rc;
}

/* An activity: an object of numbers (and nested activities) or an array of
 * instances. */
static int put_activity(struct sx *x, const char *activity, uint32_t v, int64_t t)
{
	const struct jflat *f = &x->flat;
	if (f->n[v].type == JF_ARRAY) {
		for (uint32_t e = jflat_child(f, v); e; e = f->n[e].next)
			if (f->n[e].type == JF_OBJECT &&
			    put_object(x, activity, instance_of(f, e), e, t) < 0)
				return -1;
		return 0;
	}
	if (f->n[v].type != JF_OBJECT)
		return 0;
	for (uint32_t c = jflat_child(f, v); c; c = f->n[c].next)
		if ((f->n[c].type == JF_ARRAY || f->n[c].type == JF_OBJECT) &&
		    put_activity(x, f->n[c].key, c, t) < 0)
			return -1;
	return put_object(x, activity, NULL, v, t);
}

/* "2026-11-22" (sadf) or "06/01/20" (mpstat, iostat, pidstat: MM/DD/YY)
 * and "12:28:17" -> ns since the epoch, as UTC; -1 if malformed. */
static int64_t parse_time(const char *date, const char *clock)
{
	struct tm tm;
	memset(&tm, 0, sizeof(tm));
	char tail;
	if (!date || !clock ||
	    sscanf(clock, "%d:%d:%d%c", &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &tail) != 3)
		return -1;
	if (sscanf(date, "%d/%d/%d%c", &tm.tm_mon, &tm.tm_mday, &tm.tm_year, &tail) == 3)
		tm.tm_year += tm.tm_year < 100 ? 2000 : 0;
	else if (sscanf(date, "%d-%d-%d%c", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tail) != 3)
		return -1;
	if (tm.tm_year < 1970 || tm.tm_year > 2200 || tm.tm_mon < 1 || tm.tm_mon > 12 ||
	    tm.tm_mday < 1 || tm.tm_mday > 31 || tm.tm_hour > 23 || tm.tm_min > 59 ||
	    tm.tm_sec > 60)
		return -1;
	tm.tm_year -= 1900;
	tm.tm_mon -= 1;
	return (int64_t)timegm(&tm) * 1000000000;
}

/* One sample, the value at JFLAT_ROOT of x->flat. */
static int put_sample(struct sx *x)
{
	const struct jflat *f = &x->flat;
	uint32_t s = JFLAT_ROOT, ts = jflat_get(f, s, "timestamp");
	int64_t t = f->n[ts].type == JF_STRING /* mpstat & co: the time, the day in the header */
			? parse_time(x->host.date, f->n[ts].str)
			: parse_time(string_of(f, jflat_get(f, ts, "date")),
				     string_of(f, jflat_get(f, ts, "time")));
	x->samples_seen++;
	if (t < 0) {
		msource_diag(&x->ms, "BAD_TIME", "samples without a readable timestamp, skipped",
			     NULL, 1);
		return 0;
	}
	uint32_t utc = jflat_get(f, ts, "utc");
	const char *tz = string_of(f, jflat_get(f, ts, "tz"));
	if (!(f->n[utc].type == JF_INTEGER && f->n[utc].integer == 1) &&
	    !(tz && (!strcmp(tz, "UTC") || !strcmp(tz, "GMT"))))
		msource_diag(&x->ms, "LOCAL_TIME",
			     "samples stamped in local time, taken as UTC (use --time-offset)", tz,
			     0);
	uint32_t iv = jflat_get(f, ts, "interval");
	if (f->n[iv].type == JF_INTEGER && f->n[iv].integer > 0 && f->n[iv].integer < 366 * 86400)
		t -= f->n[iv].integer * 1000000000; /* to the interval's start */
	if (x->o->has_time_offset)
		t += x->o->time_offset_ns;
	x->timed++;
	x->at = 0;
	for (uint32_t c = jflat_child(f, s); c; c = f->n[c].next)
		if (strcmp(f->n[c].key, "timestamp") && put_activity(x, f->n[c].key, c, t) < 0)
			return -1;
	return 0;
}

/* ---- reading the document (importers/jcut.c) ---- */

/* The samples: the elements of each host's "statistics". */
static int cut(void *arg, const struct jcut *j, int d)
{
	(void)arg;
	return !strcmp(jcut_key(j, d), "statistics");
}

/* A sample's text, read by jflat unless it declines (put_sample reports
 * through x->err, which is err). */
static int element_text(void *arg, char *text, size_t len, char **err)
{
	struct sx *x = arg;
	(void)err;
	return jflat_parse(&x->flat, text, len) ? 1 : put_sample(x);
}

/* A sample jflat declined, as jansson read it. */
static int element(void *arg, json_t *e, char **err)
{
	struct sx *x = arg;
	(void)err;
	jflat_from_json(&x->flat, e);
	return put_sample(x);
}

/* A host's own fields: the objects in "hosts". */
static void scalar(void *arg, const struct jcut *j, int d, const char *key, const char *text,
		   int is_string)
{
	struct sx *x = arg;
	if (d < 1 || !jcut_is_array(j, d - 1) || strcmp(jcut_key(j, d - 1), "hosts"))
		return;
	if (!strcmp(key, "nodename") && is_string) {
		free(x->host.name);
		x->host.name = xstrdup(text);
		clear_slots(x); /* their series are the last host's */
	} else if (!strcmp(key, "number-of-cpus") && !is_string) {
		x->host.ncpu = atoi(text);
	} else if (!strcmp(key, "date") && is_string) {
		snprintf(x->host.date, sizeof(x->host.date), "%.15s", text);
	}
}

static const struct jcut_ops ops = {cut, element, scalar, "a sample", SAMPLE_MAX, element_text};

/* Frees what x holds but its msource. */
static void release(struct sx *x)
{
	free(x->host.name);
	clear_slots(x);
	free(x->slot);
	jflat_release(&x->flat);
}

int sysstat_import(struct input *in, struct store *st, const struct import_opts *o, char **err)
{
	struct sx x;
	memset(&x, 0, sizeof(x));
	x.o = o;
	x.in = in;
	x.err = err;
	const char *anchor = o->has_time_offset ? "time-offset" : "absolute";
	if (msource_begin(&x.ms, st, in, "sysstat", anchor, o, err) < 0)
		return -1;
	if (jcut_run(in, &ops, &x, NULL, err) < 0)
		goto out;
	if (!x.timed) {
		*err = xasprintf("%s: %s", input_path(in),
				 x.samples_seen
				     ? "no sample has a readable timestamp (iostat: run it with -t)"
				     : "no \"statistics\" samples: is this `sadf -j` output?");
		goto out;
	}
	/* the report names the host the samples came from */
	if (!o->host && x.host.name &&
	    store_set_source_anchor(st, x.ms.source_id, anchor,
				    o->has_time_offset ? o->time_offset_ns : 0, -1, x.host.name,
				    NULL, err) < 0)
		goto out;
	release(&x);
	return msource_end(&x.ms, err);
out:
	msource_release(&x.ms);
	release(&x);
	return -1;
}

int sysstat_sniff(const unsigned char *b, size_t n)
{
	size_t i = sniff_start(b, n);
	if (i == n || b[i] != '{')
		return 0;
	const char *key = "\"sysstat\"";
	size_t k = strlen(key);
	for (size_t j = i; j + k <= n && j < i + 64; j++)
		if (!memcmp(b + j, key, k))
			return 95;
	return 0;
}
