/*
 * verdicts.h - what `agprof fix --verify` measured of each finding's edit,
 * kept beside the recording (REC.verify.json, docs/report-json.md) and
 * applied to the findings of every later analysis of that recording.
 *
 * Owns: the sidecar's format (versioned), its writing (fix --verify) and
 * its reading, which treats the file as untrusted: bounded by
 * common/json_read.h, one warning line for a malformed file, silently
 * ignored when it is another recording's (its size and modification time
 * are the key) or a finding's key (rule, function, file, line) matches
 * none.  A verified finding claims the measured saving; a refuted one
 * loses its advice and its edit, with the reason in one line; a failed
 * experiment changes nothing but is said.
 */
#ifndef AGPROF_VERDICTS_H
#define AGPROF_VERDICTS_H

#include "model.h"
#include "strbuf.h"

#define VERDICTS_VERSION 1
#define VERDICTS_MAX 256        /* findings kept in one sidecar */

/* The sidecar of the recording at rec_path ("REC.verify.json") into sb. */
void verdicts_path(struct strbuf *sb, const char *rec_path);

/* How the experiments were run, kept with their results. */
struct verdicts_run {
	int runs;                   /* runs on each side */
	double rtol, atol;          /* the output's numeric tolerance */
	double time_limit;          /* seconds a run, 0: none */
};

/*
 * Write the sidecar of rec_path: verdict v[i] of finding f[i] for i < n,
 * all (NULL: none) the verdict on f[0..n)'s edits together when n > 1, and
 * the old sidecar's verdicts of other findings and of the edits together
 * when this experiment had none (when it is this recording's).  0, or -1
 * after an error line.
 */
int verdicts_write(const char *rec_path, const struct finding *const *f, const struct finding_verdict *v, size_t n,
		   const struct finding_verdict *all, const struct verdicts_run *run);

/*
 * Read m's recording's sidecar, when there is one, and apply it to m's
 * findings (then ranked again); its edits together into m->together.
 */
void verdicts_apply(struct model *m);

/*
 * v in one line: "verified on this program: learn's tracing and calls
 * 2.67 s -> 1.20 s (-1.47 s; from -1.52 s to -1.41 s over 2 x 2 runs),
 * output identical", "refuted on this program: slower; ...", "the
 * experiment failed: time limit".
 */
void verdict_text(struct strbuf *sb, const struct finding_verdict *v);
/* v as a JSON object (docs/report-json.md, a finding's "verdict"), null when kind is 0. */
struct json;
void verdict_json(struct json *j, const struct finding_verdict *v);
/* The edits together (m->together) as the report's JSON "verify_all": an object, null when none. */
void verdict_together_json(struct json *j, const struct verify_together *t);
/* "the 2 edits together (retracing sgd_step, retracing evaluate): verified on this program: ..." */
void verdict_together_text(struct strbuf *sb, const struct verify_together *t);
/* "verified", "refuted", "failed" ("none" for 0). */
const char *verdict_name(int kind);

#endif
