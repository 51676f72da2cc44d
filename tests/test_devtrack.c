/*
 * What names say about device tracks (importers/devtrack.h): device planes,
 * XLA's host plane and TensorFlow 1's stream processes, a plane's lines,
 * stream names, device-looking categories and the kind of a stream's event.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "importers/devtrack.h"
#include "model/store/store.h"

static void test_processes(void **state)
{
	(void)state;
	static const struct {
		const char *name;
		enum devtrack want;
	} cases[] = {
	    {"/device:GPU:0", DEVTRACK_PLANE},
	    {"/device:TPU:3", DEVTRACK_PLANE},
	    {"/host:CPU", DEVTRACK_HOST_PLANE},
	    {"/device:CPU:0", DEVTRACK_HOST},
	    {"python3", DEVTRACK_HOST},
	    {"", DEVTRACK_HOST},
	    {NULL, DEVTRACK_HOST},
	    {"/device:GPU:0/stream:14 Compute", DEVTRACK_STREAM},
	    {"/device:GPU:0/stream:all Compute", DEVTRACK_AGGREGATE},
	    {"/device:GPU:0/memcpy Compute", DEVTRACK_COPIES},
	    {"/job:localhost/replica:0/task:0/device:GPU:0 Compute", DEVTRACK_LOOKS},
	    {"/job:localhost/replica:0/task:0/device:CPU:0 Compute", DEVTRACK_HOST},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		if (devtrack_process(cases[i].name) != cases[i].want)
			print_error("'%s'\n", cases[i].name ? cases[i].name : "(null)");
		assert_int_equal(devtrack_process(cases[i].name), cases[i].want);
	}
}

/* A plane's lines: streams hold work; the rows by op, module or step
 * repeat it; XLA Ops is a TPU's work when its plane has no stream. */
static void test_lines(void **state)
{
	(void)state;
	static const struct {
		const char *name;
		int streams;
		enum devtrack want;
	} cases[] = {
	    {"Stream #14(Compute)", 1, DEVTRACK_STREAM},
	    {"Stream #15(MemcpyH2D)", 1, DEVTRACK_STREAM},
	    {"XLA Ops", 1, DEVTRACK_AGGREGATE},
	    {"XLA Ops", 0, DEVTRACK_STREAM},
	    {"XLA Modules", 0, DEVTRACK_AGGREGATE},
	    {"Steps", 1, DEVTRACK_AGGREGATE},
	    {"TensorFlow Ops", 1, DEVTRACK_AGGREGATE},
	    {"Something new", 1, DEVTRACK_LOOKS},
	    {NULL, 1, DEVTRACK_LOOKS},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		enum devtrack got = devtrack_line(cases[i].name, cases[i].streams);
		if (got != cases[i].want)
			print_error("'%s' streams %d\n", cases[i].name ? cases[i].name : "(null)",
				    cases[i].streams);
		assert_int_equal(got, cases[i].want);
	}
}

static void test_stream_names(void **state)
{
	(void)state;
	assert_true(devtrack_is_stream("Stream #7"));
	assert_true(devtrack_is_stream("stream 7 "));
	assert_true(devtrack_is_stream("Stream 108"));
	assert_false(devtrack_is_stream("stream"));
	assert_false(devtrack_is_stream("streamer 1"));
	assert_false(devtrack_is_stream("python3"));
	assert_false(devtrack_is_stream(NULL));
}

static void test_categories(void **state)
{
	(void)state;
	static const char *const yes[] = {"cuda_runtime", "gpu_op",	 "Kernel",    "my_memcpy",
					  "MTIA_x",	  "hip_runtime", "xpu_driver"};
	static const char *const no[] = {"cpu_op", "user_annotation", "PERF", "Op", "", "ship"};
	for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++)
		assert_true(devtrack_category(yes[i], strlen(yes[i])));
	for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++)
		assert_false(devtrack_category(no[i], strlen(no[i])));
	/* the length bounds the category: "kernel" past it is not read */
	assert_false(devtrack_category("xkernel", 1));
}

static void test_kinds(void **state)
{
	(void)state;
	assert_int_equal(devtrack_kind("MemcpyH2D", 0), PHASE_MEMCPY);
	assert_int_equal(devtrack_kind("MEMCPYHtoD", 0), PHASE_MEMCPY);
	assert_int_equal(devtrack_kind("Memset", 0), PHASE_MEMSET);
	assert_int_equal(devtrack_kind("Memset", 1), PHASE_MEMSET);
	assert_int_equal(devtrack_kind("fusion", 1), PHASE_MEMCPY);
	assert_int_equal(devtrack_kind("fusion", 0), PHASE_KERNEL);
	assert_int_equal(devtrack_kind(NULL, 0), PHASE_KERNEL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_processes),	 cmocka_unit_test(test_lines),
	    cmocka_unit_test(test_stream_names), cmocka_unit_test(test_categories),
	    cmocka_unit_test(test_kinds),
	};
	return cmocka_run_group_tests_name("devtrack", tests, NULL, NULL);
}
