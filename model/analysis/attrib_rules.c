/*
 * The user's demand rules (attrib.h: attrib_rules_parse): "TYPE RESOURCE
 * RULE [D]" lines that replace a fitted demand with a known one.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model/analysis/attrib.h"
#include "model/analysis/attrib_int.h"
#include "model/util/xalloc.h"

/* ---- the user's demand rules ---- */

static int rule_fail(char **err, const char *rule, size_t len, const char *why)
{
	*err = xasprintf("demand rule '%.*s': %s", (int)len, rule, why);
	return -1;
}

/* One rule, text[0..len): "TYPE RESOURCE RULE [D]". */
static int parse_rule(const char *text, size_t len, struct attrib_rule *u, char **err)
{
	char w[4][32];
	int n = 0;
	for (size_t i = 0; i < len;) {
		size_t k = 0;
		while (i < len && (text[i] == ' ' || text[i] == '\t'))
			i++;
		if (i == len)
			break;
		if (n == 4)
			return rule_fail(err, text, len, "too many words");
		while (i < len && text[i] != ' ' && text[i] != '\t' && k < sizeof(w[n]) - 1)
			w[n][k++] = text[i++];
		if (i < len && text[i] != ' ' && text[i] != '\t')
			return rule_fail(err, text, len, "a word is too long");
		w[n++][k] = '\0';
	}
	if (n < 3)
		return rule_fail(err, text, len,
				 "write TYPE RESOURCE exact|variable|none [DEMAND]");
	u->dev = u->type = -1;
	for (int c = 0; c < 2; c++)
		for (int t = 0; t < NTYPES; t++)
			if (attrib_type_names[c][t] && !strcmp(attrib_type_names[c][t], w[0]))
				u->dev = c, u->type = t;
	if (u->type < 0)
		return rule_fail(err, text, len,
				 "no such phase type (operator, runtime, annotation, task, other,"
				 " kernel, memcpy, memset)");
	u->res = attrib_res_of(w[1]);
	if (u->res < 0 || u->res >= ATTRIB_NRES)
		return rule_fail(err, text, len, "no such resource (cpu, gpu, gpu-mem, disk, net)");
	if (attrib_res_device(u->res) != u->dev)
		return rule_fail(err, text, len,
				 u->dev ? "device work demands gpu or gpu-mem only"
					: "host work demands cpu, disk or net only");
	static const char *const rules[] = {"exact", "variable", "none"};
	u->rule = -1;
	for (int i = 0; i < 3; i++)
		if (!strcmp(w[2], rules[i]))
			u->rule = i;
	if (u->rule < 0)
		return rule_fail(err, text, len, "the rule is exact, variable or none");
	u->demand = NAN;
	if (n == 4) {
		char *end;
		u->demand = strtod(w[3], &end);
		if (*end || !(u->demand >= 0) || !isfinite(u->demand) ||
		    u->rule == ATTRIB_RULE_NONE)
			return rule_fail(err, text, len,
					 u->rule == ATTRIB_RULE_NONE
					     ? "none takes no demand"
					     : "the demand is a number >= 0");
	}
	return 0;
}

int attrib_rules_parse(const char *text, struct attrib_rules *out, char **err)
{
	size_t alloc = 0;
	memset(out, 0, sizeof(*out));
	for (const char *p = text; p && *p;) {
		size_t len = strcspn(p, ";\n");
		const char *q = p;
		while (q < p + len && (*q == ' ' || *q == '\t'))
			q++;
		if (q < p + len) {
			struct attrib_rule u;
			if (parse_rule(q, len - (size_t)(q - p), &u, err) < 0) {
				attrib_rules_release(out);
				return -1;
			}
			XGROW(out->v, out->n + 1, alloc);
			out->v[out->n++] = u;
		}
		p += len + (p[len] != '\0');
	}
	return 0;
}

void attrib_rules_release(struct attrib_rules *r)
{
	free(r->v);
	memset(r, 0, sizeof(*r));
}
