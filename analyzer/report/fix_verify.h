/*
 * fix_verify.h - `agprof fix --verify`: the closed loop.  Each finding's
 * edit is an experiment: applied alone to a scratch copy of the
 * recording's working directory (never to the user's files), and all of
 * them together when there are several; the program runs under agprof as
 * it is and as edited, a few times each, and per finding the time it named
 * is compared over every pair of runs, with the outputs (numbers within a
 * tolerance).  The verdicts are kept beside the recording (REC.verify.json,
 * analyzer/advice/verdicts.h), where every later report reads them.
 */
#ifndef AGPROF_FIX_VERIFY_H
#define AGPROF_FIX_VERIFY_H

#include <stddef.h>

struct model;
struct finding;

enum verify_result {
	VERIFY_OK = 0,      /* every edit verified: faster, output identical */
	VERIFY_NOT,         /* an edit refuted (slower, no change, another output) or failed (crash, time limit) */
	VERIFY_CANNOT,      /* no working directory or command line, no scratch copy, an edit that no longer applies,
			       the program as it is did not run or ran past the time limit */
	VERIFY_FAILED,      /* internal error (error printed) */
};

#define VERIFY_MAX_RUNS 20
#define VERIFY_MAX_EDITS 16

struct verify_opts {
	char **command;     /* NULL-terminated; NULL: the recorded command line */
	int trust_recorded; /* run the recorded command line without its MAC's proof */
	int runs;           /* runs on each side, 1..VERIFY_MAX_RUNS */
	double rtol, atol;  /* numbers of the outputs equal within atol + rtol * |a| */
	double time_limit;  /* seconds a run may take, 0: no limit */
	int keep;           /* 1: write REC.verify.json */
};

/*
 * Try pick[0..n)'s edits (sorted by file, then line) on m's program as
 * above, print each finding's verdict ("verified: sgd_step 5 traces -> 1,
 * ...; sgd_step's tracing and calls 412 ms -> 51 ms (...), output
 * identical") to stdout and keep them beside m's recording.
 *
 * A recording is data, never a command: the recorded command line runs
 * only when its MAC proves this user's agprof recorded it here
 * (common/trust.h) or trust_recorded is set; the working directory must be
 * the user's, each edited file a regular file inside it reached through no
 * symbolic link.  "verified" needs the edited code to have run as edited.
 */
enum verify_result fix_verify(const struct model *m, const struct finding *const *pick, size_t n,
			      const struct verify_opts *o);

#endif
