#!/usr/bin/env python3
"""The bad-input matrix: every command that reads a recording, on every kind
of bad recording (issue 14).

Rows are inputs: files that are not recordings at all (empty, text, a FIFO,
a directory), damaged recordings (truncated, pages flipped, a newer schema,
a missing table, a view in place of a table) and recordings with hostile
rows (huge ids, extreme timestamps, names that are not UTF-8 or hold
terminal control sequences, rows referring to rows that do not exist), all
made from one real recording of samples/retrace_shape.py.  Columns are
commands: `report` in every format, `check`, `export`, `top --once`, `merge`
with the real recording (and `report --format json` on the merge when it
succeeds), `diff` in every format (`-o FILE` too) and `check --baseline`
with the real recording, this one as BASE and as NEW, `fix` and
`fix --verify` (issue 49: by a user with no key, so no recorded command may
run: the 'hostile-argv' row's would make MARKER), and `view` and `top`
started in tmux then quit with 'q' (no escape sequence of the recording may
set the pane's title).  Rows 'markup' and 'hostile-argv' put markup and a
command in every string and in meta.argv: inert in the HTML pages (no tag, no
on* attribute from them).

Each cell must end within its timeout, never by a signal, and either exit 2
with exactly one line on stderr, or succeed (check, fix: 0 or 1) with output
that parses (JSON, SARIF, CSV) and, for text, holds no control character;
stderr never holds one.

Environment (tests/meson.build): AGPROF, AGPROF_SOURCE_ROOT, AGPROF_BUILD_ROOT.
"""
import concurrent.futures
import csv
import html.parser
import io
import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time

AGPROF = os.environ['AGPROF']
SRC = os.environ['AGPROF_SOURCE_ROOT']
BUILD = os.environ.get('AGPROF_BUILD_ROOT', os.path.dirname(os.path.dirname(os.path.dirname(AGPROF))))
TIMEOUT = 20  # seconds per cell: a hang fails the cell, not the whole suite
# the file a recorded command line ('hostile-argv') would make: no cell may run it
MARKER = os.path.join(tempfile.gettempdir(), 'agprof-badinput-ran-%d' % os.getpid())

failures = []  # appended to by the tmux cells' threads too (list.append is atomic)
VIEWS_AT_ONCE = 4


def fail(row, col, why, detail=''):
    failures.append('%s x %s: %s%s' % (row, col, why, ('\n    ' + detail[:600].replace('\n', '\n    ')) if detail else ''))


def real_recording():
    """A recording of samples/retrace_shape.py made by agprof run, cached per build."""
    store = os.path.join(BUILD, 'tests', 'badinput')
    os.makedirs(store, exist_ok=True)
    out = os.path.join(store, 'retrace_shape.agprof')
    if not os.path.exists(out) or os.path.getmtime(out) < os.path.getmtime(AGPROF):
        tmp = out + '.tmp%d' % os.getpid()
        r = subprocess.run([AGPROF, 'run', '-o', tmp, '--', sys.executable, 'retrace_shape.py'],
                           cwd=os.path.join(SRC, 'samples'), capture_output=True, text=True, timeout=300)
        if r.returncode != 0 or not os.path.exists(tmp):
            sys.exit('cannot record samples/retrace_shape.py: %s' % r.stderr[-2000:])
        os.replace(tmp, out)
    return out


def mutated(base, dst, *sql):
    shutil.copy(base, dst)
    db = sqlite3.connect(dst)
    for s in sql:
        db.execute(s)
    db.commit()
    db.close()
    return dst


def make_inputs(base, d):
    p = lambda name: os.path.join(d, name)
    data = open(base, 'rb').read()
    inputs = {}
    open(p('empty.agprof'), 'wb').close()
    inputs['zero-byte'] = p('empty.agprof')
    with open(p('text.agprof'), 'w') as f:
        f.write('this is a text file, not a recording\n' * 20)
    inputs['text'] = p('text.agprof')
    with open(p('truncated.agprof'), 'wb') as f:
        f.write(data[:len(data) // 3])
    inputs['truncated'] = p('truncated.agprof')
    flipped = bytearray(data)
    for i in range(4096, len(flipped), 1531):
        flipped[i] ^= 0xa5
    with open(p('flipped.agprof'), 'wb') as f:
        f.write(bytes(flipped))
    inputs['flipped-pages'] = p('flipped.agprof')
    os.mkfifo(p('fifo.agprof'))
    inputs['fifo'] = p('fifo.agprof')
    os.mkdir(p('dir.agprof'))
    inputs['directory'] = p('dir.agprof')
    inputs['newer-schema'] = mutated(base, p('newer.agprof'), 'PRAGMA user_version = 999')
    inputs['missing-table'] = mutated(base, p('missing.agprof'), 'DROP TABLE eager_op_keys')
    inputs['view-for-table'] = mutated(
        base, p('view.agprof'), 'DROP TABLE threads',
        'CREATE VIEW threads(pid, tid, role, name) AS WITH RECURSIVE r(x) AS '
        '(SELECT 1 UNION ALL SELECT x + 1 FROM r) SELECT x, x, x, x FROM r')
    inputs['mutated-rows'] = mutated(
        base, p('rows.agprof'), 'DELETE FROM strings WHERE id IN (SELECT name_id FROM functions)',
        'UPDATE function_calls SET name_id = 123456789, callsite_id = -5',
        "UPDATE traces SET start_ns = 'abc', status = 'weird'",
        'UPDATE eager_op_keys SET op_id = -1',
        'UPDATE eager_op_rows SET dur = -1000000',
        "UPDATE processes SET argv = '[not json'")
    inputs['huge-ids'] = mutated(
        base, p('ids.agprof'), 'UPDATE functions SET id = 2305843009213693952',
        'UPDATE strings SET id = 4611686018427387905 WHERE id = (SELECT max(id) FROM strings)',
        'UPDATE graph_functions SET id = 9223372036854775807 WHERE id = (SELECT min(id) FROM graph_functions)',
        'UPDATE traces SET id = -9223372036854775808 WHERE id = (SELECT min(id) FROM traces)',
        'UPDATE eager_op_rows SET id = 9223372036854775807 WHERE id = (SELECT max(id) FROM eager_op_rows)')
    inputs['extreme-timestamps'] = mutated(
        base, p('ts.agprof'),
        'UPDATE function_calls SET start_ns = -9223372036854775807, end_ns = 9223372036854775807'
        ' WHERE id = (SELECT min(id) FROM function_calls)',
        'UPDATE eager_op_rows SET dur = 9223372036854775807 WHERE id = (SELECT min(id) FROM eager_op_rows)',
        'UPDATE eager_op_keys SET base_ns = 9223372036854775807 WHERE id = (SELECT max(id) FROM eager_op_keys)',
        'UPDATE traces SET end_ns = -9223372036854775808',
        "UPDATE meta SET value = '-9223372036854775808' WHERE key = 'start_ns'")
    inputs['hostile-buckets'] = mutated(
        base, p('buckets.agprof'),
        "INSERT INTO eager_op_buckets (pid, tid, start_ns, end_ns, op_id, device_id, callsite_id, count, total_ns,"
        " python_ns, slow_path, failed, histogram) VALUES"
        " ((SELECT min(pid) FROM processes), 1, -9223372036854775808, 9223372036854775807, -1, 99999, -7,"
        "  9223372036854775807, 9223372036854775807, -5, -3, 9223372036854775807, x'ffffffff'),"
        " ((SELECT min(pid) FROM processes), (SELECT min(pid) FROM processes), 5, 1, 123456789, NULL,"
        "  123456789, -100, -1, 'abc', 9223372036854775807, 0, NULL),"
        " ((SELECT min(pid) FROM processes), (SELECT min(pid) FROM processes), 9223372036854775807, 0,"
        "  (SELECT min(id) FROM strings), NULL, (SELECT min(id) FROM callsites), 9223372036854775807, 5, 5, 1, 1, x'')",
        "INSERT OR REPLACE INTO meta VALUES ('aggregate_reason', 'max-size'), ('aggregate_from_ns', 'x'),"
        " ('aggregated_eager_ops', '-9223372036854775808'), ('max_size_bytes', '-1')")
    # schema 7: graph calls and black-box runs past the budget, with negative, huge and text counts and times
    inputs['hostile-call-buckets'] = mutated(
        base, p('callbuckets.agprof'),
        "INSERT INTO function_call_buckets (pid, tid, start_ns, end_ns, graph_function_id, name_id, callsite_id,"
        " count, total_ns, failed, histogram) VALUES"
        " ((SELECT min(pid) FROM processes), 1, -9223372036854775808, 9223372036854775807, -1, -1, -7,"
        "  9223372036854775807, 9223372036854775807, 9223372036854775807, x'ffffffff'),"
        " ((SELECT min(pid) FROM processes), 2, 5, 1, (SELECT min(id) FROM graph_functions), 123456789, NULL,"
        "  -100, -1, -3, zeroblob(100000)),"
        " ((SELECT min(pid) FROM processes), 3, 9223372036854775807, 0, 9223372036854775807,"
        "  (SELECT min(id) FROM strings), (SELECT min(id) FROM callsites), 'abc', 'x', 'y', NULL)",
        "INSERT INTO blackbox_buckets (pid, tid, start_ns, end_ns, node_id, op_type_id, token, blackbox_node_id,"
        " count, total_ns, failed, histogram) VALUES"
        " ((SELECT min(pid) FROM processes), 1, -9223372036854775808, 9223372036854775807, -1, 99999, 'tok',"
        "  -5, 9223372036854775807, 9223372036854775807, -1, x'ff'),"
        " ((SELECT min(pid) FROM processes), 1, 5, 1, 123456789, 123456789, NULL, 9223372036854775807,"
        "  -9223372036854775808, -9223372036854775808, 0, NULL)",
        "INSERT OR REPLACE INTO meta VALUES ('aggregate_reason', 'max-events'), ('aggregated_calls', 'x')")
    # schema 6: blocks claiming every id, reversed bounds, a row whose key is missing, a key with a text pid
    inputs['hostile-blocks'] = mutated(
        base, p('blocks.agprof'),
        "INSERT INTO eager_op_blocks (pid, tid, first_id, last_id, min_start_ns, max_start_ns)"
        " SELECT pid, tid, -9223372036854775808, 9223372036854775807, -9223372036854775808, 9223372036854775807"
        " FROM eager_op_keys",
        "INSERT INTO eager_op_blocks (pid, tid, first_id, last_id, min_start_ns, max_start_ns)"
        " SELECT pid, tid, 9223372036854775807, -9223372036854775808, 9223372036854775807, -5 FROM eager_op_keys",
        "UPDATE eager_op_blocks SET min_start_ns = max_start_ns + 1000, max_start_ns = min_start_ns - 1000"
        " WHERE id = (SELECT min(id) FROM eager_op_blocks)",
        'UPDATE eager_op_rows SET key = 999999 WHERE id = (SELECT min(id) FROM eager_op_rows)',
        "UPDATE eager_op_keys SET pid = 'abc' WHERE id = (SELECT max(id) FROM eager_op_keys)")
    # notebook cells (written by %%agprof): the sample's own files as cells whose text holds control sequences
    # and bytes that are not UTF-8, a label that is a control sequence, first lines past the end and at INT64_MAX
    inputs['hostile-cells'] = mutated(
        base, p('cells.agprof'),
        "INSERT OR REPLACE INTO notebook_cells (path, label, first_line, source) SELECT DISTINCT s.text, 'In [7]',"
        " 2, '%%agprof' || char(10) || CAST(x'1b5d303b70776e6564071b5b324a0dfffe' AS TEXT) || char(10) ||"
        " 'import tensorflow as tf' || char(10) || '@tf.function' FROM strings s"
        " WHERE s.id IN (SELECT file_id FROM callsites WHERE library = 0 UNION SELECT file_id FROM functions)",
        "INSERT OR REPLACE INTO notebook_cells VALUES ('x.py', CAST(x'1b5b324a' AS TEXT), 1, 'a'),"
        " ('y.py', 'In [1]', 9223372036854775807, 'b'), ('z.py', 'In [2]', -1, zeroblob(100))")
    inputs['non-utf8'] = mutated(
        base, p('utf.agprof'),
        "UPDATE strings SET text = CAST(x'66fffec0afeda080f4908080' AS TEXT) || id")
    # markup in every recorded string and in the command line: inert in the HTML pages (issue 49)
    markup = "<script>alert(1)</script><img src=x onerror=alert(2)>"
    inputs['markup'] = mutated(
        base, p('markup.agprof'),
        "UPDATE strings SET text = '%s' || id" % markup,
        "UPDATE meta SET value = '[\"%s\", \"train.py\"]' WHERE key = 'argv'" % markup)
    # a command line that would leave a marker: never run (fix --verify), shown escaped
    inputs['hostile-argv'] = mutated(
        base, p('argv.agprof'),
        "UPDATE meta SET value = '[\"sh\", \"-c\", \"touch %s; printf \\\\033]0;PWNED\\\\007\"]'"
        " WHERE key = 'argv'" % MARKER)
    inputs['control-chars'] = mutated(
        base, p('ctl.agprof'),
        "UPDATE strings SET text = CAST(x'1b5d303b70776e6564071b5b324a0d08c29b33316d' AS TEXT) || id")
    return inputs


def text_is_clean(out):
    for ch in out:
        o = ord(ch)
        if (o < 0x20 and ch not in '\n\t\r') or 0x7f <= o <= 0x9f:
            return False
    return True


class Tags(html.parser.HTMLParser):
    """The tags of a page, and any on* attribute (an event handler) they carry."""

    def __init__(self):
        super().__init__()
        self.tags, self.handlers = [], []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self.handlers += ['%s %s' % (tag, k) for k, _ in attrs if k.startswith('on')]


def check_cell(row, col, args, kind, env=None, output=None):
    """One cell; output: the file the command writes (-o), read as its output."""
    try:
        r = subprocess.run([AGPROF] + args, capture_output=True, timeout=TIMEOUT, env=env)
    except subprocess.TimeoutExpired:
        fail(row, col, 'hung (no exit within %d s)' % TIMEOUT)
        return
    err = r.stderr.decode('utf-8', 'replace')
    if r.returncode < 0 or r.returncode >= 128:
        fail(row, col, 'died with status %d' % r.returncode, err)
        return
    if not text_is_clean(err):
        fail(row, col, 'a control character on stderr', repr(err[:300]))
    if r.returncode == 2:
        lines = err.splitlines()
        if len(lines) != 1 or not lines[0].startswith('error: '):
            fail(row, col, 'exit 2 without exactly one error line', err)
        if os.path.exists(MARKER):
            fail(row, col, 'ran a command from the recording')
            os.unlink(MARKER)
        return
    ok = (0, 1) if col.startswith(('check', 'fix')) else (0,)
    if r.returncode not in ok:
        fail(row, col, 'exit %d' % r.returncode, err)
        return
    if os.path.exists(MARKER):
        fail(row, col, 'ran a command from the recording')
        os.unlink(MARKER)
    try:
        out = (open(output, 'rb').read() if output else r.stdout).decode('utf-8')
    except (OSError, UnicodeDecodeError) as e:
        fail(row, col, 'output is not UTF-8: %s' % e)
        return
    try:
        if kind == 'json':
            json.loads(out)
        elif kind == 'sarif':
            doc = json.loads(out)
            assert doc.get('version') == '2.1.0', 'not SARIF 2.1.0'
        elif kind == 'csv':
            rows = list(csv.reader(io.StringIO(out, newline='')))
            assert rows and rows[0][0] == 'rule', 'no CSV header'
        elif kind == 'html':
            page = Tags()
            page.feed(out)
            page.close()
            assert out.startswith('<!DOCTYPE html>') and out.rstrip().endswith('</html>'), 'not a whole page'
            assert out.count('<script') == 1 and page.tags.count('script') == 1, 'a script tag from the recording'
            assert 'img' not in page.tags and not page.handlers, 'markup from the recording: %s' % page.handlers[:3]
    except (ValueError, AssertionError) as e:
        fail(row, col, 'output does not parse: %s' % e, out[:300])
        return
    if kind in ('text', 'csv', 'plain', 'html') and not text_is_clean(out):
        fail(row, col, 'a control character reaches the terminal', repr(out[:300]))
    if kind == 'text' and re.search(r'-\d[\d.]*%', out):
        fail(row, col, 'a negative percentage (overflow)', out[:600])


def check_merge(row, base, path, d):
    """agprof merge of the real recording and this one; a merge that succeeds is then
    reported on (the job queries of analyzer/model/sql/ on what came from the input)."""
    out = os.path.join(d, 'merged.agprof')
    check_cell(row, 'merge', ['merge', '--force', '-o', out, base, path], 'none')
    if os.path.exists(out):
        check_cell(row, 'merged-report-json', ['report', '--format', 'json', out], 'json')
        os.unlink(out)


def check_diff(row, base, path, d):
    """agprof diff in every format and check --baseline between the real recording and this
    one, this one as BASE and as NEW (their text holds signed percentages: 'plain' text,
    control characters only); diff's HTML page also through -o FILE."""
    for fmt, kind in (('text', 'plain'), ('json', 'json'), ('markdown', 'plain'), ('html', 'html')):
        check_cell(row, 'diff-%s-new' % fmt, ['diff', '--format', fmt, base, path], kind)
        check_cell(row, 'diff-%s-base' % fmt, ['diff', '--format', fmt, path, base], kind)
    page = os.path.join(d, 'diff.html')
    check_cell(row, 'diff-html-o', ['diff', '--format', 'html', '-o', page, path, base], 'html', output=page)
    if os.path.exists(page):
        os.unlink(page)
    check_cell(row, 'check-baseline', ['check', '--baseline', path, base], 'plain')
    check_cell(row, 'check-baseline-new', ['check', '--baseline', base, path], 'plain')


def check_fix(row, path, d):
    """agprof fix (a diff of the user's code, text) and fix --verify by a user with no key:
    whatever the recording names, no command of it runs (MARKER) and no file is written."""
    check_cell(row, 'fix', ['fix', path], 'plain')
    env = dict(os.environ, XDG_CONFIG_HOME=os.path.join(d, 'no-key'), TMPDIR=os.path.join(d, 'verify-tmp'))
    os.makedirs(env['TMPDIR'], exist_ok=True)
    check_cell(row, 'fix-verify', ['fix', '--verify', path], 'plain', env=env)
    if os.listdir(env['TMPDIR']) or os.path.exists(env['XDG_CONFIG_HOME']):
        fail(row, 'fix-verify', 'left files: %s' % os.listdir(env['TMPDIR']))


def check_rule_files(base, d):
    """Rule files are input too: 200k nested parentheses, 'not' and '-' chains."""
    rules = os.path.join(d, 'rules')
    os.mkdir(rules)
    head = 'id: deep\ntitle: t\nseverity: warning\nselect: session\nmessage: m\nwhen: '
    cases = {'parens': '(' * 200000 + 'x' + ')' * 200000, 'not': 'not ' * 100000 + 'x',
             'minus': '-' * 200000 + 'x', 'chain': 'x' + ' + x' * 100000}
    for name, expr in cases.items():
        with open(os.path.join(rules, 'deep.rule'), 'w') as f:
            f.write(head + expr + '\n')
        try:
            r = subprocess.run([AGPROF, 'report', '--rules', rules, base], capture_output=True, timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            fail('rule-' + name, 'report', 'hung')
            continue
        err = r.stderr.decode('utf-8', 'replace')
        # docs/rules.md: a rule file with an error is reported at FILE:LINE and skipped
        if r.returncode != 0 or len(err.splitlines()) != 1 or 'deep.rule:6: expression' not in err \
                or len(err) > 400:
            fail('rule-' + name, 'report', 'exit %d, want 0 and one short error at deep.rule:6' % r.returncode, err)


def check_view(row, path, d, cmd, n):
    """agprof view (or top) in tmux: started, let run for a moment, quit with 'q'; the screen
    holds no raw escape sequence from the recording (tmux would have obeyed it: its title).
    n numbers the cell: its tmux server and files are its own (the cells run at once)."""
    sock = 'agprof-badinput-%d-%d' % (os.getpid(), n)  # a server each: a killed one lingers
    rc_file, err_file = os.path.join(d, 'view-%d.rc' % n), os.path.join(d, 'view-%d.err' % n)
    shell = "'%s' %s '%s' 2>'%s'; echo $? >'%s'; sleep 30" % (AGPROF, cmd, path, err_file, rc_file)
    tmux = ['tmux', '-L', sock]
    subprocess.run(tmux + ['-f', '/dev/null', 'new-session', '-d', '-x', '100', '-y', '30', shell], check=True,
                   env=dict(os.environ, TERM='xterm-256color'))
    try:
        deadline = time.time() + TIMEOUT
        time.sleep(0.8)  # let it draw (and scan) for a moment
        sent = False
        while time.time() < deadline and not os.path.exists(rc_file):
            if not sent:
                subprocess.run(tmux + ['send-keys', 'q'], capture_output=True)
                sent = True
            time.sleep(0.1)
        time.sleep(0.1)
        if not os.path.exists(rc_file) or not open(rc_file).read().strip():
            screen = subprocess.run(tmux + ['capture-pane', '-p'], capture_output=True, text=True).stdout
            fail(row, cmd, 'did not end after q within %d s' % TIMEOUT, screen)
            return
        title = subprocess.run(tmux + ['display-message', '-p', '#{pane_title}'], capture_output=True,
                               text=True).stdout
        if 'PWNED' in title or 'pwned' in title:
            fail(row, cmd, 'an escape sequence from the recording set the title', title)
        rc = int(open(rc_file).read())
        err = open(err_file, 'rb').read().decode('utf-8', 'replace')
        if rc >= 128:
            fail(row, cmd, 'died with status %d' % rc, err)
        elif rc == 2:
            if len(err.splitlines()) != 1 or not err.startswith('error: '):
                fail(row, cmd, 'exit 2 without exactly one error line', err)
        elif rc != 0:
            fail(row, cmd, 'exit %d' % rc, err)
    finally:
        subprocess.run(tmux + ['kill-server'], capture_output=True)


COMMANDS = [
    ('report', ['report'], 'text'),
    ('report-json', ['report', '--format', 'json'], 'json'),
    ('report-csv', ['report', '--format', 'csv'], 'csv'),
    ('report-sarif', ['report', '--format', 'sarif'], 'sarif'),
    ('report-html', ['report', '--format', 'html'], 'html'),
    ('check', ['check'], 'text'),
    ('export', ['export', '--format', 'chrome'], 'json'),
    ('top-once', ['top', '--once'], 'text'),
]


def main():
    start = time.time()
    base = real_recording()
    with tempfile.TemporaryDirectory() as d:
        inputs = make_inputs(base, d)
        inputs['real'] = base  # the control row: everything must succeed
        views = []
        for row, path in inputs.items():
            for col, args, kind in COMMANDS:
                check_cell(row, col, args + [path], kind)
            check_merge(row, base, path, d)
            check_diff(row, base, path, d)
            check_fix(row, path, d)
            if shutil.which('tmux'):
                views += [(row, path, d, cmd, len(views) + i) for i, cmd in enumerate(('view', 'top'))]
        check_rule_files(base, d)
        # a tmux cell mostly waits (its moment to draw, then q): VIEWS_AT_ONCE of them at a time
        with concurrent.futures.ThreadPoolExecutor(VIEWS_AT_ONCE) as pool:
            list(pool.map(lambda cell: check_view(*cell), views))
    print('%d inputs x %d commands in %.1f s' % (len(inputs), len(COMMANDS) + 1, time.time() - start))
    if failures:
        print('%d failing cells:' % len(failures))
        for f in failures:
            print('  ' + f)
        return 1
    return 0


if __name__ == '__main__':
    sys.exit(main())
