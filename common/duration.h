/*
 * duration.h - the one way agprof writes a duration for people (report,
 * finding messages, check, the TUI): "850 ns", "1.07 us", "12.3 us",
 * "45.6 ms", "119.7 s", "2 min 3 s", "1 h 2 min".  Three digits at least
 * (two decimals below 10 of a unit, one above), so that a ratio of two
 * durations read off the screen is right within 1%.  Machine outputs (JSON,
 * CSV) keep raw nanoseconds.
 *
 * Units switch where the rounded number would reach the next unit (999.96
 * us prints as "1.0 ms", never "1000.0 us"); seconds keep one decimal up to
 * two minutes, longer runs read as minutes and seconds, then hours and
 * minutes.  Negative durations (timeline offsets) get a leading '-'.
 */
#ifndef AGPROF_DURATION_H
#define AGPROF_DURATION_H

#include "strbuf.h"

#include <stddef.h>
#include <stdint.h>

/* Room for any duration_format() result, NUL included. */
#define DURATION_MAX 32

/* Write ns into buf (len bytes, DURATION_MAX is enough); returns buf. */
const char *duration_format(char *buf, size_t len, int64_t ns);

/* Append the same text to sb. */
void strbuf_add_duration(struct strbuf *sb, int64_t ns);

#endif
