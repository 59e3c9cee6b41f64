/*
 * tfconfig.h - the part of TensorFlow's TF_CONFIG that agprof needs: which
 * task this process is and how big the cluster is (`agprof run -o
 * 'job-%r.agprof'`, meta.tf_task_*).
 *
 * Owns: a minimal, bounded JSON reader for that one purpose (agprof has a
 * JSON writer, common/json.c, and no other JSON input): it walks the text
 * once, never recurses deeper than TF_CONFIG_MAX_DEPTH, never reads past
 * the string's end, and keeps nothing but the fields below.
 */
#ifndef AGPROF_TFCONFIG_H
#define AGPROF_TFCONFIG_H

#include <stddef.h>

#define TF_CONFIG_MAX_DEPTH 16
#define TF_CONFIG_MAX_LEN (1 << 20)  /* longer: refused, not parsed */

struct tf_config {
	char task_type[64];  /* "worker", "chief", ...; "" when absent */
	long task_index;     /* -1 when absent */
	long cluster_size;   /* tasks of every type in "cluster"; 0 when absent */
};

/*
 * Read json (TF_CONFIG's value) into *tc.  Returns 0, or -1 with a one-line
 * reason in err (bad JSON, a field of the wrong type): *tc then holds what
 * was read before the fault, the caller warns and goes on.
 */
int tf_config_parse(const char *json, struct tf_config *tc, char *err, size_t errlen);

#endif
