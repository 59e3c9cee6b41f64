/*
 * got-fixture.c - a stand-in TensorFlow object for test-got.c (built as
 * libtensorflow_got_fixture.so: got.c scans objects whose path names
 * TensorFlow).  Its one reference to a hooked symbol is an absolute
 * relocation in .data, which a small object's last page holds: where
 * _pywrap_tf_session.so keeps its slots of TF_NewGraph, TF_DeleteGraph and
 * TF_NewOperation.  Weak: the test program does not export the hook, and
 * the object must load without it.
 */
extern void *TF_NewGraph(void) __attribute__((weak));

void *(*fixture_new_graph)(void) = TF_NewGraph;
