/*
 * parse_source.h - the user's source files read with CPython's own ast when
 * the run ends (writer/codefacts.py, run with the workload's interpreter),
 * into the recording's code_facts table (docs/schema.md).  The analyzer
 * chooses its advice with them (analyzer/model/user_code.c, code_facts.h).
 */
#ifndef AGPROF_PARSE_SOURCE_H
#define AGPROF_PARSE_SOURCE_H

#include <sqlite3.h>

/*
 * Parse the files of source_files (paths under cwd) with python (the
 * interpreter that ran the workload, NULL or "": nothing is done) and
 * insert their facts; and, of the library files in the call chains of the
 * traces that took a Python value, their signatures and the calls on those
 * chains' lines.  Bounded: 20 s, 32 MiB of output.  Best effort: 0,
 * or -1 (nothing or part inserted; the analysis then advises as before).
 */
int code_facts_record(sqlite3 *db, const char *cwd, const char *python);
/*
 * The same for notebook cells (agprof.stop() in IPython, after the writer
 * ended): cells names a JSON file {the file name IPython compiled a cell
 * under (<ipython-input-N-HASH>, the kernel's /tmp/ipykernel_PID/HASH.py):
 * the code it compiled}, each parsed under its file name, so that a cell's
 * facts are keyed as its locations.  The same bounds; 0 or -1.
 */
int code_facts_record_cells(sqlite3 *db, const char *python, const char *cells);

#endif
