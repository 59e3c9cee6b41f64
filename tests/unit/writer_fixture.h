/*
 * writer_fixture.h - the collector started on a fresh buffers' folder and
 * the run writer beside it, for the unit tests that drive both (test-ring.c,
 * test-got.c).  Included once, after WRITER_FIXTURE_DIR is defined
 * ("/tmp/agprof-NAME-XXXXXX"); each test runs in its own process.
 */
static char dir[] = WRITER_FIXTURE_DIR;
static int dir_made;  /* not strchr(dir, 'X'): mkdtemp may choose an X */
static char db_path[512];
static struct run_writer *writer;

/* The buffers' folder and the recording beside it. */
static void remove_files(void)
{
	char cmd[4 * sizeof(db_path) + 64];

	if (!dir_made)
		return;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s' '%s' '%s-wal' '%s-shm'", dir, db_path, db_path, db_path);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", dir);
}

static void start(void)
{
	char err[256];

	cr_assert_not_null(mkdtemp(dir));
	dir_made = 1;
	snprintf(db_path, sizeof(db_path), "%s.agprof", dir);
	cr_assert_eq(agp_start(dir), 0);
	writer = run_writer_create(db_path, dir, err, sizeof(err));
	cr_assert_not_null(writer, "%s", err);
}
