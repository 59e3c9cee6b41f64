/*
 * fix_verify.h - `agprof fix --verify`: the closed loop.  The findings'
 * edits applied to a scratch copy of the recording's working directory
 * (never to the user's files), the program run again under agprof as it is
 * and as edited, and the two runs compared (diff.h) with their outputs.
 */
#ifndef AGPROF_FIX_VERIFY_H
#define AGPROF_FIX_VERIFY_H

#include <stddef.h>

struct model;
struct finding;

enum verify_result {
	VERIFY_OK = 0,      /* output identical and something saved */
	VERIFY_NOT,         /* the output or exit status changed, or nothing was saved */
	VERIFY_CANNOT,      /* no working directory or command line, no scratch copy, an edit that no longer applies */
	VERIFY_FAILED,      /* internal error (error printed) */
};

/*
 * Apply pick[0..n)'s edits (sorted by file, then line) to a scratch copy of
 * m's working directory, run command (NULL-terminated; NULL: the recorded
 * command line) under agprof as it is and as edited, and print the
 * comparison's summary and the verdict ("verified: sgd_step 6 traces -> 1,
 * the run 41 ms faster, output identical") to stdout.
 *
 * A recording is data, never a command: the recorded command line runs
 * only when its MAC proves this user's agprof recorded it here
 * (common/trust.h) or trust_recorded is set; the working directory must be
 * the user's, each edited file a regular file inside it reached through no
 * symbolic link.  "verified" needs the edited code to have run as edited.
 */
enum verify_result fix_verify(const struct model *m, const struct finding *const *pick, size_t n, char **command,
			      int trust_recorded);

#endif
