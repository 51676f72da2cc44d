/*
 * The table of importers and content sniffing.  Adding a format is one
 * row here and one file beside this one.
 */
#include <string.h>

#include "importers/chrome.h"
#include "importers/importer.h"
#include "importers/mlperf.h"
#include "importers/nvsmi.h"
#include "importers/otlp.h"
#include "importers/prometheus.h"
#include "importers/rulelog.h"
#include "importers/spark.h"
#include "importers/sysstat.h"
#include "importers/workflow.h"
#include "model/util/xalloc.h"

static const struct importer chrome = {
    "chrome",
    "Chrome trace event JSON: PyTorch/Kineto, autograd profiler, TensorFlow, JAX",
    chrome_sniff,
    chrome_import,
};

static const struct importer sysstat = {
    "sysstat",
    "sysstat `sadf -j` JSON: CPU, memory, disk, network and other sar activities",
    sysstat_sniff,
    sysstat_import,
};

static const struct importer nvsmi = {
    "nvidia-smi",
    "nvidia-smi --query-gpu CSV (units or nounits): per-GPU utilization, memory, power, clocks",
    nvsmi_sniff,
    nvsmi_import,
};

static const struct importer prometheus = {
    "prometheus",
    "Prometheus query_range or query JSON (envelope or bare result): one series per label set",
    prometheus_sniff,
    prometheus_import,
};

static const struct importer spark = {
    "spark",
    "Spark event log (JSON lines, 2.x/3.x, rolling parts): application, jobs, stages, tasks",
    spark_sniff,
    spark_import,
};

static const struct importer mlperf = {
    "mlperf",
    "MLPerf logging (:::MLLOG lines, mixed logs): run, init, block, epoch, eval phases, events",
    mlperf_sniff,
    mlperf_import,
};

static const struct importer rulelog = {
    "log",
    "any text log through a rules file (--rules): PCRE2 patterns to events, samples, phases",
    rulelog_sniff,
    rulelog_import,
};

static const struct importer workflow = {
    "workflow",
    "workflow manifest (JSON lines: step, start, end, host, parent, depends_on): workflow and "
    "steps",
    workflow_sniff,
    workflow_import,
};

static const struct importer otlp = {
    "otlp",
    "OpenTelemetry OTLP/JSON trace export (resourceSpans): root spans as steps, spans beneath",
    otlp_sniff,
    otlp_import,
};

static const struct importer *const all[] = {&chrome, &sysstat, &nvsmi,	   &prometheus, &spark,
					     &mlperf, &rulelog, &workflow, &otlp,	NULL};

const struct importer *const *importer_list(void)
{
	return all;
}

const struct importer *importer_find(const char *name)
{
	for (size_t i = 0; all[i]; i++)
		if (!strcmp(all[i]->name, name))
			return all[i];
	return NULL;
}

const struct importer *importer_sniff(const unsigned char *buf, size_t len)
{
	const struct importer *best = NULL;
	int best_score = 0;
	for (size_t i = 0; all[i]; i++) {
		int s = all[i]->sniff(buf, len);
		if (s > best_score) {
			best = all[i];
			best_score = s;
		}
	}
	return best;
}
