/*
 * Host aliases; see hosts.h.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "importers/hosts.h"
#include "importers/input.h"
#include "importers/lines.h"
#include "model/util/sbuf.h"
#include "model/util/text.h"
#include "model/util/xalloc.h"

/* Both names as valid UTF-8 (invalid bytes become U+FFFD), as import.c
 * makes --host and msource every host it writes, so that they match. */
static int add(struct store *st, const char *alias, const char *name, const char *where, char **err)
{
	struct sbuf a, c;
	int rc = 0;
	sbuf_init(&a);
	sbuf_init(&c);
	text_utf8_repair(&a, alias, strlen(alias));
	text_utf8_repair(&c, name, strlen(name));
	if (strcmp(a.buf, c.buf) && store_add_host_alias(st, a.buf, c.buf) < 0) {
		*err = xasprintf("%s: '%s' is already an alias of '%s'", where, a.buf,
				 store_host(st, a.buf));
		rc = -1;
	}
	sbuf_release(&a);
	sbuf_release(&c);
	return rc;
}

int hosts_add_alias(struct store *st, const char *spec, char **err)
{
	const char *eq = strchr(spec, '=');
	if (!eq || eq == spec || !eq[1]) {
		*err = xasprintf("--host-alias '%s': expected ALIAS=NAME", spec);
		return -1;
	}
	char *alias = xasprintf("%.*s", (int)(eq - spec), spec);
	int rc = add(st, alias, eq + 1, "--host-alias", err);
	free(alias);
	return rc;
}

int hosts_load(struct store *st, const char *path, char **err)
{
	struct input *in = NULL;
	struct lines ls;
	char *s;
	size_t n;
	int r, rc = -1;
	if (input_open(path, &in, err) < 0)
		return -1;
	lines_init(&ls, in);
	while ((r = lines_next(&ls, &s, &n, err)) > 0) {
		char *hash = strchr(s, '#');
		if (hash)
			*hash = '\0';
		char *save = NULL, *name = strtok_r(s, " \t", &save), *alias;
		char where[600];
		snprintf(where, sizeof(where), "%s:%lld", path, (long long)ls.lineno);
		while (name && (alias = strtok_r(NULL, " \t", &save)))
			if (add(st, alias, name, where, err) < 0)
				goto out;
	}
	rc = r < 0 ? -1 : 0;
out:
	lines_release(&ls);
	input_close(in);
	return rc;
}
