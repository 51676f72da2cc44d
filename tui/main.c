/*
 * grademl-tui: argument parsing and dispatch to the import, report,
 * analyze, query and explorer front ends.  Exit status: 0 success, 2 any
 * error (bad input, bad usage), with one line on stderr; 3 when memory runs
 * out (model/util/xalloc.c).
 */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <langinfo.h>
#include <locale.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include "importers/importer.h"
#include "importers/promlive.h"
#include "model/analysis/analyze.h"
#include "model/store/export.h"
#include "model/util/outfile.h"
#include "model/util/sbuf.h"
#include "model/util/text.h"
#include "query/exec.h"
#include "query/print.h"
#include "tui/app.h"
#include "tui/diffview.h"
#include "tui/format.h"
#include "tui/glyphs.h"
#include "tui/headless.h"
#include "tui/progress.h"
#include "tui/report.h"
#include "tui/summ.h"
#include "tui/term.h"
#include "model/util/xalloc.h"

#define EXIT_ERROR 2

static const char usage_text[] =
    "usage: grademl-tui import [-o trace.db] [--workflow NAME] [--step NAME] [--host NAME]\n"
    "                          [--format NAME] [--time-offset DUR] [--rank N] [--rules FILE]\n"
    "                          [--host-alias ALIAS=NAME] [--hosts FILE] [--strict] FILE|DIR ...\n"
    "       grademl-tui import [-o trace.db] --prometheus URL [--from T --to T]\n"
    "                          [--prometheus-step DUR] [--prometheus-timeout DUR]\n"
    "                          [--prometheus-token-file FILE] [--promql QUERY --name NAME]...\n"
    "                          [--host-alias ALIAS=NAME] [--hosts FILE] [FILE|DIR ...]\n"
    "       grademl-tui report trace.db [--format text|json] [--hta]\n"
    "       grademl-tui analyze [--demand RULES]... trace.db\n"
    "       grademl-tui diff A.db B.db [--format text|json] [--limit N]\n"
    "       grademl-tui query trace.db 'QUERY' [--format table|csv|json] [--timeout DUR]\n"
    "                         [--max-memory SIZE] [--wide] [--raw]\n"
    "       grademl-tui summary trace.db kernels|ops|api|annotations|ranks [PATH]\n"
    "                         [--format table|csv|json] [--wide]\n"
    "       grademl-tui export -o OUT.json[.gz]|- trace.db [PATH]\n"
    "       grademl-tui [--theme NAME] [--no-color] [--ascii] [--mouse] [--timeout DUR]\n"
    "                   [--max-memory SIZE] trace.db\n"
    "       grademl-tui --keys FILE [--dump FILE] [--size WxH] [--stats] trace.db\n"
    "       grademl-tui import --list-formats\n"
    "       grademl-tui --help | --version\n";

/* Writes "grademl-tui: " and msg to stderr through the screens' sanitiser:
 * the one way out for every message, so that a file name, a cell of a file
 * or a name from trace.db cannot drive the terminal.  msg is one line (a
 * line break in it shows as \x0a) unless lines, where its breaks part the
 * lines of a query error's caret display. */
static void print_error(const char *msg, int lines)
{
	struct sbuf out, line;
	sbuf_init(&out);
	sbuf_init(&line);
	sbuf_adds(&out, "grademl-tui: ");
	for (const char *p = msg;;) {
		const char *nl = lines ? strchr(p, '\n') : NULL;
		size_t n = nl ? (size_t)(nl - p) : strlen(p);
		sbuf_reset(&line);
		sbuf_add(&line, p, n);
		format_sanitize(&out, line.buf);
		sbuf_addc(&out, '\n');
		if (!nl)
			break;
		p = nl + 1;
	}
	fputs(out.buf, stderr);
	sbuf_release(&out);
	sbuf_release(&line);
}

static int usage_error(const char *fmt, const char *arg)
{
	char *msg = xasprintf(fmt, arg);
	print_error(msg, 0);
	free(msg);
	fputs(usage_text, stderr);
	return EXIT_ERROR;
}

static int fail(char *err)
{
	print_error(err ? err : "unknown error", 0);
	free(err);
	return EXIT_ERROR;
}

/* A query error with its caret display, e from query_run (released here):
 * its message and hint are made one line each first, so that a name from
 * trace.db in them cannot add a line. */
static int fail_query(const char *q, struct query_error *e)
{
	struct sbuf msg, hint;
	sbuf_init(&msg);
	sbuf_init(&hint);
	format_sanitize(&msg, e->msg);
	if (e->hint)
		format_sanitize(&hint, e->hint);
	struct query_error safe = {e->pos, e->len, msg.buf, e->hint ? hint.buf : NULL};
	char *text = query_error_format(q, &safe);
	print_error(text, 1);
	free(text);
	sbuf_release(&msg);
	sbuf_release(&hint);
	query_error_release(e);
	return EXIT_ERROR;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Expands directory arguments into their regular files, sorted by name. */
static int expand_paths(char **args, int n, char ***out, size_t *nout, char **err)
{
	size_t alloc = 0, count = 0;
	char **v = NULL;
	for (int i = 0; i < n; i++) {
		struct stat st;
		if (stat(args[i], &st) == 0 && S_ISDIR(st.st_mode)) {
			DIR *d = opendir(args[i]);
			if (!d) {
				*err = xasprintf("%s: cannot read directory", args[i]);
				goto fail;
			}
			size_t before = count;
			struct dirent *de;
			while ((de = readdir(d))) {
				if (de->d_name[0] == '.')
					continue;
				size_t len = strlen(args[i]);
				char *p = xasprintf("%s%s%s", args[i],
						    len && args[i][len - 1] == '/' ? "" : "/",
						    de->d_name);
				struct stat fs;
				if (stat(p, &fs) == 0 && S_ISREG(fs.st_mode)) {
					XGROW(v, count + 1, alloc);
					v[count++] = p;
				} else {
					free(p);
				}
			}
			closedir(d);
			if (count == before) {
				*err = xasprintf("%s: directory holds no files to import", args[i]);
				goto fail;
			}
			qsort(v + before, count - before, sizeof(*v), cmp_str);
		} else {
			XGROW(v, count + 1, alloc);
			v[count++] = xstrdup(args[i]);
		}
	}
	*out = v;
	*nout = count;
	return 0;
fail:
	for (size_t i = 0; i < count; i++)
		free(v[i]);
	free(v);
	return -1;
}

/*
 * An import ends cleanly on the signals that would end it.  The first asks
 * it to stop: store_interrupt removes the file it was building at once,
 * and the transaction rolls back at its next statement or read (these
 * handlers do not restart reads, so a wait on a pipe ends too).  A second
 * signal, or SIGALRM 3 s after the first (unless the commit has begun),
 * ends it at once, which is safe: trace.db never depends on the rollback
 * (model/store/store.c).  An import that committed exits 0, signal or not.  A
 * signal ignored on entry (nohup, a background job) stays ignored; SIGXFSZ
 * is ignored so that a file size limit fails a write (EFBIG) instead of
 * killing the import.  A fault removes the file too, then goes on as it
 * would have.
 */
static const int import_stop_signals[] = {SIGHUP,  SIGINT,  SIGQUIT, SIGTERM,	SIGPIPE,
					  SIGALRM, SIGUSR1, SIGUSR2, SIGVTALRM, SIGXCPU};
static const int import_fault_signals[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGTRAP};
static struct sigaction import_old_fault[sizeof(import_fault_signals) / sizeof(int)];

static void import_die(int sig)
{
	signal(sig, SIG_DFL);
	raise(sig);
}

static void import_on_stop(int sig)
{
	int first = store_interrupted();
	if (first && sig == SIGALRM && store_committing())
		return; /* the 3 s spare a commit: its checkpoint ends by itself */
	if (first) {
		import_die(first);
		return;
	}
	store_interrupt(sig);
	alarm(3);
}

static void import_on_fault(int sig, siginfo_t *info, void *ctx)
{
	store_interrupt(sig);
	for (size_t i = 0; i < sizeof(import_fault_signals) / sizeof(int); i++)
		if (import_fault_signals[i] == sig)
			sigaction(sig, &import_old_fault[i], NULL);
	/* a fault happens again on return, now to the handler before ours */
	if (info->si_code <= 0)
		raise(sig);
}

static void import_signals(void)
{
	struct sigaction sa, old;
	memset(&sa, 0, sizeof(sa));
	sigemptyset(&sa.sa_mask);
	sa.sa_handler = import_on_stop;
	for (size_t i = 0; i < sizeof(import_stop_signals) / sizeof(int); i++) {
		int sig = import_stop_signals[i];
		if (sigaction(sig, NULL, &old) == 0 && old.sa_handler != SIG_IGN)
			sigaction(sig, &sa, NULL);
	}
	sa.sa_flags = SA_SIGINFO;
	sa.sa_sigaction = import_on_fault;
	for (size_t i = 0; i < sizeof(import_fault_signals) / sizeof(int); i++)
		sigaction(import_fault_signals[i], &sa, &import_old_fault[i]);
	signal(SIGXFSZ, SIG_IGN);
}

/* The live Prometheus pull's options (importers/promlive.h). */
enum {
	PROM_URL = 0x200,
	PROM_FROM,
	PROM_TO,
	PROM_STEP,
	PROM_TIMEOUT,
	PROM_TOKEN_FILE,
	PROM_QL,
	PROM_NAME
};

/* One of them into p; 0, or usage_error's status negated. */
static int prometheus_option(struct promlive_opts *p, int c, const char *arg, int *seen)
{
	static char **queries, **names; /* live until exit */
	int64_t v;
	*seen = 1;
	switch (c) {
	case PROM_URL:
		p->url = arg;
		return 0;
	case PROM_FROM:
	case PROM_TO:
		if (promlive_parse_time(arg, &v) < 0)
			return -usage_error(
			    "invalid time '%s' (ISO-8601, e.g. 2026-11-26T10:00:00Z,"
			    " or seconds since the epoch)",
			    arg);
		*(c == PROM_FROM ? &p->from_ns : &p->to_ns) = v;
		return 0;
	case PROM_STEP:
	case PROM_TIMEOUT:
		if (text_parse_duration(arg, &v) < 0 || v < 1000000)
			return -usage_error("invalid duration '%s' (e.g. 15s, 500ms; 1ms at least)",
					    arg);
		*(c == PROM_STEP ? &p->step_ns : &p->timeout_ns) = v;
		return 0;
	case PROM_TOKEN_FILE:
		p->token_file = arg;
		return 0;
	case PROM_QL:
		queries = xrealloc(queries, (p->nqueries + 1) * sizeof(*queries));
		names = xrealloc(names, (p->nqueries + 1) * sizeof(*names));
		queries[p->nqueries] = (char *)arg;
		names[p->nqueries++] = NULL;
		p->queries = queries;
		p->names = names;
		return 0;
	default: /* PROM_NAME */
		if (!p->nqueries || names[p->nqueries - 1])
			return -usage_error("--name '%s' names no --promql before it", arg);
		names[p->nqueries - 1] = (char *)arg;
		return 0;
	}
}

/* The options make one pull; 0, or usage_error's status negated. */
static int prometheus_check(const struct promlive_opts *p)
{
	if (!p->url)
		return -usage_error("%s", "--from, --to, --promql and the --prometheus-* options"
					  " need --prometheus URL");
	if (!p->from_ns != !p->to_ns)
		return -usage_error("%s", "--from and --to go together");
	for (size_t i = 0; i < p->nqueries; i++)
		if (!p->names[i])
			return -usage_error("--promql '%s' needs a --name after it", p->queries[i]);
	return 0;
}

static int cmd_import(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"output", required_argument, NULL, 'o'},
	    {"workflow", required_argument, NULL, 'w'},
	    {"step", required_argument, NULL, 's'},
	    {"host", required_argument, NULL, 'H'},
	    {"format", required_argument, NULL, 'f'},
	    {"time-offset", required_argument, NULL, 't'},
	    {"rules", required_argument, NULL, 'r'},
	    {"host-alias", required_argument, NULL, 'A'},
	    {"hosts", required_argument, NULL, 'F'},
	    {"rank", required_argument, NULL, 'R'},
	    {"strict", no_argument, NULL, 'S'}, /* JSON as it is (importers/chrome_json.c) */
	    {"list-formats", no_argument, NULL, 'L'},
	    {"help", no_argument, NULL, 'h'},
	    {"prometheus", required_argument, NULL, PROM_URL},
	    {"from", required_argument, NULL, PROM_FROM},
	    {"to", required_argument, NULL, PROM_TO},
	    {"prometheus-step", required_argument, NULL, PROM_STEP},
	    {"prometheus-timeout", required_argument, NULL, PROM_TIMEOUT},
	    {"prometheus-token-file", required_argument, NULL, PROM_TOKEN_FILE},
	    {"promql", required_argument, NULL, PROM_QL},
	    {"name", required_argument, NULL, PROM_NAME},
	    {NULL, 0, NULL, 0},
	};
	struct import_opts o = {0};
	static struct promlive_opts prom; /* --prometheus and its options */
	int prom_opts = 0;
	const char *db = "trace.db", *format = NULL;
	static char **aliases; /* --host-alias values: live until exit */
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
		switch (c) {
		case 'o':
			db = optarg;
			break;
		case 'w':
			o.workflow = optarg;
			break;
		case 's':
			o.step = optarg;
			break;
		case 'H':
			o.host = optarg;
			break;
		case 'f':
			format = optarg;
			break;
		case 't':
			if (text_parse_duration(optarg, &o.time_offset_ns) < 0)
				return usage_error("invalid --time-offset '%s' (e.g. 1.5s, -200ms)",
						   optarg);
			o.has_time_offset = 1;
			break;
		case 'R': {
			int64_t r;
			if (text_parse_int64(optarg, strlen(optarg), &r) < 0 || r < 0 ||
			    r >= 1 << 30)
				return usage_error("invalid --rank '%s' (a whole number from 0)",
						   optarg);
			o.rank = (int)r;
			o.has_rank = 1;
			break;
		}
		case 'r':
			o.rules = optarg;
			break;
		case 'A':
			aliases = xrealloc(aliases, (o.nhost_aliases + 1) * sizeof(*aliases));
			aliases[o.nhost_aliases++] = optarg;
			o.host_aliases = aliases;
			break;
		case 'F':
			o.hosts_file = optarg;
			break;
		case 'S':
			o.strict = 1;
			break;
		case 'L':
			for (const struct importer *const *i = importer_list(); *i; i++)
				printf("%-10s %s\n", (*i)->name, (*i)->description);
			return 0;
		case 'h':
			fputs(usage_text, stdout);
			return 0;
		case PROM_URL:
		case PROM_FROM:
		case PROM_TO:
		case PROM_STEP:
		case PROM_TIMEOUT:
		case PROM_TOKEN_FILE:
		case PROM_QL:
		case PROM_NAME:
			if (prometheus_option(&prom, c, optarg, &prom_opts) < 0)
				return EXIT_ERROR;
			break;
		default:
			return usage_error("%s", "invalid option to import");
		}
	}
	if (prom_opts && prometheus_check(&prom) < 0)
		return EXIT_ERROR;
	if (prom.url)
		o.prometheus = &prom;
	if (optind >= argc && !prom.url)
		return usage_error("%s",
				   "import needs at least one FILE or DIR (or --prometheus URL)");
	if (o.rules && !format)
		format = "log"; /* a rules file means a text log */
	char **paths;
	size_t n;
	char *err = NULL;
	if (expand_paths(argv + optind, argc - optind, &paths, &n, &err) < 0)
		return fail(err);
	import_signals();
	struct import_summary summary = {0};
	o.summary = &summary;
	setlocale(LC_CTYPE, ""); /* for the glyphs; no importer reads it */
	struct progress *pg = progress_start(
	    STDERR_FILENO, paths, n, glyphs_get(strcmp(nl_langinfo(CODESET), "UTF-8") != 0)->more);
	int rc = import_files(db, paths, n, format, &o, &err);
	progress_finish(pg, db, rc == 0 ? &summary : NULL);
	import_summary_release(&summary);
	for (size_t i = 0; i < n; i++)
		free(paths[i]);
	free(paths);
	if (rc < 0) {
		int status = fail(err);
		if (store_interrupted()) /* as the shell expects, now that all is tidy */
			import_die(store_interrupted());
		return status;
	}
	return 0; /* committed, even if a signal came meanwhile */
}

/* --format text|json of command cmd into *fmt; 0, or usage_error's status. */
static int text_or_json(const char *cmd, const char *arg, enum report_format *fmt)
{
	if (!strcmp(arg, "json"))
		*fmt = REPORT_JSON;
	else if (!strcmp(arg, "text"))
		*fmt = REPORT_TEXT;
	else {
		char *what = xasprintf("unknown %s format '%%s' (text or json)", cmd);
		int rc = usage_error(what, arg);
		free(what);
		return rc;
	}
	return 0;
}

static int cmd_report(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"format", required_argument, NULL, 'f'},
	    {"hta", no_argument, NULL, 'H'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	enum report_format fmt = REPORT_TEXT;
	struct report_opts ro = {0};
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'f':
			if ((c = text_or_json("report", optarg, &fmt)) != 0)
				return c;
			break;
		case 'H':
			ro.hta = 1;
			break;
		case 'h':
			fputs(usage_text, stdout);
			return 0;
		default:
			return usage_error("%s", "invalid option to report");
		}
	}
	if (argc - optind != 1)
		return usage_error("%s", "report needs exactly one trace.db");
	char *err = NULL;
	if (report_write_opts(stdout, argv[optind], fmt, &ro, &err) < 0)
		return fail(err);
	return 0;
}

/* grademl-tui diff A.db B.db: what B spent against A, by name (model/analysis/diff.h). */
static int cmd_diff(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"format", required_argument, NULL, 'f'},
	    {"limit", required_argument, NULL, 'l'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	enum report_format fmt = REPORT_TEXT;
	long long limit = -1;
	int c;
	char *end;
	optind = 1;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'f':
			if ((c = text_or_json("diff", optarg, &fmt)) != 0)
				return c;
			break;
		case 'l':
			errno = 0;
			limit = strtoll(optarg, &end, 10);
			if (errno || end == optarg || *end || limit < 0)
				return usage_error("--limit wants a count, not '%s'", optarg);
			break;
		case 'h':
			fputs(usage_text, stdout);
			return 0;
		default:
			return usage_error("%s", "invalid option to diff");
		}
	}
	if (argc - optind != 2)
		return usage_error("%s", "diff needs two trace.db files, A and B");
	if (limit < 0) /* text for people: the top of each level; JSON all of it */
		limit = fmt == REPORT_TEXT ? 20 : 0;
	char *err = NULL;
	if (diffview_write(stdout, argv[optind], argv[optind + 1], fmt, (size_t)limit, &err) < 0)
		return fail(err);
	return 0;
}

/* grademl-tui analyze [--demand RULES]... trace.db: runs the analyses and
 * caches them in the file; --demand replaces attribution's demand rules
 * (model/analysis/attrib.h), kept in the file for later runs ('' drops them). */
static int cmd_analyze(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"demand", required_argument, NULL, 'd'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	struct sbuf rules = SBUF_INIT;
	int c, given = 0;
	optind = 1;
	sbuf_init(&rules);
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'd':
			if (*optarg)
				sbuf_addf(&rules, "%s%s", rules.len ? "; " : "", optarg);
			given = 1;
			break;
		case 'h':
			sbuf_release(&rules);
			fputs(usage_text, stdout);
			return 0;
		default:
			sbuf_release(&rules);
			return usage_error("%s", "invalid option to analyze");
		}
	}
	if (argc - optind != 1) {
		sbuf_release(&rules);
		return usage_error("%s", "analyze needs exactly one trace.db");
	}
	const char *path = argv[optind];
	struct store *st;
	struct analysis an;
	char *err = NULL;
	struct stat sb;
	if (stat(path, &sb) < 0) {
		sbuf_release(&rules);
		return fail(xasprintf("%s: cannot open: %s", path, strerror(errno)));
	}
	if (store_open(path, STORE_WRITE, &st, &err) < 0) {
		sbuf_release(&rules);
		return fail(err);
	}
	if (store_begin(st, &err) < 0 || (given && analysis_keep_rules(st, rules.buf, &err) < 0) ||
	    analysis_run_rules(st, given ? rules.buf : NULL, &an, &err) < 0) {
		sbuf_release(&rules);
		store_close(st);
		return fail(err);
	}
	sbuf_release(&rules);
	if (analysis_save(st, &an, &err) < 0 || store_commit(st, &err) < 0) {
		analysis_release(&an);
		store_close(st);
		return fail(err);
	}
	struct sbuf shown;
	sbuf_init(&shown);
	format_sanitize(&shown, path);
	printf("%s: %zu issues, %zu imbalanced groups; `grademl-tui report %s` lists them\n",
	       shown.buf, an.nissues, an.nimb, shown.buf);
	sbuf_release(&shown);
	analysis_release(&an);
	store_close(st);
	return 0;
}

/* --timeout DUR: a duration with a unit, or seconds; 0 for none. */
static int parse_timeout(const char *s, int64_t *ns)
{
	if (text_parse_units(s, strlen(s), 1000000000, ns) < 0 && text_parse_duration(s, ns) < 0)
		return -1;
	return *ns < 0 ? -1 : 0;
}

/* --max-memory SIZE: bytes with a unit; 0 for none. */
static int parse_memory(const char *s, int64_t *bytes)
{
	return text_parse_size(s, bytes) < 0 || *bytes < 0 ? -1 : 0;
}

static void fit_cell(struct sbuf *out, const char *s, int cols)
{
	format_fit(out, s, cols, 0);
}

/* How query and summary print a table: on a terminal (tty) it fits the
 * terminal's width unless wide, and shows times as dates.  Needs
 * setlocale(LC_CTYPE) done for the glyphs. */
static struct query_print_hooks table_hooks(int tty, int wide, int raw)
{
	return (struct query_print_hooks){
	    .sanitize = format_sanitize,
	    .width = format_width,
	    .fit = fit_cell,
	    .cols = tty && !wide ? format_term_cols(STDOUT_FILENO) : 0,
	    .more = glyphs_get(strcmp(nl_langinfo(CODESET), "UTF-8") != 0)->more,
	    .clock = tty,
	    .raw = raw,
	    .short_names = tty,
	    .cut_distinct = format_cut_distinct,
	};
}

/* grademl-tui query trace.db 'QUERY' [--format table|csv|json] [--timeout
 * DUR] [--max-memory SIZE] [--wide] [--raw]: runs one query (man
 * grademl-query(7)) read-only within its limits and prints its result; a
 * bad query prints the error with a caret under its column and exits 2. */
static int cmd_query(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"format", required_argument, NULL, 'f'},
	    {"timeout", required_argument, NULL, 't'},
	    {"max-memory", required_argument, NULL, 'm'},
	    {"wide", no_argument, NULL, 'w'},
	    {"raw", no_argument, NULL, 'r'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	enum query_format fmt = QF_TABLE;
	int wide = 0, raw = 0;
	struct query_limits lim = {.timeout_ns = QUERY_TIMEOUT_NS, .max_memory = QUERY_MAX_MEMORY};
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'f':
			if (query_format_parse(optarg, &fmt) < 0)
				return usage_error("unknown query format '%s' (table, csv or json)",
						   optarg);
			break;
		case 't':
			if (parse_timeout(optarg, &lim.timeout_ns) < 0)
				return usage_error(
				    "invalid --timeout '%s' (e.g. 60s, 10min, 0 for none)", optarg);
			break;
		case 'm':
			if (parse_memory(optarg, &lim.max_memory) < 0)
				return usage_error(
				    "invalid --max-memory '%s' (e.g. 512MiB, 4GiB, 0 for none)",
				    optarg);
			break;
		case 'w':
			wide = 1;
			break;
		case 'r':
			raw = 1;
			break;
		case 'h':
			fputs(usage_text, stdout);
			return 0;
		default:
			return usage_error("%s", "invalid option to query");
		}
	}
	if (argc - optind != 2)
		return usage_error("%s", "query needs a trace.db and a query");
	sqlite3 *db;
	struct query_result r;
	/* on a terminal the table fits its width and shows times as dates */
	int tty = isatty(STDOUT_FILENO);
	setlocale(LC_CTYPE, "");
	const struct query_print_hooks hooks = table_hooks(tty, wide, raw);
	char *err = NULL;
	if (query_open(argv[optind], &lim, &db, &err) < 0)
		return fail(err);
	struct query_error qe = {0};
	if (query_run(db, argv[optind + 1], 0, &lim, &r, &qe, &err) < 0) {
		query_close(db);
		if (!qe.msg)
			return fail(err);
		free(err);
		return fail_query(argv[optind + 1], &qe);
	}
	int rc = query_print(stdout, &r, fmt, &hooks, tty, &err);
	query_result_release(&r);
	query_close(db);
	return rc < 0 ? fail(err) : 0;
}

/* Opens the model of db and finds the phase at path (:goto's syntax; NULL:
 * none, *root 0).  0, or -1 with *err and *m NULL. */
static int model_open_at(const char *db, const char *path, struct model **m, int64_t *root,
			 char **err)
{
	struct tree_view tv = {0};
	*root = 0;
	int rc = model_open(db, m, err);
	if (rc == 0 && path) {
		rc = tree_view_init(&tv, *m, err);
		if (rc == 0 && (rc = tree_view_goto(&tv, path, err)) == 0)
			*root = tree_view_selected(&tv)->id;
		tree_view_release(&tv);
	}
	if (rc < 0) {
		model_free(*m);
		*m = NULL;
	}
	return rc;
}

/* grademl-tui summary trace.db kernels|ops|api|annotations|ranks [PATH] [--format FMT]
 * [--wide]: the explorer's summary (tui/summ.h) of the phase at PATH, of
 * every phase without one, printed as a query result is (fitted to a
 * terminal's width as query's table is). */
static int cmd_summary(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"format", required_argument, NULL, 'f'},
	    {"wide", no_argument, NULL, 'w'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	enum query_format fmt = QF_TABLE;
	int c, wide = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'f':
			if (query_format_parse(optarg, &fmt) < 0)
				return usage_error(
				    "unknown summary format '%s' (table, csv or json)", optarg);
			break;
		case 'w':
			wide = 1;
			break;
		case 'h':
			fputs(usage_text, stdout);
			return 0;
		default:
			return usage_error("%s", "invalid option to summary");
		}
	}
	if (argc - optind < 2 || argc - optind > 3)
		return usage_error("%s", "summary needs a trace.db, kernels, ops, api, annotations "
					 "or ranks, and a PATH or none");
	int kind = summ_parse(argv[optind + 1]);
	if (kind < 0)
		return usage_error("unknown summary '%s' (kernels, ops, api, annotations or ranks)",
				   argv[optind + 1]);
	struct model *m = NULL;
	struct query_result r;
	char *err = NULL;
	int64_t root = 0;
	int rc = model_open_at(argv[optind], argc - optind == 3 ? argv[optind + 2] : NULL, &m,
			       &root, &err);
	char *why = NULL;
	if (rc == 0)
		rc = summ_table(model_store(m), root, kind, 1, &r, &why, &err);
	if (rc == 0) {
		int tty = isatty(STDOUT_FILENO);
		setlocale(LC_CTYPE, "");
		const struct query_print_hooks hooks = table_hooks(tty, wide, 0);
		rc = query_print(stdout, &r, fmt, &hooks, tty, &err);
		query_result_release(&r);
	}
	if (rc == 0 && why) /* the table is empty: say why, beside it */
		fprintf(stderr, "grademl-tui summary: %s\n", why);
	free(why);
	model_free(m);
	return rc < 0 ? fail(err) : 0;
}

static void export_on_signal(int sig)
{
	outfile_interrupt();
	signal(sig, SIG_DFL);
	raise(sig);
}

/* grademl-tui export -o OUT trace.db [PATH]: the phases (of the subtree at
 * PATH) as Chrome trace JSON (model/store/export.h); a signal removes the file
 * being written.  Its counts go to stderr when the JSON goes to stdout. */
static int cmd_export(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"output", required_argument, NULL, 'o'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	static const int sigs[] = {SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGPIPE};
	const char *out = NULL;
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
		switch (c) {
		case 'o':
			out = optarg;
			break;
		case 'h':
			fputs(usage_text, stdout);
			return 0;
		default:
			return usage_error("%s", "invalid option to export");
		}
	}
	if (!out || !*out)
		return usage_error("%s",
				   "export needs -o OUT.json (or OUT.json.gz, or - for stdout)");
	if (argc - optind < 1 || argc - optind > 2)
		return usage_error("%s", "export needs a trace.db, and a PATH or none");
	struct model *m = NULL;
	struct export_stats es;
	char *err = NULL;
	int64_t root;
	if (model_open_at(argv[optind], argc - optind == 2 ? argv[optind + 1] : NULL, &m, &root,
			  &err) < 0)
		return fail(err);
	for (size_t i = 0; i < sizeof(sigs) / sizeof(*sigs); i++) {
		struct sigaction old;
		if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler != SIG_IGN)
			signal(sigs[i], export_on_signal);
	}
	signal(SIGXFSZ, SIG_IGN); /* a file size limit fails a write (EFBIG) */
	int to_stdout = outfile_is_stdout(out, OUTFILE_DASH);
	int rc = export_chrome(model_store(m), root, out, &es, &err);
	model_free(m);
	if (rc < 0)
		return fail(err);
	FILE *info = to_stdout ? stderr : stdout;
	struct sbuf shown;
	sbuf_init(&shown);
	format_sanitize(&shown, out);
	fprintf(info, "%s: %lld phases, %lld flows, %lld instants, %lld samples\n", shown.buf,
		(long long)es.phases, (long long)es.flows, (long long)es.instants,
		(long long)es.samples);
	if (es.unbound)
		fprintf(info,
			"%s: %lld flow ends at the start of a phase whose children cover all of it"
			" (a reader may bind them to a child)\n",
			shown.buf, (long long)es.unbound);
	sbuf_release(&shown);
	return 0;
}

/* grademl-tui [options] trace.db: the explorer on a terminal, the headless
 * mode with --keys/--dump, and the report when stdout is not a terminal. */
static int cmd_explore(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"theme", required_argument, NULL, 't'},
	    {"no-color", no_argument, NULL, 'n'},
	    {"ascii", no_argument, NULL, 'a'},
	    {"mouse", no_argument, NULL, 'm'},
	    {"keys", required_argument, NULL, 'k'},
	    {"dump", required_argument, NULL, 'd'},
	    {"size", required_argument, NULL, 's'},
	    {"stats", no_argument, NULL, 'S'},
	    {"max-memory", required_argument, NULL, 'M'},
	    {"timeout", required_argument, NULL, 'T'},
	    {NULL, 0, NULL, 0},
	};
	struct term_opts t = {.max_memory = QUERY_MAX_MEMORY, .timeout_ns = QUERY_TIMEOUT_NS};
	struct headless_opts h = {.max_memory = QUERY_MAX_MEMORY, .timeout_ns = QUERY_TIMEOUT_NS};
	int c, headless = 0;
	char *err = NULL;
	h.w = APP_MIN_W;
	h.h = APP_MIN_H;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 't':
			t.theme = optarg;
			break;
		case 'n':
			t.no_color = 1;
			break;
		case 'a':
			t.ascii = 1;
			break;
		case 'm':
			t.mouse = 1;
			break;
		case 'k':
			h.keys = optarg;
			headless = 1;
			break;
		case 'd':
			h.dump = optarg;
			headless = 1;
			break;
		case 's': {
			char tail;
			if (sscanf(optarg, "%dx%d%c", &h.w, &h.h, &tail) != 2 || h.w < 1 ||
			    h.h < 1 || h.w > 1000 || h.h > 1000)
				return usage_error("bad --size '%s' (WIDTHxHEIGHT, e.g. 80x24)",
						   optarg);
			break;
		}
		case 'S':
			h.stats = 1;
			break;
		case 'M':
			if (parse_memory(optarg, &t.max_memory) < 0)
				return usage_error(
				    "invalid --max-memory '%s' (e.g. 512MiB, 4GiB, 0 for none)",
				    optarg);
			h.max_memory = t.max_memory;
			break;
		case 'T':
			if (parse_timeout(optarg, &t.timeout_ns) < 0)
				return usage_error(
				    "invalid --timeout '%s' (e.g. 60s, 10min, 0 for none)", optarg);
			h.timeout_ns = t.timeout_ns;
			break;
		default:
			return usage_error("%s", "invalid option");
		}
	}
	if (optind != argc - 1)
		return usage_error("%s",
				   optind < argc ? "expected one trace.db" : "missing trace.db");
	t.db = h.db = argv[optind];
	setlocale(LC_ALL, "");
	if (strcmp(nl_langinfo(CODESET), "UTF-8"))
		t.ascii = 1;
	const char *nc = getenv("NO_COLOR");
	if (nc && *nc)
		t.no_color = 1;
	if (headless) {
		h.ascii = t.ascii;
		if (!h.dump)
			h.dump = "-";
		return headless_run(&h, &err) < 0 ? fail(err) : 0;
	}
	const char *term = getenv("TERM");
	if (!isatty(STDOUT_FILENO) || !isatty(STDIN_FILENO) || !term || !strcmp(term, "dumb")) {
		if (report_write(stdout, t.db, REPORT_TEXT, &err) < 0)
			return fail(err);
		return 0;
	}
	return term_run(&t, &err) < 0 ? fail(err) : 0;
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return usage_error("%s", "missing command or trace.db");
	const char *cmd = argv[1];
	if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h") || !strcmp(cmd, "help")) {
		fputs(usage_text, stdout);
		return 0;
	}
	if (!strcmp(cmd, "--version") || !strcmp(cmd, "-V")) {
		printf("grademl-tui %s\n", GRADEML_VERSION);
		return 0;
	}
	if (!strcmp(cmd, "import"))
		return cmd_import(argc - 1, argv + 1);
	if (!strcmp(cmd, "report"))
		return cmd_report(argc - 1, argv + 1);
	if (!strcmp(cmd, "diff"))
		return cmd_diff(argc - 1, argv + 1);
	if (!strcmp(cmd, "analyze"))
		return cmd_analyze(argc - 1, argv + 1);
	if (!strcmp(cmd, "query"))
		return cmd_query(argc - 1, argv + 1);
	if (!strcmp(cmd, "summary"))
		return cmd_summary(argc - 1, argv + 1);
	if (!strcmp(cmd, "export"))
		return cmd_export(argc - 1, argv + 1);
	return cmd_explore(argc, argv);
}
