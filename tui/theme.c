/*
 * Theme files; see theme.h for the model and themes/README.md for the
 * format.  Parsing is line by line with no allocation but the error
 * message, so a hostile file costs at most THEME_MAX_BYTES of reading.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "model/util/sbuf.h"
#include "tui/format.h"
#include "tui/theme.h"
#include "model/util/xalloc.h"

#define ROLE_KEY(name, key) key,
static const char *const role_keys[ROLE_COUNT] = {ROLE_LIST(ROLE_KEY)};
#undef ROLE_KEY

static const char *const colour_names[8] = {"black", "red",	"green", "yellow",
					    "blue",  "magenta", "cyan",	 "white"};

static const struct {
	const char *name;
	unsigned bit;
} attr_names[] = {
    {"bold", THEME_BOLD},	{"dim", THEME_DIM},	  {"underline", THEME_UNDERLINE},
    {"reverse", THEME_REVERSE}, {"italic", THEME_ITALIC},
};

/* xterm's default RGB for colours 0..15 (what "nearest" is measured against). */
static const unsigned char basic_rgb[16][3] = {
    {0, 0, 0},	   {205, 0, 0},	    {0, 205, 0},     {205, 205, 0},   {0, 0, 238}, {205, 0, 205},
    {0, 205, 205}, {229, 229, 229}, {127, 127, 127}, {255, 0, 0},     {0, 255, 0}, {255, 255, 0},
    {92, 92, 255}, {255, 0, 255},   {0, 255, 255},   {255, 255, 255},
};

const char *theme_role_key(enum role r)
{
	return (unsigned)r < ROLE_COUNT ? role_keys[r] : "?";
}

void theme_monochrome(struct theme *t)
{
	memset(t, 0, sizeof(*t));
	snprintf(t->name, sizeof(t->name), "monochrome");
	static const unsigned attrs[ROLE_COUNT] = {
	    [ROLE_NORMAL] = 0,
	    [ROLE_TITLE] = THEME_BOLD,
	    [ROLE_HEADER] = THEME_UNDERLINE,
	    [ROLE_SORTED] = THEME_BOLD | THEME_UNDERLINE,
	    [ROLE_SELECTED] = THEME_REVERSE,
	    [ROLE_BREADCRUMB] = THEME_BOLD,
	    [ROLE_STATUS] = THEME_REVERSE,
	    [ROLE_DIM] = THEME_DIM,
	    [ROLE_MATCH] = THEME_BOLD | THEME_UNDERLINE,
	    [ROLE_BAR] = THEME_BOLD,
	    [ROLE_BAR_ALT] = THEME_DIM,
	    [ROLE_SPARK] = THEME_BOLD,
	    [ROLE_LABEL] = THEME_BOLD,
	    [ROLE_ERROR] = THEME_BOLD | THEME_REVERSE,
	    [ROLE_FILTER] = THEME_BOLD | THEME_UNDERLINE,
	    [ROLE_PROMPT] = THEME_BOLD,
	    [ROLE_FLAME] = THEME_REVERSE,
	    [ROLE_FLAME_ALT] = THEME_REVERSE | THEME_BOLD,
	};
	for (int r = 0; r < ROLE_COUNT; r++)
		t->role[r] = (struct theme_style){-1, -1, attrs[r]};
}

/* The RGB of palette colour c (16..255): the 6x6x6 cube, then 24 greys. */
static void palette_rgb(int c, int rgb[3])
{
	static const int level[6] = {0, 95, 135, 175, 215, 255};
	if (c >= 232) {
		rgb[0] = rgb[1] = rgb[2] = 8 + 10 * (c - 232);
		return;
	}
	c -= 16;
	rgb[0] = level[c / 36];
	rgb[1] = level[c / 6 % 6];
	rgb[2] = level[c % 6];
}

int theme_fallback_colour(int c, int ncolors)
{
	if (c < 0 || c > 255 || ncolors < 8)
		return -1;
	if (ncolors >= 256 || (c < 16 && ncolors >= 16))
		return c;
	int best = c;
	if (c >= 16) {
		int rgb[3];
		long best_d = -1;
		palette_rgb(c, rgb);
		for (int i = 0; i < 16; i++) {
			long d = 0;
			for (int k = 0; k < 3; k++) {
				long e = rgb[k] - basic_rgb[i][k];
				d += e * e;
			}
			if (best_d < 0 || d < best_d) {
				best_d = d;
				best = i;
			}
		}
	}
	/* Eight colours: a bright colour becomes its plain one, as tmux does. */
	return ncolors >= 16 ? best : best & 7;
}

/* A token from the file as error messages quote it: sanitised. */
static char *quoted(const char *tok)
{
	struct sbuf sb;
	sbuf_init(&sb);
	format_sanitize(&sb, tok);
	return sbuf_detach(&sb);
}

/* Sets *err to "ORIGIN:LINE: BEFORE 'TOKEN'AFTER" (no quote when tok is NULL). */
static int fail(char **err, const char *origin, int line, const char *before, const char *tok,
		const char *after)
{
	if (tok) {
		char *q = quoted(tok);
		*err = xasprintf("%s:%d: %s '%s'%s", origin, line, before, q, after);
		free(q);
	} else {
		*err = xasprintf("%s:%d: %s%s", origin, line, before, after);
	}
	return -1;
}

/* 0 with *c set, -1 when s names no colour, -2 when colorN is past 255. */
static int parse_colour(const char *s, int *c)
{
	if (!strcasecmp(s, "default")) {
		*c = -1;
		return 0;
	}
	int base = 0;
	if (!strncasecmp(s, "bright-", 7)) {
		base = 8;
		s += 7;
	} else if (!strncasecmp(s, "colour", 6) || !strncasecmp(s, "color", 5)) {
		const char *d = s + (s[4] == 'u' || s[4] == 'U' ? 6 : 5);
		long v = 0;
		if (!*d)
			return -1;
		for (; *d; d++) {
			if (*d < '0' || *d > '9')
				return -1;
			if (v < 1000)
				v = v * 10 + (*d - '0');
		}
		if (v > 255)
			return -2;
		*c = (int)v;
		return 0;
	}
	for (int i = 0; i < 8; i++)
		if (!strcasecmp(s, colour_names[i])) {
			*c = base + i;
			return 0;
		}
	return -1;
}

static int parse_attr(const char *s, unsigned *bit)
{
	for (size_t i = 0; i < sizeof(attr_names) / sizeof(attr_names[0]); i++)
		if (!strcasecmp(s, attr_names[i].name)) {
			*bit = attr_names[i].bit;
			return 0;
		}
	return -1;
}

static int is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v';
}

/* Splits s in place into at most max whitespace-separated tokens; returns
 * how many there were (which may exceed max: the rest are not stored). */
static int split(char *s, char **tok, int max)
{
	int n = 0;
	for (;;) {
		while (is_blank(*s))
			s++;
		if (!*s)
			return n;
		if (n < max)
			tok[n] = s;
		n++;
		while (*s && !is_blank(*s))
			s++;
		if (*s)
			*s++ = '\0';
	}
}

/* What parsing remembers per role beyond its style. */
struct seen {
	int line; /* where the role was set; 0: not set */
	int bg;	  /* the line gave a background */
};

/* One line (NUL-terminated, comment not yet removed) into t. */
static int parse_line(char *s, const char *origin, int line, struct theme *t, struct seen *seen,
		      char **err)
{
	char *hash = strchr(s, '#');
	if (hash)
		*hash = '\0';
	char *eq = strchr(s, '=');
	char *lhs[2];
	if (!eq) {
		int n = split(s, lhs, 1);
		if (!n)
			return 0;
		return fail(err, origin, line, "missing '=' after", lhs[0], "");
	}
	*eq = '\0';
	int n = split(s, lhs, 2);
	if (n == 0)
		return fail(err, origin, line, "missing role before '='", NULL, "");
	if (n > 1)
		return fail(err, origin, line, "unexpected", lhs[1], " after the role");
	int r = 0;
	while (r < ROLE_COUNT && strcasecmp(lhs[0], role_keys[r]))
		r++;
	if (r == ROLE_COUNT)
		return fail(err, origin, line, "unknown role", lhs[0], "");
	if (seen[r].line) {
		*err = xasprintf("%s:%d: role '%s' already set on line %d", origin, line,
				 role_keys[r], seen[r].line);
		return -1;
	}

	/* A line is at most THEME_MAX_LINE bytes, so this many words fit. */
	char *tok[THEME_MAX_LINE / 2 + 1];
	int ntok = split(eq + 1, tok, (int)(sizeof(tok) / sizeof(tok[0])));
	struct theme_style st = {-1, -1, 0};
	if (!ntok)
		return fail(err, origin, line, "missing colour for", role_keys[r], "");
	int rc = parse_colour(tok[0], &st.fg);
	if (rc == -2)
		return fail(err, origin, line, "colour", tok[0], " out of range (0..255)");
	if (rc < 0)
		return fail(err, origin, line, "unknown colour", tok[0], "");
	int i = 1;
	if (i < ntok) {
		rc = parse_colour(tok[i], &st.bg);
		if (rc == -2)
			return fail(err, origin, line, "colour", tok[i], " out of range (0..255)");
		if (rc == 0) {
			seen[r].bg = 1;
			i++;
		} else {
			unsigned bit;
			if (parse_attr(tok[i], &bit) < 0)
				return fail(err, origin, line, "unknown colour or attribute",
					    tok[i], "");
		}
	}
	for (; i < ntok; i++) {
		unsigned bit;
		int c;
		if (parse_attr(tok[i], &bit) == 0)
			st.attrs |= bit;
		else if (parse_colour(tok[i], &c) != -1)
			return fail(err, origin, line, "unexpected colour", tok[i],
				    " after FG and BG");
		else
			return fail(err, origin, line, "unknown attribute", tok[i], "");
	}
	t->role[r] = st;
	seen[r].line = line;
	return 0;
}

static void set_name(struct theme *t, const char *origin)
{
	const char *base = strrchr(origin, '/');
	base = base ? base + 1 : origin;
	size_t n = strlen(base);
	if (n > 6 && !strcmp(base + n - 6, ".theme"))
		n -= 6;
	if (n >= sizeof(t->name))
		n = sizeof(t->name) - 1;
	memcpy(t->name, base, n);
	t->name[n] = '\0';
}

int theme_parse(const char *text, size_t len, const char *origin, struct theme *t, char **err)
{
	struct seen seen[ROLE_COUNT] = {{0, 0}};
	memset(t, 0, sizeof(*t));
	for (int r = 0; r < ROLE_COUNT; r++)
		t->role[r] = (struct theme_style){-1, -1, 0};
	if (len > THEME_MAX_BYTES) {
		*err = xasprintf("%s: too large (%zu bytes, at most %d)", origin, len,
				 THEME_MAX_BYTES);
		return -1;
	}
	const char *p = text, *end = text + len;
	for (int line = 1; p < end; line++) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = (size_t)((nl ? nl : end) - p);
		if (memchr(p, '\0', n))
			return fail(err, origin, line, "NUL byte in the line", NULL, "");
		if (n && p[n - 1] == '\r')
			n--;
		if (n > THEME_MAX_LINE) {
			char what[64];
			snprintf(what, sizeof(what), "line too long (%zu bytes, at most %d)", n,
				 THEME_MAX_LINE);
			return fail(err, origin, line, what, NULL, "");
		}
		char buf[THEME_MAX_LINE + 1];
		memcpy(buf, p, n);
		buf[n] = '\0';
		if (parse_line(buf, origin, line, t, seen, err) < 0)
			return -1;
		p = nl ? nl + 1 : end;
	}
	for (int r = 0; r < ROLE_COUNT; r++) {
		if (r == ROLE_NORMAL)
			continue;
		if (!seen[r].line)
			t->role[r] = t->role[ROLE_NORMAL];
		else if (!seen[r].bg)
			t->role[r].bg = t->role[ROLE_NORMAL].bg;
	}
	set_name(t, origin);
	return 0;
}

/* Reads a theme file; *buf is the caller's.  0, 1 when it does not exist
 * (only when missing_ok), or -1 with *err set. */
static int read_file(const char *path, char **buf, size_t *len, int missing_ok, char **err)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0) {
		if (missing_ok && (errno == ENOENT || errno == ENOTDIR))
			return 1;
		*err = xasprintf("%s: cannot open: %s", path, strerror(errno));
		return -1;
	}
	struct stat sb;
	int rc = -1;
	*buf = NULL;
	if (fstat(fd, &sb) < 0) {
		*err = xasprintf("%s: cannot stat: %s", path, strerror(errno));
		goto out;
	}
	if (!S_ISREG(sb.st_mode)) {
		*err = xasprintf("%s: not a regular file", path);
		goto out;
	}
	if (sb.st_size > THEME_MAX_BYTES) {
		*err = xasprintf("%s: too large (%lld bytes, at most %d)", path,
				 (long long)sb.st_size, THEME_MAX_BYTES);
		goto out;
	}
	/* One byte more than allowed, to notice a file that grew meanwhile. */
	*buf = xmalloc(THEME_MAX_BYTES + 1);
	*len = 0;
	for (;;) {
		ssize_t got = read(fd, *buf + *len, THEME_MAX_BYTES + 1 - *len);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			*err = xasprintf("%s: read error: %s", path, strerror(errno));
			goto out;
		}
		if (got == 0)
			break;
		*len += (size_t)got;
		if (*len > THEME_MAX_BYTES) {
			*err = xasprintf("%s: too large (over %d bytes)", path, THEME_MAX_BYTES);
			goto out;
		}
	}
	rc = 0;
out:
	close(fd);
	if (rc < 0) {
		free(*buf);
		*buf = NULL;
	}
	return rc;
}

/* The directories themes are looked up in, in order, without duplicates;
 * returns how many (at most 3), each owned by the caller. */
static int search_dirs(char *dirs[3])
{
	int n = 0;
	const char *cand[3] = {NULL, NULL, NULL};
	char exe[4096];
	const char *env = getenv("GRADEML_THEME_DIR");
	if (env && *env)
		cand[0] = env;
#ifdef GRADEML_THEME_DIR
	cand[1] = GRADEML_THEME_DIR;
#endif
	ssize_t k = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (k > 0) {
		exe[k] = '\0';
		/* build/grademl-tui -> build -> . -> ./themes */
		for (int up = 0; up < 2; up++) {
			char *slash = strrchr(exe, '/');
			if (slash)
				*slash = '\0';
			else
				exe[0] = '\0';
		}
		size_t len = strlen(exe);
		if (len + sizeof("/themes") <= sizeof(exe)) {
			memcpy(exe + len, "/themes", sizeof("/themes"));
			cand[2] = exe;
		}
	}
	for (int i = 0; i < 3; i++) {
		int dup = !cand[i];
		for (int j = 0; j < n && !dup; j++)
			dup = !strcmp(dirs[j], cand[i]);
		if (!dup)
			dirs[n++] = xstrdup(cand[i]);
	}
	return n;
}

int theme_load(const char *name, struct theme *t, char **err)
{
	char *buf = NULL, *path = NULL, *dirs[3];
	size_t len = 0;
	int rc = -1, ndirs = 0;
	if (!name || !*name) {
		*err = xstrdup("no theme name given");
		return -1;
	}
	if (strchr(name, '/')) {
		if (read_file(name, &buf, &len, 0, err) < 0)
			return -1;
		rc = theme_parse(buf, len, name, t, err);
		free(buf);
		return rc;
	}
	ndirs = search_dirs(dirs);
	for (int i = 0; i < ndirs; i++) {
		free(path);
		path = xasprintf("%s/%s.theme", dirs[i], name);
		int got = read_file(path, &buf, &len, 1, err);
		if (got < 0)
			goto out;
		if (got == 0) {
			rc = theme_parse(buf, len, path, t, err);
			goto out;
		}
	}
	if (!strcmp(name, "monochrome")) {
		theme_monochrome(t);
		rc = 0;
		goto out;
	}
	struct sbuf msg;
	sbuf_init(&msg);
	char *q = quoted(name);
	sbuf_addf(&msg, "theme '%s' not found", q);
	free(q);
	if (!ndirs)
		sbuf_adds(&msg, " (no theme directory: set GRADEML_THEME_DIR)");
	for (int i = 0; i < ndirs; i++)
		sbuf_addf(&msg, "%s%s", i ? ", " : " in ", dirs[i]);
	*err = sbuf_detach(&msg);
out:
	free(buf);
	free(path);
	for (int i = 0; i < ndirs; i++)
		free(dirs[i]);
	return rc;
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

size_t theme_list(char ***names)
{
	char *dirs[3];
	int ndirs = search_dirs(dirs);
	char **v = NULL;
	size_t n = 0, alloc = 0;
	XGROW(v, 1, alloc);
	v[n++] = xstrdup("monochrome");
	for (int i = 0; i < ndirs; i++) {
		DIR *d = opendir(dirs[i]);
		struct dirent *e;
		while (d && (e = readdir(d))) {
			size_t k = strlen(e->d_name);
			if (e->d_name[0] == '.' || k <= 6 || strcmp(e->d_name + k - 6, ".theme"))
				continue;
			XGROW(v, n + 1, alloc);
			v[n++] = xstrndup(e->d_name, k - 6);
		}
		if (d)
			closedir(d);
		free(dirs[i]);
	}
	qsort(v, n, sizeof(*v), cmp_names);
	size_t out = 0;
	for (size_t i = 0; i < n; i++) {
		if (out && !strcmp(v[out - 1], v[i]))
			free(v[i]);
		else
			v[out++] = v[i];
	}
	*names = v;
	return out;
}
