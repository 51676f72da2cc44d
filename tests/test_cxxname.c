/*
 * Unit tests for model/util/cxxname.h: the one shortening of C++
 * signatures every view uses, names that are not C++ left alone, names
 * that differ never read the same, and hostile names in linear time.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "model/util/cxxname.h"
#include "model/util/sbuf.h"
#include "model/util/xalloc.h"

static void check(const char *in, int level, const char *want)
{
	struct sbuf out = SBUF_INIT;
	sbuf_init(&out);
	cxxname_short(&out, in, level, "~");
	if (strcmp(out.buf, want))
		fail_msg("cxxname_short(\"%s\", %d) = \"%s\", want \"%s\"", in, level, out.buf,
			 want);
	sbuf_release(&out);
}

/* Kernels as PyTorch's CUDA build names them (from tests/data/gpu). */
static void test_signatures(void **state)
{
	(void)state;
	/* the return type and parameters go; a long template list reads as
	 * its first name, its namespaces dropped */
	check("void at::native::vectorized_elementwise_kernel<8, "
	      "at::native::bfloat16_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda(float)#1}, "
	      "std::array<char*, 2ul> >(int, at::native::bfloat16_copy_kernel_cuda("
	      "at::TensorIteratorBase&)::{lambda(float)#1}, std::array<char*, 2ul>)",
	      0, "at::native::vectorized_elementwise_kernel<bfloat16_copy_kernel_cuda~>");
	/* nested templates: the first word of the outer list */
	check("void at::native::reduce_kernel<128, 4, at::native::ReduceOp<c10::BFloat16, "
	      "at::native::func_wrapper_t<c10::BFloat16, at::native::sum_functor<c10::BFloat16, "
	      "float, c10::BFloat16>::operator()(at::TensorIterator&)::{lambda(float, float)#1}>, "
	      "unsigned int, c10::BFloat16, 4, 8> >(at::native::ReduceOp<c10::BFloat16, int>)",
	      0, "at::native::reduce_kernel<ReduceOp~>");
	/* anonymous namespaces are part of the qualified name */
	check("void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::"
	      "(anonymous namespace)::TensorListMetadata<1>, at::native::(anonymous namespace)::"
	      "BinaryOpScalarFunctor<float, 1, 1, 0>, std::multiplies<float>, float>("
	      "at::native::(anonymous namespace)::TensorListMetadata<1>, float)",
	      0,
	      "at::native::(anonymous namespace)::multi_tensor_apply_kernel<TensorListMetadata~>");
	check("void (anonymous namespace)::elementwise_kernel_with_index<int, long>(int, long*)", 0,
	      "(anonymous namespace)::elementwise_kernel_with_index<int, long>");
	/* a short plain list stays whole */
	check(
	    "void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<float, float, "
	    "false>(int, float, float const*)",
	    0,
	    "at::native::(anonymous namespace)::vectorized_layer_norm_kernel<float, float, false>");
	/* return types of more than one word; no template */
	check("unsigned int foo<int>(int)", 0, "foo<int>");
	check("void foo(int, float*)", 0, "foo");
	check("at::native::copy_(at::Tensor&)", 0, "at::native::copy_");
	/* operator() and lambdas */
	check("at::native::f::operator()(int) const", 0, "at::native::f::operator()");
	check(
	    "std::_Function_handler<void (), foo::{lambda()#1}>::_M_invoke(std::_Any_data const&)",
	    0, "std::_Function_handler<void~>::_M_invoke");
	check("void ns::run<ns::g(int)::{lambda(int)#2}>(ns::g(int)::{lambda(int)#2})", 0,
	      "ns::run<g~>");
	/* a qualified template with no parameters */
	check("cutlass::Kernel<cutlass_80_tensorop_s1688gemm_128x128_16x4_tn_align4_x>", 0,
	      "cutlass::Kernel<cutlass_80_tensorop_s1688gemm_128x128_16x4_tn_align4_x>");
	/* level 1: every argument, compact; level 2: whole */
	check(
	    "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<c10::BFloat16, "
	    "at::native::ArgMaxOps<float>, unsigned int, long, 4, 4> >(int)",
	    1,
	    "at::native::reduce_kernel<512, 1, ReduceOp<BFloat16, ArgMaxOps<float>, unsigned int, "
	    "long, 4, 4> >");
	check("void at::native::unrolled_elementwise_kernel<at::native::direct_copy_kernel_cuda("
	      "at::TensorIteratorBase&)::{lambda()#3}::operator()() const::{lambda()#7}::operator()"
	      "() const::{lambda(float)#1}, std::array<char*, 2ul> >(int)",
	      1,
	      "at::native::unrolled_elementwise_kernel<direct_copy_kernel_cuda::{lambda()#3}::"
	      "operator() const::{lambda()#7}::operator() const::{lambda(float)#1}, array<char*, "
	      "2ul> >");
	check("void foo<int>(int) ", 2, "void foo<int>(int)");
}

/* Names that are not C++ signatures: from Kineto, JAX, PyTorch's record
 * functions, NCCL, the profiler's memcpy rows, and broken brackets. */
static const char *const not_cxx[] = {
    "aten::mm",
    "ProfilerStep#12",
    "jit(train_step)",
    "jit(train_step)/jit(main)/dot_general",
    "Memcpy HtoD (Pinned -> Device)",
    "python3.8 (3) GPU 3",
    "nn.Module: Linear(in_features=3)",
    "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__",
    "ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)",
    "train.py(42): step",
    "<built-in method foo>",
    "void f<<<<<",
    "a > b (c)",
    "",
};

/* Names that are not C++ signatures stay as they are, trailing blanks cut. */
static void test_not_cxx(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(not_cxx) / sizeof(*not_cxx); i++)
		for (int level = 0; level < CXXNAME_LEVELS; level++)
			check(not_cxx[i], level, not_cxx[i]);
	check("stream 7 ", 0, "stream 7");
	check("   ", 0, "");
}

/* Different names never read the same; equal names read the same. */
static void test_distinct(void **state)
{
	(void)state;
	const char *const names[] = {
	    /* the same at level 0 ("f<Op~>"), apart at level 1 */
	    "void ns::f<ns::Op<float>, 4>(int)",
	    "void ns::f<ns::Op<double>, 4>(int)",
	    /* the same at levels 0 and 1, apart only whole */
	    "void ns::f<ns::Op<float>, 4>(long)",
	    "void ns::g<1>(int)",
	    "void ns::f<ns::Op<float>, 4>(int)",
	    "aten::mm",
	    /* level 0 of this one reads as level 1 of another */
	    "void ns::k<4, ns::Q<int> >(int)",
	    "void ns::k<4, ns::Q<long> >(int)",
	    "void ns::k<4, ns::Q<int> >(long)",
	};
	size_t n = sizeof(names) / sizeof(*names);
	char **out = cxxname_distinct(names, n, "~");
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < i; j++)
			if (strcmp(names[i], names[j]))
				assert_string_not_equal(out[i], out[j]);
			else
				assert_string_equal(out[i], out[j]);
	/* each at the level that parts it: 0, 0, 1, 2 */
	static const struct {
		size_t i;
		const char *shown;
	} want[] = {{3, "ns::g<1>"},
		    {5, "aten::mm"},
		    {1, "ns::f<Op<double>, 4>"},
		    {2, "void ns::f<ns::Op<float>, 4>(long)"}};
	for (size_t k = 0; k < sizeof(want) / sizeof(*want); k++)
		assert_string_equal(out[want[k].i], want[k].shown);
	for (size_t i = 0; i < n; i++)
		free(out[i]);
	free(out);
	out = cxxname_distinct(NULL, 0, "~");
	free(out);
}

static void test_path(void **state)
{
	(void)state;
	struct sbuf out = SBUF_INIT;
	sbuf_init(&out);
	cxxname_path(&out,
		     "/w/train/thread 1/aten::copy_/void at::native::k<at::native::Op<float>, "
		     "4>(int, float/2)",
		     "~");
	assert_string_equal(out.buf, "/w/train/thread 1/aten::copy_/at::native::k<Op~>");
	sbuf_release(&out);
}

static double seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Seconds to shorten s at every level reps times, best of five. */
static double time_short(const char *s, int reps)
{
	double best = 1e9;
	struct sbuf out = SBUF_INIT;
	sbuf_init(&out);
	for (int round = 0; round < 5; round++) {
		double t0 = seconds();
		for (int rep = 0; rep < reps; rep++)
			for (int level = 0; level < CXXNAME_LEVELS; level++) {
				sbuf_reset(&out);
				cxxname_short(&out, s, level, "~");
			}
		double t = seconds() - t0;
		if (t < best)
			best = t;
	}
	sbuf_release(&out);
	return best;
}

/* A name of n bytes of pattern, then the pattern's closers in reverse when
 * close: "void f<" "a<" ... ">" ">(int)". */
static char *hostile(size_t n, const char *open, const char *close)
{
	struct sbuf s = SBUF_INIT;
	sbuf_init(&s);
	sbuf_adds(&s, "void ns::f");
	size_t k = 0;
	while (s.len < n) {
		sbuf_adds(&s, open);
		k++;
	}
	for (size_t i = 0; close && i < k; i++)
		sbuf_adds(&s, close);
	sbuf_adds(&s, "(int)");
	return sbuf_detach(&s);
}

/* Deep nesting, unclosed brackets, many qualifiers and many arguments:
 * ten times the input takes about ten times as long, not a hundred. */
static void test_linear(void **state)
{
	(void)state;
	static const struct {
		const char *open, *close;
	} shapes[] = {{"<a::", ">"},	      {"<", NULL},   {"<x(", ")>"}, {"::(", NULL},
		      {"<a::b::c::d, ", ">"}, {"{(<", NULL}, {"<1, ", ">"}};
	for (size_t i = 0; i < sizeof(shapes) / sizeof(*shapes); i++) {
		char *small = hostile(50000, shapes[i].open, shapes[i].close);
		char *big = hostile(500000, shapes[i].open, shapes[i].close);
		/* as many bytes each way, so that both run long enough to time */
		double ts = time_short(small, 10), tb = time_short(big, 1);
		/* linear: about 1; quadratic: about 10 */
		if (tb / ts > 4)
			fail_msg("shape %zu: 10x input took %.1fx the time (%.6f s vs %.6f s for "
				 "10 of the small)",
				 i, 10 * tb / ts, tb, ts);
		free(small);
		free(big);
	}
	/* and many such names at once */
	const char *many[64];
	char *keep[64];
	for (size_t i = 0; i < 64; i++)
		many[i] = keep[i] = hostile(2000 + i, "<a::", ">");
	char **out = cxxname_distinct(many, 64, "~");
	for (size_t i = 0; i < 64; i++)
		for (size_t j = 0; j < i; j++)
			if (strcmp(many[i], many[j]))
				assert_string_not_equal(out[i], out[j]);
	for (size_t i = 0; i < 64; i++) {
		free(out[i]);
		free(keep[i]);
	}
	free(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_signatures), cmocka_unit_test(test_not_cxx),
	    cmocka_unit_test(test_distinct),   cmocka_unit_test(test_path),
	    cmocka_unit_test(test_linear),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
