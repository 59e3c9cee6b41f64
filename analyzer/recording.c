/* recording.c - see recording.h. */
#include "recording.h"
#include "db.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>

int recording_open(struct recording *rec, const char *path)
{
	char err[512];

	memset(rec, 0, sizeof(*rec));
	if (db_open_recording(path, &rec->db, err, sizeof(err)) != DB_OPEN_OK)
		return error("%s", err);
	rec->path = strdup(path);
	return 0;
}

void recording_close(struct recording *rec)
{
	sqlite3_close(rec->db);
	free(rec->path);
	memset(rec, 0, sizeof(*rec));
}
