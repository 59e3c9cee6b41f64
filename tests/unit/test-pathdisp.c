/* Unit tests of common/pathdisp.c: the short paths people read. */
#include "pathdisp.h"

#include <criterion/criterion.h>
#include <string.h>

Test(pathdisp, library_paths_relative_to_their_package_root)
{
	cr_assert_str_eq(path_display("/home/u/.venv/lib/python3.11/site-packages/gpflow/optimizers/scipy.py",
				      "/home/u/proj"), "gpflow/optimizers/scipy.py");
	cr_assert_str_eq(path_display("/usr/lib/python3/dist-packages/numpy/core.py", NULL), "numpy/core.py");
	/* a venv inside the project: still the package root, not the cwd */
	cr_assert_str_eq(path_display("/p/.venv/lib/python3.12/site-packages/x/y.py", "/p"), "x/y.py");
}

Test(pathdisp, stdlib_and_user_paths)
{
	cr_assert_str_eq(path_display("/usr/lib/python3.12/threading.py", "/home/u"), "threading.py");
	cr_assert_str_eq(path_display("/home/u/proj/train.py", "/home/u/proj"), "train.py");
	cr_assert_str_eq(path_display("/home/u/proj/src/model.py", "/home/u/proj"), "src/model.py");
	cr_assert_str_eq(path_display("/elsewhere/lib/python_utils/x.py", "/home/u"), "/elsewhere/lib/python_utils/x.py");
	cr_assert_str_eq(path_display("/home/u/projector/a.py", "/home/u/proj"), "/home/u/projector/a.py");
	cr_assert_str_eq(path_display("<stdin>", "/"), "<stdin>");
	cr_assert_null(path_display(NULL, "/"));
}

Test(pathdisp, fit_cuts_from_the_left)
{
	char buf[64];

	cr_assert_str_eq(text_fit_left(buf, sizeof(buf), "train.py:12", 20), "train.py:12");
	cr_assert_str_eq(text_fit_left(buf, sizeof(buf), "a/very/long/path/train.py:12", 16), "...h/train.py:12");
	cr_assert_eq(text_columns(text_fit_left(buf, sizeof(buf), "x.py:1 \u2192 lib/long/name.py:7", 12)), 12);
	cr_assert_str_eq(buf, "...name.py:7");
	cr_assert_eq(text_columns("a \u2192 b"), 5);
}

Test(pathdisp, framework_paths)
{
	cr_assert(path_is_framework("/v/site-packages/tensorflow/python/eager/polymorphic_function/x.py"));
	cr_assert(path_is_framework("/v/site-packages/keras/src/trainers/trainer.py"));
	cr_assert(!path_is_framework("/v/site-packages/gpflow/models/gpr.py"));
	cr_assert(!path_is_framework(NULL));
}
