/* analyze.c - see analyze.h. */
#include "analyze.h"
#include "fix.h"
#include "graph_ops.h"
#include "ranks.h"
#include "recording.h"
#include "util.h"
#include "verdicts.h"

#include <string.h>

enum analyze_result analyze(struct model *m, struct ruleset *rs, struct recording *rec, const struct analyze_opts *o)
{
	const char *empty;

	ruleset_init(rs);
	if (ruleset_load_default(rs, o->rules_dir)) {
		ruleset_release(rs);
		return ANALYZE_BAD_INPUT;
	}
	for (size_t i = 0; i < o->nsets; i++)
		if (ruleset_set(rs, o->sets[i])) {
			ruleset_release(rs);
			return ANALYZE_BAD_INPUT;
		}
	if (model_load(m, rec)) {
		ruleset_release(rs);
		return ANALYZE_BAD_INPUT;
	}
	if (gpu_metrics_register(m) || graph_ops_register(m) || ranks_register(m)) {
		model_release(m);
		ruleset_release(rs);
		return 2;
	}
	if (!o->allow_empty && (empty = model_empty_reason(m))) {
		error("'%s' holds nothing to analyze: %s", rec->path, empty);
		model_release(m);
		ruleset_release(rs);
		return ANALYZE_BAD_INPUT;
	}
	rules_run(rs, m);
	fix_annotate(m);
	if (!o->no_verdicts)
		verdicts_apply(m);
	return ANALYZE_OK;
}
