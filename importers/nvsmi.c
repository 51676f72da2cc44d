/*
 * nvidia-smi --query-gpu CSV into per-GPU metric series.
 *
 * The input is what `nvidia-smi --query-gpu=timestamp,index,utilization.gpu,...
 * --format=csv[,nounits] -l N` (or -lms N) prints: a header naming the
 * queried fields with their unit in brackets ("memory.used [MiB]"; nounits
 * keeps the header's units and drops them from the values), then one row
 * per GPU per sample, cells separated by ", ".  Output with noheader cannot
 * be read: nothing says which column is which.  The file is read a line at
 * a time (lines.h), so memory does not grow with its length.
 *
 * Columns:
 * - timestamp (required): "YYYY/MM/DD HH:MM:SS.mmm", the host's local time
 *   without a zone.  It is read as UTC; the source's anchor is "wallclock"
 *   and its attrs say so.  --time-offset is added to every sample.
 * - the GPU of a row: the index column; else pci.bus_id, each distinct bus
 *   numbered 0, 1, ... in order of first appearance (resource
 *   "gpu0 (bus 00000000:3B:00.0)"); else the position among the rows that
 *   share one timestamp (resource "gpu0 (row order)").  With an index the
 *   resource is plain "gpuN".
 * - numeric fields: those with a unit in brackets, and those nvidia-smi
 *   prints as bare numbers (table `numeric`: temperature.*, pcie.link.*,
 *   ecc.errors.*, ...; the table also gives the unit of utilization.*,
 *   memory.*, power.*, clocks.* in a header without brackets).  Each is a
 *   series named as the field without its unit, value_kind "instant":
 *   nvidia-smi reads the value when it stamps the row.  utilization.* is the
 *   busy share of the driver's last sample period (1/6 s to 1 s) before that
 *   moment; it is stored as instant all the same.  pstate "P0".."P15"
 *   becomes the series "pstate" (the number).
 * - capacity: 100 for "%" series; memory.used/free/reserved: the GPU's
 *   memory.total (first value seen); power.draw*: its enforced.power.limit,
 *   else power.limit (first value seen), when the file has them; else 0
 *   (unknown).  A capacity is fixed when its series is made, at the GPU's
 *   first row with a value.
 * - name and pci.bus_id are not series: the source's attrs keep each GPU's
 *   first name and bus id ({"gpus": {"gpu0": {"name": ..., "pci.bus_id":
 *   ...}}}).  Every other column (driver_version, uuid, modes, throttle
 *   reasons, repeated fields, unknown ones) is not imported and is counted
 *   once per column (IGNORED_COLUMN).
 *
 * Bad input: no header, a header without a timestamp or numeric column, a
 * binary file, a file without one valid row are fatal ("file:line: ...").
 * A row with the wrong number of cells, a bad timestamp or GPU index, or a
 * numeric cell that is not a number is skipped whole and counted (BAD_ROW).
 * Cells nvidia-smi marks unavailable ("N/A", "[N/A]", "[Not Supported]",
 * any "[...]", empty) are skipped and counted (NA_VALUE); a repeated header
 * line (runs appended to one file) is skipped and counted (REPEATED_HEADER).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "importers/lines.h"
#include "importers/msource.h"
#include "importers/nvsmi.h"
#include "model/util/sbuf.h"
#include "model/util/strmap.h"
#include "model/util/text.h"
#include "model/util/xalloc.h"

#define GPU_MAX	 1024 /* GPU numbers 0..GPU_MAX-1; a row beyond is malformed */
#define COLS_MAX 4096 /* nvidia-smi 590 knows about 250 fields */

enum col_kind { COL_OTHER, COL_TIME, COL_INDEX, COL_BUS, COL_NAME, COL_PSTATE, COL_NUM };

/* The capacity a series takes, and the per-GPU value a column gives. */
enum cap_use { USE_NONE, USE_PERCENT, USE_MEMORY, USE_POWER };
enum cap_give { GIVE_NONE, GIVE_MEM_TOTAL, GIVE_POWER_LIMIT, GIVE_ENFORCED_LIMIT };

enum cell_state { CELL_SKIP, CELL_VALUE, CELL_NA };

/* Fields nvidia-smi prints as bare numbers, by name or prefix, and their
 * unit when the header has no brackets (nvidia-smi --help-query-gpu). */
static const struct {
	const char *prefix, *unit;
} numeric[] = {
    {"utilization.", "%"},
    {"fan.speed", "%"},
    {"memory.", "MiB"},
    {"protected_memory.", "MiB"},
    {"power.draw", "W"},
    {"power.limit", "W"},
    {"enforced.power.limit", "W"},
    {"power.default_limit", "W"},
    {"power.min_limit", "W"},
    {"power.max_limit", "W"},
    {"module.power.", "W"},
    {"clocks.", "MHz"},
    {"temperature.", "C"},
    {"pcie.link.gen.", NULL},
    {"pcie.link.width.", NULL},
    {"ecc.errors.", NULL},
    {"encoder.stats.", NULL},
    {"remapped_rows.correctable", NULL},
    {"remapped_rows.uncorrectable", NULL},
    {"remapped_rows.histogram.", NULL},
    {"retired_pages.single_bit_ecc.count", NULL},
    {"retired_pages.double_bit.count", NULL},
    {"accounting.buffer_size", NULL},
};

/* Fields under those prefixes that are text ("Yes"/"No"). */
static const char *const text_fields[] = {
    "ecc.errors.uncorrected.aggregate.sram.thresholdExceeded",
};

/* Other field names only nvidia-smi uses, for sniffing. */
static const char *const known_text[] = {"pci.bus_id", "driver_version", "pstate", "uuid",
					 "vbios_version"};

static const char NA_MSG[] = "values nvidia-smi reported as unavailable (N/A, [N/A], "
			     "[Not Supported], ...) were skipped";
static const char BAD_MSG[] = "malformed rows were skipped (wrong cell count, bad timestamp, "
			      "gpu index or number)";
static const char IGNORED_MSG[] = "columns not imported as series (text, unknown or repeated "
				  "fields)";
static const char REPEAT_MSG[] = "repeated header lines (runs appended to one file) were skipped";

struct col {
	enum col_kind kind;
	char *name, *unit; /* the field without its unit; unit NULL: none */
	enum cap_use use;
	enum cap_give give;
};

struct gpu {
	char *resource;	       /* NULL: no row seen yet */
	char *name, *bus;      /* first seen, or NULL */
	int64_t *metric;       /* per column; 0: not made yet */
	double mem_total;      /* 0: unknown */
	double power_limit[2]; /* power.limit, enforced.power.limit; 0: unknown */
};

struct nv {
	struct input *in;
	const struct import_opts *o;
	struct msource ms;
	int ms_open;
	struct lines lines;
	char *header; /* the header line as read, to spot repeats */
	struct col *cols;
	size_t ncols;
	long time_col, index_col, bus_col, name_col;
	struct gpu *gpus;
	size_t gpus_alloc; /* gpus[0..gpus_alloc) zeroed */
	int64_t nbus;	   /* bus ids numbered so far */
	struct strmap bus; /* bus id -> GPU number */
	char *group_ts;	   /* timestamp of the last row, for row order */
	int64_t group_pos; /* position of the last row in its group */
	char **cell;	   /* the cells of the current row, ncols + 1 */
	double *val;	   /* per column */
	unsigned char *state;
	int64_t rows_ok;
	int na_seen;
	char *first_bad; /* why the first bad row was bad */
	int64_t first_bad_line;
	char **err;
};

/* ---- cells ---- */

static int is_blank(char c)
{
	return c == ' ' || c == '\t';
}

/* Splits s in place at each ',' into cells trimmed of blanks; fills at most
 * max of them and returns how many there are. */
static size_t split(char *s, char **cell, size_t max)
{
	size_t n = 0;
	for (;;) {
		char *comma = strchr(s, ',');
		char *end = comma ? comma : s + strlen(s);
		while (s < end && is_blank(*s))
			s++;
		char *e = end;
		while (e > s && is_blank(e[-1]))
			e--;
		if (n < max) {
			*e = '\0';
			cell[n] = s;
		}
		n++;
		if (!comma)
			return n;
		s = comma + 1;
	}
}

static int is_na(const char *s)
{
	size_t n = strlen(s);
	return n == 0 || (s[0] == '[' && s[n - 1] == ']') || !strcmp(s, "N/A") ||
	       !strcmp(s, "Not Supported") || !strcmp(s, "Unknown Error") ||
	       !strcmp(s, "Not Available") || !strcmp(s, "Insufficient Permissions");
}

static int is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* A decimal number ("12", "-3.5", "1e3"), optionally followed by " unit"
 * when unit is the column's; 0, or -1 when it is something else. */
static int parse_number(const char *s, const char *unit, double *out)
{
	size_t n = strlen(s);
	if (unit) {
		size_t k = strlen(unit);
		if (n > k + 1 && !memcmp(s + n - k, unit, k) && is_blank(s[n - k - 1])) {
			n -= k + 1;
			while (n && is_blank(s[n - 1]))
				n--;
		}
	}
	size_t i = 0, nd = 0;
	if (i < n && (s[i] == '-' || s[i] == '+'))
		i++;
	for (; i < n && is_digit(s[i]); i++)
		nd++;
	if (i < n && s[i] == '.')
		for (i++; i < n && is_digit(s[i]); i++)
			nd++;
	if (!nd)
		return -1;
	if (i < n && (s[i] == 'e' || s[i] == 'E')) {
		i++;
		if (i < n && (s[i] == '-' || s[i] == '+'))
			i++;
		size_t e0 = i;
		while (i < n && is_digit(s[i]))
			i++;
		if (i == e0)
			return -1;
	}
	char buf[64];
	if (i != n || n >= sizeof(buf))
		return -1;
	memcpy(buf, s, n);
	buf[n] = '\0';
	double d = strtod(buf, NULL); /* the syntax is checked: no locale or hex surprises */
	if (!isfinite(d))
		return -1;
	*out = d;
	return 0;
}

/* "P0".."P15" -> 0..15. */
static int parse_pstate(const char *s, double *out)
{
	int64_t v;
	if (s[0] != 'P' || !is_digit(s[1]) || text_parse_int64(s + 1, strlen(s + 1), &v) < 0 ||
	    v > 15)
		return -1;
	*out = (double)v;
	return 0;
}

static int digits(const char *s, int n, int *out)
{
	int v = 0;
	for (int i = 0; i < n; i++) {
		if (!is_digit(s[i]))
			return -1;
		v = v * 10 + (s[i] - '0');
	}
	*out = v;
	return 0;
}

/* Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's
 * days_from_civil). */
static int64_t days_from_civil(int64_t y, int m, int d)
{
	y -= m <= 2;
	int64_t era = (y >= 0 ? y : y - 399) / 400;
	int64_t yoe = y - era * 400;
	int64_t doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
	int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

/* "YYYY/MM/DD HH:MM:SS[.fraction]" (or with '-' in the date) read as UTC,
 * in ns since the epoch; 0 or -1. */
static int parse_time(const char *s, int64_t *out)
{
	static const int mdays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
	int y, mo, d, h, mi, sec;
	if (strlen(s) < 19 || digits(s, 4, &y) < 0 || (s[4] != '/' && s[4] != '-') ||
	    s[7] != s[4] || digits(s + 5, 2, &mo) < 0 || digits(s + 8, 2, &d) < 0 || s[10] != ' ' ||
	    digits(s + 11, 2, &h) < 0 || s[13] != ':' || digits(s + 14, 2, &mi) < 0 ||
	    s[16] != ':' || digits(s + 17, 2, &sec) < 0)
		return -1;
	int leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
	if (y < 1970 || y > 2261 || mo < 1 || mo > 12 || d < 1 ||
	    d > mdays[mo - 1] + (mo == 2 && leap) || h > 23 || mi > 59 || sec > 60)
		return -1;
	int64_t frac = 0, scale = 100000000;
	const char *p = s + 19;
	if (*p == '.') {
		if (!is_digit(*++p))
			return -1;
		for (; is_digit(*p); p++) {
			frac += (*p - '0') * scale;
			scale /= 10;
			if (!scale && is_digit(p[1]))
				return -1; /* more than 9 digits */
		}
	}
	if (*p)
		return -1;
	int64_t secs = days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + sec;
	*out = secs * 1000000000 + frac; /* < 2262-04-11: no overflow */
	return 0;
}

/* ---- the header ---- */

static const char *numeric_unit(const char *name, int *found)
{
	*found = 0;
	for (size_t i = 0; i < sizeof(text_fields) / sizeof(text_fields[0]); i++)
		if (!strcmp(name, text_fields[i]))
			return NULL;
	for (size_t i = 0; i < sizeof(numeric) / sizeof(numeric[0]); i++)
		if (!strncmp(name, numeric[i].prefix, strlen(numeric[i].prefix))) {
			*found = 1;
			return numeric[i].unit;
		}
	return NULL;
}

/* A known nvidia-smi field, for sniffing. */
static int known_field(const char *name)
{
	int found;
	numeric_unit(name, &found);
	for (size_t i = 0; !found && i < sizeof(known_text) / sizeof(known_text[0]); i++)
		found = !strcmp(name, known_text[i]);
	return found;
}

/* "memory.used [MiB]" -> name "memory.used", unit "MiB". */
static void col_parse(struct col *k, const char *s)
{
	size_t n = strlen(s);
	const char *open = n && s[n - 1] == ']' ? strrchr(s, '[') : NULL;
	if (!open) {
		k->name = xstrdup(s);
		return;
	}
	const char *u = open + 1, *ue = s + n - 1;
	while (u < ue && is_blank(*u))
		u++;
	while (ue > u && is_blank(ue[-1]))
		ue--;
	const char *ne = open;
	while (ne > s && is_blank(ne[-1]))
		ne--;
	k->name = xstrndup(s, (size_t)(ne - s));
	k->unit = ue > u ? xstrndup(u, (size_t)(ue - u)) : NULL;
}

static void col_classify(struct nv *p, struct col *k, long i, struct strmap *seen)
{
	int created = 0;
	strmap_put(seen, k->name, strlen(k->name), 0, &created);
	int found;
	const char *unit = numeric_unit(k->name, &found);
	if (!created) {
		k->kind = COL_OTHER;
	} else if (!strcmp(k->name, "timestamp")) {
		k->kind = COL_TIME;
		p->time_col = i;
	} else if (!strcmp(k->name, "index")) {
		k->kind = COL_INDEX;
		p->index_col = i;
	} else if (!strcmp(k->name, "pci.bus_id")) {
		k->kind = COL_BUS;
		p->bus_col = i;
	} else if (!strcmp(k->name, "name")) {
		k->kind = COL_NAME;
		p->name_col = i;
	} else if (!strcmp(k->name, "pstate")) {
		k->kind = COL_PSTATE;
	} else if (k->unit || found) {
		k->kind = COL_NUM;
		if (!k->unit && unit)
			k->unit = xstrdup(unit);
	}
	if (k->kind == COL_OTHER)
		msource_diag(&p->ms, "IGNORED_COLUMN", IGNORED_MSG, k->name, 0);
	if (k->kind != COL_NUM)
		return;
	if (k->unit && !strcmp(k->unit, "%"))
		k->use = USE_PERCENT;
	else if (!strcmp(k->name, "memory.used") || !strcmp(k->name, "memory.free") ||
		 !strcmp(k->name, "memory.reserved"))
		k->use = USE_MEMORY;
	else if (!strncmp(k->name, "power.draw", 10))
		k->use = USE_POWER;
	if (!strcmp(k->name, "memory.total"))
		k->give = GIVE_MEM_TOTAL;
	else if (!strcmp(k->name, "power.limit"))
		k->give = GIVE_POWER_LIMIT;
	else if (!strcmp(k->name, "enforced.power.limit"))
		k->give = GIVE_ENFORCED_LIMIT;
}

static int header(struct nv *p, char *line, char **err)
{
	const char *path = input_path(p->in);
	long long lineno = (long long)p->lines.lineno;
	if (!strncmp(line, "\xef\xbb\xbf", 3))
		line += 3;
	p->header = xstrdup(line);
	size_t n = split(line, NULL, 0);
	if (n > COLS_MAX) {
		*err = xasprintf("%s:%lld: a header of %zu columns (at most %d)", path, lineno, n,
				 COLS_MAX);
		return -1;
	}
	char **cells = xcalloc(n, sizeof(*cells));
	split(line, cells, n);
	int64_t t;
	if (parse_time(cells[0], &t) == 0) {
		*err = xasprintf("%s:%lld: a data row where the header should be (output of "
				 "--format=csv,noheader?): re-run nvidia-smi without noheader",
				 path, lineno);
		free(cells);
		return -1;
	}
	p->ncols = n;
	p->cols = xcalloc(n, sizeof(*p->cols));
	struct strmap seen = STRMAP_INIT;
	int nnum = 0;
	for (size_t i = 0; i < n; i++) {
		col_parse(&p->cols[i], cells[i]);
		col_classify(p, &p->cols[i], (long)i, &seen);
		nnum += p->cols[i].kind == COL_NUM || p->cols[i].kind == COL_PSTATE;
	}
	strmap_clear(&seen);
	free(cells);
	if (p->time_col < 0) {
		*err = xasprintf("%s:%lld: not an nvidia-smi --query-gpu CSV header: no timestamp "
				 "column (add timestamp to --query-gpu)",
				 path, lineno);
		return -1;
	}
	if (!nnum) {
		*err = xasprintf("%s:%lld: not an nvidia-smi --query-gpu CSV header: no numeric "
				 "field (utilization.gpu, memory.used, ...)",
				 path, lineno);
		return -1;
	}
	p->cell = xcalloc(n + 1, sizeof(*p->cell));
	p->val = xcalloc(n, sizeof(*p->val));
	p->state = xcalloc(n, 1);
	return 0;
}

/* ---- rows ---- */

/* Counts a malformed row (why is owned) and skips it. */
static int bad_row(struct nv *p, char *why)
{
	int64_t lineno = p->lines.lineno;
	char *ex = xasprintf("line %lld: %s", (long long)lineno, why);
	msource_diag(&p->ms, "BAD_ROW", BAD_MSG, ex, 1);
	free(ex);
	if (!p->first_bad) {
		p->first_bad = why;
		p->first_bad_line = lineno;
	} else {
		free(why);
	}
	return 0;
}

static struct gpu *gpu_get(struct nv *p, int64_t n)
{
	if ((size_t)n >= p->gpus_alloc) {
		size_t old = p->gpus_alloc;
		p->gpus_alloc = (size_t)n + 1 > old * 2 ? (size_t)n + 1 : old * 2;
		p->gpus = xrealloc(p->gpus, p->gpus_alloc * sizeof(*p->gpus));
		memset(p->gpus + old, 0, (p->gpus_alloc - old) * sizeof(*p->gpus));
	}
	struct gpu *g = &p->gpus[n];
	if (g->resource)
		return g;
	if (p->index_col >= 0)
		g->resource = xasprintf("gpu%lld", (long long)n);
	else if (p->bus_col >= 0)
		g->resource = xasprintf("gpu%lld (bus %s)", (long long)n, p->cell[p->bus_col]);
	else
		g->resource = xasprintf("gpu%lld (row order)", (long long)n);
	g->metric = xcalloc(p->ncols, sizeof(*g->metric));
	return g;
}

/* The GPU number of the current row, or -1 when there are too many. */
static int64_t gpu_number(struct nv *p)
{
	if (p->bus_col >= 0) {
		const char *b = p->cell[p->bus_col];
		struct strmap_ent *e = strmap_get(&p->bus, b, strlen(b));
		if (e)
			return e->value;
		if (p->nbus == GPU_MAX)
			return -1;
		strmap_put(&p->bus, b, strlen(b), p->nbus, NULL);
		return p->nbus++;
	}
	const char *ts = p->cell[p->time_col];
	if (p->group_ts && !strcmp(p->group_ts, ts)) {
		p->group_pos++;
	} else {
		free(p->group_ts);
		p->group_ts = xstrdup(ts);
		p->group_pos = 0;
	}
	return p->group_pos < GPU_MAX ? p->group_pos : -1;
}

static double capacity(const struct gpu *g, const struct col *k)
{
	switch (k->use) {
	case USE_PERCENT:
		return 100;
	case USE_MEMORY:
		return g->mem_total;
	case USE_POWER:
		return g->power_limit[1] > 0 ? g->power_limit[1] : g->power_limit[0];
	default:
		return 0;
	}
}

static int row(struct nv *p, char *line)
{
	size_t n = split(line, p->cell, p->ncols + 1);
	if (n != p->ncols)
		return bad_row(
		    p, xasprintf("expected %zu cells as in the header, found %zu", p->ncols, n));
	int64_t t = 0, index = -1;
	size_t nna = 0, first_na = 0;
	for (size_t c = 0; c < n; c++) {
		const struct col *k = &p->cols[c];
		const char *s = p->cell[c];
		int rc = 0;
		p->state[c] = CELL_SKIP;
		switch (k->kind) {
		case COL_TIME:
			if (parse_time(s, &t) < 0)
				return bad_row(p, xasprintf("bad timestamp '%.40s'", s));
			break;
		case COL_INDEX:
			if (text_parse_int64(s, strlen(s), &index) < 0 || index < 0 ||
			    index >= GPU_MAX)
				return bad_row(p, xasprintf("bad gpu index '%.40s'", s));
			break;
		case COL_PSTATE:
		case COL_NUM:
			if (is_na(s)) {
				p->state[c] = CELL_NA;
				if (!nna++)
					first_na = c;
				break;
			}
			rc = k->kind == COL_PSTATE ? parse_pstate(s, &p->val[c])
						   : parse_number(s, k->unit, &p->val[c]);
			if (rc < 0)
				return bad_row(p,
					       xasprintf("%s: not a number: '%.40s'", k->name, s));
			p->state[c] = CELL_VALUE;
			break;
		default:
			break;
		}
	}
	if (p->o->has_time_offset && __builtin_add_overflow(t, p->o->time_offset_ns, &t)) {
		*p->err = xasprintf("%s:%lld: --time-offset overflows the time range",
				    input_path(p->in), (long long)p->lines.lineno);
		return -1;
	}
	int64_t gn = index >= 0 ? index : gpu_number(p);
	if (gn < 0)
		return bad_row(p, xasprintf("more than %d gpus", GPU_MAX));
	struct gpu *g = gpu_get(p, gn);
	if (p->name_col >= 0 && !g->name && !is_na(p->cell[p->name_col]))
		g->name = xstrdup(p->cell[p->name_col]);
	if (p->bus_col >= 0 && !g->bus && !is_na(p->cell[p->bus_col]))
		g->bus = xstrdup(p->cell[p->bus_col]);
	for (size_t c = 0; c < n; c++) {
		const struct col *k = &p->cols[c];
		double v = p->val[c];
		if (p->state[c] != CELL_VALUE || v <= 0)
			continue;
		if (k->give == GIVE_MEM_TOTAL && !g->mem_total)
			g->mem_total = v;
		else if (k->give == GIVE_POWER_LIMIT && !g->power_limit[0])
			g->power_limit[0] = v;
		else if (k->give == GIVE_ENFORCED_LIMIT && !g->power_limit[1])
			g->power_limit[1] = v;
	}
	for (size_t i = 0; i < nna; i++) {
		char *ex = NULL;
		if (!p->na_seen++)
			ex = xasprintf("line %lld: %s = %s", (long long)p->lines.lineno,
				       p->cols[first_na].name, p->cell[first_na]);
		msource_diag(&p->ms, "NA_VALUE", NA_MSG, ex, 0);
		free(ex);
	}
	for (size_t c = 0; c < n; c++) {
		const struct col *k = &p->cols[c];
		if (p->state[c] != CELL_VALUE)
			continue;
		if (!g->metric[c]) {
			int64_t id = msource_metric(&p->ms, NULL, g->resource, k->name, k->unit,
						    "instant", capacity(g, k), p->err);
			if (id < 0)
				return -1;
			g->metric[c] = id;
		}
		if (msource_sample(&p->ms, g->metric[c], t, p->val[c], p->err) < 0)
			return -1;
	}
	p->rows_ok++;
	return 0;
}

/* ---- the source ---- */

static void add_json_text(struct sbuf *sb, const char *s)
{
	struct sbuf u = SBUF_INIT;
	text_utf8_repair(&u, s, strlen(s));
	sbuf_add_json_string(sb, u.buf, u.len);
	sbuf_release(&u);
}

/* The source's attrs: the time convention and each GPU's name and bus. */
static char *source_attrs(const struct nv *p)
{
	struct sbuf sb = SBUF_INIT;
	sbuf_adds(&sb, "{\"timestamps\":\"host local time without a zone, read as UTC\","
		       "\"gpus\":{");
	int first = 1;
	for (size_t i = 0; i < p->gpus_alloc; i++) {
		const struct gpu *g = &p->gpus[i];
		if (!g->resource)
			continue;
		if (!first)
			sbuf_addc(&sb, ',');
		first = 0;
		add_json_text(&sb, g->resource);
		sbuf_adds(&sb, ":{");
		if (g->name) {
			sbuf_adds(&sb, "\"name\":");
			add_json_text(&sb, g->name);
		}
		if (g->bus) {
			sbuf_adds(&sb, g->name ? ",\"pci.bus_id\":" : "\"pci.bus_id\":");
			add_json_text(&sb, g->bus);
		}
		sbuf_addc(&sb, '}');
	}
	sbuf_adds(&sb, "}}");
	return sbuf_detach(&sb);
}

static void nv_release(struct nv *p)
{
	if (p->ms_open)
		msource_release(&p->ms);
	lines_release(&p->lines);
	for (size_t i = 0; i < p->ncols; i++) {
		free(p->cols[i].name);
		free(p->cols[i].unit);
	}
	free(p->cols);
	for (size_t i = 0; i < p->gpus_alloc; i++) {
		free(p->gpus[i].resource);
		free(p->gpus[i].name);
		free(p->gpus[i].bus);
		free(p->gpus[i].metric);
	}
	free(p->gpus);
	strmap_clear(&p->bus);
	free(p->header);
	free(p->group_ts);
	free(p->cell);
	free(p->val);
	free(p->state);
	free(p->first_bad);
}

static int only_blanks(const char *s)
{
	while (is_blank(*s))
		s++;
	return !*s;
}

int nvsmi_import(struct input *in, struct store *st, const struct import_opts *o, char **err)
{
	struct nv p;
	memset(&p, 0, sizeof(p));
	p.in = in;
	p.o = o;
	p.err = err;
	p.time_col = p.index_col = p.bus_col = p.name_col = -1;
	lines_init(&p.lines, in);
	const char *path = input_path(in);
	int rc = -1, r;
	char *line;
	size_t len;

	if (msource_begin(&p.ms, st, in, "nvidia-smi", "wallclock", o, err) < 0)
		goto out;
	p.ms_open = 1;
	while ((r = lines_next(&p.lines, &line, &len, err)) > 0 && only_blanks(line))
		;
	if (r < 0)
		goto out;
	if (r == 0) {
		*err = xasprintf("%s:%lld: no header line (expected nvidia-smi --query-gpu=... "
				 "--format=csv output)",
				 path, (long long)p.lines.lineno);
		goto out;
	}
	if (header(&p, line, err) < 0)
		goto out;
	while ((r = lines_next(&p.lines, &line, &len, err)) > 0) {
		if (only_blanks(line))
			continue;
		if (!strcmp(line, p.header)) {
			msource_diag(&p.ms, "REPEATED_HEADER", REPEAT_MSG, NULL, 0);
			continue;
		}
		if (row(&p, line) < 0)
			goto out;
	}
	if (r < 0)
		goto out;
	if (!p.rows_ok) {
		if (p.first_bad)
			*err = xasprintf("%s:%lld: %s (and no valid data row in the file)", path,
					 (long long)p.first_bad_line, p.first_bad);
		else
			*err = xasprintf("%s:%lld: a header but no data rows", path,
					 (long long)p.lines.lineno);
		goto out;
	}
	char *attrs = source_attrs(&p);
	int e = store_set_source_anchor(st, p.ms.source_id, "wallclock",
					o->has_time_offset ? o->time_offset_ns : 0, -1, NULL, attrs,
					err);
	free(attrs);
	if (e < 0)
		goto out;
	p.ms_open = 0;
	if (msource_end(&p.ms, err) < 0)
		goto out;
	rc = 0;
out:
	nv_release(&p);
	return rc;
}

/* ---- sniffing ---- */

/* The first line names timestamp and a field only nvidia-smi uses: 90.  A
 * noheader data row ("2024/03/15 13:57:59.791, ..."): 30, so that the
 * import says what is wrong.  The first line may be longer than buf: a
 * field cut at the end is not looked at. */
int nvsmi_sniff(const unsigned char *buf, size_t len)
{
	const char *s = (const char *)buf;
	size_t i = 0;
	if (len >= 3 && !memcmp(s, "\xef\xbb\xbf", 3))
		i = 3;
	const char *nl = memchr(s + i, '\n', len - i);
	size_t end = nl ? (size_t)(nl - s) : len;
	int has_ts = 0, has_field = 0;
	char name[128];
	while (i < end) {
		const char *comma = memchr(s + i, ',', end - i);
		size_t q = comma ? (size_t)(comma - s) : end;
		if (!comma && !nl)
			break; /* cut */
		size_t a = i, b = q;
		while (a < b && is_blank(s[a]))
			a++;
		const char *open = memchr(s + a, '[', b - a);
		if (open)
			b = (size_t)(open - s);
		while (b > a && (is_blank(s[b - 1]) || s[b - 1] == '\r'))
			b--;
		if (b - a < sizeof(name)) {
			memcpy(name, s + a, b - a);
			name[b - a] = '\0';
			if (!strcmp(name, "timestamp"))
				has_ts = 1;
			else if (known_field(name))
				has_field = 1;
		}
		i = q + 1;
	}
	if (has_ts && has_field)
		return 90;
	i = len >= 3 && !memcmp(s, "\xef\xbb\xbf", 3) ? 3 : 0;
	if (end - i >= 25 && s[i + 4] == '/' && s[i + 7] == '/' && s[i + 19] == '.') {
		const char *comma = memchr(s + i + 19, ',', end - i - 19);
		if (comma && comma - (s + i) <= 29) {
			char ts[32];
			size_t k = (size_t)(comma - (s + i));
			memcpy(ts, s + i, k);
			ts[k] = '\0';
			int64_t t;
			if (parse_time(ts, &t) == 0)
				return 30;
		}
	}
	return 0;
}
