/*
 * Device runtime calls by name (see devcall.h).
 */
#include <string.h>

#include "model/devcall.h"
#include "model/xalloc.h"

const char *const devcall_sync_names[] = {"cudaDeviceSynchronize", "cudaStreamSynchronize",
					  "cudaEventSynchronize",  "cudaMemcpy",
					  "cudaMemcpy2D",	   "cuCtxSynchronize",
					  "cuStreamSynchronize",   "cuEventSynchronize",
					  "hipDeviceSynchronize",  "hipStreamSynchronize",
					  "hipEventSynchronize",   "hipMemcpy",
					  "hipMemcpyWithStream",   NULL};

int devcall_syncs(const char *name)
{
	for (size_t i = 0; devcall_sync_names[i]; i++)
		if (!strcmp(name, devcall_sync_names[i]))
			return 1;
	return 0;
}

int devcall_copy(const char *name)
{
	if (strncmp(name, "Memcpy", 6) != 0)
		return 0;
	int f = strstr(name, "HtoD") ? DEVCALL_HTOD : strstr(name, "DtoH") ? DEVCALL_DTOH : 0;
	if (f && strstr(name, "Pageable"))
		f |= DEVCALL_PAGEABLE;
	return f;
}
