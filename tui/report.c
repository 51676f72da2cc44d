/*
 * The text and JSON report.  Both walk the same data: the summary figures
 * (model/analysis/summary.h) and the top levels of the lazy tree (model/view/model.h).
 */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/analysis/analyze.h"
#include "model/analysis/attach.h"
#include "model/analysis/cause.h"
#include "model/analysis/level.h"
#include "model/view/model.h"
#include "model/store/store.h"
#include "model/analysis/summary.h"
#include "model/util/cxxname.h"
#include "model/util/text.h"
#include "tui/format.h"
#include "tui/report.h"
#include "model/util/xalloc.h"

#define TREE_LEVELS 5  /* workflow, step, rank, process, thread/stream */
#define TREE_FANOUT 12 /* children shown per node, largest first */
#define TOP_N	    10

/* The path of phase id for the report, NULL when it has none; NULL too
 * once the file is found broken: the first error goes to *rc and *err. */
static char *phase_where(struct model *m, int64_t id, int *rc, char **err)
{
	char *p = NULL;
	if (*rc < 0)
		return NULL;
	int r = analysis_phase_path(model_store(m), id, &p, err);
	if (r < 0)
		*rc = r;
	return p;
}

static int by_duration_desc(const void *a, const void *b)
{
	const struct mnode *x = *(struct mnode *const *)a, *y = *(struct mnode *const *)b;
	int c = model_cmp_bookkeeping(x, y);
	if (c)
		return c;
	if (x->dur_ns != y->dur_ns)
		return x->dur_ns > y->dur_ns ? -1 : 1;
	return x->start_ns < y->start_ns ? -1 : x->start_ns > y->start_ns;
}

/* The children to show, largest first: a sorted copy the caller frees. */
static struct mnode **shown_children(struct model *m, struct mnode *n, size_t *count, char **err)
{
	if (model_children(m, n, err) < 0)
		return NULL;
	struct mnode **v = xmalloc((n->nchildren ? n->nchildren : 1) * sizeof(*v));
	if (n->nchildren) /* a file without phases: children is NULL */
		memcpy(v, n->children, n->nchildren * sizeof(*v));
	qsort(v, n->nchildren, sizeof(*v), by_duration_desc);
	*count = n->nchildren;
	return v;
}

/* The profiler's bookkeeping is no part of its parent's time: NAN. */
static double share(const struct mnode *n)
{
	if (store_is_bookkeeping(n->kind))
		return NAN;
	if (!n->parent || n->parent->dur_ns <= 0)
		return 100.0;
	return 100.0 * (double)n->dur_ns / (double)n->parent->dur_ns;
}

/* s (from trace.db: untrusted) made safe to print, in sb. */
static const char *clean(struct sbuf *sb, const char *s)
{
	sbuf_reset(sb);
	format_sanitize(sb, s ? s : "");
	return sb->buf;
}

/* What a shortened name or path left out: plain text, for files too. */
#define REPORT_MORE "..."

/* A phase path's text: each name in it as lists show it (a C++ signature
 * shortened, model/util/cxxname.h), made safe, in sb.  The JSON keeps the
 * names whole. */
static const char *clean_path(struct sbuf *sb, const char *path)
{
	struct sbuf tmp = SBUF_INIT;
	sbuf_init(&tmp);
	cxxname_path(&tmp, path ? path : "", REPORT_MORE);
	sbuf_reset(sb);
	format_sanitize(sb, tmp.buf);
	sbuf_release(&tmp);
	return sb->buf;
}

/* Name s as lists show it, made safe and fitted to exactly cols display
 * columns, in sb. */
static const char *cell(struct sbuf *sb, const char *s, int cols)
{
	struct sbuf name = SBUF_INIT, tmp = SBUF_INIT;
	sbuf_init(&tmp);
	format_name(&name, s ? s : "", 1, REPORT_MORE);
	format_sanitize(&tmp, name.buf);
	sbuf_release(&name);
	sbuf_reset(sb);
	format_fit(sb, tmp.buf, cols, 1);
	sbuf_release(&tmp);
	return sb->buf;
}

/* Each GPU stream's and each rank's name in the report: the path of the
 * part of the workflow it lies under (analysis_track_part), since every
 * rank's process reads alike ("python3 (0) GPU 0"), and the breakdown's
 * ranks are files whose absolute paths say nothing of the workflow. */
struct gpu_names {
	char **part;   /* s->streams[i]'s part, or NULL */
	char **stream; /* s->streams[i] as the text shows it, cut to STREAM_COLS */
	char **rank;   /* gpu->ranks[i]'s part (that of its first stream), or NULL */
	size_t nstreams, nranks;
};

#define STREAM_COLS 44

/* "PART: stream 7" (or "rank 0 / PROCESS / stream 7" without a part), and
 * the process after it when another stream's reads the same. */
static char *stream_label(const struct summary *s, char *const *part, size_t i, int with_process)
{
	const struct summary_stream *x = &s->streams[i];
	struct sbuf sb = SBUF_INIT;
	sbuf_init(&sb);
	if (part[i]) {
		sbuf_addf(&sb, "%s: ", part[i]);
	} else {
		if (x->rank >= 0)
			sbuf_addf(&sb, "rank %d / ", x->rank);
		sbuf_addf(&sb, "%s / ", x->process ? x->process : "");
	}
	format_name(&sb, x->stream ? x->stream : "", 0, "");
	if (with_process && part[i])
		sbuf_addf(&sb, " (%s)", x->process ? x->process : "");
	return sbuf_detach(&sb);
}

static void gpu_names_release(struct gpu_names *g)
{
	for (size_t i = 0; i < g->nstreams; i++) {
		free(g->part[i]);
		free(g->stream[i]);
	}
	for (size_t i = 0; i < g->nranks; i++)
		free(g->rank[i]);
	free(g->part);
	free(g->stream);
	free(g->rank);
	memset(g, 0, sizeof(*g));
}

static int gpu_names_load(struct model *m, const struct summary *s, const struct gpubreak *gpu,
			  struct gpu_names *g, char **err)
{
	struct store *st = model_store(m);
	int rc = 0;
	g->nstreams = s->nstreams;
	g->nranks = gpu->nranks;
	g->part = xcalloc(s->nstreams + 1, sizeof(char *));
	g->stream = xcalloc(s->nstreams + 1, sizeof(char *));
	g->rank = xcalloc(gpu->nranks + 1, sizeof(char *));
	for (size_t i = 0; i < s->nstreams && rc == 0; i++)
		rc = analysis_track_part(st, s->streams[i].track_id, &g->part[i], err);
	for (size_t i = 0; i < gpu->nranks && rc == 0; i++)
		if (gpu->ranks[i].nstreams)
			rc = analysis_track_part(st, gpu->ranks[i].streams[0].track_id, &g->rank[i],
						 err);
	if (rc != 0) {
		gpu_names_release(g);
		return -1;
	}
	char **label = xcalloc(s->nstreams + 1, sizeof(char *));
	for (size_t i = 0; i < s->nstreams; i++)
		label[i] = stream_label(s, g->part, i, 0);
	for (size_t i = 0; i < s->nstreams; i++) {
		int twin = 0;
		for (size_t k = 0; k < s->nstreams && !twin; k++)
			twin = k != i && !strcmp(label[i], label[k]);
		if (twin)
			g->stream[i] = stream_label(s, g->part, i, 1);
	}
	for (size_t i = 0; i < s->nstreams; i++) {
		if (g->stream[i]) {
			free(label[i]);
			label[i] = g->stream[i];
		}
	}
	/* cut in the middle, never into two that read the same */
	char **cut =
	    format_cut_distinct((const char *const *)label, s->nstreams, STREAM_COLS, "...");
	for (size_t i = 0; i < s->nstreams; i++) {
		g->stream[i] = cut[i];
		free(label[i]);
	}
	free(cut);
	free(label);
	return 0;
}

/* ---- text ---- */

static int text_tree(FILE *out, struct model *m, struct mnode *n, int level, struct sbuf *sb,
		     char **err)
{
	size_t count;
	struct mnode **kids = shown_children(m, n, &count, err);
	if (!kids)
		return -1;
	for (size_t i = 0; i < count && i < TREE_FANOUT; i++) {
		struct mnode *c = kids[i];
		char d[32], pct[16];
		double sh = share(c);
		snprintf(pct, sizeof(pct), isnan(sh) ? "-" : "%.1f%%", sh);
		fprintf(out, "  %*s%s %10s %7s  %s\n", level * 2, "",
			cell(sb, c->name, 58 - level * 2), format_duration(d, sizeof(d), c->dur_ns),
			pct, store_kind_name(c->kind));
		if (level + 1 < TREE_LEVELS && c->child_count &&
		    text_tree(out, m, c, level + 1, sb, err) < 0) {
			free(kids);
			return -1;
		}
	}
	if (count > TREE_FANOUT)
		fprintf(out, "  %*s... %zu more\n", level * 2, "", count - TREE_FANOUT);
	free(kids);
	return 0;
}

static void text_ops(FILE *out, const char *title, const struct summary_op *ops, size_t n,
		     struct sbuf *sb)
{
	fprintf(out, "\n%s\n", title);
	if (!n) {
		fprintf(out, "  (no operators)\n");
		return;
	}
	fprintf(out, "  %-50s %8s %11s %11s\n", "operator", "count", "total", "self");
	for (size_t i = 0; i < n; i++) {
		char t[32], s[32];
		fprintf(out, "  %s %8lld %11s %11s\n", cell(sb, ops[i].name, 50),
			(long long)ops[i].count, format_duration(t, sizeof(t), ops[i].total_ns),
			format_duration(s, sizeof(s), ops[i].self_ns));
	}
}

static double pct_of(int64_t part, int64_t whole)
{
	return whole > 0 ? 100.0 * (double)part / (double)whole : 0;
}

/* Idle time by cause (model/analysis/idle.h), of idle_ns, indented by indent. */
static void text_causes(FILE *out, int indent, const struct gpubreak_causes *c, int64_t idle_ns)
{
	char a[32];
	int any = 0;
	for (int i = 0; i < IDLE_NCAUSES; i++) {
		if (!c->gaps[i])
			continue;
		if (!any)
			fprintf(out, "%*sidle by cause:", indent, "");
		fprintf(out, "%s %s %s (%.1f%%, %lld gap%s)", any ? "," : "", idle_cause_name(i),
			format_duration(a, sizeof(a), c->ns[i]), pct_of(c->ns[i], idle_ns),
			(long long)c->gaps[i], c->gaps[i] == 1 ? "" : "s");
		any = 1;
	}
	if (any)
		fputc('\n', out);
}

/* A stream's copies. */
static void text_copies(FILE *out, const struct gpubreak_stream *x)
{
	char a[32], b[32];
	const struct gpubreak_copies *k = &x->copies;
	if (!k->count)
		return;
	fprintf(out, "        copies: %lld, %s in %s (%.1f%% of the window)", (long long)k->count,
		format_bytes(a, sizeof(a), k->bytes), format_duration(b, sizeof(b), k->ns),
		pct_of(k->ns, x->time.window_ns));
	if (k->pageable)
		fprintf(out, "; pageable %lld, %s in %s", (long long)k->pageable,
			format_bytes(a, sizeof(a), k->pageable_bytes),
			format_duration(b, sizeof(b), k->pageable_ns));
	fputc('\n', out);
}

/* The scope of a rank's top kernels: all its device work, as `summary
 * kernels` counts it, unless the figures are HTA's, after its cutoff. */
static int kernels_cut(const struct gpubreak *gpu, const struct gpubreak_rank *r)
{
	return gpu->hta && r->cutoff_ns;
}

/* The rank's longest kernel by name (the JSON's top_kernels has them all),
 * with the scope it is counted over. */
static void text_top_kernel(FILE *out, const struct gpubreak *gpu, const struct gpubreak_rank *r,
			    struct sbuf *sb)
{
	const struct gpubreak_kernel *top = NULL;
	for (size_t k = 0; k < r->nkernels; k++)
		if (!r->kernels[k].others && (!top || r->kernels[k].sum_ns > top->sum_ns))
			top = &r->kernels[k];
	if (!top)
		return;
	char a[32];
	fprintf(out, "     top kernel, scope: %s: %s, %lld instances, %s\n",
		kernels_cut(gpu, r) ? "launched before the last profiler step"
				    : "the whole trace, as summary kernels",
		clean_path(sb, top->name), (long long)top->count,
		format_duration(a, sizeof(a), top->sum_ns));
}

/* HTA's breakdowns per rank (model/analysis/gpubreak.c), from the analyses: the
 * cache when it matches the file, else computed with them. */
static void text_gpu(FILE *out, const struct gpubreak *gpu, const struct gpu_names *names,
		     struct sbuf *sb)
{
	char a[32], b[32], c[32], d[32];
	fprintf(out,
		"\nGPU breakdown (HTA's definitions: temporal, kernel types, idle per stream%s)\n",
		gpu->hta ? "; HTA 0.6.1's own figures: its last-step cutoff, times rounded to"
			   " whole microseconds"
			 : "");
	if (!gpu->nranks)
		fprintf(out, "  (no device work)\n");
	for (size_t i = 0; i < gpu->nranks; i++) {
		const struct gpubreak_rank *r = &gpu->ranks[i];
		const struct gpubreak_temporal *t = &r->time;
		/* the part of the workflow it lies under, its rank when that part
		 * does not say it */
		const char *part = names->rank[i];
		char rank[32] = "";
		if (r->rank >= 0)
			snprintf(rank, sizeof(rank), "rank %d", r->rank);
		const char *last = part ? strrchr(part, '/') : NULL;
		if (part && *rank && (!last || strcmp(last + 1, rank)))
			fprintf(out, "  %s, %s", clean(sb, part), rank);
		else if (part)
			fprintf(out, "  %s", clean(sb, part));
		else
			fprintf(out, "  %s%s%s", rank, *rank ? " " : "", clean(sb, r->source));
		fprintf(out, ": %lld items, scope: ", (long long)r->items);
		if (r->cutoff_ns)
			fprintf(out, "launched before the last profiler step (%lld left out)",
				(long long)r->left_out);
		else
			fprintf(out, "the whole trace");
		fprintf(out, "\n     window %s: idle %.1f%%, compute %.1f%%, non-compute %.1f%%\n",
			format_duration(a, sizeof(a), t->window_ns),
			pct_of(t->idle_ns, t->window_ns), pct_of(t->compute_ns, t->window_ns),
			pct_of(t->noncompute_ns, t->window_ns));
		text_causes(out, 5, &r->cause, t->idle_ns);
		fprintf(out, "     kernels: computation %s, communication %s, memory %s, other %s",
			format_duration(a, sizeof(a), r->type_ns[GPUBREAK_COMP]),
			format_duration(b, sizeof(b), r->type_ns[GPUBREAK_COMM]),
			format_duration(c, sizeof(c), r->type_ns[GPUBREAK_MEM]),
			format_duration(d, sizeof(d), r->type_ns[GPUBREAK_OTHER]));
		if (r->comm_ns > 0)
			fprintf(out, "; communication overlapped with computation %.1f%%",
				pct_of(r->overlap_ns, r->comm_ns));
		fputc('\n', out);
		text_top_kernel(out, gpu, r, sb);
		/* the idle split per stream, as HTA gives it (streams overlap, so
		 * their idle times do not add up) */
		for (size_t k = 0; k < r->nstreams; k++) {
			const struct gpubreak_stream *x = &r->streams[k];
			const int64_t *ns = x->idle.ns, *n = x->idle.count;
			fprintf(out,
				"     %s: %lld items, idle %.1f%% of its window: host wait %s (%lld"
				" gap%s), kernel wait %s (%lld), other %s (%lld)\n",
				clean(sb, x->name), (long long)x->items,
				pct_of(x->time.idle_ns, x->time.window_ns),
				format_duration(a, sizeof(a), ns[GPUBREAK_HOST_WAIT]),
				(long long)n[GPUBREAK_HOST_WAIT],
				n[GPUBREAK_HOST_WAIT] == 1 ? "" : "s",
				format_duration(b, sizeof(b), ns[GPUBREAK_KERNEL_WAIT]),
				(long long)n[GPUBREAK_KERNEL_WAIT],
				format_duration(c, sizeof(c), ns[GPUBREAK_OTHER_WAIT]),
				(long long)n[GPUBREAK_OTHER_WAIT]);
			text_causes(out, 8, &x->cause, x->time.idle_ns);
			text_copies(out, x);
		}
	}
}

/* The rows the report shows of the attribution: the workflow and its parts
 * at every depth (model/analysis/level.h). */
static int attr_shown(const struct attrib_row *r)
{
	return r->level == LEVEL_WORKFLOW || r->level == LEVEL_PART;
}

/* What was measured of phase id's host and device over its window: the
 * series behind r's bottlenecks, then the busiest (model/analysis/attach.h), as the
 * explorer's details pane shows them; *n how many. */
static struct mbusy *measured(struct model *m, const struct attrib_row *r, size_t *n, int *rc,
			      char **err)
{
	struct mnode node;
	struct mbusy *b = xmalloc(3 * sizeof(*b));
	*n = 0;
	if (*rc < 0)
		return b;
	int got = model_phase(m, r->phase_id, &node, err);
	if (got < 0 || (got && model_evidence(m, &node, r, b, 3, n, err) < 0))
		*rc = -1;
	return b;
}

static void text_attr(FILE *out, struct model *m, const struct attribution *at,
		      const struct cause_map *causes, struct sbuf *sb, int *rc, char **err)
{
	fprintf(out, "\nResources (measured: mean and peak share of capacity over the phase's time,"
		     " a GPU's device\nwork the share of its traced time in which some ran;"
		     " est. use: each sample's value spread\nover the work that ran in it, 100%% ="
		     " one resource; bound by: the share of its time a\nresource it demands was"
		     " saturated, at >= 95%% of capacity, a GPU while its device work ran)\n");
	size_t shown = 0;
	for (size_t i = 0; i < at->nrows; i++) {
		const struct attrib_row *r = &at->rows[i];
		if (!attr_shown(r))
			continue;
		char *where = phase_where(m, r->phase_id, rc, err);
		struct sbuf line = SBUF_INIT;
		sbuf_init(&line);
		fprintf(out, "  %s\n", clean_path(sb, where ? where : "?"));
		size_t nb;
		struct mbusy *b = measured(m, r, &nb, rc, err);
		model_busy_text(b, nb, &line);
		free(b);
		fprintf(out, "      measured %s\n",
			nb ? clean(sb, line.buf) : "no sample of its host/device holds during it");
		sbuf_reset(&line);
		for (int x = 0; x < ATTRIB_NRES; x++)
			if (r->mask & (1u << x))
				sbuf_addf(&line, "%s%s %.0f%%", line.len ? ", " : "",
					  attrib_res_name(x), 100 * r->use[x]);
		if (!line.len)
			sbuf_adds(&line, "none");
		attrib_work_text(r, &line);
		fprintf(out, "      est. use %s\n", line.buf);
		sbuf_reset(&line);
		struct cause c;
		cause_bound_text(r, cause_of(causes, r, &c) ? &c : NULL, &line);
		fprintf(out, "      bound by %s\n", line.buf);
		sbuf_release(&line);
		free(where);
		shown++;
	}
	if (!shown)
		fprintf(
		    out,
		    "  (no attributed metric: cpu.util, utilization.gpu, ... beside the work)\n");
	for (size_t i = 0; i < at->nfits; i++) {
		const struct attrib_fit *f = &at->fits[i];
		if (!i)
			fprintf(out,
				"  demand per active phase, by metric (NNLS fit unless exact):\n");
		if (f->demand > 0)
			fprintf(out, "    metric #%lld %-8s %-10s %s %.3g\n",
				(long long)f->metric_id, attrib_res_name(f->res), f->type,
				f->exact ? "exact" : "variable", f->demand);
	}
}

/* The longest waits first, after the straggler (ranks[0]). */
static int by_wait_desc(const void *a, const void *b)
{
	const struct imbalance_rank *x = *(const struct imbalance_rank *const *)a;
	const struct imbalance_rank *y = *(const struct imbalance_rank *const *)b;
	return (x->wait_ns < y->wait_ns) - (x->wait_ns > y->wait_ns);
}

/* Labels in natural order: "ProfilerStep#9 ..." before "ProfilerStep#10 ...". */
static int by_label(const void *a, const void *b)
{
	const struct imbalance *x = *(const struct imbalance *const *)a;
	const struct imbalance *y = *(const struct imbalance *const *)b;
	size_t lx = strcspn(x->label, " "), ly = strcspn(y->label, " ");
	if (lx != ly)
		return lx < ly ? -1 : 1;
	return strcmp(x->label, y->label);
}

/* Stragglers, when some ranks meet at collectives: each such step, its
 * ranks (the straggler, then the longest waits) and its ProfilerStep#N. */
static void text_stragglers(FILE *out, struct model *m, const struct analysis *an, struct sbuf *sb,
			    int *rc, char **err)
{
	char a[32];
	size_t shown = 0;
	const struct imbalance **its = xcalloc(an->nimb + 1, sizeof(*its));
	for (size_t i = 0; i < an->nimb; i++) {
		const struct imbalance *g = &an->imb[i];
		if (!g->meets || strcmp(g->kind, "ranks"))
			continue;
		if (!shown++)
			fprintf(out,
				"\nStragglers (ranks that meet at collectives: who arrives last,"
				" how long the others wait)\n");
		char *where = phase_where(m, g->parent_id, rc, err);
		char *says = imbalance_says(g);
		fprintf(out, "  %s: ", clean_path(sb, where ? where : "?"));
		fprintf(out, "%s\n", clean(sb, says));
		free(says);
		free(where);
		const struct imbalance_rank **r = xcalloc(g->nranks + 1, sizeof(*r));
		for (size_t k = 0; k < g->nranks; k++)
			r[k] = &g->ranks[k];
		if (g->nranks > 1)
			qsort(r + 1, g->nranks - 1, sizeof(*r), by_wait_desc);
		for (size_t k = 0; k < g->nranks && k < TOP_N; k++)
			fprintf(out, "    %s last at %lld of %lld  waited %s\n",
				cell(sb, r[k]->name, 12), (long long)r[k]->last,
				(long long)g->collectives,
				format_duration(a, sizeof(a), r[k]->wait_ns));
		if (g->nranks > TOP_N)
			fprintf(out, "    (%zu more ranks)\n", g->nranks - TOP_N);
		free(r);
		size_t nits = 0;
		for (size_t k = 0; k < an->nimb; k++) {
			const struct imbalance *t = &an->imb[k];
			if (t->meets && !strcmp(t->kind, "iteration") &&
			    t->parent_id == g->parent_id)
				its[nits++] = t;
		}
		if (nits)
			qsort(its, nits, sizeof(*its), by_label);
		for (size_t k = 0; k < nits && k < TOP_N; k++) {
			char *w = imbalance_says(its[k]);
			fprintf(out, "    %s: ", clean(sb, its[k]->label));
			fprintf(out, "%s\n", clean(sb, w));
			free(w);
		}
		if (nits > TOP_N)
			fprintf(out, "    (%zu more profiler steps)\n", nits - TOP_N);
	}
	free(its);
}

static int write_text(FILE *out, const char *path, struct model *m, const struct summary *s,
		      const struct gpu_names *names, const struct analysis *an,
		      const struct cause_map *causes, char **err)
{
	int rc = 0;
	struct sbuf sb = SBUF_INIT;
	sbuf_init(&sb);
	char a[32], b[32];
	fprintf(out, "grademl-tui report: %s (%lld phases)\n", clean(&sb, path),
		(long long)model_phase_count(m));

	fprintf(out, "\nSources\n");
	for (size_t i = 0; i < s->nsources; i++) {
		const struct summary_source *src = &s->sources[i];
		/* every string here comes from the file and is printed sanitised */
		struct sbuf f1 = SBUF_INIT, f2 = SBUF_INIT, f3 = SBUF_INIT;
		sbuf_init(&f1);
		sbuf_init(&f2);
		sbuf_init(&f3);
		fprintf(out, "  #%lld %s %s (%s, %s), anchor %s", (long long)src->id,
			clean(&f1, src->format), clean(&sb, src->path),
			clean(&f2, src->compression ? src->compression : "none"),
			format_bytes(a, sizeof(a), src->size_bytes), clean(&f3, src->anchor));
		if (src->rank >= 0)
			fprintf(out, ", rank %d", src->rank);
		if (src->host)
			fprintf(out, ", host %s", clean(&sb, src->host));
		fprintf(out, "\n     %lld phases, %lld events, %lld samples, %lld dropped\n",
			(long long)src->phases, (long long)src->events, (long long)src->samples,
			(long long)src->dropped);
		for (size_t k = 0; k < src->ndiags; k++) {
			const struct summary_diag *g = &src->diags[k];
			fprintf(out, "     ! %s %8lld  %s", cell(&f1, g->code, 16),
				(long long)g->count, clean(&f2, g->message));
			if (g->example)
				fprintf(out, " (e.g. %s)", clean(&sb, g->example));
			fprintf(out, "\n");
		}
		sbuf_release(&f1);
		sbuf_release(&f2);
		sbuf_release(&f3);
	}

	fprintf(out, "\nTop issues (estimated time saved, share of the workflow)\n");
	if (!an->nissues)
		fprintf(out, "  (none found)\n");
	for (size_t i = 0; i < an->nissues && i < TOP_N; i++) {
		const struct issue *u = &an->issues[i];
		char *where = phase_where(m, u->phase_id, &rc, err);
		char pct[16] = "-";
		struct sbuf why = SBUF_INIT;
		sbuf_init(&why);
		if (!isnan(u->share))
			snprintf(pct, sizeof(pct), u->share < 0.01 ? "%.2f%%" : "%.1f%%",
				 100 * u->share);
		fprintf(out, "  %2zu. %-13s %10s %6s  %s\n", i + 1, u->kind,
			format_duration(a, sizeof(a), u->impact_ns), pct,
			clean_path(&sb, where ? where : "?"));
		fprintf(out, "      %s\n", clean(&why, u->explanation));
		sbuf_release(&why);
		free(where);
	}

	text_stragglers(out, m, an, &sb, &rc, err);
	text_attr(out, m, &an->attr, causes, &sb, &rc, err);

	fprintf(out, "\nCritical path (per workflow: the phases longest on it, and its waits)\n");
	if (!an->npath)
		fprintf(out, "  (no workflow)\n");
	for (size_t i = 0; i < an->npath; i++) {
		const struct pathrow *p = &an->path[i];
		char *where = phase_where(m, p->phase_id, &rc, err);
		struct sbuf w = SBUF_INIT;
		sbuf_init(&w);
		if (!i || an->path[i - 1].root_id != p->root_id) {
			char *root = phase_where(m, p->root_id, &rc, err);
			fprintf(out, "  %s: %s", clean_path(&w, root ? root : "?"),
				format_duration(a, sizeof(a), p->makespan_ns));
			fprintf(out, ", %s of it waiting (gaps between steps, launches, queues)\n",
				format_duration(a, sizeof(a), p->wait_ns));
			free(root);
		}
		fprintf(out, "  %11s %5.1f%%  %s", format_duration(a, sizeof(a), p->on_path_ns),
			pct_of(p->on_path_ns, p->makespan_ns), clean_path(&w, where ? where : "?"));
		if (p->whatif_ns >= 0)
			fprintf(out, "  (twice as fast: %s sooner",
				format_duration(b, sizeof(b), p->makespan_ns - p->whatif_ns));
		char *bound =
		    p->whatif_ns >= 0 && p->bound_id ? phase_where(m, p->bound_id, &rc, err) : NULL;
		if (bound)
			fprintf(out, "; then %s bounds the path", clean_path(&w, bound));
		if (p->whatif_ns >= 0)
			fputc(')', out);
		free(bound);
		fputc('\n', out);
		sbuf_release(&w);
		free(where);
	}

	if (rc < 0) {
		sbuf_release(&sb);
		return rc;
	}
	fprintf(out, "\nWhere the time went (duration, share of parent)\n");
	if (text_tree(out, m, model_root(m), 0, &sb, err) < 0) {
		sbuf_release(&sb);
		return -1;
	}
	text_ops(out, "Top operators by total time", s->by_total, s->nby_total, &sb);
	text_ops(out, "Top operators by self time", s->by_self, s->nby_self, &sb);

	fprintf(out, "\nGPU streams (the whole trace: busy fraction of each stream's window,"
		     " its first work to its last)\n");
	if (!s->nstreams)
		fprintf(out, "  (no device streams)\n");
	for (size_t i = 0; i < s->nstreams; i++) {
		const struct summary_stream *x = &s->streams[i];
		double f = x->window_ns > 0 ? 100.0 * (double)x->busy_ns / (double)x->window_ns : 0;
		sbuf_reset(&sb);
		format_fit(&sb, names->stream[i], STREAM_COLS, 1); /* sanitised: pads */
		fprintf(out, "  %s busy %11s of %11s %6.1f%%  %7lld items\n", sb.buf,
			format_duration(a, sizeof(a), x->busy_ns),
			format_duration(b, sizeof(b), x->window_ns), f, (long long)x->items);
	}
	text_gpu(out, &an->gpu, names, &sb);
	sbuf_release(&sb);
	return 0;
}

/* ---- JSON ---- */

/* A JSON string of s (NULL: null) with invalid UTF-8 repaired, so that
 * json_pack never fails on a name from a trace or a path. */
static json_t *jstr(const char *s)
{
	if (!s)
		return json_null();
	size_t n = strlen(s);
	if (text_utf8_valid(s, n))
		return json_stringn(s, n);
	struct sbuf sb = SBUF_INIT;
	sbuf_init(&sb);
	text_utf8_repair(&sb, s, n);
	json_t *j = json_stringn(sb.buf, sb.len);
	sbuf_release(&sb);
	return j;
}

json_t *report_json_string(const char *s)
{
	return jstr(s);
}

static json_t *json_tree(struct model *m, struct mnode *n, int level, char **err)
{
	json_t *arr = json_array();
	size_t count;
	struct mnode **kids = shown_children(m, n, &count, err);
	if (!kids) {
		json_decref(arr);
		return NULL;
	}
	for (size_t i = 0; i < count && i < TREE_FANOUT; i++) {
		struct mnode *c = kids[i];
		double sh = share(c);
		json_t *o =
		    json_pack("{s:o, s:s, s:I, s:I, s:I, s:o, s:I}", "name", jstr(c->name), "kind",
			      store_kind_name(c->kind), "start_ns", (json_int_t)c->start_ns,
			      "dur_ns", (json_int_t)c->dur_ns, "self_ns", (json_int_t)c->self_ns,
			      "share_of_parent", isnan(sh) ? json_null() : json_real(sh / 100.0),
			      "child_count", (json_int_t)c->child_count);
		if (level + 1 < TREE_LEVELS && c->child_count) {
			json_t *sub = json_tree(m, c, level + 1, err);
			if (!sub) {
				json_decref(o);
				json_decref(arr);
				free(kids);
				return NULL;
			}
			json_object_set_new(o, "children", sub);
		}
		json_array_append_new(arr, o);
	}
	free(kids);
	return arr;
}

static json_t *json_ops(const struct summary_op *ops, size_t n)
{
	json_t *arr = json_array();
	for (size_t i = 0; i < n; i++)
		json_array_append_new(arr,
				      json_pack("{s:o, s:I, s:I, s:I}", "name", jstr(ops[i].name),
						"count", (json_int_t)ops[i].count, "total_ns",
						(json_int_t)ops[i].total_ns, "self_ns",
						(json_int_t)ops[i].self_ns));
	return arr;
}

static json_t *json_causes(const struct gpubreak_causes *c)
{
	json_t *o = json_object();
	for (int i = 0; i < IDLE_NCAUSES; i++)
		json_object_set_new(o, idle_cause_name(i),
				    json_pack("{s:I, s:I}", "ns", (json_int_t)c->ns[i], "gaps",
					      (json_int_t)c->gaps[i]));
	return o;
}

static json_t *json_gpu(const struct gpubreak *gpu, const struct gpu_names *names)
{
	json_t *arr = json_array();
	for (size_t i = 0; i < gpu->nranks; i++) {
		const struct gpubreak_rank *r = &gpu->ranks[i];
		json_t *types = json_object(), *streams = json_array(), *kernels = json_array();
		for (int t = 0; t < GPUBREAK_NTYPES; t++)
			json_object_set_new(types, gpubreak_type_name(t),
					    json_integer(r->type_ns[t]));
		/* the time each set of types ran alone, keyed "COMPUTATION+MEMORY" */
		json_t *mix = json_object();
		for (int mask = 1; mask < 1 << GPUBREAK_NTYPES; mask++) {
			struct sbuf key = SBUF_INIT;
			for (int t = 0; t < GPUBREAK_NTYPES; t++)
				if (mask >> t & 1)
					sbuf_addf(&key, "%s%s", key.len ? "+" : "",
						  gpubreak_type_name(t));
			json_object_set_new(mix, key.buf, json_integer(r->mix_ns[mask]));
			sbuf_release(&key);
		}
		for (size_t k = 0; k < r->nstreams; k++) {
			const struct gpubreak_stream *x = &r->streams[k];
			json_t *idle = json_object(), *causes = json_causes(&x->cause);
			const struct gpubreak_copies *cp = &x->copies;
			json_t *copies = json_pack(
			    "{s:I, s:I, s:I, s:I, s:I, s:I}", "count", (json_int_t)cp->count, "ns",
			    (json_int_t)cp->ns, "bytes", (json_int_t)cp->bytes, "pageable",
			    (json_int_t)cp->pageable, "pageable_ns", (json_int_t)cp->pageable_ns,
			    "pageable_bytes", (json_int_t)cp->pageable_bytes);
			for (int w = 0; w < GPUBREAK_NWAITS; w++)
				json_object_set_new(idle, gpubreak_wait_name(w),
						    json_pack("{s:I, s:I}", "ns",
							      (json_int_t)x->idle.ns[w], "count",
							      (json_int_t)x->idle.count[w]));
			json_array_append_new(
			    streams,
			    json_pack("{s:I, s:o, s:I, s:s, s:I, s:I, s:I, s:I, s:o, s:o, s:o}",
				      "track_id", (json_int_t)x->track_id, "name", jstr(x->name),
				      "items", (json_int_t)x->items, "scope", "stream_window",
				      "window_ns", (json_int_t)x->time.window_ns, "idle_ns",
				      (json_int_t)x->time.idle_ns, "compute_ns",
				      (json_int_t)x->time.compute_ns, "noncompute_ns",
				      (json_int_t)x->time.noncompute_ns, "idle_breakdown", idle,
				      "idle_causes", causes, "copies", copies));
		}
		for (size_t k = 0; k < r->nkernels; k++) {
			const struct gpubreak_kernel *x = &r->kernels[k];
			json_array_append_new(
			    kernels,
			    json_pack("{s:o, s:s, s:b, s:I, s:I, s:I, s:I, s:I}", "name",
				      jstr(x->name), "type", gpubreak_type_name(x->type), "others",
				      x->others, "names", (json_int_t)x->names, "count",
				      (json_int_t)x->count, "sum_ns", (json_int_t)x->sum_ns,
				      "min_ns", (json_int_t)x->min_ns, "max_ns",
				      (json_int_t)x->max_ns));
		}
		json_array_append_new(
		    arr,
		    json_pack("{s:o, s:o, s:o, s:s, s:s, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:o, "
			      "s:o, s:o, "
			      "s:I,"
			      " s:I,"
			      " s:o, s:s, s:o}",
			      "source", jstr(r->source), "step_path", jstr(names->rank[i]), "rank",
			      r->rank >= 0 ? json_integer(r->rank) : json_null(), "figures",
			      gpu->hta ? "hta-0.6.1" : "exact", "scope",
			      r->cutoff_ns ? "before_last_step" : "trace", "items",
			      (json_int_t)r->items, "left_out", (json_int_t)r->left_out,
			      "cutoff_ns", (json_int_t)r->cutoff_ns, "window_ns",
			      (json_int_t)r->time.window_ns, "idle_ns", (json_int_t)r->time.idle_ns,
			      "compute_ns", (json_int_t)r->time.compute_ns, "noncompute_ns",
			      (json_int_t)r->time.noncompute_ns, "idle_causes",
			      json_causes(&r->cause), "kernel_type_ns", types, "kernel_type_mix_ns",
			      mix, "comm_ns", (json_int_t)r->comm_ns, "overlap_ns",
			      (json_int_t)r->overlap_ns, "streams", streams, "top_kernels_scope",
			      kernels_cut(gpu, r) ? "before_last_step" : "trace", "top_kernels",
			      kernels));
	}
	return arr;
}

/* The cause beside a software verdict (model/analysis/cause.h), or null. */
static json_t *json_cause(const struct cause_map *causes, const struct attrib_row *r)
{
	struct cause c;
	if (!cause_of(causes, r, &c))
		return json_null();
	return json_pack("{s:s, s:f, s:I, s:I, s:I, s:I, s:i}", "cause", idle_cause_name(c.cause),
			 "share", c.share, "ns", (json_int_t)c.ns, "gaps", (json_int_t)c.gaps,
			 "idle_ns", (json_int_t)c.idle_ns, "window_ns", (json_int_t)c.window_ns,
			 "gpus", c.gpus);
}

static json_t *json_attr(struct model *m, const struct attribution *at,
			 const struct cause_map *causes, int *rc, char **err)
{
	json_t *rows = json_array(), *fits = json_array();
	for (size_t i = 0; i < at->nrows; i++) {
		const struct attrib_row *r = &at->rows[i];
		if (!attr_shown(r))
			continue;
		json_t *res = json_object(), *bns = json_array(), *meas = json_array();
		for (int x = 0; x < ATTRIB_NBOUND; x++)
			if (r->mask & (1u << (x == ATTRIB_THREAD ? ATTRIB_CPU : x)))
				json_object_set_new(res, attrib_res_name(x),
						    x < ATTRIB_NRES
							? json_pack("{s:f, s:I}", "use", r->use[x],
								    "bound_ns",
								    (json_int_t)r->bneck_ns[x])
							: json_pack("{s:I}", "bound_ns",
								    (json_int_t)r->bneck_ns[x]));
		struct attrib_bneck bn[ATTRIB_NBNECK];
		size_t n = attrib_bottlenecks(r, bn);
		for (size_t k = 0; k < n; k++)
			json_array_append_new(bns, json_pack("{s:s, s:f, s:I}", "resource",
							     attrib_res_name(bn[k].res), "fraction",
							     bn[k].frac, "without_ns",
							     (json_int_t)bn[k].without_ns));
		size_t nb;
		struct mbusy *b = measured(m, r, &nb, rc, err);
		for (size_t k = 0; k < nb; k++)
			json_array_append_new(meas,
					      json_pack("{s:s, s:o, s:o, s:f, s:f}", "metric",
							b[k].s->name, "host", jstr(b[k].s->host),
							"resource", jstr(b[k].s->resource), "mean",
							100 * b[k].mean / b[k].s->capacity, "peak",
							100 * b[k].max / b[k].s->capacity));
		free(b);
		char *where = phase_where(m, r->phase_id, rc, err);
		int64_t device = 0;
		if (*rc >= 0 &&
		    analysis_phase_device(model_store(m), r->phase_id, &device, err) < 0)
			*rc = -1;
		/* device_work_ns: the attribution's work, summed; device_ns: its union */
		json_array_append_new(
		    rows,
		    json_pack("{s:I, s:o, s:I, s:I, s:I, s:I, s:I, s:I, s:f, s:o, s:o, s:o, s:o, "
			      "s:I, s:b}",
			      "phase_id", (json_int_t)r->phase_id, "path", jstr(where), "dur_ns",
			      (json_int_t)r->dur_ns, "host_work_ns", (json_int_t)r->busy_ns[0],
			      "device_work_ns", (json_int_t)r->busy_ns[1], "device_ns",
			      (json_int_t)device, "data_ns", (json_int_t)r->data_ns, "software_ns",
			      (json_int_t)r->free_ns, "no_data", attrib_nodata(r), "measured", meas,
			      "resources", res, "bottlenecks", bns, "idle_cause",
			      json_cause(causes, r), "shared_gpu", (json_int_t)r->shared_gpu,
			      "own_gpu", r->own_gpu));
		free(where);
	}
	for (size_t i = 0; i < at->nfits; i++)
		json_array_append_new(fits, json_pack("{s:I, s:s, s:s, s:s, s:f}", "metric_id",
						      (json_int_t)at->fits[i].metric_id, "resource",
						      attrib_res_name(at->fits[i].res),
						      "phase_type", at->fits[i].type, "rule",
						      at->fits[i].exact ? "exact" : "variable",
						      "demand", at->fits[i].demand));
	return json_pack("{s:o, s:o}", "phases", rows, "demand", fits);
}

static int write_json(FILE *out, const char *path, struct model *m, const struct summary *s,
		      const struct gpu_names *names, const struct analysis *an,
		      const struct cause_map *causes, char **err)
{
	int rc = 0;
	json_t *root = json_object();
	json_object_set_new(root, "trace_db", jstr(path));
	json_object_set_new(root, "phases", json_integer(model_phase_count(m)));
	json_t *srcs = json_array();
	for (size_t i = 0; i < s->nsources; i++) {
		const struct summary_source *src = &s->sources[i];
		json_t *diags = json_array();
		for (size_t k = 0; k < src->ndiags; k++)
			json_array_append_new(diags,
					      json_pack("{s:o, s:I, s:o, s:o}", "code",
							jstr(src->diags[k].code), "count",
							(json_int_t)src->diags[k].count, "message",
							jstr(src->diags[k].message), "example",
							jstr(src->diags[k].example)));
		json_t *o = json_pack(
		    "{s:I, s:o, s:o, s:o, s:I, s:o, s:o, s:o, s:I, s:I, s:I, s:I, s:o}", "id",
		    (json_int_t)src->id, "path", jstr(src->path), "format", jstr(src->format),
		    "compression", jstr(src->compression), "size_bytes",
		    (json_int_t)src->size_bytes, "time_anchor", jstr(src->anchor), "host",
		    jstr(src->host), "rank", src->rank >= 0 ? json_integer(src->rank) : json_null(),
		    "phases", (json_int_t)src->phases, "events", (json_int_t)src->events, "samples",
		    (json_int_t)src->samples, "dropped", (json_int_t)src->dropped, "diagnostics",
		    diags);
		json_array_append_new(srcs, o);
	}
	json_object_set_new(root, "sources", srcs);
	json_t *tree = json_tree(m, model_root(m), 0, err);
	if (!tree) {
		json_decref(root);
		return -1;
	}
	json_object_set_new(root, "tree", tree);
	json_object_set_new(root, "top_operators_by_total", json_ops(s->by_total, s->nby_total));
	json_object_set_new(root, "top_operators_by_self", json_ops(s->by_self, s->nby_self));
	json_t *streams = json_array();
	for (size_t i = 0; i < s->nstreams; i++) {
		const struct summary_stream *x = &s->streams[i];
		json_array_append_new(
		    streams,
		    json_pack("{s:o, s:o, s:o, s:o, s:I, s:s, s:s, s:I, s:I, s:I, s:f, s:I}",
			      "step_path", jstr(names->part[i]), "rank",
			      x->rank >= 0 ? json_integer(x->rank) : json_null(), "process",
			      jstr(x->process), "stream", jstr(x->stream), "track_id",
			      (json_int_t)x->track_id, "scope", "trace", "window", "stream",
			      "busy_ns", (json_int_t)x->busy_ns, "window_ns",
			      (json_int_t)x->window_ns, "source_window_ns",
			      (json_int_t)x->source_window_ns, "busy_fraction",
			      x->window_ns > 0 ? (double)x->busy_ns / (double)x->window_ns : 0.0,
			      "items", (json_int_t)x->items));
	}
	json_object_set_new(root, "gpu_streams", streams);
	json_t *issues = json_array();
	for (size_t i = 0; i < an->nissues; i++) {
		const struct issue *u = &an->issues[i];
		char *where = phase_where(m, u->phase_id, &rc, err);
		json_array_append_new(
		    issues, json_pack("{s:I, s:s, s:o, s:I, s:o, s:I, s:o, s:o}", "rank",
				      (json_int_t)i + 1, "kind", u->kind, "cause", jstr(u->cause),
				      "phase_id", (json_int_t)u->phase_id, "path", jstr(where),
				      "impact_ns", (json_int_t)u->impact_ns, "share",
				      isnan(u->share) ? json_null() : json_real(u->share),
				      "explanation", jstr(u->explanation)));
		free(where);
	}
	json_object_set_new(root, "top_issues", issues);
	json_t *imb = json_array();
	for (size_t i = 0; i < an->nimb; i++) {
		const struct imbalance *g = &an->imb[i];
		json_t *o = json_pack(
		    "{s:s, s:I, s:o, s:I, s:I, s:I, s:I, s:I, s:o, s:I}", "kind", g->kind,
		    "parent_id", (json_int_t)g->parent_id, "label", jstr(g->label), "members",
		    (json_int_t)g->members, "ideal_ns", (json_int_t)g->ideal_ns, "actual_ns",
		    (json_int_t)g->actual_ns, "impact_ns", (json_int_t)g->impact_ns, "straggler_id",
		    (json_int_t)g->straggler_id, "straggler", jstr(g->straggler), "slow",
		    (json_int_t)g->slow);
		const struct imbalance_rank *l = imbalance_longest(g);
		json_t *ranks = json_array();
		for (size_t k = 0; k < g->nranks; k++)
			json_array_append_new(ranks,
					      json_pack("{s:I, s:o, s:I, s:I}", "rank_id",
							(json_int_t)g->ranks[k].rank_id, "name",
							jstr(g->ranks[k].name), "last",
							(json_int_t)g->ranks[k].last, "wait_ns",
							(json_int_t)g->ranks[k].wait_ns));
		json_object_update_new(
		    o, json_pack("{s:o, s:I, s:I, s:I, s:I, s:o, s:o, s:o}", "meets",
				 g->meets ? json_string(g->meets) : json_null(), "collectives",
				 (json_int_t)g->collectives, "unmatched", (json_int_t)g->unmatched,
				 "last", (json_int_t)g->last, "wait_ns", (json_int_t)g->wait_ns,
				 "longest", l ? jstr(l->name) : json_null(), "longest_wait_ns",
				 l ? json_integer(l->wait_ns) : json_null(), "ranks", ranks));
		json_array_append_new(imb, o);
	}
	json_object_set_new(root, "imbalance", imb);
	json_object_set_new(root, "gpu_breakdown", json_gpu(&an->gpu, names));
	json_t *cp = json_array();
	for (size_t i = 0; i < an->npath; i++) {
		const struct pathrow *p = &an->path[i];
		char *where = phase_where(m, p->phase_id, &rc, err);
		char *bound = p->bound_id ? phase_where(m, p->bound_id, &rc, err) : NULL;
		json_array_append_new(
		    cp, json_pack("{s:I, s:I, s:o, s:I, s:o, s:I, s:I, s:o}", "root_id",
				  (json_int_t)p->root_id, "phase_id", (json_int_t)p->phase_id,
				  "path", jstr(where), "on_path_ns", (json_int_t)p->on_path_ns,
				  "whatif_2x_makespan_ns",
				  p->whatif_ns >= 0 ? json_integer(p->whatif_ns) : json_null(),
				  "makespan_ns", (json_int_t)p->makespan_ns, "wait_ns",
				  (json_int_t)p->wait_ns, "whatif_bound_by", jstr(bound)));
		free(where);
		free(bound);
	}
	json_object_set_new(root, "critical_path", cp);
	json_object_set_new(root, "attribution", json_attr(m, &an->attr, causes, &rc, err));
	if (rc < 0) {
		json_decref(root);
		return rc;
	}
	json_dumpf(root, out, JSON_INDENT(2) | JSON_ENSURE_ASCII);
	fputc('\n', out);
	json_decref(root);
	return 0;
}

/* write_text into memory first, so that a broken file found half way
 * prints nothing. */
static int write_text_whole(FILE *out, const char *path, struct model *m, const struct summary *s,
			    const struct gpu_names *names, const struct analysis *an,
			    const struct cause_map *causes, char **err)
{
	char *text = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&text, &len);
	if (!mem) {
		*err = xasprintf("cannot write the report: %s", strerror(errno));
		return -1;
	}
	int rc = write_text(mem, path, m, s, names, an, causes, err);
	if (fclose(mem) != 0 && rc == 0) {
		*err = xasprintf("cannot write the report: %s", strerror(errno));
		rc = -1;
	}
	if (rc == 0)
		fwrite(text, 1, len, out);
	free(text);
	return rc;
}

int report_write(FILE *out, const char *path, enum report_format fmt, char **err)
{
	return report_write_opts(out, path, fmt, NULL, err);
}

/* The GPU breakdown of an's file again, with HTA 0.6.1's own figures. */
static int hta_figures(struct model *m, struct analysis *an, char **err)
{
	struct gpubreak_opts o;
	gpubreak_default_opts(&o);
	o.hta = 1;
	gpubreak_release(&an->gpu);
	return gpubreak_load(model_store(m), &o, &an->gpu, err);
}

int report_write_opts(FILE *out, const char *path, enum report_format fmt,
		      const struct report_opts *opts, char **err)
{
	struct model *m;
	if (model_open(path, &m, err) < 0)
		return -1;
	struct summary s;
	struct analysis an;
	struct cause_map *causes = NULL;
	int rc = summary_load(m, &s, TOP_N, err);
	if (rc == 0 && (rc = analysis_get(model_store(m), &an, err)) < 0)
		summary_release(&s);
	/* the causes the issues give, before --hta replaces the breakdowns */
	if (rc == 0 && (rc = cause_map_build(model_store(m), &an.gpu, &causes, err)) < 0) {
		summary_release(&s);
		analysis_release(&an);
	}
	if (rc == 0 && opts && opts->hta && (rc = hta_figures(m, &an, err)) < 0) {
		summary_release(&s);
		analysis_release(&an);
	}
	struct gpu_names names = {0};
	if (rc == 0 && (rc = gpu_names_load(m, &s, &an.gpu, &names, err)) < 0) {
		summary_release(&s);
		analysis_release(&an);
	}
	if (rc == 0) {
		rc = fmt == REPORT_JSON
			 ? write_json(out, path, m, &s, &names, &an, causes, err)
			 : write_text_whole(out, path, m, &s, &names, &an, causes, err);
		gpu_names_release(&names);
		summary_release(&s);
		analysis_release(&an);
	}
	cause_map_free(causes);
	model_free(m);
	if (rc == 0 && (fflush(out) != 0 || ferror(out))) {
		*err = xasprintf("cannot write the report: output error");
		rc = -1;
	}
	return rc;
}
