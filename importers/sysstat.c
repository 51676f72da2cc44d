/*
 * sadf -j output into metric series.
 *
 * The document is {"sysstat": {"hosts": [{host fields..., "statistics":
 * [{sample}, ...], "restarts": [...]}]}}.  A long recording is hundreds of
 * MB, so it is not parsed whole: jcut.c streams it, reports each host's
 * own fields and cuts out each sample object for jansson.  Memory is
 * bounded by the largest sample (SAMPLE_MAX).
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
#include "importers/msource.h"
#include "importers/sniff.h"
#include "importers/sysstat.h"
#include "model/sbuf.h"
#include "model/xalloc.h"

#define SAMPLE_MAX (8 << 20) /* one sample object, bytes */

struct host {
	char *name; /* nodename, or NULL */
	int ncpu;
	char date[16]; /* mpstat/iostat/pidstat: the day of the samples' times */
};

struct sx {
	struct msource ms;
	const struct import_opts *o;
	struct input *in;
	struct host host;
	int64_t samples_seen, timed;
	char **err;
};

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
	if (!strcmp(activity, "cpu-load"))
		sbuf_addf(r, "cpu%s", !instance || !strcmp(instance, "all") ? "" : instance);
	else if (!strcmp(activity, "memory"))
		sbuf_adds(r, "mem");
	else if (!strcmp(activity, "disk"))
		sbuf_addf(r, "disk:%s", instance ? instance : "?");
	else if (!strcmp(activity, "net-dev") || !strcmp(activity, "net-edev"))
		sbuf_addf(r, "net:%s", instance ? instance : "?");
	else if (instance)
		sbuf_addf(r, "%s:%s", activity, instance);
	else
		sbuf_adds(r, activity);
}

static int put(struct sx *x, const char *resource, const char *field, const char *unit,
	       double capacity, int64_t t, double v)
{
	struct sbuf name = SBUF_INIT;
	sbuf_adds(&name, resource);
	sbuf_addc(&name, '.');
	sbuf_adds(&name, field);
	int64_t id = msource_metric(&x->ms, x->o->host ? NULL : x->host.name, resource, name.buf,
				    unit, "mean", capacity, x->err);
	sbuf_release(&name);
	return id < 0 ? -1 : msource_sample(&x->ms, id, t, v, x->err);
}

/* The first string member of an array element names the instance. */
static const char *instance_of(json_t *obj)
{
	const char *k;
	json_t *v;
	json_object_foreach(obj, k, v) if (json_is_string(v)) return json_string_value(v);
	return NULL;
}

/* The numbers of one object: one series each. */
static int put_object(struct sx *x, const char *activity, const char *instance, json_t *obj,
		      int64_t t)
{
	struct sbuf res = SBUF_INIT;
	resource_of(&res, activity, instance);
	const char *k;
	json_t *v;
	int rc = 0;
	double total = 0; /* memory: from memused and memused-percent */
	json_t *used = json_object_get(obj, "memused"),
	       *pct = json_object_get(obj, "memused-percent");
	if (json_is_number(used) && json_is_number(pct) && json_number_value(pct) > 0)
		total = json_number_value(used) * 100 / json_number_value(pct);
	json_object_foreach(obj, k, v)
	{
		if (!json_is_number(v))
			continue;
		const char *unit = unit_of(activity, k);
		double cap = unit && !strcmp(unit, "%") ? 100 : !strcmp(k, "memused") ? total : 0;
		if ((rc = put(x, res.buf, k, unit, cap, t, json_number_value(v))) < 0)
			break;
	}
	json_t *idle = json_object_get(obj, "idle");
	if (rc == 0 && !strcmp(activity, "cpu-load") && json_is_number(idle))
		rc = put(x, res.buf, "util", "%", 100, t, 100 - json_number_value(idle));
	/* instances inside an instance (mpstat's interrupts per CPU): "cpu/name" */
	json_object_foreach(obj, k, v)
	{
		size_t i;
		json_t *e;
		if (rc < 0 || !instance || !json_is_array(v))
			continue; /* an activity's own arrays are put_activity's */
		json_array_foreach(v, i, e)
		{
			if (!json_is_object(e))
				continue;
			struct sbuf in = SBUF_INIT;
			const char *inner = instance_of(e);
			sbuf_addf(&in, "%s/%s", instance, inner ? inner : "?");
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
static int put_activity(struct sx *x, const char *activity, json_t *v, int64_t t)
{
	if (json_is_array(v)) {
		size_t i;
		json_t *e;
		json_array_foreach(v, i, e) if (json_is_object(e) &&
						put_object(x, activity, instance_of(e), e, t) <
						    0) return -1;
		return 0;
	}
	if (!json_is_object(v))
		return 0;
	const char *k;
	json_t *sub;
	json_object_foreach(v, k, sub) if ((json_is_array(sub) || json_is_object(sub)) &&
					   put_activity(x, k, sub, t) < 0) return -1;
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

static int put_sample(struct sx *x, json_t *s)
{
	json_t *ts = json_object_get(s, "timestamp");
	int64_t t = json_is_string(ts) /* mpstat & co: the time, the day in the header */
			? parse_time(x->host.date, json_string_value(ts))
			: parse_time(json_string_value(json_object_get(ts, "date")),
				     json_string_value(json_object_get(ts, "time")));
	x->samples_seen++;
	if (t < 0) {
		msource_diag(&x->ms, "BAD_TIME", "samples without a readable timestamp, skipped",
			     NULL, 1);
		return 0;
	}
	json_t *utc = json_object_get(ts, "utc");
	const char *tz = json_string_value(json_object_get(ts, "tz"));
	if (!(json_is_integer(utc) && json_integer_value(utc) == 1) &&
	    !(tz && (!strcmp(tz, "UTC") || !strcmp(tz, "GMT"))))
		msource_diag(&x->ms, "LOCAL_TIME",
			     "samples stamped in local time, taken as UTC (use --time-offset)", tz,
			     0);
	json_t *iv = json_object_get(ts, "interval");
	if (json_is_integer(iv) && json_integer_value(iv) > 0 &&
	    json_integer_value(iv) < 366 * 86400)
		t -= json_integer_value(iv) * 1000000000; /* to the interval's start */
	if (x->o->has_time_offset)
		t += x->o->time_offset_ns;
	x->timed++;
	const char *k;
	json_t *v;
	json_object_foreach(s, k, v) if (strcmp(k, "timestamp") &&
					 put_activity(x, k, v, t) < 0) return -1;
	return 0;
}

/* ---- reading the document (importers/jcut.c) ---- */

/* The samples: the elements of each host's "statistics". */
static int cut(void *arg, const struct jcut *j, int d)
{
	(void)arg;
	return !strcmp(jcut_key(j, d), "statistics");
}

static int element(void *arg, json_t *e, char **err)
{
	(void)err; /* put_sample reports through x->err, which is err */
	return put_sample(arg, e);
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
	} else if (!strcmp(key, "number-of-cpus") && !is_string) {
		x->host.ncpu = atoi(text);
	} else if (!strcmp(key, "date") && is_string) {
		snprintf(x->host.date, sizeof(x->host.date), "%.15s", text);
	}
}

static const struct jcut_ops ops = {cut, element, scalar, "a sample", SAMPLE_MAX};

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
	free(x.host.name);
	return msource_end(&x.ms, err);
out:
	msource_release(&x.ms);
	free(x.host.name);
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
