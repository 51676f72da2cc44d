/*
 * Device runtime calls by name (see devcall.h).
 */
#include <string.h>

#include "model/analysis/devcall.h"
#include "model/util/xalloc.h"

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

int devcall_api(const char *text)
{
	static const struct {
		const char *text;
		int prefix, api;
	} rules[] = {
	    {"mtia_ccp_events", 0, DEVCALL_API_MTIA},
	    {"mtia_runtime", 0, DEVCALL_API_MTIA},
	    {"hip", 1, DEVCALL_API_ROCM},
	    {"xpu_runtime", 0, DEVCALL_API_XPU},
	    {"xpu_driver", 0, DEVCALL_API_XPU},
	    {"cuda_runtime", 0, DEVCALL_API_CUDA},
	    {"cuda_driver", 0, DEVCALL_API_CUDA},
	    {"cuda", 1, DEVCALL_API_CUDA},
	};
	for (size_t i = 0; i < sizeof(rules) / sizeof(rules[0]); i++)
		if (rules[i].prefix ? !strncmp(text, rules[i].text, strlen(rules[i].text))
				    : !strcmp(text, rules[i].text))
			return rules[i].api;
	/* the driver API: cuLaunchKernel, cuMemcpyHtoDAsync, ... */
	if (text[0] == 'c' && text[1] == 'u' && text[2] >= 'A' && text[2] <= 'Z')
		return DEVCALL_API_CUDA;
	return DEVCALL_API_NONE;
}

const char *devcall_api_device(int api)
{
	return api == DEVCALL_API_MTIA ? "accelerator" : "GPU";
}

const char *devcall_api_torch(int api)
{
	return api == DEVCALL_API_XPU ? "xpu" : api == DEVCALL_API_MTIA ? "mtia" : "cuda";
}

const char *devcall_api_graphs(int api)
{
	return api == DEVCALL_API_CUDA	 ? "CUDA graphs"
	       : api == DEVCALL_API_ROCM ? "HIP graphs"
					 : NULL;
}
