/*
 * timeline_collective.c - the same collective on the other ranks of a
 * merged recording, for `agprof view`: the collectives view
 * (analyzer/model/sql/collectives.sql, the one definition of which rows are the
 * same collective) run with the selected slice's process, thread and time.
 */
#include "timeline_internal.h"
#include "db.h"
#include "recording.h"
#include "strbuf.h"
#include "util.h"

#include <stdio.h>
#include <string.h>

extern const char agprof_sql_collectives[];

/*
 * The selected slice's collective (the row of its thread that starts at
 * most 5 ms before it: a graph kernel's record starts just before its
 * dispatch is timed, an eager op's at the same time), then the same
 * match_key on the next rank after its own (wrapping), and how many ranks
 * ran it.
 */
static const char peer_sql[] =
	"WITH collectives AS (%s\n), me AS ("
	"  SELECT rank, match_key, op, group_key, instance_key, occurrence, end_ns - start_ns AS span FROM collectives"
	"  WHERE pid = ?1 AND tid = ?2 AND start_ns BETWEEN ?3 - 5000000 AND ?3 ORDER BY ?3 - start_ns LIMIT 1"
	") SELECT me.rank, me.op, me.group_key, me.instance_key, me.occurrence, me.span,"
	"  c.rank, c.pid, c.tid, c.start_ns, c.end_ns, c.graph,"
	"  (SELECT count(*) FROM collectives a WHERE a.match_key = me.match_key)"
	" FROM me JOIN collectives c ON c.match_key = me.match_key AND c.rank <> me.rank"
	" ORDER BY (c.rank - me.rank + 1000000000) %% 1000000000 LIMIT 1";

static void describe(struct tl_collective *c, sqlite3_stmt *st)
{
	const char *op = (const char *)sqlite3_column_text(st, 1);
	struct strbuf sb = STRBUF_INIT;

	strbuf_addstr(&sb, op ? op : "?");
	if (sqlite3_column_type(st, 2) != SQLITE_NULL)
		strbuf_addf(&sb, ", group %lld instance %lld #%lld", (long long)sqlite3_column_int64(st, 2),
			    (long long)sqlite3_column_int64(st, 3), (long long)sqlite3_column_int64(st, 4));
	else
		strbuf_addf(&sb, ", no keys: #%lld of its kind", (long long)sqlite3_column_int64(st, 4));
	strbuf_addf(&sb, ", %lld ranks", (long long)sqlite3_column_int64(st, 12));
	snprintf(c->text, sizeof(c->text), "%s", strbuf_failed(&sb) ? "?" : sb.buf);
	strbuf_release(&sb);
	c->rank = sqlite3_column_int64(st, 0);
	c->peer_rank = sqlite3_column_int64(st, 6);
	c->span_ns = sqlite3_column_int64(st, 5);
	c->peer_span_ns = sqlite3_column_int64(st, 10) - sqlite3_column_int64(st, 9);
}

/* The peer's slice: its kernel (graph) or eager op on its thread, starting at or just after its record. */
static int peer_slice(struct timeline *tl, sqlite3_stmt *st, struct tl_slice *out)
{
	enum tl_kind kind = sqlite3_column_int(st, 11) ? TL_CPUK : TL_EAGER;
	int64_t start = sqlite3_column_int64(st, 9);
	uint32_t lane;
	int rc;

	if (!tl_lane_of(tl, kind, sqlite3_column_int64(st, 7), sqlite3_column_int64(st, 8), -1, &lane))
		return 0;
	rc = timeline_lane_step(tl, lane, start - 1, 1, 0, out);
	return rc == 1 && out->start_ns - start <= 5000000 ? 1 : rc < 0 ? -1 : 0;
}

int timeline_collective_peer(struct timeline *tl, const struct tl_slice *s, struct tl_collective *c)
{
	struct strbuf sql = STRBUF_INIT;
	const struct tl_lane *l;
	sqlite3_stmt *st;
	int rc, found = 0;

	memset(c, 0, sizeof(*c));
	if ((s->kind != TL_EAGER && s->kind != TL_CPUK) || s->lane >= tl->nlanes)
		return 0;
	l = &tl->lanes[s->lane];
	strbuf_addf(&sql, peer_sql, agprof_sql_collectives);
	st = strbuf_failed(&sql) ? NULL : db_prepare(tl->rec->db, sql.buf);
	strbuf_release(&sql);
	if (!st)
		return -1;
	sqlite3_bind_int64(st, 1, l->pid);
	sqlite3_bind_int64(st, 2, l->tid);
	sqlite3_bind_int64(st, 3, s->start_ns);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		describe(c, st);
		c->is_collective = 1;
		found = peer_slice(tl, st, &c->peer);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return error("cannot read '%s': %s", tl->rec->path, sqlite3_errmsg(tl->rec->db));
	return found;
}
