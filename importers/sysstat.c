/*
 * sadf -j output into metric series.
 *
 * The document is {"sysstat": {"hosts": [{host fields..., "statistics":
 * [{sample}, ...], "restarts": [...]}]}}.  A long recording is hundreds of
 * MB, so it is not parsed whole: a scanner that knows JSON's strings and
 * nesting (not its values) walks the stream, cuts out each host's header
 * (the fields before "statistics") and each sample object, and hands those
 * small pieces to jansson.  Memory is bounded by the largest sample
 * (SAMPLE_MAX).
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

#include "importers/msource.h"
#include "importers/sysstat.h"
#include "model/sbuf.h"
#include "model/xalloc.h"

#define SAMPLE_MAX (8 << 20)  /* one sample object, bytes */
#define HEADER_MAX (64 << 10) /* a host's fields before its statistics */
#define DEPTH_MAX  64

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

static int put_sample(struct sx *x, json_t *s, int64_t at)
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
	(void)at;
	x->timed++;
	const char *k;
	json_t *v;
	json_object_foreach(s, k, v) if (strcmp(k, "timestamp") &&
					 put_activity(x, k, v, t) < 0) return -1;
	return 0;
}

/* ---- the scanner ---- */

enum { C_OBJECT = 1, C_ARRAY = 2 };

struct scan {
	unsigned char type[DEPTH_MAX]; /* container at each depth */
	unsigned char key[DEPTH_MAX];  /* the key that opened it: K_* */
	int depth;
	int in_string, escape;
	char last[32]; /* the last string read, cut */
	size_t last_len;
	int last_is_key; /* followed by ':' */
	int pending_key; /* the K_* of the last key, for the next container */
	struct sbuf cut; /* the piece being cut out */
	int cutting;	 /* 1: a sample, 2: a header */
	int cut_depth;
	int64_t offset;
};

enum { K_OTHER, K_HOSTS, K_STATISTICS };

static int key_id(const char *s)
{
	return !strcmp(s, "hosts") ? K_HOSTS : !strcmp(s, "statistics") ? K_STATISTICS : K_OTHER;
}

static int fail(struct sx *x, struct scan *sc, const char *what)
{
	*x->err = xasprintf("%s: at byte %lld: %s", input_path(x->in), (long long)sc->offset, what);
	return -1;
}

/* A header piece ends where "statistics" begins: close it and parse. */
static int end_header(struct sx *x, struct scan *sc)
{
	/* the piece ends with ... , "statistics" : -- drop that key */
	const char *s = sc->cut.buf, *q = NULL;
	for (const char *p = s; (p = strstr(p, "\"statistics\"")); p++)
		q = p; /* the last one: the key just read */
	if (q)
		sc->cut.len = (size_t)(q - s);
	sbuf_adds(&sc->cut, "\"statistics\": []}");
	json_error_t je;
	json_t *h = json_loadb(sc->cut.buf, sc->cut.len, 0, &je);
	sc->cutting = 0;
	sbuf_reset(&sc->cut);
	if (!h)
		return fail(x, sc, "a host's fields are not valid JSON");
	free(x->host.name);
	const char *name = json_string_value(json_object_get(h, "nodename"));
	x->host.name = name ? xstrdup(name) : NULL;
	const char *date = json_string_value(json_object_get(h, "date"));
	snprintf(x->host.date, sizeof(x->host.date), "%s", date ? date : "");
	json_t *nc = json_object_get(h, "number-of-cpus");
	x->host.ncpu = json_is_integer(nc) ? (int)json_integer_value(nc) : 0;
	json_decref(h);
	return 0;
}

static int end_sample(struct sx *x, struct scan *sc)
{
	json_error_t je;
	json_t *s = json_loadb(sc->cut.buf, sc->cut.len, 0, &je);
	sc->cutting = 0;
	sbuf_reset(&sc->cut);
	if (!s) {
		char msg[200];
		snprintf(msg, sizeof(msg), "a sample is not valid JSON: %s", je.text);
		return fail(x, sc, msg);
	}
	int rc = put_sample(x, s, sc->offset);
	json_decref(s);
	return rc;
}

/* Whether byte c can change the scanner's state inside a sample. */
static int significant(const struct scan *sc, unsigned char c)
{
	if (sc->in_string)
		return c == '"' || c == '\\' || sc->escape;
	return c == '"' || c == '{' || c == '}' || c == '[' || c == ']';
}

/* One byte of the stream (while cutting, the caller has copied it). */
static int scan_byte(struct sx *x, struct scan *sc, unsigned char c)
{
	if (sc->in_string) {
		if (sc->escape)
			sc->escape = 0;
		else if (c == '\\')
			sc->escape = 1;
		else if (c == '"')
			sc->in_string = 0;
		else if (sc->last_len < sizeof(sc->last) - 1)
			sc->last[sc->last_len++] = (char)c;
		return 0;
	}
	switch (c) {
	case '"':
		sc->in_string = 1;
		sc->last_len = 0;
		sc->last_is_key = 0;
		break;
	case ':':
		sc->last[sc->last_len] = '\0';
		sc->pending_key = key_id(sc->last);
		if (sc->pending_key == K_STATISTICS && sc->cutting == 2 &&
		    sc->depth == sc->cut_depth && end_header(x, sc) < 0)
			return -1;
		break;
	case '{':
	case '[':
		if (sc->depth == DEPTH_MAX)
			return fail(x, sc, "nested too deeply");
		sc->type[sc->depth] = c == '{' ? C_OBJECT : C_ARRAY;
		sc->key[sc->depth] = (unsigned char)sc->pending_key;
		sc->pending_key = K_OTHER;
		/* a host: an object in "hosts"; a sample: an object in "statistics" */
		if (c == '{' && !sc->cutting && sc->depth > 0 &&
		    sc->type[sc->depth - 1] == C_ARRAY &&
		    (sc->key[sc->depth - 1] == K_HOSTS || sc->key[sc->depth - 1] == K_STATISTICS)) {
			sc->cutting = sc->key[sc->depth - 1] == K_HOSTS ? 2 : 1;
			sc->cut_depth = sc->depth + 1;
			sbuf_reset(&sc->cut);
			sbuf_addc(&sc->cut, '{');
		}
		sc->depth++;
		break;
	case '}':
	case ']':
		if (sc->depth == 0 || sc->type[sc->depth - 1] != (c == '}' ? C_OBJECT : C_ARRAY))
			return fail(x, sc, "brackets do not match");
		sc->depth--;
		if (sc->cutting == 1 && sc->depth + 1 == sc->cut_depth)
			return end_sample(x, sc);
		if (sc->cutting == 2 && sc->depth + 1 == sc->cut_depth)
			return end_header(x, sc); /* a host without statistics */
		break;
	default:
		break;
	}
	return 0;
}

int sysstat_import(struct input *in, struct store *st, const struct import_opts *o, char **err)
{
	struct sx x;
	struct scan sc;
	memset(&x, 0, sizeof(x));
	memset(&sc, 0, sizeof(sc));
	x.o = o;
	x.in = in;
	x.err = err;
	if (msource_begin(&x.ms, st, in, "sysstat", o->has_time_offset ? "time-offset" : "absolute",
			  o, err) < 0)
		return -1;
	unsigned char buf[64 << 10];
	ssize_t n;
	int rc = -1;
	while ((n = input_read(in, buf, sizeof(buf), err)) > 0) {
		/* the bytes of a piece being cut are copied a run at a time; in a
		 * sample only quotes, escapes and brackets need looking at */
		ssize_t from = 0;
		for (ssize_t i = 0; i < n; i++, sc.offset++) {
			if (sc.cutting == 1 && !significant(&sc, buf[i]))
				continue;
			if (sc.cutting)
				sbuf_add(&sc.cut, buf + from, (size_t)(i + 1 - from));
			from = i + 1;
			if (scan_byte(&x, &sc, buf[i]) < 0)
				goto out;
			if (sc.cut.len > (sc.cutting == 1 ? SAMPLE_MAX : HEADER_MAX)) {
				fail(&x, &sc,
				     sc.cutting == 1 ? "a sample larger than 8 MB"
						     : "a host's fields larger than 64 KB");
				goto out;
			}
		}
		if (sc.cutting)
			sbuf_add(&sc.cut, buf + from, (size_t)(n - from));
		if (sc.cut.len > (sc.cutting == 1 ? SAMPLE_MAX : HEADER_MAX)) {
			fail(&x, &sc, "a sample larger than 8 MB");
			goto out;
		}
	}
	if (n < 0)
		goto out;
	if (sc.depth || sc.in_string) {
		fail(&x, &sc, "the file ends inside the document (truncated?)");
		goto out;
	}
	if (!x.timed) {
		fail(&x, &sc,
		     x.samples_seen ? "no sample has a readable timestamp (iostat: run it with -t)"
				    : "no \"statistics\" samples: is this `sadf -j` output?");
		goto out;
	}
	/* the report names the host the samples came from */
	if (!o->host && x.host.name &&
	    store_set_source_anchor(
		st, x.ms.source_id, o->has_time_offset ? "time-offset" : "absolute",
		o->has_time_offset ? o->time_offset_ns : 0, -1, x.host.name, NULL, err) < 0)
		goto out;
	rc = msource_end(&x.ms, err);
	free(x.host.name);
	sbuf_release(&sc.cut);
	return rc;
out:
	msource_release(&x.ms);
	free(x.host.name);
	sbuf_release(&sc.cut);
	return -1;
}

int sysstat_sniff(const unsigned char *b, size_t n)
{
	size_t i = 0;
	while (i < n && (b[i] == ' ' || b[i] == '\n' || b[i] == '\r' || b[i] == '\t'))
		i++;
	if (i == n || b[i] != '{')
		return 0;
	const char *key = "\"sysstat\"";
	size_t k = strlen(key);
	for (size_t j = i; j + k <= n && j < i + 64; j++)
		if (!memcmp(b + j, key, k))
			return 95;
	return 0;
}
