/* checkpointer.h - the recording's WAL copied into its main file beside the writer. */
#ifndef AGPROF_CHECKPOINTER_H
#define AGPROF_CHECKPOINTER_H

/*
 * A thread with a connection of its own that checkpoints the recording's
 * WAL (PASSIVE: it never waits for the writer) after each of the writer's
 * commits (checkpointer_kick) and at least every 250 ms.  SQLite's own
 * automatic checkpoint ran inside the writer's COMMIT: 25 to 40 ms per
 * commit at 2 M events/s (copying the pages, two fsyncs), longer than the
 * main thread's ring holds at that rate (bench/ingest: 11-24% dropped).
 *
 * The first checkpoint that fails (a full disk, an I/O error) ends the
 * thread: the WAL keeps the committed rows and the writer's own write
 * failure says why.
 */
struct checkpointer;

/* Start it on the recording at path; NULL when it cannot (the writer then checkpoints itself). */
struct checkpointer *checkpointer_start(const char *path);

/* A commit just ended: checkpoint now. */
void checkpointer_kick(struct checkpointer *c);

/* Stop the thread (after its checkpoint in progress), close its connection, free c; NULL is none. */
void checkpointer_stop(struct checkpointer *c);

#endif
