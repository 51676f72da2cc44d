/*
 * Unit tests for tui/format.h: durations, byte sizes, and the sanitising
 * that keeps trace strings from driving the terminal.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <time.h>
#include <string.h>

#include "model/util/sbuf.h"
#include "model/util/text.h"
#include "tui/format.h"
#include "model/util/xalloc.h"

/* A newly allocated sanitised copy of s. */
static char *sanitize(const char *s)
{
	struct sbuf out = SBUF_INIT;
	sbuf_init(&out);
	format_sanitize(&out, s);
	return sbuf_detach(&out);
}

/* Fails unless s holds no C0 control, no DEL, no C1 control (U+0080..U+009F,
 * encoded or as a lone byte) and no bidi control. */
static void assert_inert(const char *in, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	for (size_t i = 0; p[i]; i++) {
		if (p[i] < 0x20 || p[i] == 0x7f)
			fail_msg("control byte 0x%02x at %zu in the sanitised \"%s\"", p[i], i, in);
		if (p[i] == 0xc2 && p[i + 1] >= 0x80 && p[i + 1] <= 0x9f)
			fail_msg("C1 control U+00%02X at %zu in the sanitised \"%s\"", p[i + 1], i,
				 in);
		if ((p[i] == 0xd8 && p[i + 1] == 0x9c) ||
		    (p[i] == 0xe2 && p[i + 1] == 0x80 &&
		     (p[i + 2] == 0x8e || p[i + 2] == 0x8f ||
		      (p[i + 2] >= 0xaa && p[i + 2] <= 0xae))) ||
		    (p[i] == 0xe2 && p[i + 1] == 0x81 && p[i + 2] >= 0xa6 && p[i + 2] <= 0xa9))
			fail_msg("bidi control at %zu in the sanitised \"%s\"", i, in);
	}
	if (!text_utf8_valid(s, strlen(s)))
		fail_msg("invalid UTF-8 left in the sanitised \"%s\"", in);
}

static void check_sanitize(const char *in, const char *want)
{
	char *got = sanitize(in);
	if (strcmp(got, want))
		fail_msg("format_sanitize(\"%s\") = \"%s\", want \"%s\"", in, got, want);
	assert_inert(in, got);
	free(got);
}

static void test_sanitize_escape_sequences(void **state)
{
	(void)state;
	check_sanitize("\x1b[2J", "\\e[2J");
	check_sanitize("x\x1b[31mred\x1b[0m", "x\\e[31mred\\e[0m");
	check_sanitize("\x1b]0;pwned\x07", "\\e]0;pwned\\x07");
	check_sanitize("\x1b]52;c;Zm9v\x07", "\\e]52;c;Zm9v\\x07");
	check_sanitize("\x1b]52;c;Zm9v\x1b\\", "\\e]52;c;Zm9v\\e\\");
}

static void test_sanitize_controls(void **state)
{
	(void)state;
	/* U+009B is the one-byte CSI of 8-bit terminals */
	check_sanitize("a\xc2\x9b"
		       "2J",
		       "a\\u009b2J");
	check_sanitize("\xc2\x80\xc2\x9f", "\\u0080\\u009f");
	check_sanitize("del\x7f", "del\\x7f");
	check_sanitize("a\nb\tc\rd", "a\\x0ab\\x09c\\x0dd");
	check_sanitize("\x01\x1f", "\\x01\\x1f");
	/* a raw C1 byte is not UTF-8 at all */
	check_sanitize("\x9b"
		       "2J",
		       "\\x9b2J");
	check_sanitize("", "");
}

static void test_sanitize_keeps_utf8(void **state)
{
	(void)state;
	check_sanitize("\xc2\xb5s", "\xc2\xb5s");
	check_sanitize("\xe2\x96\x81\xe2\x96\x82\xe2\x96\x88",
		       "\xe2\x96\x81\xe2\x96\x82\xe2\x96\x88");
	check_sanitize("aten::mm \xc2\xa0 \xf0\x9f\x98\x80 \xe6\x97\xa5",
		       "aten::mm \xc2\xa0 \xf0\x9f\x98\x80 \xe6\x97\xa5");
	check_sanitize("plain ascii ~!@#$%^&*()", "plain ascii ~!@#$%^&*()");
}

/* Every bidi control (Trojan Source) and the line/paragraph separators. */
static void test_sanitize_bidi(void **state)
{
	(void)state;
	check_sanitize("a\xd8\x9c"
		       "b",
		       "a\\u{061c}b");
	check_sanitize("\xe2\x80\x8e\xe2\x80\x8f", "\\u{200e}\\u{200f}");
	check_sanitize("\xe2\x80\xaa\xe2\x80\xab\xe2\x80\xac\xe2\x80\xad\xe2\x80\xae",
		       "\\u{202a}\\u{202b}\\u{202c}\\u{202d}\\u{202e}");
	check_sanitize("\xe2\x81\xa6\xe2\x81\xa7\xe2\x81\xa8\xe2\x81\xa9",
		       "\\u{2066}\\u{2067}\\u{2068}\\u{2069}");
	check_sanitize("\xe2\x80\xa8\xe2\x80\xa9", "\\u{2028}\\u{2029}");
	/* their neighbours are ordinary text */
	check_sanitize("\xe2\x80\x94\xe2\x81\xb0", "\xe2\x80\x94\xe2\x81\xb0");
}

/* C1 controls as lone bytes (not UTF-8): one escape per byte. */
static void test_sanitize_raw_c1(void **state)
{
	(void)state;
	check_sanitize("\x9b"
		       "2J\x9d"
		       "0;t\x9c",
		       "\\x9b2J\\x9d0;t\\x9c");
	check_sanitize("\x85\x90\x9f", "\\x85\\x90\\x9f");
}

static void test_sanitize_broken_utf8(void **state)
{
	(void)state;
	check_sanitize("a\xc0\xaf"
		       "b",
		       "a\\xc0\\xafb");
	check_sanitize("end\xe2\x96", "end\\xe2\\x96");
	check_sanitize("\xe2\x96"
		       "x",
		       "\\xe2\\x96x");
	check_sanitize("\x80", "\\x80");
	check_sanitize("\xff", "\\xff");
	check_sanitize("\xc2", "\\xc2");
}

/* Sequences with the shape of UTF-8 that RFC 3629 still forbids: the header
 * promises "invalid UTF-8 as \xNN", so none may reach the terminal raw. */
static void test_sanitize_invalid_well_formed_shape(void **state)
{
	(void)state;
	static const char *const bad[] = {
	    "\xed\xa0\x80",	/* surrogate U+D800 */
	    "\xe0\x80\xaf",	/* overlong '/' */
	    "\xe0\x82\x9b",	/* overlong U+009B (CSI) */
	    "\xf0\x80\x80\xaf", /* overlong, four bytes */
	    "\xf4\x90\x80\x80", /* beyond U+10FFFF */
	    "\xf8\x88\x80\x80", /* five-byte lead */
	    "\xff\x80\x80\x80",
	};
	int failures = 0;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char *got = sanitize(bad[i]);
		if (!text_utf8_valid(got, strlen(got)) || !strstr(got, "\\x")) {
			struct sbuf hex = SBUF_INIT;
			sbuf_init(&hex);
			for (const unsigned char *p = (const unsigned char *)got; *p; p++)
				if (*p >= 0x80)
					sbuf_addf(&hex, "<%02x>", *p);
				else
					sbuf_addc(&hex, (char)*p);
			print_error("format_sanitize left invalid UTF-8 raw: case %zu -> \"%s\"\n",
				    i, hex.buf);
			sbuf_release(&hex);
			failures++;
		}
		free(got);
	}
	assert_int_equal(failures, 0);
}

static void test_sanitize_random(void **state)
{
	(void)state;
	static const unsigned char alphabet[] = {
	    0x1b, 0x07, 0x9b, 0xc2, 0x80, 0x9f, 0xa0, 0xbf, 0xe2, 0x96, 0xed, 0xf0, 0x9f,
	    0x7f, 0x0a, 'a',  '[',  ']',  ';',	'\\', 0xae, 0xd8, 0x9c, 0x81, 0xa6, 0x8e};
	uint64_t seed = 0x9e3779b97f4a7c15ULL;
	char in[17];
	for (int iter = 0; iter < 20000; iter++) {
		size_t n = 0;
		for (; n < sizeof(in) - 1; n++) {
			seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
			in[n] = (char)alphabet[(seed >> 33) % sizeof(alphabet)];
		}
		in[n] = '\0';
		char *got = sanitize(in);
		assert_inert("(random)", got);
		free(got);
	}
}

static const char *dur(int64_t ns)
{
	static char buf[32];
	return format_duration(buf, sizeof(buf), ns);
}

static void test_format_duration(void **state)
{
	(void)state;
	assert_string_equal(dur(0), "0 ns");
	assert_string_equal(dur(12), "12 ns");
	assert_string_equal(dur(999), "999 ns");
	assert_string_equal(dur(1000), "1.00 us");
	assert_string_equal(dur(789000), "789 us");
	assert_string_equal(dur(12345), "12.3 us");
	assert_string_equal(dur(45600000), "45.6 ms");
	assert_string_equal(dur(1230000000), "1.23 s");
	assert_string_equal(dur(INT64_C(59000000000)), "59.0 s");
	assert_string_equal(dur(INT64_C(90000000000)), "1.50 min");
	assert_string_equal(dur(INT64_C(7200000000000)), "2.00 h");
	assert_string_equal(dur(-1500), "-1.50 us");
	assert_string_equal(dur(-7), "-7 ns");
	/* rounding that reaches the next decade drops a decimal */
	assert_string_equal(dur(99960), "100 us");
	assert_string_equal(dur(9996), "10.0 us");
	/* rounding that reaches the next unit reads in that unit */
	static const struct {
		int64_t ns;
		const char *text;
	} next[] = {{999499, "999 us"},
		    {999500, "1.00 ms"},
		    {999999, "1.00 ms"},
		    {999600000, "1.00 s"},
		    {INT64_C(59940000000), "59.9 s"},
		    {INT64_C(59960000000), "1.00 min"},
		    {INT64_C(3597000000000), "1.00 h"},
		    {-999999, "-1.00 ms"}};
	for (size_t i = 0; i < sizeof(next) / sizeof(next[0]); i++)
		assert_string_equal(dur(next[i].ns), next[i].text);
	/* a short buffer truncates and stays terminated */
	char small[5];
	assert_string_equal(format_duration(small, sizeof(small), 1230000000), "1.23");
}

/* The header: "at most 9 characters", as in "1.23 s", "45.6 ms", "789 us". */
static void test_format_duration_width(void **state)
{
	(void)state;
	int failures = 0;
	for (int64_t ns = 1; ns > 0 && ns <= INT64_C(100000000000000); ns *= 10) {
		for (int64_t m = 1; m <= 9; m += 4) {
			const char *s = dur(ns * m);
			if (strlen(s) > 9) {
				print_error("format_duration(%lld) = \"%s\" (%zu characters)\n",
					    (long long)(ns * m), s, strlen(s));
				failures++;
			}
		}
	}
	assert_int_equal(failures, 0);
}

static const char *bytes(int64_t b)
{
	static char buf[32];
	return format_bytes(buf, sizeof(buf), b);
}

static void test_format_bytes(void **state)
{
	(void)state;
	assert_string_equal(bytes(0), "0 B");
	assert_string_equal(bytes(999), "999 B");
	assert_string_equal(bytes(1000), "1.0 KB");
	assert_string_equal(bytes(1536), "1.5 KB");
	/* decimal units (SI): 1023 and 1024 are both a KB and a little */
	assert_string_equal(bytes(1023), "1.0 KB");
	assert_string_equal(bytes(1024), "1.0 KB");
	assert_string_equal(bytes(-999), "-999 B");
	/* rounding that reaches 1000.0 of a unit reads in the next */
	assert_string_equal(bytes(999949), "999.9 KB");
	assert_string_equal(bytes(999950), "1.0 MB");
	assert_string_equal(bytes(999999), "1.0 MB");
	assert_string_equal(bytes(INT64_C(999960000000)), "1.0 TB");
	assert_string_equal(bytes(-999999), "-1.0 MB");
	assert_string_equal(bytes(12345678), "12.3 MB");
	assert_string_equal(bytes(INT64_C(4500000000)), "4.5 GB");
	assert_string_equal(bytes(INT64_C(5000000000000)), "5.0 TB");
	/* TB is the largest unit */
	assert_string_equal(bytes(INT64_C(5000000000000000)), "5000.0 TB");
}

static void check_name(const char *in, int cxx, const char *want)
{
	struct sbuf out = SBUF_INIT;
	sbuf_init(&out);
	format_name(&out, in, cxx, "~");
	if (strcmp(out.buf, want))
		fail_msg("format_name(\"%s\", %d) = \"%s\", want \"%s\"", in, cxx, out.buf, want);
	sbuf_release(&out);
}

/* Names as lists show them: no trailing blanks; a kernel's C++ signature
 * as model/util/cxxname.h shortens it (tests/test_cxxname.c has more). */
static void test_format_name(void **state)
{
	check_name("stream 7 ", 0, "stream 7");
	check_name("stream 7 ", 1, "stream 7");
	check_name("python3.8 (3) GPU 3", 1, "python3.8 (3) GPU 3");
	check_name("aten::mm", 1, "aten::mm");
	check_name(
	    "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>,"
	    " at::detail::Array<char*, 1> >(int, at::native::FillFunctor<float>,"
	    " at::detail::Array<char*, 1>)",
	    1, "at::native::vectorized_elementwise_kernel<FillFunctor~>");
	check_name("void at::native::vectorized_elementwise_kernel<4>(int)", 0,
		   "void at::native::vectorized_elementwise_kernel<4>(int)");
	/* "(anonymous namespace)::" is part of the name, not its parameters */
	check_name("void at::native::(anonymous namespace)::softmax_warp_forward<float, float, "
		   "float, 10, false, false>(float*, float const*, int, int, int, bool const*, "
		   "int, bool)",
		   1, "at::native::(anonymous namespace)::softmax_warp_forward<float~>");
	check_name("void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_128x128_16x4_tn_align4>"
		   "(cutlass_80_tensorop_s1688gemm_128x128_16x4_tn_align4::Params)",
		   1, "cutlass::Kernel<cutlass_80_tensorop_s1688gemm_128x128_16x4_tn_align4>");
	check_name(
	    "ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)", 1,
	    "ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)");
	check_name("unsigned int foo<int>(int)", 1, "foo<int>");
	check_name("", 1, "");
	check_name("   ", 0, "");
}

/* The start and end of a short phase far from the origin read apart. */
static void test_format_instant(void **state)
{
	char a[32], b[32];
	assert_string_equal(format_instant(a, sizeof(a), 688123456, 3000), "688.123 ms");
	assert_string_equal(format_instant(b, sizeof(b), 688126456, 3000), "688.126 ms");
	/* three digits tell a long phase's ends apart: as format_duration */
	assert_string_equal(format_instant(a, sizeof(a), 688123456, 20000000), "688 ms");
	assert_string_equal(format_instant(a, sizeof(a), 5, 1), "5 ns");
	/* seconds for minutes, and never past 1 ns */
	assert_string_equal(format_instant(a, sizeof(a), 125000001000LL, 2000), "125.000001 s");
	assert_string_equal(format_instant(a, sizeof(a), 1500000000LL, 1), "1.500000000 s");
	assert_string_equal(format_instant(a, sizeof(a), 2000001, 2), "2.000001 ms");
	assert_string_equal(format_instant(a, sizeof(a), -688123456, 3000), "-688.123 ms");
}

/* Metric values in their units, never in exponent form. */
/* Rates as bytes are written, per second, the same rounding into the next
 * unit; out of range reads "-". */
static void test_text_rate(void **state)
{
	(void)state;
	char buf[32];
	assert_string_equal(text_rate(buf, sizeof(buf), 999), "999 B/s");
	assert_string_equal(text_rate(buf, sizeof(buf), 1.3e12), "1.3 TB/s");
	assert_string_equal(text_rate(buf, sizeof(buf), 999.96e9), "1.0 TB/s");
	assert_string_equal(text_rate(buf, sizeof(buf), 12.34e9), "12.3 GB/s");
	assert_string_equal(text_rate(buf, sizeof(buf), NAN), "-");
	assert_string_equal(text_rate(buf, sizeof(buf), 1e30), "-");
}

static void test_format_value(void **state)
{
	(void)state;
	char buf[64];
	assert_string_equal(format_value(buf, sizeof(buf), 2619, "MHz"), "2619 MHz");
	assert_string_equal(format_value(buf, sizeof(buf), 2100, NULL), "2100");
	assert_string_equal(format_value(buf, sizeof(buf), 70.1109, "%"), "70.1%");
	assert_string_equal(format_value(buf, sizeof(buf), 0.0435, "%"), "0.0435%");
	assert_string_equal(format_value(buf, sizeof(buf), 96.02, "%"), "96%");
	assert_string_equal(format_value(buf, sizeof(buf), 209.07, "W"), "209 W");
	assert_string_equal(format_value(buf, sizeof(buf), 4663, ""), "4663");
	assert_string_equal(format_value(buf, sizeof(buf), 123456, ""), "123 k");
	assert_string_equal(format_value(buf, sizeof(buf), 2.5e9, "W"), "2.5 G W");
	assert_string_equal(format_value(buf, sizeof(buf), 395756, "kB"), "395.8 MB");
	assert_string_equal(format_value(buf, sizeof(buf), 1200, "kB/s"), "1.2 MB/s");
	assert_string_equal(format_value(buf, sizeof(buf), 7122, "MiB"), "7.5 GB");
	/* nvidia-smi's MiB reads as bytes do everywhere: 143 808 MiB */
	assert_string_equal(format_value(buf, sizeof(buf), 143808, "MiB"), "150.8 GB");
	assert_string_equal(format_value(buf, sizeof(buf), 953.674, "MiB"), "1.0 GB");
	assert_string_equal(format_value(buf, sizeof(buf), 999.96, "us"), "1.00 ms");
	assert_string_equal(format_value(buf, sizeof(buf), 999.96, "W"), "1000 W");
	assert_string_equal(format_value(buf, sizeof(buf), 99999.6, ""), "100 k");
	assert_string_equal(format_value(buf, sizeof(buf), 1.5, "ms"), "1.50 ms");
	assert_string_equal(format_value(buf, sizeof(buf), 0.00001234, NULL), "0.0000123");
	assert_string_equal(format_value(buf, sizeof(buf), 0, "%"), "0%");
	assert_string_equal(format_value(buf, sizeof(buf), NAN, "%"), "-");
	for (double v = 1e-12; v < 1e18; v *= 7.3)
		assert_null(strchr(format_value(buf, sizeof(buf), v, "x"), 'e'));
}

/* Cut names never read the same unless they are the same. */
static void test_format_cut_distinct(void **state)
{
	(void)state;
	const char *const names[] = {"cpu-frequency:all.frequency",
				     "cpu-frequency:0.frequency",
				     "cpu-frequency:1.frequency",
				     "short",
				     "interrupts:24.CPU0",
				     "interrupts:25.CPU0",
				     "interrupts:24.CPU0",
				     "a.very.long.prefix.x.the.same.end",
				     "a.very.long.prefix.y.the.same.end"};
	size_t n = sizeof(names) / sizeof(names[0]);
	for (int cols = 4; cols <= 30; cols++) {
		char **out = format_cut_distinct(names, n, cols, "\u2026");
		for (size_t i = 0; i < n; i++) {
			assert_true(format_width(out[i]) <= cols);
			if ((int)strlen(names[i]) > cols)
				assert_non_null(strstr(out[i], "\u2026"));
			else
				assert_string_equal(out[i], names[i]);
			/* parting needs room: the x and y above are 14 columns from
			 * the end, so 15 with the cut mark */
			for (size_t j = 0; j < i && cols >= 15; j++)
				if (strcmp(names[i], names[j]))
					assert_string_not_equal(out[i], out[j]);
				else
					assert_string_equal(out[i], out[j]);
		}
		for (size_t i = 0; i < n; i++)
			free(out[i]);
		free(out);
	}
	/* the three twin at the default cut ("cpu-freq…uency"): the tail grows to
	 * the first character that parts them */
	char **out = format_cut_distinct(names, 3, 14, "\u2026");
	assert_string_equal(out[0], "cp\u2026l.frequency");
	assert_string_equal(out[1], "cp\u20260.frequency");
	free(out[0]);
	free(out[1]);
	free(out[2]);
	free(out);
	/* "interrupt…CPU0" twice: the first move, a longer head, parts them; the
	 * same name twice reads the same */
	out = format_cut_distinct(names + 4, 3, 14, "\u2026");
	assert_string_equal(out[0], "interrupts:24\u2026");
	assert_string_equal(out[1], "interrupts:25\u2026");
	assert_string_equal(out[2], "interrupts:24\u2026");
	for (size_t i = 0; i < 3; i++)
		free(out[i]);
	free(out);
}

/* Names that share more than any head and tail of the width can show (a
 * common 40-character head, the same 30-character tail, a difference
 * between, and two that differ at two places): each shows its head, then
 * a window from where it parts from its nearest twin; no two read alike. */
static void test_format_cut_distinct_middle(void **state)
{
	(void)state;
	const char *const names[] = {
	    "at::native::vectorized_elementwise_kernel<8, CUDAFunctor_add<BFloat16>, "
	    "std::array<char*, 3ul> > tail of thirty characters",
	    "at::native::vectorized_elementwise_kernel<8, FillFunctor<BFloat16>, "
	    "std::array<char*, 3ul> > tail of thirty characters",
	    "at::native::vectorized_elementwise_kernel<4, CUDAFunctor_add<float>, "
	    "std::array<char*, 3ul> > tail of thirty characters",
	    "at::native::vectorized_elementwise_kernel<4, CUDAFunctor_add<float>, "
	    "std::array<char*, 2ul> > tail of thirty characters",
	    "at::native::vectorized_elementwise_kernel<8, CUDAFunctor_add<BFloat16>, "
	    "std::array<char*, 3ul> > tail of thirty characters",
	};
	size_t n = sizeof(names) / sizeof(*names);
	for (int cols = 20; cols <= 60; cols += 5) {
		char **out = format_cut_distinct(names, n, cols, "\u2026");
		for (size_t i = 0; i < n; i++) {
			assert_true(format_width(out[i]) <= cols);
			for (size_t j = 0; j < i; j++)
				assert_true(!strcmp(names[i], names[j]) == !strcmp(out[i], out[j]));
		}
		for (size_t i = 0; i < n; i++)
			free(out[i]);
		free(out);
	}
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* n names alike at both ends (40 bytes each) with a distinct middle, cut to
 * 40 columns: seconds to part them, best of three; all read apart. */
static double cut_twins(size_t n)
{
	char **names = xcalloc(n, sizeof(*names));
	for (size_t i = 0; i < n; i++)
		names[i] = xasprintf("at::native::vectorized_elementwise_kernel<%zu, "
				     "std::array<char*, 3ul>, same tail of forty bytes >",
				     i * 7919 % 1000003);
	double best = 1e9;
	for (int round = 0; round < 3; round++) {
		struct timespec t0, t1;
		clock_gettime(CLOCK_MONOTONIC, &t0);
		char **out = format_cut_distinct((const char *const *)names, n, 40, "\u2026");
		clock_gettime(CLOCK_MONOTONIC, &t1);
		double t =
		    (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
		best = t < best ? t : best;
		char **sorted = xcalloc(n, sizeof(*sorted));
		memcpy(sorted, out, n * sizeof(*sorted));
		qsort(sorted, n, sizeof(*sorted), cmp_str);
		for (size_t i = 1; i < n; i++)
			assert_string_not_equal(sorted[i - 1], sorted[i]);
		free(sorted);
		for (size_t i = 0; i < n; i++)
			free(out[i]);
		free(out);
	}
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	return best;
}

/* Ten times the twins take about ten times as long, not a hundred: the
 * nearest twin is a neighbour in sorted order, never found pair by pair. */
static void test_format_cut_distinct_many(void **state)
{
	(void)state;
	double small = cut_twins(2000), big = cut_twins(20000);
	if (big > 30 * small + 0.05)
		print_error("2000 twins %.4f s, 20000 %.4f s\n", small, big);
	assert_true(big <= 30 * small + 0.05);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_sanitize_escape_sequences),
	    cmocka_unit_test(test_sanitize_controls),
	    cmocka_unit_test(test_sanitize_keeps_utf8),
	    cmocka_unit_test(test_sanitize_bidi),
	    cmocka_unit_test(test_sanitize_raw_c1),
	    cmocka_unit_test(test_sanitize_broken_utf8),
	    cmocka_unit_test(test_sanitize_invalid_well_formed_shape),
	    cmocka_unit_test(test_sanitize_random),
	    cmocka_unit_test(test_format_duration),
	    cmocka_unit_test(test_format_duration_width),
	    cmocka_unit_test(test_format_bytes),
	    cmocka_unit_test(test_format_name),
	    cmocka_unit_test(test_format_instant),
	    cmocka_unit_test(test_format_value),
	    cmocka_unit_test(test_text_rate),
	    cmocka_unit_test(test_format_cut_distinct),
	    cmocka_unit_test(test_format_cut_distinct_middle),
	    cmocka_unit_test(test_format_cut_distinct_many),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
