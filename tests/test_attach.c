/*
 * Unit tests of metric attachment (model/analysis/attach.c): a trace on host "a"
 * with a CPU op and a kernel on each of two GPUs, nvidia-smi rows for both
 * GPUs of "a", and one GPU of host "b"; which series attach to which phase,
 * and the busiest over a phase's window, computed by hand below.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "model/analysis/attach.h"
#include "tests/importfx.h"

/* Host "a": the CPU op runs 0..1000 us, kernel k0 on GPU 0 at 100..300 us,
 * kernel k1 on GPU 1 at 400..900 us (absolute: after the year 2000). */
static const char trace[] =
    "{\"traceEvents\": ["
    "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"op\",\"pid\":10,\"tid\":10,"
    "\"ts\":1700000000000000,\"dur\":1000},"
    "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k0\",\"pid\":0,\"tid\":7,"
    "\"ts\":1700000000000100,\"dur\":200},"
    "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k1\",\"pid\":1,\"tid\":7,"
    "\"ts\":1700000000000400,\"dur\":500},"
    "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":0,\"tid\":7,\"args\":{\"name\":\"stream 7\"}},"
    "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":1,\"tid\":7,\"args\":{\"name\":\"stream 7\"}}"
    "]}";

/* 2023-11-14 22:13:20 UTC is 1700000000 s.  GPU 0 at 20% then 60% from
 * +200 us; GPU 1 at 90% until +1 s (a series that never changes would not
 * count as busy). */
static const char smi_a[] = "timestamp, index, utilization.gpu [%]\n"
			    "2023/11/14 22:13:20.000, 0, 20 %\n"
			    "2023/11/14 22:13:20.000, 1, 90 %\n"
			    "2023/11/14 22:13:20.0002, 0, 60 %\n"
			    "2023/11/14 22:13:21.000, 0, 60 %\n"
			    "2023/11/14 22:13:21.000, 1, 80 %\n";
static const char smi_b[] = "timestamp, index, utilization.gpu [%]\n"
			    "2023/11/14 22:13:20.000, 0, 100 %\n"
			    "2023/11/14 22:13:21.000, 0, 100 %\n";

static int setup(void **state)
{
	if (importfx_setup(state, "attach", "in") < 0)
		return -1;
	struct fx *f = *state;
	char *err = NULL;
	struct import_opts a = {.host = "a", .step = "s"}, b = {.host = "b"};
	if (importfx_import(f, trace, &a, &err) < 0 || importfx_import(f, smi_a, &a, &err) < 0 ||
	    importfx_import(f, smi_b, &b, &err) < 0) {
		fprintf(stderr, "%s\n", err);
		free(err);
		return -1;
	}
	return 0;
}

/* The node named name anywhere under n, loading children as it goes. */
static struct mnode *find(struct model *m, struct mnode *n, const char *name)
{
	char *err = NULL;
	if (!strcmp(n->name, name))
		return n;
	if (model_children(m, n, &err) < 0)
		fail_msg("%s", err);
	for (size_t i = 0; i < n->nchildren; i++) {
		struct mnode *hit = find(m, n->children[i], name);
		if (hit)
			return hit;
	}
	return NULL;
}

/* "host/resource" of every series attached to the node named name. */
static void attached(struct model *m, const char *name, char *out, size_t cap)
{
	const struct mseries *s;
	size_t n;
	char *err = NULL;
	struct mnode *node = find(m, model_root(m), name);
	assert_non_null(node);
	assert_int_equal(model_series(m, &s, &n, &err), 0);
	out[0] = '\0';
	for (size_t i = 0; i < n; i++)
		if (model_attached(m, node, &s[i]))
			snprintf(out + strlen(out), cap - strlen(out), "%s%s/%s", out[0] ? " " : "",
				 s[i].host, s[i].resource);
}

static void by_host_and_device(void **state)
{
	struct fx *f = *state;
	struct model *m;
	char *err = NULL, got[256];
	assert_int_equal(model_open(f->db, &m, &err), 0);
	attached(m, "op", got, sizeof(got));
	assert_string_equal(got, ""); /* a CPU thread: no GPU of its host */
	attached(m, "k0", got, sizeof(got));
	assert_string_equal(got, "a/gpu0");
	attached(m, "k1", got, sizeof(got));
	assert_string_equal(got, "a/gpu1");
	attached(m, "s", got, sizeof(got)); /* the step: every device of a */
	assert_string_equal(got, "a/gpu0 a/gpu1");
	attached(m, "workflow", got, sizeof(got)); /* no host: every host */
	assert_string_equal(got, "a/gpu0 a/gpu1 b/gpu0");
	model_free(m);
}

static void busiest_over_window(void **state)
{
	struct fx *f = *state;
	struct model *m;
	char *err = NULL;
	struct mbusy u[3];
	size_t n;
	assert_int_equal(model_open(f->db, &m, &err), 0);
	/* k0 runs 100..300 us: 20% for 100 us, then 60% for 100 us */
	struct mnode *k0 = find(m, model_root(m), "k0");
	assert_int_equal(model_busiest(m, k0, u, 3, &n, &err), 0);
	assert_int_equal(n, 1);
	assert_string_equal(u[0].s->resource, "gpu0");
	assert_true(fabs(u[0].mean - 40.0) < 1e-9);
	assert_true(fabs(u[0].max - 60.0) < 1e-9);
	/* the step (0..1000 us) sees GPU 1 at 90% first, then GPU 0: its
	 * samples are 200 us apart at first, so (model/store/sample.h: the lower
	 * median spacing, 200 us; an instant holds 3 of them) the 60% sample
	 * holds until +800 us, and there is no value from then to +1 s:
	 * (20 * 200 + 60 * 600) / 800 = 50% */
	struct mnode *s = find(m, model_root(m), "s");
	assert_int_equal(model_busiest(m, s, u, 3, &n, &err), 0);
	assert_int_equal(n, 2);
	assert_string_equal(u[0].s->resource, "gpu1");
	assert_true(fabs(u[0].mean - 90.0) < 1e-9);
	assert_string_equal(u[1].s->resource, "gpu0");
	assert_true(fabs(u[1].mean - 50.0) < 1e-9);
	model_free(m);
}

static void series_devices(void **state)
{
	(void)state;
	struct mseries s = {.name = "x"};
	const char *res[] = {"gpu0",
			     "gpu12",
			     "gpu",
			     "gpux",
			     "cpu0",
			     "gpu=3,instance=x",
			     "Hostname=h,gpu=\"5\"",
			     "gpu=",
			     "modelName=H100,gpu=7",
			     NULL};
	int want[] = {0, 12, -1, -1, -1, 3, 5, -1, 7};
	for (int i = 0; res[i]; i++) {
		s.resource = res[i];
		assert_int_equal(mseries_device(&s), want[i]);
	}
	s.resource = NULL;
	assert_int_equal(mseries_device(&s), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(by_host_and_device, setup, importfx_teardown),
	    cmocka_unit_test_setup_teardown(busiest_over_window, setup, importfx_teardown),
	    cmocka_unit_test(series_devices),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
