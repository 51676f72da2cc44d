/*
 * The streaming JSON cutter; see jcut.h.
 */
#include <stdlib.h>
#include <string.h>

#include "importers/jcut.h"
#include "model/util/sbuf.h"
#include "model/util/xalloc.h"

#define STR_MAX 200

enum { C_OBJECT = 1, C_ARRAY = 2 };

struct jcut {
	unsigned char type[JCUT_DEPTH];
	char key[JCUT_DEPTH][JCUT_KEY]; /* the key that opened each container */
	int depth;
	int started, done; /* the top-level value opened, closed */
	int in_string, escape;
	char str[STR_MAX]; /* the string or scalar being read, cut */
	size_t str_len;
	int in_scalar;	       /* reading a number, true, false or null */
	int after_colon;       /* the next value is a member's */
	char member[JCUT_KEY]; /* its key */
	struct sbuf cut;
	int cutting, cut_depth;
	int64_t offset;
	const struct jcut_ops *ops;
	void *arg;
	const char *path;
	char **err;
};

const char *jcut_key(const struct jcut *j, int d)
{
	return d >= 0 && d < j->depth ? j->key[d] : "";
}

int jcut_is_array(const struct jcut *j, int d)
{
	return d >= 0 && d < j->depth && j->type[d] == C_ARRAY;
}

/* Keys are kept cut to JCUT_KEY - 1 bytes. */
static void copy_key(char *dst, const char *src)
{
	size_t n = strlen(src);
	if (n > JCUT_KEY - 1)
		n = JCUT_KEY - 1;
	memcpy(dst, src, n);
	dst[n] = '\0';
}

static int fail(struct jcut *j, const char *what)
{
	*j->err = xasprintf("%s: at byte %lld: %s", j->path, (long long)j->offset, what);
	return -1;
}

static void scalar_done(struct jcut *j, int is_string)
{
	j->str[j->str_len] = '\0';
	if (j->after_colon && j->depth > 0 && j->type[j->depth - 1] == C_OBJECT && j->ops->scalar)
		j->ops->scalar(j->arg, j, j->depth - 1, j->member, j->str, is_string);
	j->after_colon = 0;
}

static int end_element(struct jcut *j)
{
	j->cutting = 0;
	if (j->ops->element_text) {
		int rc = j->ops->element_text(j->arg, j->cut.buf, j->cut.len, j->err);
		if (rc != 1) {
			sbuf_reset(&j->cut);
			return rc;
		}
	}
	json_error_t je;
	json_t *e = json_loadb(j->cut.buf, j->cut.len, 0, &je);
	sbuf_reset(&j->cut);
	if (!e) {
		char msg[300];
		snprintf(msg, sizeof(msg), "%s is not valid JSON: %s", j->ops->element_name,
			 je.text);
		return fail(j, msg);
	}
	int rc = j->ops->element(j->arg, e, j->err);
	json_decref(e);
	return rc;
}

/* Whether byte c can change the state inside a cut element. */
static int significant(const struct jcut *j, unsigned char c)
{
	if (j->in_string)
		return c == '"' || c == '\\' || j->escape;
	return c == '"' || c == '{' || c == '}' || c == '[' || c == ']';
}

static int is_scalar_char(unsigned char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       c == '-' || c == '+' || c == '.';
}

/* One byte (while cutting, the caller has copied it). */
static int byte(struct jcut *j, unsigned char c)
{
	if (j->in_string) {
		if (j->escape) {
			j->escape = 0;
			if (c != '"' && c != '\\' && c != '/' && j->str_len < STR_MAX - 1)
				j->str[j->str_len++] = '\\'; /* \n, \u...: kept as written */
		} else if (c == '\\') {
			j->escape = 1;
			return 0;
		} else if (c == '"') {
			j->in_string = 0;
			if (!j->cutting)
				scalar_done(j, 1);
			return 0;
		} else if (c < 0x20 && !j->cutting) {
			return fail(j, "a control character inside a string (not JSON)");
		}
		if (j->str_len < STR_MAX - 1)
			j->str[j->str_len++] = (char)c;
		return 0;
	}
	if (j->in_scalar) {
		if (is_scalar_char(c)) {
			if (j->str_len < STR_MAX - 1)
				j->str[j->str_len++] = (char)c;
			return 0;
		}
		j->in_scalar = 0;
		if (!j->cutting)
			scalar_done(j, 0);
	}
	if (c == ' ' || c == '\n' || c == '\r' || c == '\t')
		return 0;
	if (j->done)
		return fail(j, "data after the end of the document");
	if (!j->started && c != '{' && c != '[')
		return fail(j, "not a JSON object or array");
	switch (c) {
	case '"':
		j->in_string = 1;
		j->str_len = 0;
		break;
	case ':':
		j->str[j->str_len] = '\0';
		copy_key(j->member, j->str);
		j->after_colon = 1;
		break;
	case ',':
		j->after_colon = 0;
		break;
	case '{':
	case '[':
		if (j->depth == JCUT_DEPTH)
			return fail(j, "nested too deeply");
		j->started = 1;
		j->type[j->depth] = c == '{' ? C_OBJECT : C_ARRAY;
		copy_key(j->key[j->depth], j->after_colon ? j->member : "");
		j->after_colon = 0;
		if (c == '{' && !j->cutting && j->depth > 0 && j->type[j->depth - 1] == C_ARRAY &&
		    j->ops->cut(j->arg, j, j->depth - 1)) {
			j->cutting = 1;
			j->cut_depth = j->depth + 1;
			sbuf_reset(&j->cut);
			sbuf_addc(&j->cut, '{');
		}
		j->depth++;
		break;
	case '}':
	case ']':
		if (j->depth == 0 || j->type[j->depth - 1] != (c == '}' ? C_OBJECT : C_ARRAY))
			return fail(j, "brackets do not match");
		j->depth--;
		j->done = j->depth == 0;
		if (j->cutting && j->depth + 1 == j->cut_depth)
			return end_element(j);
		break;
	default:
		if (!is_scalar_char(c))
			return fail(j, "not JSON");
		j->in_scalar = 1;
		j->str_len = 0;
		j->str[j->str_len++] = (char)c;
		break;
	}
	return 0;
}

int jcut_run(struct input *in, const struct jcut_ops *ops, void *arg, int *top, char **err)
{
	struct jcut *j = xcalloc(1, sizeof(*j));
	j->ops = ops;
	j->arg = arg;
	j->path = input_path(in);
	j->err = err;
	unsigned char buf[64 << 10];
	ssize_t n;
	int rc = -1;
	while ((n = input_read(in, buf, sizeof(buf), err)) > 0) {
		/* an element's bytes are copied a run at a time, up to a closing
		 * bracket (which may end it) or the end of buf; only quotes,
		 * escapes and brackets need looking at inside one */
		ssize_t from = 0;
		for (ssize_t i = 0; i < n; i++, j->offset++) {
			int was_cutting = j->cutting;
			if (was_cutting) {
				if (!significant(j, buf[i]))
					continue;
				if (!j->in_string && (buf[i] == '}' || buf[i] == ']')) {
					sbuf_add(&j->cut, buf + from, (size_t)(i + 1 - from));
					from = i + 1;
				}
			}
			if (byte(j, buf[i]) < 0)
				goto out;
			if (!was_cutting || !j->cutting)
				from = i + 1;
			if (j->cut.len + (size_t)(j->cutting ? i + 1 - from : 0) > ops->element_max)
				break;
		}
		if (j->cutting)
			sbuf_add(&j->cut, buf + from, (size_t)(n - from));
		if (j->cut.len > ops->element_max) {
			char msg[100];
			snprintf(msg, sizeof(msg), "%s larger than %zu MB", ops->element_name,
				 ops->element_max >> 20);
			fail(j, msg);
			goto out;
		}
	}
	if (n < 0)
		goto out;
	if (j->in_scalar && !j->cutting)
		scalar_done(j, 0);
	if (!j->started) {
		fail(j, "the file holds no JSON value");
		goto out;
	}
	if (j->depth || j->in_string) {
		fail(j, "the file ends inside the document (truncated?)");
		goto out;
	}
	rc = 0;
out:
	if (top)
		*top = j->started ? (j->type[0] == C_OBJECT ? '{' : '[') : 0;
	sbuf_release(&j->cut);
	free(j);
	return rc;
}
