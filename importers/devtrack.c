/*
 * Device tracks by name; see devtrack.h.  XLA's and TensorFlow's profilers
 * (the trace viewer JSON that jax.profiler and TensorBoard write) name each
 * device a plane, "/device:GPU:0", and each of its lines a thread: the
 * streams ("Stream #14(Compute)", "Stream #15(MemcpyH2D)") hold the
 * kernels and copies as they ran; the other lines are derived from them,
 * one row per XLA op, module, TensorFlow op or step over the kernels it
 * ran, and counting them too would count the same time twice.  A TPU
 * plane has no streams: its "XLA Ops" line is its work.  TensorFlow 1's
 * timeline makes each stream a process of its own.  The host's plane,
 * "/host:CPU", holds its threads' work, with the Python tracer's frames
 * among it.
 */
#include <string.h>
#include <strings.h>

#include "importers/devtrack.h"
#include "model/store/store.h"

/* Lines of a device plane that repeat its streams' work. */
static const char *const aggregate_lines[] = {
    "XLA Modules",   "Async XLA Ops",	      "TensorFlow Ops",
    "Framework Ops", "TensorFlow Name Scope", "Framework Name Scope",
    "Steps",	     "Source code",	      "Launch Stats",
};

static int starts(const char *s, const char *prefix)
{
	return !strncmp(s, prefix, strlen(prefix));
}

static int digit(char c)
{
	return c >= '0' && c <= '9';
}

enum devtrack devtrack_process(const char *name)
{
	if (!name)
		return DEVTRACK_HOST;
	if (starts(name, "/host:"))
		return DEVTRACK_HOST_PLANE;
	const char *dev = strstr(name, "/device:");
	if (!dev || starts(dev, "/device:CPU"))
		return DEVTRACK_HOST;
	const char *stream = strstr(dev, "/stream:");
	if (stream && starts(stream, "/stream:all"))
		return DEVTRACK_AGGREGATE;
	if (stream && digit(stream[8]))
		return DEVTRACK_STREAM;
	if (strstr(dev, "/memcpy"))
		return DEVTRACK_COPIES;
	return dev == name ? DEVTRACK_PLANE : DEVTRACK_LOOKS;
}

int devtrack_is_stream(const char *name)
{
	if (!name)
		return 0;
	if (starts(name, "Stream #"))
		return 1;
	return !strncasecmp(name, "stream ", 7) && digit(name[7]);
}

enum devtrack devtrack_line(const char *name, int streams)
{
	if (!name)
		return DEVTRACK_LOOKS;
	if (starts(name, "Stream #"))
		return DEVTRACK_STREAM;
	if (!strcmp(name, "XLA Ops"))
		return streams ? DEVTRACK_AGGREGATE : DEVTRACK_STREAM;
	for (size_t i = 0; i < sizeof(aggregate_lines) / sizeof(aggregate_lines[0]); i++)
		if (!strcmp(name, aggregate_lines[i]))
			return DEVTRACK_AGGREGATE;
	return DEVTRACK_LOOKS;
}

/* Whether s (n bytes) holds word, in any case. */
static int has_word(const char *s, size_t n, const char *word)
{
	size_t k = strlen(word);
	for (size_t i = 0; i + k <= n; i++)
		if (!strncasecmp(s + i, word, k))
			return 1;
	return 0;
}

int devtrack_category(const char *cat, size_t len)
{
	static const char *const prefixes[] = {"gpu_", "cuda", "hip_", "xpu_", "mtia_"};
	static const char *const words[] = {"kernel", "memcpy", "memset"};
	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (len >= strlen(prefixes[i]) &&
		    !strncasecmp(cat, prefixes[i], strlen(prefixes[i])))
			return 1;
	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if (has_word(cat, len, words[i]))
			return 1;
	return 0;
}

int devtrack_kind(const char *name, int copies)
{
	if (name && !strncasecmp(name, "memset", 6))
		return PHASE_MEMSET;
	if (copies || (name && !strncasecmp(name, "memcpy", 6)))
		return PHASE_MEMCPY;
	return PHASE_KERNEL;
}
