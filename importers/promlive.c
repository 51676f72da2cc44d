/*
 * A live pull from a Prometheus server; see promlive.h.  The steps:
 *
 *   1. The window: --from/--to, else the span of trace.db's workflows
 *      (--workflow: that one).  The hosts: those of trace.db's tracks and
 *      sources (--host: that one); with none, every host the server has.
 *   2. Which exporters run where, in one cheap /api/v1/series request for
 *      a few marker series over the window (node_exporter's
 *      node_memory_MemTotal_bytes and node_uname_info, DCGM's
 *      DCGM_FI_DEV_GPU_UTIL, nvidia_gpu_exporter's
 *      nvidia_smi_utilization_gpu_ratio).  An instance belongs to a host
 *      of trace.db when its instance label (without its port), its
 *      hostname, Hostname or node label, or node_uname_info's nodename is
 *      that host or an alias of it (--host-alias, --hosts).  Instances of
 *      no host are not pulled, and a PROM_NO_HOST diagnostic names them.
 *   3. The step: --prometheus-step, else the scrape interval, the median
 *      spacing of one marker series' raw samples in the five minutes
 *      before the window's end.  A series has at most STEPS_MAX steps,
 *      one request's worth: a window longer than that many scrape
 *      intervals is pulled at a whole number of them (PROM_STEP), and a
 *      --prometheus-step too fine for the window is refused before any
 *      request, with the step that would do.
 *   4. Capacities, by instant queries over the window: core count, memory
 *      total, link speed (node_exporter; a negative speed is unknown),
 *      frame buffer (DCGM), memory, power limit and top clocks
 *      (nvidia_gpu_exporter, whose GPUs are numbered by nvidia_smi_index).
 *   5. The series (the table below), each one query_range over the
 *      window; --promql queries after them.  Responses stream into the
 *      Prometheus importer (prometheus_read): memory is bounded by one
 *      series of one request.
 *
 * Limits, whatever the server: a request has a deadline (http.h), the
 * requests of a pull are the few of steps 2 to 4 and one a query, a pull
 * stores at most PROM_SERIES_MAX series and the discovery takes at most
 * INSTANCES_MAX instances (more is refused, saying what to narrow), and
 * every label is cut to PROM_LABEL_MAX bytes (prometheus.h).
 *
 * Counters become rates in PromQL: irate over three scrape intervals when
 * the step is under two of them (each value is the last interval's rate),
 * else rate over the step (its mean).  Evaluations fall a margin (a tenth
 * of the scrape interval, 100 ms at most) after the scrapes of the marker
 * series' target, so that a rate describes the interval that ended just
 * before; it is stored at that interval's start, as a "mean" (sysstat's
 * convention, model/store/sample.h), a gauge at its scrape ("instant").  A GPU's
 * utilisation and power are averaged over the step when it spans two
 * scrapes or more.  Requests go PIPELINE at a time (importers/http.h).
 * Series are named as the file importers name the same figures, so that
 * attribution reads them: cpu.util, cpuN.util, cpu.iowait (sysstat's),
 * disk:D.util-percent, net:D.ifutil-percent, utilization.gpu
 * (nvidia-smi's), DCGM_FI_DEV_GPU_UTIL on resource gpuN.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "importers/http.h"
#include "importers/importer.h"
#include "importers/jcut.h"
#include "importers/msource.h"
#include "importers/prometheus.h"
#include "importers/promlive.h"
#include "importers/workflow.h"
#include "model/store/col.h"
#include "model/util/sbuf.h"
#include "model/util/strmap.h"
#include "model/util/text.h"
#include "model/util/xalloc.h"

#define STEPS_MAX      10000 /* a series' steps: one request (Prometheus refuses over 11,000) */
#define INSTANCES_MAX  10000 /* the discovery's */
#define AS_MAX	       512   /* bytes of what else names an instance */
#define PIPELINE       3     /* query_range requests in flight */
#define TRIES	       3     /* on 5xx and 429 */
#define BACKOFF_NS     250000000LL
#define CONNECT_NS     ((int64_t)10 * 1000000000)
#define SCRAPE_LOOK_NS ((int64_t)300 * 1000000000)
#define CAP_LOOK_NS    ((int64_t)900 * 1000000000) /* capacities: the window's last 15 min */
#define SCRAPE_DIFFS   4096
#define TOKEN_MAX      65536
#define WINDOW_MAX_NS  ((int64_t)90 * 86400 * 1000000000) /* a workflow's, pulled unasked */
#define NO_HOST_SHOWN  8				  /* instances the diagnostic names */

enum { EX_NODE = 1, EX_DCGM = 2, EX_NVSMI = 4 };

/* How a series' values are read: a counter's rate, a gauge averaged over
 * the step when it spans scrapes, or a gauge as it is. */
enum { K_RATE, K_AVG, K_GAUGE };

/* A series pulled for each host.  In promql: @F the instance filter,
 * @RATE irate or rate, @R its range, @AVG( and @W avg_over_time( and its
 * [range] (or nothing).  resource and name may hold one %s: the value of
 * label (an nvidia_gpu_exporter uuid becomes its GPU's index). */
struct live_query {
	int exporter;
	const char *promql, *label, *resource, *name, *unit;
	int kind;
	double capacity; /* fixed, or 0 */
	const char *cap; /* else a capacity lookup's key, or NULL */
};

#define IDLE "node_cpu_seconds_total{mode=\"idle\",@F}"
static const struct live_query queries[] = {
    {EX_NODE, "clamp(100 * (1 - avg by (instance) (@RATE(" IDLE "[@R]))), 0, 100)", NULL, "cpu",
     "cpu.util", "%", K_RATE, 100, NULL},
    {EX_NODE,
     "clamp(100 * avg by (instance, mode) (@RATE(node_cpu_seconds_total{@F}[@R])), 0, 100)", "mode",
     "cpu", "cpu.%s", "%", K_RATE, 100, NULL},
    {EX_NODE, "clamp(100 * (1 - @RATE(" IDLE "[@R])), 0, 100)", "cpu", "cpu%s", "cpu%s.util", "%",
     K_RATE, 100, NULL},
    {EX_NODE, "clamp_min(sum by (instance) (1 - @RATE(" IDLE "[@R])), 0)", NULL, "cpu", "cpu.busy",
     "cores", K_RATE, 0, "cores"},
    {EX_NODE,
     "max by (instance) (node_memory_MemTotal_bytes{@F} - node_memory_MemAvailable_bytes{@F})",
     NULL, "mem", "mem.memused", "B", K_GAUGE, 0, "mem"},
    {EX_NODE,
     "max by (instance) (100 * (1 - node_memory_MemAvailable_bytes{@F} /"
     " node_memory_MemTotal_bytes{@F}))",
     NULL, "mem", "mem.memused-percent", "%", K_GAUGE, 100, NULL},
    {EX_NODE, "clamp(100 * @RATE(node_disk_io_time_seconds_total{@F}[@R]), 0, 100)", "device",
     "disk:%s", "disk:%s.util-percent", "%", K_RATE, 100, NULL},
    {EX_NODE, "@RATE(node_disk_read_bytes_total{@F}[@R])", "device", "disk:%s",
     "disk:%s.read-bytes", "B/s", K_RATE, 0, NULL},
    {EX_NODE, "@RATE(node_disk_written_bytes_total{@F}[@R])", "device", "disk:%s",
     "disk:%s.write-bytes", "B/s", K_RATE, 0, NULL},
    {EX_NODE, "@RATE(node_network_receive_bytes_total{@F}[@R])", "device", "net:%s",
     "net:%s.rx-bytes", "B/s", K_RATE, 0, "speed"},
    {EX_NODE, "@RATE(node_network_transmit_bytes_total{@F}[@R])", "device", "net:%s",
     "net:%s.tx-bytes", "B/s", K_RATE, 0, "speed"},
    {EX_NODE,
     "clamp(100 * ((@RATE(node_network_receive_bytes_total{@F}[@R]) >"
     " @RATE(node_network_transmit_bytes_total{@F}[@R])) or"
     " @RATE(node_network_transmit_bytes_total{@F}[@R])) / on (instance, device)"
     " (max by (instance, device) (node_network_speed_bytes{@F}) > 0), 0, 100)",
     "device", "net:%s", "net:%s.ifutil-percent", "%", K_RATE, 100, NULL},
    {EX_DCGM, "max by (instance, gpu) (@AVG(DCGM_FI_DEV_GPU_UTIL{@F}@W))", "gpu", "gpu%s",
     "DCGM_FI_DEV_GPU_UTIL", "%", K_AVG, 100, NULL},
    {EX_DCGM, "max by (instance, gpu) (@AVG(DCGM_FI_DEV_MEM_COPY_UTIL{@F}@W))", "gpu", "gpu%s",
     "DCGM_FI_DEV_MEM_COPY_UTIL", "%", K_AVG, 100, NULL},
    {EX_DCGM, "max by (instance, gpu) (DCGM_FI_DEV_FB_USED{@F})", "gpu", "gpu%s",
     "DCGM_FI_DEV_FB_USED", "MiB", K_GAUGE, 0, "fb"},
    {EX_DCGM, "max by (instance, gpu) (@AVG(DCGM_FI_DEV_POWER_USAGE{@F}@W))", "gpu", "gpu%s",
     "DCGM_FI_DEV_POWER_USAGE", "W", K_AVG, 0, NULL},
    {EX_DCGM, "max by (instance, gpu) (DCGM_FI_DEV_SM_CLOCK{@F})", "gpu", "gpu%s",
     "DCGM_FI_DEV_SM_CLOCK", "MHz", K_GAUGE, 0, NULL},
    {EX_DCGM, "max by (instance, gpu) (DCGM_FI_DEV_MEM_CLOCK{@F})", "gpu", "gpu%s",
     "DCGM_FI_DEV_MEM_CLOCK", "MHz", K_GAUGE, 0, NULL},
    {EX_NVSMI, "max by (instance, uuid) (100 * @AVG(nvidia_smi_utilization_gpu_ratio{@F}@W))",
     "uuid", "gpu%s", "utilization.gpu", "%", K_AVG, 100, NULL},
    {EX_NVSMI, "max by (instance, uuid) (100 * @AVG(nvidia_smi_utilization_memory_ratio{@F}@W))",
     "uuid", "gpu%s", "utilization.memory", "%", K_AVG, 100, NULL},
    {EX_NVSMI, "max by (instance, uuid) (nvidia_smi_memory_used_bytes{@F}) / 1048576", "uuid",
     "gpu%s", "memory.used", "MiB", K_GAUGE, 0, "nvmem"},
    {EX_NVSMI, "max by (instance, uuid) (@AVG(nvidia_smi_power_draw_watts{@F}@W))", "uuid", "gpu%s",
     "power.draw", "W", K_AVG, 0, "nvpower"},
    {EX_NVSMI, "max by (instance, uuid) (nvidia_smi_clocks_current_graphics_clock_hz{@F}) / 1e6",
     "uuid", "gpu%s", "clocks.current.graphics", "MHz", K_GAUGE, 0, "nvgr"},
    {EX_NVSMI, "max by (instance, uuid) (nvidia_smi_clocks_current_memory_clock_hz{@F}) / 1e6",
     "uuid", "gpu%s", "clocks.current.memory", "MHz", K_GAUGE, 0, "nvmemclk"},
};
#undef IDLE

/* A capacity lookup: an instant query at the window's end over its last
 * CAP_LOOK_NS (@WIN), one value per instance (and label).  (A range
 * selector reads every sample it spans: the whole of a long window
 * would cost the server its memory.) */
struct live_cap {
	int exporter;
	const char *key, *promql, *label;
};

static const struct live_cap caps[] = {
    {EX_NODE, "cores",
     "count by (instance) (max_over_time(node_cpu_seconds_total{mode=\"idle\",@F}[@WIN]))", NULL},
    {EX_NODE, "mem", "max by (instance) (max_over_time(node_memory_MemTotal_bytes{@F}[@WIN]))",
     NULL},
    {EX_NODE, "speed",
     "max by (instance, device) (max_over_time(node_network_speed_bytes{@F}[@WIN])) > 0", "device"},
    {EX_DCGM, "fb",
     "max by (instance, gpu) (last_over_time(DCGM_FI_DEV_FB_USED{@F}[@WIN]) +"
     " last_over_time(DCGM_FI_DEV_FB_FREE{@F}[@WIN]))",
     "gpu"},
    {EX_NVSMI, "nvindex", "max by (instance, uuid) (last_over_time(nvidia_smi_index{@F}[@WIN]))",
     "uuid"},
    {EX_NVSMI, "nvmem",
     "max by (instance, uuid) (max_over_time(nvidia_smi_memory_total_bytes{@F}[@WIN])) / 1048576",
     "uuid"},
    {EX_NVSMI, "nvpower",
     "max by (instance, uuid) (max_over_time(nvidia_smi_enforced_power_limit_watts{@F}[@WIN]))",
     "uuid"},
    {EX_NVSMI, "nvgr",
     "max by (instance, uuid) (max_over_time(nvidia_smi_clocks_max_graphics_clock_hz{@F}[@WIN]))"
     " / 1e6",
     "uuid"},
    {EX_NVSMI, "nvmemclk",
     "max by (instance, uuid) (max_over_time(nvidia_smi_clocks_max_memory_clock_hz{@F}[@WIN]))"
     " / 1e6",
     "uuid"},
};

/* The marker series of each exporter: in the discovery, and for the
 * scrape interval. */
static const struct {
	int exporter;
	const char *name;
} markers[] = {
    {EX_NODE, "node_memory_MemTotal_bytes"},
    {EX_NODE, "node_uname_info"},
    {EX_DCGM, "DCGM_FI_DEV_GPU_UTIL"},
    {EX_NVSMI, "nvidia_smi_utilization_gpu_ratio"},
};

/* Labels that may name an instance's host, after its instance label. */
static const char *const host_labels[] = {"nodename", "hostname", "Hostname", "node"};

struct instance {
	char *label;	/* the instance label */
	char *host;	/* its host in trace.db, or NULL */
	int guessed;	/* host named by its instance label alone (no host to match) */
	struct sbuf as; /* what else named it: "nodename vm, node n7" */
	int exporters;
};

struct pl {
	struct store *st;
	const struct import_opts *o;
	const struct promlive_opts *po;
	struct http_opts http;
	struct http_group *group;
	char *token, *base, *shown;
	int64_t from, to;		  /* the window asked for */
	int64_t start, end, step, scrape; /* the queries' (aligned) */
	int64_t margin;			  /* evaluations come this long after a scrape */
	struct strmap hosts;		  /* trace.db's hosts */
	int any_host;			  /* no host to match: every instance is pulled */
	struct instance *inst;
	size_t ninst, inst_alloc;
	struct strmap inst_of; /* instance label -> index in inst */
	int exporters;	       /* of the instances pulled */
	struct sbuf filter;    /* instance=~"..." of those */
	struct strmap cap_of;  /* "key\x1finstance\x1flabel" -> index in capv */
	double *capv;
	size_t ncap, cap_alloc;
	struct msource ms;
	int ms_open;
	/* the request being read */
	const struct live_query *q;
	const struct live_cap *c;
	const char *user_name;
	int64_t shift;
	const char *kind;
	struct sbuf res, name, tmp;
	int64_t last_t, *diffs;
	size_t ndiffs;
	const void *last_labels;
	char status[64];
};

/* ---- small helpers ---- */

static const char *label_of(json_t *labels, const char *k)
{
	return json_string_value(json_object_get(labels, k));
}

/* ns as the API's seconds: "1764180000.123" (to the millisecond). */
static void add_seconds(struct sbuf *sb, int64_t ns)
{
	int64_t ms = ns / 1000000 - (ns % 1000000 < 0);
	sbuf_addf(sb, "%lld.%03lld", (long long)(ms / 1000), (long long)(ms % 1000));
}

static void utc(char *buf, size_t n, int64_t ns)
{
	time_t s = (time_t)(ns / 1000000000);
	struct tm tm;
	if (!gmtime_r(&s, &tm) || !strftime(buf, n, "%Y-%m-%dT%H:%M:%SZ", &tm))
		snprintf(buf, n, "%lld ns", (long long)ns);
}

int promlive_parse_time(const char *s, int64_t *ns)
{
	if (strlen(s) > 4 && s[4] == '-') {
		json_t *j = json_string(s);
		int rc = j ? workflow_time(j, ns) : -1;
		json_decref(j);
		return rc;
	}
	return text_parse_units(s, strlen(s), 1000000000, ns) < 0 || *ns <= 0 ? -1 : 0;
}

/* The token: --prometheus-token-file's, else the environment's, else
 * none.  Trailing blanks go; a control character inside is refused (it
 * would end the header).  Messages never quote it. */
static int load_token(struct pl *p, char **err)
{
	const struct promlive_opts *po = p->po;
	const char *where = po->token_file;
	char *tok = NULL;
	if (po->token_file) {
		FILE *f = fopen(po->token_file, "rb");
		if (!f) {
			*err = xasprintf("%s: cannot open the token file: %s", po->token_file,
					 strerror(errno));
			return -1;
		}
		tok = xmalloc(TOKEN_MAX + 1);
		size_t n = fread(tok, 1, TOKEN_MAX + 1, f);
		fclose(f);
		if (n > TOKEN_MAX) {
			free(tok);
			*err = xasprintf("%s: a token file of more than %d bytes", po->token_file,
					 TOKEN_MAX);
			return -1;
		}
		for (size_t i = 0; i < n; i++)
			if (!tok[i])
				tok[i] = '\x01'; /* refused below, as any control character */
		tok[n] = '\0';
	} else if (getenv(PROMLIVE_TOKEN_ENV)) {
		tok = xstrdup(getenv(PROMLIVE_TOKEN_ENV));
		where = PROMLIVE_TOKEN_ENV;
	} else {
		return 0;
	}
	size_t n = strlen(tok);
	while (n && strchr(" \t\r\n", tok[n - 1]))
		n--;
	tok[n] = '\0';
	size_t bad = 0;
	while (bad < n && (unsigned char)tok[bad] >= 0x20 && tok[bad] != 0x7f)
		bad++;
	if (!n || bad < n) {
		*err = xasprintf("%s: %s", where,
				 !n ? "the token is empty"
				    : "the token holds a control character (a line break inside?)");
		free(tok);
		return -1;
	}
	p->token = tok;
	return 0;
}

/* ---- trace.db: the window and the hosts ---- */

static int window(struct pl *p, char **err)
{
	if (p->po->from_ns || p->po->to_ns) {
		p->from = p->po->from_ns;
		p->to = p->po->to_ns;
		if (p->to <= p->from) {
			*err = xasprintf("--from and --to: the window ends before it begins");
			return -1;
		}
		return 0;
	}
	sqlite3_stmt *q;
	if (store_index_now(p->st, err) < 0) /* windows are refreshed then */
		return -1;
	if (sqlite3_prepare_v2(
		store_db(p->st),
		"SELECT min(p.start_ns), max(p.start_ns + p.dur_ns), count(*) FROM"
		" phases p JOIN strings s ON s.id = p.name_id WHERE p.parent_id IS"
		" NULL AND p.kind = ?1 AND p.dur_ns > 0 AND (?2 IS NULL OR s.text = ?2)",
		-1, &q, NULL) != SQLITE_OK) {
		*err = xasprintf("%s: cannot read phases: %s", store_path(p->st),
				 sqlite3_errmsg(store_db(p->st)));
		return -1;
	}
	sqlite3_bind_int(q, 1, PHASE_WORKFLOW);
	if (p->o->workflow)
		sqlite3_bind_text(q, 2, p->o->workflow, -1, SQLITE_STATIC);
	int found = sqlite3_step(q) == SQLITE_ROW && col_int(q, 2) > 0;
	if (found) {
		p->from = col_int(q, 0);
		p->to = col_int(q, 1);
	}
	sqlite3_finalize(q);
	if (!found) {
		if (p->o->workflow)
			*err = xasprintf("%s: workflow '%s' has no window to pull metrics for;"
					 " --from and --to give one",
					 store_path(p->st), p->o->workflow);
		else
			*err = xasprintf("%s: no workflow with a window to pull metrics for; --from"
					 " and --to give one",
					 store_path(p->st));
		return -1;
	}
	if (p->to - p->from > WINDOW_MAX_NS) {
		char a[32], b[32];
		utc(a, sizeof(a), p->from);
		utc(b, sizeof(b), p->to);
		*err =
		    xasprintf("%s: the workflows span %s to %s, more than 90 days: --from and --to"
			      " give the window to pull",
			      store_path(p->st), a, b);
		return -1;
	}
	return 0;
}

static int db_hosts(struct pl *p, char **err)
{
	if (p->o->host) {
		const char *h = store_host(p->st, p->o->host);
		strmap_put(&p->hosts, h, strlen(h), 1, NULL);
		return 0;
	}
	sqlite3_stmt *q;
	if (sqlite3_prepare_v2(store_db(p->st),
			       "SELECT host FROM tracks WHERE host IS NOT NULL UNION"
			       " SELECT host FROM sources WHERE host IS NOT NULL",
			       -1, &q, NULL) != SQLITE_OK) {
		*err = xasprintf("%s: cannot read hosts: %s", store_path(p->st),
				 sqlite3_errmsg(store_db(p->st)));
		return -1;
	}
	while (sqlite3_step(q) == SQLITE_ROW) {
		const char *h = store_host(p->st, col_text(q, 0));
		strmap_put(&p->hosts, h, strlen(h), 1, NULL);
	}
	sqlite3_finalize(q);
	p->any_host = p->hosts.n == 0;
	return 0;
}

/* The host of trace.db that name is (or is an alias of), or NULL. */
static const char *db_host(struct pl *p, const char *name)
{
	if (!name || !*name)
		return NULL;
	const char *h = store_host(p->st, name);
	return strmap_get(&p->hosts, h, strlen(h)) ? h : NULL;
}

/* The host a series' labels name: its instance's, else a host label's;
 * NULL when none is a host of trace.db. */
static const char *labels_host(struct pl *p, json_t *labels)
{
	const char *inst = label_of(labels, "instance");
	struct strmap_ent *e = inst ? strmap_get(&p->inst_of, inst, strlen(inst)) : NULL;
	if (e && p->inst[e->value].host)
		return p->inst[e->value].host;
	for (size_t i = 0; i < sizeof(host_labels) / sizeof(*host_labels); i++) {
		const char *h = db_host(p, label_of(labels, host_labels[i]));
		if (h)
			return h;
	}
	if (!inst)
		return NULL;
	char *bare = prometheus_instance_host(inst);
	const char *h = db_host(p, bare);
	free(bare);
	return h;
}

/* ---- requests ---- */

static ssize_t read_http(void *arg, void *buf, size_t n, char **err)
{
	return http_read(arg, buf, n, err);
}

/* The input that reads h's response, once its status is 2xx; what names
 * the request in messages.  h is closed on failure. */
static int response(struct pl *p, struct http *h, const char *path, const char *what,
		    struct input **in, char **err)
{
	if (http_wait(h, err) < 0) {
		char *e = xasprintf("%s (%s)", *err, what);
		free(*err);
		*err = e;
		http_close(h);
		return -1;
	}
	char *name = xasprintf("%s%s (%s)", p->shown, path, what);
	int rc = input_open_reader(name, read_http, h, in, err);
	free(name);
	if (rc < 0)
		http_close(h);
	return rc;
}

/* Starts a POST of form to the server's path in p's group. */
static int start(struct pl *p, const char *path, const char *form, struct http **h, char **err)
{
	char *url = xasprintf("%s%s", p->base, path);
	int rc = http_start(p->group, url, form, &p->http, h, err);
	free(url);
	return rc;
}

/* POSTs form to the server's path and waits; *in reads the response. */
static int post(struct pl *p, const char *path, const char *form, const char *what, struct http **h,
		struct input **in, char **err)
{
	*h = NULL;
	if (start(p, path, form, h, err) < 0 || response(p, *h, path, what, in, err) < 0) {
		*h = NULL;
		return -1;
	}
	return 0;
}

/* An instance's index in inst, made on first sight. */
static size_t instance_at(struct pl *p, const char *label)
{
	int created;
	struct strmap_ent *e =
	    strmap_put(&p->inst_of, label, strlen(label), (int64_t)p->ninst, &created);
	if (created) {
		XGROW(p->inst, p->ninst + 1, p->inst_alloc);
		struct instance *in = &p->inst[p->ninst++];
		memset(in, 0, sizeof(*in));
		in->label = xstrdup(label);
		sbuf_init(&in->as);
	}
	return (size_t)e->value;
}

/* ---- 2. discovery: /api/v1/series ---- */

static int series_cut(void *arg, const struct jcut *j, int d)
{
	(void)arg;
	return d == 1 && !strcmp(jcut_key(j, 1), "data");
}

static void series_scalar(void *arg, const struct jcut *j, int d, const char *key, const char *text,
			  int is_string)
{
	struct pl *p = arg;
	(void)j;
	if (d == 0 && is_string && !strcmp(key, "status"))
		snprintf(p->status, sizeof(p->status), "%s", text);
}

/* A marker series (its labels cut): its instance, what names its host. */
static int note_series(struct pl *p, json_t *labels, char **err)
{
	const char *label = label_of(labels, "instance"), *name = label_of(labels, "__name__");
	if (!label || !name)
		return 0;
	if (p->ninst == INSTANCES_MAX && !strmap_get(&p->inst_of, label, strlen(label))) {
		*err = xasprintf("%s/api/v1/series (which exporters run where): more than %d"
				 " instances of node_exporter, DCGM's or nvidia_gpu_exporter, the"
				 " most one pull looks through",
				 p->shown, INSTANCES_MAX);
		return -1;
	}
	size_t k = instance_at(p, label); /* before p->inst is read: it may move */
	struct instance *in = &p->inst[k];
	for (size_t i = 0; i < sizeof(markers) / sizeof(*markers); i++)
		if (!strcmp(name, markers[i].name))
			in->exporters |= markers[i].exporter;
	char *bare = prometheus_instance_host(label);
	const char *h = db_host(p, bare), *named = NULL;
	for (size_t i = 0; i < sizeof(host_labels) / sizeof(*host_labels); i++) {
		const char *v = label_of(labels, host_labels[i]);
		if (!v || !*v)
			continue;
		if (in->as.len < AS_MAX && !strstr(in->as.buf, v))
			sbuf_addf(&in->as, "%s%s %s", in->as.len ? ", " : "", host_labels[i], v);
		if (!named)
			named = v;
		if (!h)
			h = db_host(p, v);
	}
	if (p->any_host && !in->host) { /* every instance, named as best it can be */
		in->host = xstrdup(store_host(p->st, named ? named : bare));
		in->guessed = !named;
	} else if (p->any_host && in->guessed && named) {
		free(in->host);
		in->host = xstrdup(store_host(p->st, named));
		in->guessed = 0;
	} else if (h && !in->host) {
		in->host = xstrdup(h);
	}
	free(bare);
	return 0;
}

static int series_element(void *arg, json_t *labels, char **err)
{
	struct pl *p = arg;
	json_t *cut = prometheus_cut_labels(&p->ms, labels);
	int rc = note_series(p, cut, err);
	json_decref(cut);
	return rc;
}

static const struct jcut_ops series_ops = {series_cut, series_element, series_scalar,
					   "a series", 1 << 20,	       NULL};

/* instance=~"a|b" (RE2, each value's metacharacters escaped, inside a
 * PromQL string) of the instances with exporter ex, or of the one ex. */
static void instance_filter(struct pl *p, struct sbuf *f, const struct instance *one)
{
	sbuf_reset(f);
	sbuf_adds(f, "instance=~\"");
	int first = 1;
	for (size_t i = 0; i < p->ninst; i++) {
		const struct instance *in = &p->inst[i];
		if (!in->host || (one && in != one))
			continue;
		if (!first)
			sbuf_addc(f, '|');
		first = 0;
		for (const char *c = in->label; *c; c++) {
			if (strchr("\\.+*?()|[]{}^$", *c))
				sbuf_adds(f, "\\\\");
			if (*c == '"')
				sbuf_adds(f, "\\\"");
			else if (*c == '\n')
				sbuf_adds(f, "\\n");
			else
				sbuf_addc(f, *c);
		}
	}
	sbuf_addc(f, '"');
}

static int discover(struct pl *p, char **err)
{
	struct sbuf form = SBUF_INIT;
	struct http *h = NULL;
	struct input *in = NULL;
	int rc = -1, top;
	sbuf_init(&form);
	for (size_t i = 0; i < sizeof(markers) / sizeof(*markers); i++)
		http_form_add(&form, "match[]", markers[i].name);
	struct sbuf t = SBUF_INIT;
	sbuf_init(&t);
	add_seconds(&t, p->from);
	http_form_add(&form, "start", t.buf);
	sbuf_reset(&t);
	add_seconds(&t, p->to);
	http_form_add(&form, "end", t.buf);
	sbuf_release(&t);
	if (post(p, "/api/v1/series", form.buf, "which exporters run where", &h, &in, err) < 0 ||
	    jcut_run(in, &series_ops, p, &top, err) < 0)
		goto out;
	if (strcmp(p->status, "success")) {
		*err = xasprintf("%s: not a Prometheus API response (status '%s')", input_path(in),
				 p->status);
		goto out;
	}
	for (size_t i = 0; i < p->ninst; i++)
		if (p->inst[i].host)
			p->exporters |= p->inst[i].exporters;
	instance_filter(p, &p->filter, NULL);
	rc = 0;
out:
	input_close(in);
	http_close(h);
	sbuf_release(&form);
	return rc;
}

/* The diagnostic naming the instances of no host. */
static void no_host_diag(struct pl *p)
{
	struct sbuf ex = SBUF_INIT;
	size_t n = 0;
	sbuf_init(&ex);
	for (size_t i = 0; i < p->ninst; i++) {
		const struct instance *in = &p->inst[i];
		if (in->host)
			continue;
		if (n < NO_HOST_SHOWN)
			sbuf_addf(&ex, "%s%s%s%s%s", n ? "; " : "", in->label,
				  in->as.len ? " (" : "", in->as.buf, in->as.len ? ")" : "");
		else if (n == NO_HOST_SHOWN)
			sbuf_adds(&ex, "; ...");
		n++;
	}
	for (size_t i = 0; i < n; i++)
		msource_diag(&p->ms, "PROM_NO_HOST",
			     "Prometheus instances whose instance, hostname, node or nodename label"
			     " names no host of trace.db (--host-alias maps one): not pulled",
			     ex.buf, 0);
	sbuf_release(&ex);
}

/* ---- 3. the step ---- */

static int scrape_point(void *arg, json_t *labels, int64_t t, double v, char **err)
{
	struct pl *p = arg;
	(void)v;
	(void)err;
	if (labels == p->last_labels && t > p->last_t && p->ndiffs < SCRAPE_DIFFS)
		p->diffs[p->ndiffs++] = t - p->last_t;
	p->last_labels = labels;
	p->last_t = t;
	return 0;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return x < y ? -1 : x > y;
}

/* An instant query at time at; its points to ops. */
static int instant(struct pl *p, const char *promql, int64_t at, const char *what,
		   const struct prom_read_ops *ops, char **err)
{
	struct sbuf form = SBUF_INIT, t = SBUF_INIT;
	struct http *h = NULL;
	struct input *in = NULL;
	sbuf_init(&form);
	sbuf_init(&t);
	add_seconds(&t, at);
	http_form_add(&form, "query", promql);
	http_form_add(&form, "time", t.buf);
	int rc = post(p, "/api/v1/query", form.buf, what, &h, &in, err) < 0 ||
			 prometheus_read(&p->ms, in, ops, err) < 0
		     ? -1
		     : 0;
	input_close(in);
	http_close(h);
	sbuf_release(&form);
	sbuf_release(&t);
	return rc;
}

/* The least step that keeps the window within STEPS_MAX steps a series
 * (the grid adds up to four: see promlive_pull), in whole milliseconds,
 * the API's unit. */
static int64_t least_step(const struct pl *p)
{
	int64_t n = STEPS_MAX - 4, span = p->to - p->from;
	int64_t ns = span / n + (span % n != 0);
	return (ns + 999999) / 1000000 * 1000000;
}

/* A step as the API takes it: whole milliseconds, 1 ms at least. */
static int64_t api_step(int64_t ns)
{
	ns = (ns + 500000) / 1000000 * 1000000;
	return ns < 1000000 ? 1000000 : ns;
}

/* --prometheus-step, refused before any request when the window holds
 * more than STEPS_MAX of it. */
static int check_step(struct pl *p, char **err)
{
	int64_t least = least_step(p);
	if (!p->po->step_ns || api_step(p->po->step_ns) >= least)
		return 0;
	char a[32], b[32], d[32], at_least[32];
	utc(a, sizeof(a), p->from);
	utc(b, sizeof(b), p->to);
	if (least >= 1000000000)
		snprintf(at_least, sizeof(at_least), "%llds",
			 (long long)((least + 999999999) / 1000000000));
	else
		snprintf(at_least, sizeof(at_least), "%lldms", (long long)(least / 1000000));
	*err = xasprintf("%s: --prometheus-step %s from %s to %s makes more than %d steps a"
			 " series, the most one request takes: give --prometheus-step %s or more,"
			 " or a shorter window (--from, --to)",
			 p->shown, text_duration(d, sizeof(d), p->po->step_ns), a, b, STEPS_MAX,
			 at_least);
	return -1;
}

/* The scrape interval as the step, unless the window holds more than
 * STEPS_MAX of them: then the fewest of them that fit, counted. */
static void coarsen(struct pl *p)
{
	int64_t least = least_step(p);
	if (p->po->step_ns || p->step >= least)
		return;
	int64_t k = (least + p->step - 1) / p->step;
	char a[32], b[32], ex[96];
	snprintf(ex, sizeof(ex), "a step of %s, the scrape interval %s",
		 text_duration(a, sizeof(a), k * p->step), text_duration(b, sizeof(b), p->step));
	p->step *= k;
	msource_diag(&p->ms, "PROM_STEP",
		     "windows of more than 10,000 scrape intervals: pulled at a step of a whole"
		     " number of them",
		     ex, 0);
}

static int pick_step(struct pl *p, char **err)
{
	const struct instance *one = NULL;
	const char *marker = NULL;
	for (size_t i = 0; i < p->ninst && !one; i++)
		for (size_t k = 0; k < sizeof(markers) / sizeof(*markers) && !one; k++)
			if (p->inst[i].host && (p->inst[i].exporters & markers[k].exporter)) {
				one = &p->inst[i];
				marker = markers[k].name;
			}
	if (!one) { /* --promql alone: --prometheus-step, or a minute */
		p->step = p->scrape =
		    api_step(p->po->step_ns ? p->po->step_ns : (int64_t)60 * 1000000000);
		return 0;
	}
	struct sbuf f = SBUF_INIT, q = SBUF_INIT;
	sbuf_init(&f);
	sbuf_init(&q);
	instance_filter(p, &f, one);
	sbuf_addf(&q, "%s{%s}[%llds]", marker, f.buf, (long long)(SCRAPE_LOOK_NS / 1000000000));
	p->diffs = xmalloc(SCRAPE_DIFFS * sizeof(*p->diffs));
	p->ndiffs = 0;
	p->last_labels = NULL;
	struct prom_read_ops ops = {NULL, scrape_point, p};
	int rc = instant(p, q.buf, p->to, "the scrape interval", &ops, err);
	if (rc == 0 && !p->ndiffs && p->to - p->from > SCRAPE_LOOK_NS) /* gone before the end? */
		rc = instant(p, q.buf, p->from + SCRAPE_LOOK_NS, "the scrape interval", &ops, err);
	if (rc == 0 && p->ndiffs) {
		qsort(p->diffs, p->ndiffs, sizeof(*p->diffs), cmp_i64);
		p->scrape = p->diffs[p->ndiffs / 2];
	}
	if (rc == 0 && !p->scrape && !p->po->step_ns) {
		char at[32];
		utc(at, sizeof(at), p->to);
		*err =
		    xasprintf("%s: cannot tell the scrape interval: %s of %s has fewer than two"
			      " samples in the first or last 5 minutes before %s (--prometheus-step"
			      " gives the step)",
			      p->shown, marker, one->label, at);
		rc = -1;
	}
	p->step = api_step(p->po->step_ns ? p->po->step_ns : p->scrape);
	if (!p->scrape)
		p->scrape = p->step;
	/* scrapes come late by a few ms now and then (Prometheus aligns
	 * their times to the interval only within 2 ms) */
	p->margin = p->ndiffs ? (p->scrape / 10 < 100000000 ? p->scrape / 10 : 100000000) : 0;
	p->margin = p->margin / 1000000 * 1000000;
	sbuf_release(&f);
	sbuf_release(&q);
	return rc;
}

/* ---- 4. capacities ---- */

static void cap_key(struct sbuf *k, const char *key, const char *instance, const char *label)
{
	sbuf_reset(k);
	sbuf_addf(k, "%s\x1f%s\x1f%s", key, instance ? instance : "", label ? label : "");
}

static int cap_point(void *arg, json_t *labels, int64_t t, double v, char **err)
{
	struct pl *p = arg;
	(void)t;
	(void)err;
	cap_key(&p->tmp, p->c->key, label_of(labels, "instance"),
		p->c->label ? label_of(labels, p->c->label) : NULL);
	int created;
	struct strmap_ent *e =
	    strmap_put(&p->cap_of, p->tmp.buf, p->tmp.len, (int64_t)p->ncap, &created);
	if (created) {
		XGROW(p->capv, p->ncap + 1, p->cap_alloc);
		p->ncap++;
	}
	p->capv[e->value] = v;
	return 0;
}

/* The capacity key names for instance (and label), or 0. */
static double cap_value(struct pl *p, const char *key, const char *instance, const char *label)
{
	cap_key(&p->tmp, key, instance, label);
	struct strmap_ent *e = strmap_get(&p->cap_of, p->tmp.buf, p->tmp.len);
	return e ? p->capv[e->value] : 0;
}

/* A template's @ words: see struct live_query. */
static void expand(struct pl *p, struct sbuf *out, const char *tpl, const struct sbuf *filter)
{
	int fine = p->step < 2 * p->scrape;
	long long range = (long long)((fine ? 3 * p->scrape : p->step) / 1000000);
	int64_t look = p->end - p->start < CAP_LOOK_NS ? p->end - p->start : CAP_LOOK_NS;
	long long win = (long long)(look / 1000000);
	sbuf_reset(out);
	for (const char *c = tpl; *c; c++) {
		if (*c != '@') {
			sbuf_addc(out, *c);
		} else if (!strncmp(c, "@RATE", 5)) {
			sbuf_adds(out, fine ? "irate" : "rate");
			c += 4;
		} else if (!strncmp(c, "@R", 2)) {
			sbuf_addf(out, "%lldms", range);
			c += 1;
		} else if (!strncmp(c, "@AVG(", 5)) {
			sbuf_adds(out, fine ? "(" : "avg_over_time(");
			c += 4;
		} else if (!strncmp(c, "@WIN", 4)) {
			sbuf_addf(out, "%lldms", win > 0 ? win : 1);
			c += 3;
		} else if (!strncmp(c, "@W", 2)) {
			if (!fine)
				sbuf_addf(out, "[%lldms]", (long long)(p->step / 1000000));
			c += 1;
		} else if (!strncmp(c, "@F", 2)) {
			sbuf_add(out, filter->buf, filter->len);
			c += 1;
		} else {
			sbuf_addc(out, *c);
		}
	}
}

static int lookups(struct pl *p, char **err)
{
	struct sbuf q = SBUF_INIT;
	sbuf_init(&q);
	struct prom_read_ops ops = {NULL, cap_point, p};
	int rc = 0;
	for (size_t i = 0; i < sizeof(caps) / sizeof(*caps) && !rc; i++) {
		if (!(p->exporters & caps[i].exporter))
			continue;
		p->c = &caps[i];
		expand(p, &q, caps[i].promql, &p->filter);
		char *what = xasprintf("capacity %s", caps[i].key);
		rc = instant(p, q.buf, p->end, what, &ops, err);
		free(what);
	}
	p->c = NULL;
	sbuf_release(&q);
	return rc;
}

/* ---- 5. the series ---- */

static int live_series(void *arg, json_t *labels, struct prom_series *s, char **err)
{
	struct pl *p = arg;
	const struct live_query *q = p->q;
	(void)err;
	const char *host = labels_host(p, labels);
	if (!q) { /* --promql */
		if (!host)
			msource_diag(&p->ms, "PROMQL_NO_HOST",
				     "series of --promql queries whose instance, hostname or node"
				     " label names no host of trace.db: kept without a host",
				     p->user_name, 0);
		s->host = host;
		s->name = p->user_name;
		s->label_resource = 1;
		return 1;
	}
	if (!host)
		return 0; /* an instance the filter let through twice named */
	const char *instance = label_of(labels, "instance");
	const char *v = q->label ? label_of(labels, q->label) : NULL;
	if (q->label && !v)
		v = "?";
	sbuf_reset(&p->tmp);
	if (v && !strcmp(q->label, "uuid")) {
		struct strmap_ent *e;
		cap_key(&p->tmp, "nvindex", instance, v);
		e = strmap_get(&p->cap_of, p->tmp.buf, p->tmp.len);
		sbuf_reset(&p->tmp);
		if (e)
			sbuf_addf(&p->tmp, "%.0f", p->capv[e->value]);
		else
			sbuf_adds(&p->tmp, v);
	} else if (v) {
		sbuf_adds(&p->tmp, v);
	}
	char *value = xstrdup(p->tmp.buf ? p->tmp.buf : "");
	sbuf_reset(&p->res);
	sbuf_reset(&p->name);
	sbuf_addf(&p->res, q->resource, value);
	sbuf_addf(&p->name, q->name, value);
	s->host = host;
	s->resource = p->res.buf;
	s->name = p->name.buf;
	s->unit = q->unit;
	s->value_kind = p->kind;
	s->shift_ns = p->shift;
	s->capacity = q->capacity ? q->capacity : q->cap ? cap_value(p, q->cap, instance, v) : 0;
	free(value);
	return 1;
}

/* One query_range request over the window: a series of the table (q) or
 * a --promql (user). */
struct req {
	const struct live_query *q;
	size_t user;
	struct http *h;
};

/* How the series of r's query are named and stored: p's q, kind, shift. */
static void req_naming(struct pl *p, const struct req *r)
{
	int fine = p->step < 2 * p->scrape;
	p->q = r->q;
	if (!r->q) {
		p->user_name = p->po->names[r->user];
		p->kind = "instant";
		p->shift = 0;
		return;
	}
	int mean = r->q->kind == K_RATE || (r->q->kind == K_AVG && !fine);
	p->kind = mean ? "mean" : "instant";
	p->shift = -p->margin - (!mean ? 0 : fine && p->scrape < p->step ? p->scrape : p->step);
}

static int req_start(struct pl *p, struct req *r, char **err)
{
	struct sbuf form = SBUF_INIT, t = SBUF_INIT;
	sbuf_init(&form);
	sbuf_init(&t);
	if (r->q)
		expand(p, &t, r->q->promql, &p->filter);
	http_form_add(&form, "query", r->q ? t.buf : p->po->queries[r->user]);
	sbuf_reset(&t);
	add_seconds(&t, p->start);
	http_form_add(&form, "start", t.buf);
	sbuf_reset(&t);
	add_seconds(&t, p->end);
	http_form_add(&form, "end", t.buf);
	sbuf_reset(&t);
	sbuf_addf(&t, "%lld.%03lld", (long long)(p->step / 1000000000),
		  (long long)(p->step / 1000000 % 1000));
	http_form_add(&form, "step", t.buf);
	int rc = start(p, "/api/v1/query_range", form.buf, &r->h, err);
	sbuf_release(&form);
	sbuf_release(&t);
	return rc;
}

static int req_read(struct pl *p, struct req *r, char **err)
{
	struct prom_read_ops ops = {live_series, NULL, p};
	struct input *in = NULL;
	/* a series of the table by its name's pattern: "cpu*.util" */
	char *what =
	    r->q ? xasprintf(r->q->name, "*") : xasprintf("--promql '%s'", p->po->names[r->user]);
	req_naming(p, r);
	int rc = response(p, r->h, "/api/v1/query_range", what, &in, err) < 0 ||
			 prometheus_read(&p->ms, in, &ops, err) < 0
		     ? -1
		     : 0;
	if (in) { /* response closed h when it failed */
		input_close(in);
		http_close(r->h);
	}
	r->h = NULL;
	free(what);
	return rc;
}

/* Every series over the window, one request each (STEPS_MAX steps at
 * most), PIPELINE requests at a time: the server evaluates the next
 * queries while this one's answer is read. */
static int pull_all(struct pl *p, char **err)
{
	struct req *v = NULL;
	size_t n = 0, alloc = 0, started = 0;
	int rc = 0;
	for (size_t i = 0; i < sizeof(queries) / sizeof(*queries) + p->po->nqueries; i++) {
		int user = i >= sizeof(queries) / sizeof(*queries);
		if (!user && !(p->exporters & queries[i].exporter))
			continue;
		XGROW(v, n + 1, alloc);
		v[n++] = (struct req){user ? NULL : &queries[i],
				      user ? i - sizeof(queries) / sizeof(*queries) : 0, NULL};
	}
	for (size_t i = 0; i < n && !rc; i++) {
		while (started < n && started < i + PIPELINE && !rc)
			rc = req_start(p, &v[started++], err);
		if (!rc)
			rc = req_read(p, &v[i], err);
	}
	for (size_t i = 0; i < started; i++)
		http_close(v[i].h);
	free(v);
	p->q = NULL;
	return rc;
}

/* What the source row keeps of the pull: its window, step and exporters. */
static int source_attrs(struct pl *p, char **err)
{
	struct sbuf a = SBUF_INIT;
	sbuf_init(&a);
	sbuf_adds(&a, "{\"url\":");
	sbuf_add_json_string(&a, p->shown, strlen(p->shown));
	sbuf_addf(&a,
		  ",\"start_ns\":%lld,\"end_ns\":%lld,\"step_ns\":%lld,\"scrape_interval_ns\":%lld,"
		  "\"exporters\":[",
		  (long long)p->start, (long long)p->end, (long long)p->step, (long long)p->scrape);
	static const char *const ex[] = {"node_exporter", "dcgm-exporter", "nvidia_gpu_exporter"};
	for (int i = 0, n = 0; i < 3; i++)
		if (p->exporters & (1 << i))
			sbuf_addf(&a, "%s\"%s\"", n++ ? "," : "", ex[i]);
	sbuf_adds(&a, "]}");
	const char *one = NULL;
	for (size_t i = 0; i < p->ninst; i++)
		if (p->inst[i].host) {
			if (one && strcmp(one, p->inst[i].host)) {
				one = NULL;
				break;
			}
			one = p->inst[i].host;
		}
	int rc =
	    store_set_source_anchor(p->st, p->ms.source_id, "absolute", 0, -1, one, a.buf, err);
	sbuf_release(&a);
	return rc;
}

int promlive_pull(struct store *st, const struct import_opts *o, char **err)
{
	const struct promlive_opts *po = o->prometheus;
	struct pl p;
	int rc = -1;
	memset(&p, 0, sizeof(p));
	p.st = st;
	p.o = o;
	p.po = po;
	sbuf_init(&p.filter);
	sbuf_init(&p.res);
	sbuf_init(&p.name);
	sbuf_init(&p.tmp);
	size_t n = strlen(po->url);
	while (n && po->url[n - 1] == '/')
		n--;
	p.base = xstrndup(po->url, n);
	p.shown = http_shown_url(p.base);
	if (!(p.group = http_group_new())) {
		*err = xasprintf("%s: cannot start libcurl", p.shown);
		goto out;
	}
	if (load_token(&p, err) < 0 || window(&p, err) < 0 || check_step(&p, err) < 0 ||
	    db_hosts(&p, err) < 0)
		goto out;
	p.http = (struct http_opts){p.token, CONNECT_NS,
				    po->timeout_ns ? po->timeout_ns : PROMLIVE_TIMEOUT_NS, TRIES,
				    BACKOFF_NS};
	struct source_row src = {.path = p.shown,
				 .format = "prometheus",
				 .compression = "none",
				 .anchor = "absolute",
				 .rank = -1,
				 .host = o->host};
	if (msource_begin_row(&p.ms, st, &src, err) < 0)
		goto out;
	p.ms_open = 1;
	if (discover(&p, err) < 0)
		goto out;
	if (!p.exporters && !po->nqueries) {
		char a[32], b[32];
		utc(a, sizeof(a), p.from);
		utc(b, sizeof(b), p.to);
		struct sbuf l = SBUF_INIT;
		sbuf_init(&l);
		for (size_t i = 0; i < p.ninst && i < NO_HOST_SHOWN; i++)
			sbuf_addf(&l, "%s%s%s%s%s", i ? "; " : "", p.inst[i].label,
				  p.inst[i].as.len ? " (" : "", p.inst[i].as.buf,
				  p.inst[i].as.len ? ")" : "");
		if (p.ninst)
			*err =
			    xasprintf("%s: no instance names a host of trace.db between %s and %s"
				      " (the server's: %s%s); --host-alias INSTANCE=HOST maps one",
				      p.shown, a, b, l.buf, p.ninst > NO_HOST_SHOWN ? "; ..." : "");
		else
			*err = xasprintf("%s: no node_exporter, DCGM or nvidia_gpu_exporter series"
					 " between %s and %s",
					 p.shown, a, b);
		sbuf_release(&l);
		goto out;
	}
	no_host_diag(&p);
	if (pick_step(&p, err) < 0)
		goto out;
	coarsen(&p);
	/* evaluations on a grid of the step, one step beyond each end (the
	 * first rate describes the step before the window; least_step allows
	 * for four steps more than the window's), each a margin after a
	 * scrape of the marker's target, so that a rate describes the
	 * interval that ends then */
	int64_t phase = p.last_t % p.step + p.margin;
	p.start = (p.from - phase) / p.step * p.step + phase;
	p.end = (p.to - phase + p.step - 1) / p.step * p.step + phase + p.step;
	if (lookups(&p, err) < 0 || pull_all(&p, err) < 0 || source_attrs(&p, err) < 0)
		goto out;
	p.ms_open = 0;
	rc = msource_end(&p.ms, err);
out:
	if (p.ms_open)
		msource_release(&p.ms);
	for (size_t i = 0; i < p.ninst; i++) {
		free(p.inst[i].label);
		free(p.inst[i].host);
		sbuf_release(&p.inst[i].as);
	}
	free(p.inst);
	strmap_clear(&p.inst_of);
	strmap_clear(&p.hosts);
	strmap_clear(&p.cap_of);
	free(p.capv);
	free(p.diffs);
	sbuf_release(&p.filter);
	sbuf_release(&p.res);
	sbuf_release(&p.name);
	sbuf_release(&p.tmp);
	http_group_free(p.group);
	if (p.token)
		memset(p.token, 0, strlen(p.token));
	free(p.token);
	free(p.base);
	free(p.shown);
	return rc;
}
