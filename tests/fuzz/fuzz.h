/*
 * fuzz.h - what every harness in tests/fuzz/ shares.
 *
 * A harness defines LLVMFuzzerTestOneInput(): built with
 * clang -fsanitize=fuzzer (tests/fuzz/fuzz.sh) it is fuzzed by libFuzzer;
 * built with the project's compiler and replay.c (tests/fuzz/meson.build) it
 * replays the checked-in corpus as a regression test, so the suite needs no
 * clang.  A harness aborts when an output invariant breaks (invalid UTF-8 in
 * JSON, a control character in text): the sanitizers catch memory errors,
 * fuzz_check() catches wrong output.
 */
#ifndef AGPROF_FUZZ_H
#define AGPROF_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define fuzz_check(cond, what)                                                              \
	do {                                                                                \
		if (!(cond)) {                                                              \
			fprintf(stderr, "fuzz invariant broken: %s (%s:%d)\n", what, __FILE__, __LINE__); \
			abort();                                                            \
		}                                                                           \
	} while (0)

#endif
