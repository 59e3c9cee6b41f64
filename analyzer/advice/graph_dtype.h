/*
 * graph_dtype.h - the dtype a traced function's recorded graphs compute an
 * argument with: the only dtype a call-site edit may convert it to.
 *
 * A dtype edit (tf.cast at the call) or a python-value edit (tf.constant at
 * the call) keeps the program's results only when every graph already
 * computed with that dtype.  Read from each trace's recorded FunctionDef:
 * a tensor argument's consumers (every one a Cast to the same DstT, else
 * the argument's own dtype); a Python number's graph constant (the Const
 * node of that value in every trace, by one node name; else one moving in
 * lockstep with the value, step + 1 or 2 * n computed in Python at trace
 * time).  Two graphs that
 * compute in different dtypes (double(1) and double(1.1)) get no dtype:
 * any conversion would change what one of them computes.
 */
#ifndef AGPROF_GRAPH_DTYPE_H
#define AGPROF_GRAPH_DTYPE_H

#include <stddef.h>

struct model;
struct model_function;

/*
 * The dtype every graph of fn computes tensor argument arg with, into
 * dtype; 0, or -1 with the reason (a clause) in why.
 */
int graph_arg_dtype(struct model *m, const struct model_function *fn, const char *arg, char *dtype, size_t cap,
		    char *why, size_t wcap);

/*
 * The dtype of the graph constant Python number arg became in every graph
 * of fn (its value, else one that moves with it); 0, or -1 with why.
 */
int graph_value_dtype(struct model *m, const struct model_function *fn, const char *arg, char *dtype, size_t cap,
		      char *why, size_t wcap);

#endif
