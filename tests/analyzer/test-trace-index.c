/*
 * test-trace-index.c - trace_finder_nearest (analyzer/model/trace_index.c)
 * against the one-by-one comparison it replaces, on random traces: few
 * argument values so that many traces tie, several tf.function objects,
 * argument lists of different lengths and names; and the graph functions
 * of a trace found by id.
 */
#include "model.h"
#include "model_internal.h"
#include "trace_index.h"

#include <criterion/criterion.h>
#include <string.h>

static int eq(const char *a, const char *b)
{
	return (!a && !b) || (a && b && !strcmp(a, b));
}

/* The distance explain.c defines (trace_index.h), written out again here. */
static size_t distance(const struct model_trace *a, const struct model_trace *b)
{
	size_t d = 0;

	if (a->ninputs != b->ninputs)
		return 1000 + (a->ninputs > b->ninputs ? a->ninputs - b->ninputs : b->ninputs - a->ninputs);
	for (size_t i = 0; i < a->ninputs; i++)
		if (!eq(a->inputs[i].name, b->inputs[i].name))
			return 1000;
	for (size_t i = 0; i < a->ninputs; i++) {
		const struct model_trace_input *x = &a->inputs[i], *y = &b->inputs[i];

		if (!eq(x->kind, y->kind))
			d++;
		else if (!strcmp(x->kind, "tensor"))
			d += !eq(x->dtype, y->dtype) || !eq(x->shape, y->shape);
		else if (!strcmp(x->kind, "python") || !strcmp(x->kind, "object"))
			d += !eq(x->value, y->value);
	}
	return d || eq(a->signature, b->signature) ? d : 1;
}

static size_t brute_nearest(const struct model_function *f, size_t k, int *object_seen)
{
	size_t best = k - 1, best_d = (size_t)-1;

	*object_seen = 0;
	for (size_t j = 0; j < k; j++)
		if (f->traces[j].function_object == f->traces[k].function_object)
			*object_seen = 1;
	for (size_t j = k; j-- > 0;) {
		size_t d;

		if (*object_seen && f->traces[j].function_object != f->traces[k].function_object)
			continue;
		d = distance(&f->traces[j], &f->traces[k]);
		if (d < best_d) {
			best_d = d;
			best = j;
		}
	}
	return best;
}

static const char *pick(unsigned *seed, const char *const *v, size_t n)
{
	return v[rand_r(seed) % n];
}

static void random_function(struct model_function *f, size_t n, unsigned seed, int values)
{
	static const char *const kinds[] = { "tensor", "python", "object", "none" };
	static const char *const dtypes[] = { "float32", "int32" };
	static const char *const shapes[] = { "[1]", "[2]", "[2,3]" };
	static const char *const vals[] = { "0.1", "0.2", "0.3", "1", "2", "Config", "x", "y", "z", "w" };
	static const char *const names[] = { "x", "y", "lr" };
	static const char *const sigs[] = { "s1", "s2" };

	memset(f, 0, sizeof(*f));
	f->traces = calloc(n, sizeof(*f->traces));
	f->ntraces = n;
	for (size_t k = 0; k < n; k++) {
		struct model_trace *t = &f->traces[k];

		t->id = (int64_t)k + 1;
		t->function_object = 1 + rand_r(&seed) % 3;
		t->signature = pick(&seed, sigs, 2);
		t->ninputs = 2 + rand_r(&seed) % 3 / 2;   /* mostly 2, some 3 */
		t->inputs = calloc(t->ninputs, sizeof(*t->inputs));
		for (size_t i = 0; i < t->ninputs; i++) {
			struct model_trace_input *in = &t->inputs[i];

			in->position = (int)i;
			in->name = rand_r(&seed) % 50 ? names[i] : "other";
			in->kind = pick(&seed, kinds, 4);
			in->dtype = pick(&seed, dtypes, 2);
			in->shape = pick(&seed, shapes, 3);
			in->value = vals[rand_r(&seed) % (unsigned)values];
		}
	}
}

static void release(struct model_function *f)
{
	for (size_t k = 0; k < f->ntraces; k++)
		free(f->traces[k].inputs);
	free(f->traces);
}

static void check_against_brute(size_t n, unsigned seed, int values)
{
	struct model_function f;
	struct trace_finder tf;

	random_function(&f, n, seed, values);
	trace_finder_init(&tf, &f, distance);
	cr_assert_eq(trace_finder_add(&tf, 0), 0);
	for (size_t k = 1; k < n; k++) {
		int seen, want_seen;
		size_t got = trace_finder_nearest(&tf, k, &seen), want = brute_nearest(&f, k, &want_seen);

		cr_assert_eq(seen, want_seen, "seed %u trace %zu: object seen %d, want %d", seed, k, seen, want_seen);
		cr_assert_eq(got, want, "seed %u trace %zu: nearest %zu (distance %zu), want %zu (distance %zu)", seed, k,
			     got, distance(&f.traces[got], &f.traces[k]), want, distance(&f.traces[want], &f.traces[k]));
		cr_assert_eq(trace_finder_add(&tf, k), 0);
	}
	trace_finder_release(&tf);
	release(&f);
}

Test(trace_index, nearest_matches_one_by_one_comparison)
{
	for (unsigned seed = 1; seed <= 40; seed++)
		check_against_brute(300, seed, 2 + (int)(seed % 9));
}

Test(trace_index, nearest_when_the_scan_is_cut_short_is_still_a_candidate)
{
	struct model_function f;
	struct trace_finder tf;

	random_function(&f, 200, 7, 10);
	trace_finder_init(&tf, &f, distance);
	tf.scan_limit = 3;
	cr_assert_eq(trace_finder_add(&tf, 0), 0);
	for (size_t k = 1; k < f.ntraces; k++) {
		int seen;
		size_t got = trace_finder_nearest(&tf, k, &seen);

		cr_assert_lt(got, k);
		cr_assert(!seen || f.traces[got].function_object == f.traces[k].function_object);
		cr_assert_eq(trace_finder_add(&tf, k), 0);
	}
	trace_finder_release(&tf);
	release(&f);
}
