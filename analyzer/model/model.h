/*
 * model.h - the analyzed recording: what every printer, the TUI and the
 * rule engine read.  No printer or view writes SQL of its own.
 *
 * Owns: loading a recording into memory as aggregates (per user function,
 * per eager op type, per eager source line, per black box), the retrace
 * explanations, the findings produced by the rules, and the registry of
 * metric sources through which rules (built-in, user and GPU ones) read the
 * model.
 *
 * Aggregation happens in SQL (GROUP BY over the indexed tables), so loading
 * a recording of millions of events keeps only one row per function, trace,
 * op type, source line and black box in memory.
 *
 * Lifetime: every string and array reachable from a struct model is owned by
 * it and freed by model_release().  Pointers stay valid until then.
 */
#ifndef AGPROF_MODEL_H
#define AGPROF_MODEL_H

#include <stddef.h>
#include <stdint.h>

struct recording;
struct model;

/*
 * A user source location; file is NULL (and line 0) when unknown.  When the
 * user's line reached TensorFlow through library code (site-packages, the
 * standard library, `agprof run --library`), lib_file/lib_line is the
 * innermost library frame, else NULL/0.  When no frame was user code at
 * all, file/line is the innermost library frame and library_only is 1.
 */
struct source_loc {
	const char *file;
	int line;
	const char *lib_file;
	int lib_line;
	int library_only;
};

/*
 * Why a trace after the first of a user function happened.  Names are the
 * strings of retrace_cause_name(), used verbatim in JSON, SARIF and rules.
 */
enum retrace_cause {
	CAUSE_NONE = 0,         /* first trace, or not a retrace */
	CAUSE_SHAPE,            /* "shape": a tensor argument's shape changed */
	CAUSE_DTYPE,            /* "dtype": a tensor argument's dtype changed */
	CAUSE_PYTHON_VALUE,     /* "python-value": a Python value baked into the graph changed */
	CAUSE_PYTHON_OBJECT,    /* "python-object": an object argument new/unequal, same graph */
	CAUSE_NEW_FUNCTION_OBJECT, /* "new-function-object": another tf.function wraps the same def */
	CAUSE_INPUT_STRUCTURE,  /* "input-structure": number or nesting of arguments changed */
	CAUSE_UNKNOWN,          /* "unknown": none of the above can be shown */
	CAUSE__COUNT
};

/* "shape", "dtype", ...; NULL for CAUSE_NONE. */
const char *retrace_cause_name(enum retrace_cause cause);
/* Inverse of retrace_cause_name(); CAUSE_NONE when name is not a cause. */
enum retrace_cause retrace_cause_parse(const char *name);

/*
 * The explanation of one retrace.  argument/before/after are NULL when they
 * do not apply (new-function-object has no argument).  For python-value,
 * before/after are the argument's repr() values; const_before/const_after
 * name the graph constant that changed when the graphs show it
 * (e.g. "0.5" -> "0.35").  detail is one human sentence, never NULL.
 */
struct retrace_explanation {
	enum retrace_cause cause;
	size_t compared_with;   /* index in model_function.traces of the closest earlier trace */
	const char *argument;   /* "x", "cfg['lr']", ... */
	const char *before;     /* "[64,20]", "float32", "0.5", ... */
	const char *after;
	const char *const_name; /* graph constant node that changed (python-value), or NULL */
	const char *const_before;
	const char *const_after;
	const char *detail;     /* "x: [64,20] -> [8,20]" */
	/*
	 * 1 for the second trace of a call whose first trace created
	 * tf.Variables: TensorFlow always traces such a call twice, so the
	 * trace is inherent, not avoidable (cause is the earlier trace's).
	 */
	int followup;
	/*
	 * With followup: the export that made this trace (tf.saved_model.save,
	 * get_concrete_function, ... at the trace's user line, from the code
	 * facts), listed apart: not a retrace of the user's calls.  NULL otherwise.
	 */
	const char *export_call;
	/*
	 * 1 (with followup) for a trace inside a running trace of the same
	 * tf.function object: the function called itself while traced.  One
	 * trace tree, part of the outer trace's time.
	 */
	int nested;
	/*
	 * An avoidable retrace (not a follow-up) that ran inside an avoidable
	 * retrace of another function on the same thread (a tf.function called
	 * while another is traced again): the name of the function whose
	 * retrace holds it, else NULL.  Fixing that one's retraces removes this
	 * one; its time is in that one's trace: counted once, there.
	 */
	const char *inside;
	/*
	 * python-value: 1 when library code passed the argument (the call into
	 * the function is a library's line, callsite.lib_file/lib_line, or the
	 * chain has no user frame) and the user's line does not pass it by
	 * name: the user's own call does not reach it, the library's line does.
	 */
	int library_passes;
};

/* One argument of a trace's concrete signature (a trace_inputs row). */
struct model_trace_input {
	int position;
	const char *name;
	const char *kind;   /* tensor, variable, python, object, none */
	const char *dtype;  /* NULL when not a tensor */
	const char *shape;  /* "[64,20]", NULL when not a tensor */
	const char *value;  /* repr() for python, type name for object */
};

/* One trace (one entry added to a tf.function's cache). */
struct model_trace {
	int64_t id;                 /* traces.id */
	int64_t start_ns, end_ns;   /* time spent tracing */
	int64_t pid, tid;           /* the thread that traced (nested traces share it) */
	int64_t function_object;
	int object_trace_no;
	const char *tf_name;        /* "__inference_f_123", or NULL */
	const char *signature;      /* TensorFlow's text of the cache key, or NULL */
	struct source_loc callsite; /* user code whose call triggered the trace */
	int64_t callsite_id;        /* its recorded chain's innermost frame (callsites.id), 0 when none */
	int jit_compile, reduce_retracing, has_input_signature;
	int variables_created;
	int ok;                     /* 0 when tracing raised */
	int64_t collector_ns;       /* the collector's own time in it (describe, watch); 0 before schema 6 */
	struct model_trace_input *inputs;
	size_t ninputs;
	struct retrace_explanation why; /* cause CAUSE_NONE for the first trace */
};

/* One user-level Python function that was traced (a functions row). */
struct model_function {
	int64_t id;                 /* functions.id */
	int64_t pid;
	const char *name;           /* the Python function's __name__ */
	struct source_loc def;      /* its def line */
	struct model_trace *traces; /* in time order */
	size_t ntraces;
	size_t retraces;            /* ntraces - 1 when ntraces > 0 */
	size_t function_objects;    /* distinct tf.function objects among the traces */
	int64_t calls;              /* graph function executions (inference/forward/loaded) */
	int64_t calls_failed;
	int64_t trace_ns;           /* total time tracing (a trace inside another of its traces counted once) */
	int64_t retrace_ns;         /* time tracing in traces after the first, follow-ups excluded */
	int64_t exec_ns;            /* total time of its graph function calls */
	int jit_compile;            /* any trace with jit_compile */
	int has_input_signature;    /* every trace had an input_signature */
	int reduce_retracing;       /* any trace with reduce_retracing */
	int64_t variables_created;  /* over all traces */
	size_t traces_creating_variables; /* the most of one use (the line of the objects' first calls) */
	size_t followups;           /* traces of a call already traced (why.followup): after variables, or nested */
	size_t jit_shapes;          /* distinct input signatures among jit_compile traces */
	int64_t blackbox_nodes;     /* py_function nodes in its graphs */
	int64_t blackbox_execs;
	int64_t blackbox_ns;
	int tf_data;                /* a tf.data function (its graphs are Dataset_* functions) */
	enum retrace_cause main_cause; /* most frequent retrace cause, CAUSE_NONE if no retrace */
	size_t cause_counts[CAUSE__COUNT];
	int64_t first_ns, last_ns;  /* span of its traces and calls */
	/*
	 * A function TensorFlow or Keras defines (tf.data's wrapped_fn, ...)
	 * rather than the user: what made it, e.g. "tf.data map(augment)",
	 * "Keras"; NULL for the user's own functions.
	 */
	const char *made_by;
	/*
	 * Who owns it: 0 the user's code, 1 a library (its def is in an
	 * installed package: Keras' one_step_on_data, TensorFlow's
	 * initialize_variables; or it is a tf.data function).  A library's
	 * traces are the consequence of a user call (model_function_user_loc),
	 * not avoidable retraces of the user's function.  Set once at load.
	 */
	int library;
	/*
	 * The most traces one user line made (its calls' callsite; follow-ups
	 * and nested traces not counted): a library function traced again by
	 * each of several calls (Keras: fit, then evaluate) against one line
	 * that traces it again and again (a library call in a loop).
	 */
	size_t line_traces;
	/*
	 * Its retraces are counted per tf.function object: TensorFlow's and
	 * Keras' own functions, which they wrap anew for each model (or
	 * layer, dataset) the user makes on purpose.  A new object's first
	 * trace is that object's first, not a retrace of the def: it is in no
	 * cause_counts, and the rules judge object_calls_traced.
	 */
	int per_object;
	size_t object_calls_traced; /* the most calls one of its tf.function objects traced (follow-ups apart) */
};

/* Eager dispatch aggregated by op type. */
struct model_eager_op {
	const char *op;     /* "MatMul" */
	int64_t count;
	int64_t total_ns;
	int64_t slow_path;  /* dispatches through the Python fallback path */
	int64_t failed;
};

/* Eager dispatch aggregated by user source line. */
struct model_eager_site {
	struct source_loc loc;
	const char *func;   /* the Python function containing the line */
	int64_t count;
	int64_t total_ns;
	const char *top_op; /* the op type it dispatches most */
	int64_t first_ns, last_ns;
};

/* A Python black box node (EagerPyFunc, PyFunc, PyFuncStateless) in a graph. */
struct model_blackbox {
	const char *node_name;
	const char *op_type;
	const char *token;          /* registry token of the Python callable, or NULL */
	const char *graph_function; /* TensorFlow function holding the node */
	const char *function;       /* user function owning that graph, or NULL (e.g. tf.data) */
	/*
	 * Where the finding points: the user line that created the node
	 * (the tf.py_function call) when the recording has it, else def;
	 * tf.data's: the line of the transformation that made it.
	 */
	struct source_loc loc;
	struct source_loc def;      /* def of that user function, when known */
	int in_tf_data;             /* graph is a tf.data function (no user function) */
	int64_t execs;
	int64_t total_ns;
	int64_t first_ns, last_ns;
	int64_t id;                 /* blackbox_nodes.id, 0 for a node only seen running */
	/*
	 * Eager ops dispatched by the Python body while it ran (same thread,
	 * inside one of its runs): part of the black box's time, not eager
	 * dispatch of the program.
	 */
	int64_t eager_ops, eager_ns;
	const char *thread;         /* role of the thread that ran it most: main, tf.data, other */
	const char *made_by;        /* tf.data: the transformation that made it ("map(augment)"), or NULL */
};

/*
 * One thread that recorded TensorFlow events.  Its shares are of its own
 * time (active_ns), never of the sum of several threads' times.
 */
struct model_thread {
	int64_t pid, tid;
	const char *role;           /* "main", "tf.data" or "other" */
	const char *name;           /* the thread's name, or NULL */
	int64_t first_ns, last_ns;  /* its first and last event */
	/* Main Python thread: the session's active run; others: first to last event. */
	int64_t active_ns;
	int64_t cpu_wait_ns;         /* of active_ns, its waits for a CPU (thread_samples; 0 without them) */
	/*
	 * Eager dispatch (input waits and ops inside black boxes left out): its
	 * ops, their steady cost (scan_group_steady_ns(): no wait for a CPU in
	 * it), and as recorded (wall clock: dispatch and the Python before
	 * each op, under 1 ms).
	 */
	int64_t eager_ops, eager_ns, eager_wall_ns;
	double eager_share;          /* eager_ns / (active_ns - cpu_wait_ns): both without waits for a CPU */
	int64_t input_waits, input_ns; /* eager reads of an iterator (IteratorGetNext, ...) */
	int64_t input_first_ns, input_last_ns;
	struct source_loc input_loc; /* the line reading the iterator most */
	const char *input_func;
	int64_t blackbox_execs, blackbox_ns;
	int64_t blackbox_eager_ops;  /* eager ops inside black-box bodies on this thread */
	struct source_loc top_loc;   /* the line dispatching most eager ops; file NULL: no Python frame */
	const char *top_func, *top_op;
	int64_t top_count;
	int64_t top_first_ns, top_last_ns;
	const char *top_sites;       /* "train.py:12 (4000 ops, 35.2 ms); ..." */
};

/* One tf.data transformation the program built (its dataset op ran eagerly). */
struct model_dataset_op {
	const char *op;             /* "ParallelMapDatasetV2" */
	const char *transformation; /* "map", "batch", "from_generator", ... */
	const char *function;       /* the Python function it applies ("augment"), or NULL */
	int64_t function_ns;        /* when that function was registered (the latest before the op wins) */
	struct source_loc loc;      /* the user line that built it */
	const char *func;           /* the Python function holding that line */
	int64_t pid, tid, start_ns;
	int64_t built;              /* times the line built it (once per Keras fit/predict call) */
	int parallel;               /* runs its function in parallel (num_parallel_calls) */
	int64_t blackbox_execs, blackbox_ns; /* py_function runs inside its function (a generator: its next()) */
	/* schema 8 (dataset_ops): its handles, the stage it reads (index in m->datasets, -1: none) */
	int64_t input, output;
	long upstream;
	long pipeline;              /* the last stage of the pipeline an iterator read it through, -1: unknown */
	int prefetched;             /* that pipeline ends prefetched: by the program or by TensorFlow (inject_prefetch) */
};

/*
 * A loop waiting for one iterator (schema 8): the reads of a thread from
 * the pipeline that ends at m->datasets[last].
 */
struct model_input_loop {
	const struct model_thread *thread;
	long last;
	int64_t waits, wait_ns, first_ns, last_ns;
	int64_t startup_ns;         /* of wait_ns, the first reads of its iterators (each starts the pipeline) */
	struct source_loc loc;      /* the line reading it most */
	const char *func;
	int64_t loc_reads;
};

/* A graph function that reads an iterator inside the graph (IteratorGetNext node). */
struct model_graph_reader {
	const char *graph_function;
	const char *function;       /* user function owning it, or NULL */
	int64_t calls, calls_ns;
	struct source_loc site;     /* the user line of its first call (model.fit's) */
};

/*
 * TF1 graph mode: Session steps (Session.run, partial_run, callables)
 * aggregated by the user source line that ran them.
 */
struct model_session_run {
	struct source_loc loc;      /* the user's session.run line, file NULL when unknown */
	const char *func;           /* the Python function containing the line */
	const char *kind;           /* "run", "partial", "callable" */
	int64_t runs;
	int64_t total_ns;
	int64_t failed;
	int64_t feeds, fetches, targets; /* per run, the most seen at this line */
	int64_t first_ns, last_ns;
};

/* Facts about the session (meta and processes). Strings may be NULL. */
struct model_session {
	const char *argv;           /* JSON array as recorded */
	const char *command_mac;    /* meta command_mac: argv and cwd authenticated (common/trust.h), or NULL */
	const char *cwd, *host, *agprof_version;
	const char *python_version, *tf_version;
	const char *tf_status;      /* hooked, not-loaded, mismatch */
	const char *tf_detail;
	const char *gpu_status, *gpu_detail;
	int exit_status, exit_signal;
	int exit_known;             /* the launcher saw the program end and wrote its status */
	const char *cut_short;      /* why the recording ended before the run's finish (meta cut_short), or NULL */
	const char *attached;       /* meta attached: recorded inside a running program (no exit status), or NULL */
	const char *incomplete;     /* why events are missing besides dropped ones (meta incomplete), or NULL */
	int64_t start_ns, end_ns;
	int64_t wall_ns;            /* end_ns - start_ns */
	/*
	 * From the first TensorFlow event (trace, graph call or eager op) to
	 * the end: the run without interpreter start-up and imports, which
	 * can take most of a short run.  Every share below is of active_ns.
	 */
	int64_t first_tf_ns, active_ns;
	/*
	 * Capture windows (run --delay/--duration/--capture, SIGUSR2,
	 * agprof.start/stop): capture says what was asked (NULL: the whole run
	 * was recorded); active_ns then counts only the windows' time.
	 * capture_windows 0 with capture set: the window never opened.
	 */
	const char *capture;
	int64_t capture_windows, capture_calls;
	/*
	 * The recording's budget (run --max-events/--max-size, schema 5):
	 * aggregate_reason "max-events" or "max-size" ("rate": the launcher
	 * fell behind the workload) once eager ops past it
	 * were kept as per-second aggregates from aggregate_from_ns on
	 * (aggregated_eager_ops of them; every count and time above includes
	 * them); NULL when every op is a row.
	 */
	const char *aggregate_reason;
	int64_t aggregate_from_ns, aggregated_eager_ops, max_events, max_size_bytes;
	int64_t aggregated_calls, aggregated_blackbox_execs; /* schema 7: in their buckets */
	int64_t dropped_events;
	/*
	 * The program's threads' run-queue wait over the run (cpu_samples,
	 * schema 9): wait / (wait + time on a CPU), 0..1.  A machine loaded by
	 * other work makes every time in the recording longer, by up to
	 * 1 / (1 - share).  cpu_sampled is 0 without samples.
	 */
	double cpu_wait_share;
	int cpu_sampled;
	int64_t processes;
	int64_t eager_ops, eager_ns;
	int64_t function_calls, function_call_ns;
	int64_t traces, trace_ns;
	int64_t retrace_ns;         /* avoidable tracing: retraces, follow-ups excluded */
	int64_t blackbox_execs, blackbox_ns;
	int64_t session_runs, session_run_ns; /* TF1 Session steps */
	/*
	 * The eager share, one definition (model_eager_share(), docs/rules.md
	 * *The eager share under load*): the threads that dispatched eager ops,
	 * their steady eager cost (eager_steady_ns, as each thread's eager_ns)
	 * over their time less their waits for a CPU, 0..1.  eager_ns above is
	 * as recorded (wall clock).
	 */
	int64_t eager_steady_ns;
	double eager_share;
	int64_t trace_recorded_ns;  /* trace_ns inside the capture windows (= trace_ns without windows) */
	double trace_share;         /* trace_recorded_ns / active_ns */
	double retrace_share;       /* retrace_ns inside the capture windows / active_ns */
	/* Eager iterator reads, left out of eager_ops / eager_ns above. */
	int64_t input_waits, input_ns;
	/* Eager ops inside black-box bodies, left out of eager_ops / eager_ns. */
	int64_t blackbox_eager_ops, blackbox_eager_ns;
};

enum severity { SEV_INFO = 0, SEV_WARNING, SEV_ERROR };
enum { BORDERLINE_FIRES = 1, BORDERLINE_ESCALATES = 2 };
/* "info", "warning", "error". */
const char *severity_name(enum severity sev);
/* -1 when name is not a severity. */
int severity_parse(const char *name);

/*
 * An edit of the user's code that fixes a finding: lines line..line+nlines-1
 * of file (relative to the recording's working directory) are replaced by
 * after.  file is NULL when no safe edit can be written.
 */
struct finding_fix {
	const char *file;
	int line, nlines;
	const char *before;         /* those lines as the file has them now, '\n'-terminated */
	const char *after;          /* their replacement, '\n'-terminated */
	int pins_signature;         /* the edit gives the function an input_signature: one trace for every shape */
	const char *cell;           /* a notebook cell's edit: its label ("In [3]"), else NULL */
	int cell_line;              /* the cell's line of `line` */
	const char *cell_after;     /* the whole corrected cell */
};

/*
 * What an experiment measured of a finding's edit (`agprof fix --verify`,
 * kept beside the recording in REC.verify.json: analyzer/advice/verdicts.h).
 * kind 0: none recorded.
 */
enum verdict_kind { VERDICT_NONE, VERDICT_VERIFIED, VERDICT_REFUTED, VERDICT_FAILED };
struct finding_verdict {
	int kind;                   /* enum verdict_kind */
	const char *measure;        /* the time measured: "learn's tracing and calls", "the run's CPU time" */
	int64_t base_ns, new_ns;    /* its median as it is and as edited */
	int64_t low_ns, high_ns;    /* new - base over every pair of runs: the lowest and highest */
	int runs;                   /* runs on each side */
	const char *output;         /* "identical", "identical within the tolerance", "differs from line 3: ..." */
	const char *reason;         /* one line: why refuted or failed; NULL when verified */
};

/* A finding as REC.verify.json keys it: its rule, function and location. */
struct finding_key {
	const char *rule, *function, *file;
	int line;
};

/*
 * The experiment on several findings' edits applied together (`agprof fix
 * --verify` with more than one; REC.verify.json's "all"): which findings,
 * and the verdict on the run's CPU time.  verdict.kind 0 when none.
 */
#define VERIFY_TOGETHER_MAX 16
struct verify_together {
	struct finding_key keys[VERIFY_TOGETHER_MAX];
	size_t nkeys;
	struct finding_verdict verdict;
};

/*
 * A finding: one rule firing on one row of a metric source.  Owned by the
 * model.  cost_ns is the time the problem costs (findings are ranked by it);
 * start_ns/end_ns is the span of the events it refers to, so a timeline can
 * jump there (0/0 when none).
 */
struct finding {
	const char *rule;           /* rule id, e.g. "retracing" */
	const char *title;          /* rule's one-line title */
	enum severity severity;
	const char *function;       /* Python function name, or NULL */
	const struct model_function *fn; /* the function it is about when the rule's row is one, else NULL */
	enum retrace_cause cause;   /* CAUSE_NONE when not about a retrace */
	struct source_loc loc;      /* user source line to show and annotate */
	const char *message;
	const char *recommendation;
	const char *example_before; /* short code example, or NULL */
	const char *example_after;
	int64_t cost_ns;
	int64_t start_ns, end_ns;
	const char *thread;         /* role of the thread it is about: main, tf.data, other; or NULL */
	/*
	 * What the measure's uncertainty left open (docs/rules.md, "Borderline"):
	 * BORDERLINE_FIRES, the rule's condition (the finding is then info);
	 * BORDERLINE_ESCALATES, its escalation (it keeps the rule's severity).
	 */
	int borderline;
	int fix_kind, saving_kind;  /* the rule's fix: and saving: (enums of analyzer/rules/rule_advice.h); 0: none, cost */
	/* Filled by fix_annotate() (analyzer/advice/fix.h) after the rules ran; findings are ranked by saving_ns. */
	int64_t saving_ns;          /* what the run would save with the fix applied (estimate) */
	const char *saving_method;  /* how saving_ns was estimated, one line */
	const char *saving_summary; /* saving_method in a few words ("4 retraces at ~5 ms each"), or NULL */
	/*
	 * A graph move's estimate (saving: eager-loop, rule_advice.h): a
	 * forecast that only an experiment confirms, neither claimed nor
	 * ranked (saving_ns stays 0 until `agprof fix --verify` measured it).
	 * forecasts 0: no forecast (JSON null), also once refuted.
	 */
	int64_t forecast_ns;
	int forecasts;
	struct finding_fix fix;     /* the edit, fix.file NULL when none */
	const char *code;           /* the real source lines the finding is about ("  12 | ..."), or NULL */
	const char *no_edit;        /* why no edit is offered (the advice then is in words), or NULL */
	/*
	 * The command that tries the edit (`agprof fix --verify REC --rule R`)
	 * when its saving is not claimed (saving: experiment) and no experiment
	 * measured it yet, else NULL.
	 */
	const char *experiment;
	struct finding_verdict verdict; /* the recording's experiment on it (verdicts.h), kind 0 when none */
};

/*
 * f's experiment command when there is an edit for it to try (a file's:
 * fix --verify refuses a notebook cell's), else NULL: without one the
 * saving stays unclaimed and no command is offered, it would have nothing
 * to try.
 */
static inline const char *finding_try_command(const struct finding *f)
{
	return f->fix.file && !f->fix.cell ? f->experiment : NULL;
}

/*
 * Metric sources: how rules read the model.  A source is a named table of
 * rows ("functions", "eager_sites", "session", ...); each row has named
 * fields, numeric or text.  A rule selects one source and evaluates its
 * condition on each row.  The built-in sources are registered by
 * model_load(); another module (analyzer/gpu/gpu_metrics.c) adds its own with
 * model_add_source() before the rules run.  Field names are lowercase
 * identifiers.
 */
enum metric_type { METRIC_NONE = 0, METRIC_NUM, METRIC_TEXT };

struct metric_value {
	enum metric_type type;
	double num;
	const char *text;   /* owned by the source; valid until model_release() */
	/*
	 * The rules' evaluation only (analyzer/rules/rules.c): the field a
	 * value was read from (its uncertainty is the field FIELD_se, one
	 * standard error from the spread within the run, when the source has
	 * it), and a comparison or condition that its uncertainty leaves open.
	 */
	const char *field;
	int borderline;
};

/* What a finding made from a row points at. Unknown members stay 0/NULL. */
struct metric_anchor {
	const char *function;
	const struct model_function *fn; /* the very function (two may share a name), or NULL */
	enum retrace_cause cause;
	struct source_loc loc;
	int64_t cost_ns;
	int64_t start_ns, end_ns;
	const char *thread;
};

struct metric_source {
	const char *name;
	/* One line per field, "name: meaning", for docs/rules.md and --help. */
	const char *const *fields;
	size_t (*count)(const struct model *m, void *data);
	/* Fill *out with field of row; return -1 if the source has no such field. */
	int (*get)(const struct model *m, void *data, size_t row, const char *field,
		   struct metric_value *out);
	void (*anchor)(const struct model *m, void *data, size_t row, struct metric_anchor *out);
	/* Called by model_release(); may be NULL. */
	void (*release)(void *data);
	void *data;
};

/*
 * One thread's eager dispatch at one op type and call site (input waits
 * and ops inside black boxes left out): its ops and their steady cost
 * (scan_group_steady_ns()).
 */
struct model_eager_key {
	int64_t pid, tid, op_id, site_id;
	int64_t count, steady_ns;
};

/*
 * Thread (pid, tid)'s waits for a CPU in [a, b) (ns): its thread_samples,
 * else its process's wait share (cpu_samples) of b - a, else 0.
 */
double model_thread_wait_ns(const struct model *m, int64_t pid, int64_t tid, int64_t a, int64_t b);

/*
 * The eager share: eager_ns (at its steady cost) of own_ns (the time less
 * the waits for a CPU), 0..1.  The one formula of every eager share
 * (threads, session, slices).
 */
double model_eager_share(int64_t eager_ns, int64_t own_ns);

/*
 * Thread t's own time in [from, to): its active time there (the main
 * thread: the recorded time of the session's active run; another: its
 * first to last event) less its waits for a CPU (*wait_ns, at most that).
 * The base of its eager share.
 */
int64_t model_thread_own_ns(const struct model *m, const struct model_thread *t, int64_t from, int64_t to,
			    int64_t *wait_ns);

/* The steady cost of one op of (pid, tid, op_id, site_id) (m->eager_keys), -1 when none. */
int64_t model_eager_key_op_ns(const struct model *m, int64_t pid, int64_t tid, int64_t op_id, int64_t site_id);

struct cpu_intervals;     /* private: analyzer/model/call_times.c */
struct model_source_list; /* private */
struct strpool;           /* private */
struct saving_reads;      /* private: analyzer/model/saving_reads.c */
struct eager_runs_table;  /* private: analyzer/model/eager_runs.c */

/* A stretch of the run whose high-rate events were recorded (merged union of the capture windows). */
struct model_window {
	int64_t start_ns, end_ns;
	const char *why;            /* what opened .. closed the first window merged into it */
};

/* Recorded time within [from, to): to - from without capture windows. */
int64_t model_recorded_ns(const struct model *m, int64_t from, int64_t to);

/*
 * Time spent tracing: per thread, the union of its traces' spans
 * (retraces_only: of the traces after each function's first, follow-ups
 * excluded), summed over threads, so that a trace nested in another (Keras
 * traces one_step_on_data inside multi_step_on_iterator's) is counted once.
 * recorded_ns (may be NULL): the same union's time inside the capture
 * windows (all of it without windows).
 */
int64_t model_trace_union_ns(const struct model *m, int retraces_only, int64_t *recorded_ns);

struct model {
	struct recording *rec;      /* not owned */
	struct model_window *windows; /* in time order, merged; none without session.capture */
	size_t nwindows;
	struct model_session session;
	struct model_function *functions; /* sorted by retrace_ns + trace count, worst first */
	size_t nfunctions;
	struct model_eager_op *ops;       /* sorted by total_ns, largest first */
	size_t nops;
	struct model_eager_site *sites;   /* sorted by count, largest first */
	size_t nsites;
	struct model_blackbox *blackboxes; /* sorted by total_ns, largest first */
	size_t nblackboxes;
	struct model_session_run *session_runs; /* by total_ns, largest first */
	size_t nsession_runs;
	struct model_thread *threads;     /* by pid, tid */
	size_t nthreads;
	struct model_dataset_op *datasets; /* by process, in the order they were built */
	size_t ndatasets;
	struct model_graph_reader *graph_readers;
	size_t ngraph_readers;
	struct model_input_loop *input_loops; /* empty before schema 8: the input rows are per thread */
	size_t ninput_loops;
	struct finding *findings;         /* after rules_run(): by cost_ns, largest first, then severity */
	size_t nfindings;
	size_t capfindings;               /* private: allocated findings */
	struct verify_together together;  /* the edits tried together (verdicts.h), its strings in pool */
	struct model_source_list *sources;
	struct strpool *pool;
	struct model_trace_input *trace_inputs; /* private: every trace's inputs, one block */
	size_t ntrace_inputs;
	struct saving_reads *saving_reads; /* private: the savings' reads, made on first use */
	struct eager_runs_table *eager_runs; /* private: every user function's eager runs, walked once */
	struct model_eager_key *eager_keys; /* by pid, tid, op_id, site_id */
	size_t neager_keys;
	struct cpu_intervals *cpu_samples; /* private: cpu_samples and thread_samples as intervals, NULL without them */
	struct model_cell *cells;         /* notebook cells the recording keeps (user_code.c), by path */
	size_t ncells;
	struct code_fact *facts;          /* the user's code as CPython's ast read it (code_facts.h), by path, line */
	size_t nfacts;
	struct share_se_memo *share_se;   /* private: model_share_se()'s answers, a scan each (input.c) */
	size_t nshare_se;
};

/*
 * A notebook cell (table notebook_cells): the file name its code was
 * compiled with, its label as IPython shows it, the cell's line of the
 * code's line 1 (2 for a %%agprof cell's body), and the cell's text.
 */
struct model_cell {
	const char *path, *label, *source;
	int first_line;
};

/* user_code.c: read notebook_cells into m->cells (none without the table); 0 or -1. */
int model_load_cells(struct model *m);
/* The cell whose code file is `file`, or NULL. */
const struct model_cell *model_cell(const struct model *m, const char *file);

/*
 * Read rec into m.  Prints one "error: ..." line and returns -1 on failure
 * (m is then released).  An empty recording (TensorFlow never loaded) loads
 * fine; the caller decides what to say (see model_is_empty()).
 */
int model_load(struct model *m, struct recording *rec);

/*
 * What model_load_parts() reads beyond the session, functions and traces
 * (which it always reads).  MODEL_ALL is model_load().
 */
enum model_part {
	MODEL_EVENTS = 1 << 0,  /* eager ops per op type and line, graph calls, black boxes, Session steps */
	/*
	 * Without MODEL_EVENTS: the eager dispatch and its share (each thread's
	 * and the session's, model_eager_share()), no graph calls or Session
	 * steps.  What `agprof check --max-eager-share` needs.
	 */
	MODEL_EAGER_TOTALS = 1 << 1,
	MODEL_ALL = MODEL_EVENTS | MODEL_EAGER_TOTALS,
};

/* model_load() reading only parts (enum model_part bits). */
int model_load_parts(struct model *m, struct recording *rec, unsigned parts);

/*
 * For a model loaded without MODEL_EVENTS: fill m->sites with the op count
 * of every source line (from the call-site index; total_ns 0, no op type).
 * Does nothing when the sites are there.  0 or -1.
 */
int model_load_eager_site_counts(struct model *m);
void model_release(struct model *m);

/*
 * NULL when the recording holds TensorFlow data; otherwise a one-line reason
 * (e.g. "the workload exited with status 1 before TensorFlow was loaded").
 */
const char *model_empty_reason(const struct model *m);

/* Register a metric source; m keeps a copy of *src.  0 or -1. */
int model_add_source(struct model *m, const struct metric_source *src);
/* NULL when no source has that name. */
const struct metric_source *model_find_source(const struct model *m, const char *name);

/*
 * Where to point the user at for f: its def when that is user code, else
 * the call that first traced it (a def inside site-packages is a wrapper).
 */
struct source_loc model_function_user_loc(const struct model_function *f);

/*
 * Copy s into the model's pool (freed by model_release()).  For sources and
 * rules that make strings whose lifetime is the model's.
 */
const char *model_strdup(struct model *m, const char *s);

/*
 * Append a finding (the rule engine and GPU rules use this); every string is
 * copied into the model's pool.  Returns the stored finding or NULL.
 */
/* Find a function by Python name (first match), or NULL. */
const struct model_function *model_find_function(const struct model *m, const char *name);
/*
 * The function finding f is about: its own (f->fn), else the only one with
 * its name; NULL when none or several have it (no estimate is shared).
 */
const struct model_function *model_finding_function(const struct model *m, const struct finding *f);
/* The Python function of the eager ops recorded at f's line (m->sites), or NULL: eager-hotspot's function. */
const char *model_finding_site_function(const struct model *m, const struct finding *f);

struct finding *model_add_finding(struct model *m, const struct finding *f);
/*
 * Hold f's cost and saving to what they can be (bounds.c): at most the
 * run's wall time and, when f is about one function, that function's own
 * time; a cut is said in its saving_method.  fix_annotate() calls it last.
 */
void model_bound_finding(struct model *m, struct finding *f);
/*
 * The GPU metric sources (analyzer/gpu/gpu_metrics.c): loads the GPU model of
 * m->rec once and registers the gpu, gpu_kernels, gpu_syncs and gpu_gaps
 * sources on it.  The model does not know its plug-ins: the caller
 * (analyze()) registers them after model_load().  0 or -1.
 */
int gpu_metrics_register(struct model *m);
/*
 * The GPU model those sources read (lives as long as m), or NULL when they
 * are not registered: the one GPU model of an analysis, for the printers.
 */
const struct gpu_model *gpu_metrics_model(const struct model *m);

/* What a location without a file is shown as: its ops ran with no Python frame. */
#define MODEL_NO_FRAME "<no Python frame>"

/* Sort findings by saving_ns, then cost_ns, largest first; then the more severe first. */
void model_sort_findings(struct model *m);

#endif
