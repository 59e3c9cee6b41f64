#!/usr/bin/env python3
"""Write the seed inputs of tests/fuzz/corpus/ (run from anywhere; idempotent).

Seeds are the starting points of fuzzing and, with every crasher found,
the regression corpus that `meson test --suite fuzz` replays.  The
recording seeds are mutation scripts for fuzz_recording.c (see its
mutate()): they name tables and columns by their index in base.agprof,
so they are generated from base.agprof's schema rather than written by hand.
"""
import os
import sqlite3
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
CORPUS = os.path.join(HERE, 'corpus')


def write(harness, name, data):
    os.makedirs(os.path.join(CORPUS, harness), exist_ok=True)
    with open(os.path.join(CORPUS, harness, name), 'wb') as f:
        f.write(data if isinstance(data, bytes) else data.encode())


# ---- recording: mutation scripts -------------------------------------------
def recording_seeds(base_name, corpus, eager, eager_end):
    """The seeds of one base recording; eager: the table of its eager ops, eager_end: their end or duration."""
    base_path = os.path.join(HERE, base_name)
    db = sqlite3.connect('file:%s?mode=ro' % base_path, uri=True)
    names = [r[0] for r in db.execute(
        "SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name")]
    cols = {t: [r[1] for r in db.execute('PRAGMA table_info(%s)' % t)] for t in names}
    db.close()
    SPECIAL = {0: 0, -1: 1, 1: 2, 2**63 - 1: 3, -2**63: 4, 2**61: 5, 2**62 + 1: 6, 0xffffffff: 7}

    def at(table, col):
        return bytes([names.index(table), cols[table].index(col)])

    def int_value(v):
        if v in SPECIAL:
            return bytes([0, SPECIAL[v]])
        return bytes([1]) + struct.pack('>q', v)

    def text_value(raw):
        return bytes([2, len(raw)]) + raw

    def update_one(table, col, value, offset=0):
        return at(table, col) + bytes([0]) + value + bytes([offset])

    def update_all(table, col, value):
        return at(table, col) + bytes([1]) + value

    def copy_row(table, new_id, offset=0):
        return at(table, cols[table][0]) + bytes([3]) + int_value(new_id) + bytes([offset])

    def view_for(table):
        return at(table, cols[table][0]) + bytes([5, 1])

    def version(v):
        return at('meta', 'key') + bytes([6, v])

    seeds = {
        'noop': b'',
        # issue 14: functions.id of 2^61 wrapped malloc(n * 8) in the timeline
        'huge-function-id': update_one('functions', 'id', int_value(2**61)),
        'huge-function-id-max': update_one('functions', 'id', int_value(2**63 - 1), 1),
        # a huge strings.id made calloc fail and the release path dereference NULL
        'huge-string-id': update_one('strings', 'id', int_value(2**62 + 1), 3),
        'huge-graph-function-id': update_one('graph_functions', 'id', int_value(2**61)),
        'negative-ids': update_one('functions', 'id', int_value(-1)) + update_one('strings', 'id', int_value(-2**63)),
        'copied-events': copy_row('traces', 2**61) + copy_row('function_calls', 2**63 - 1) + copy_row(eager, -1),
        # signed overflow on extreme timestamps and durations
        'extreme-timestamps': update_one('function_calls', 'start_ns', int_value(-2**63 + 1))
        + update_one('function_calls', 'end_ns', int_value(2**63 - 1))
        + update_all(eager, eager_end, int_value(2**63 - 1)),
        'extreme-session': update_one('meta', 'value', int_value(-2**63), 0)
        + update_all('processes', 'start_ns', int_value(-2**63)) + update_all('traces', 'end_ns', int_value(2**63 - 1)),
        'extreme-gpu': update_all('gpu_activity', 'start_ns', int_value(-2**63))
        + update_all('gpu_activity', 'stream', int_value(2**63 - 1)),
        'reversed-spans': update_all('blackbox_execs', 'start_ns', int_value(2**62 + 1)),
        # names that are not UTF-8, and control characters meant for the terminal
        'non-utf8-names': update_all('strings', 'text', text_value(b'f\xff\xfe\xc0\xaf\xed\xa0\x80\xf4\x90\x80\x80')),
        'control-characters': update_all('strings', 'text', text_value(b'x\x1b]0;pwned\x07\x1b[2J\r\n\x9b\xc2\x9b31m')),
        'null-names': update_all('strings', 'text', bytes([3])),
        # a table replaced by a view that never ends
        'threads-view': view_for('threads'),
        'traces-view': view_for('traces'),
        'strings-view': view_for('strings'),
        'newer-schema': version(3),
        'deleted-rows': at('strings', 'id') + bytes([2, 0]) + at('functions', 'id') + bytes([2, 0]),
        'dropped-table': at('callsites', 'id') + bytes([5, 0]),
        'dropped-indexes': b''.join(at('meta', 'key') + bytes([4, i]) for i in range(12)),
    }
    for name, data in seeds.items():
        write(corpus, name, data)
    with open(base_path, 'rb') as f:
        base = f.read()
    write(corpus, 'raw-base', base)
    write(corpus, 'raw-truncated', base[:len(base) // 2])
    write(corpus, 'raw-header-only', base[:100])
    flipped = bytearray(base)
    for i in range(1024, len(flipped), 997):
        flipped[i] ^= 0x5a
    write(corpus, 'raw-bitflips', bytes(flipped))


recording_seeds('base.agprof', 'recording', 'eager_ops', 'end_ns')
# the current schema (make_base.py): fuzz.sh's recording stages with FUZZ_BASE=tests/fuzz/base-current.agprof
recording_seeds('base-current.agprof', 'recording-current', 'eager_op_rows', 'dur')

# ---- functiondef -----------------------------------------------------------
for fx in ('branchy.pb', 'jitted.pb', 'while_body.pb'):
    with open(os.path.join(ROOT, 'tests', 'unit', 'fixtures', fx), 'rb') as f:
        write('functiondef', fx, f.read())


def field(num, data):
    return bytes([num << 3 | 2, len(data)]) + data


def const_def(dtype, num, n):
    tensor = bytes([0x08, dtype]) + field(num, bytes(n))
    entry = field(1, b'value') + field(2, field(8, tensor))
    node = field(1, b'c') + field(2, b'Const') + field(5, entry)
    return field(1, field(1, b'f')) + field(3, node)


# issue 14: packed float/double values shorter than their width were read past the end
write('functiondef', 'short-packed-float', const_def(1, 5, 1))
write('functiondef', 'short-packed-double', const_def(2, 6, 5))
write('functiondef', 'long-varint', b'\x0a\x80\x80\x80\x80\x80\x80\x80\x80\x80\x80\x01')
write('functiondef', 'huge-length', b'\x0a\xff\xff\xff\xff\xff\xff\xff\xff\x7f')

# ---- rules -----------------------------------------------------------------
for rule in sorted(os.listdir(os.path.join(ROOT, 'rules'))):
    if rule.endswith('.rule'):
        with open(os.path.join(ROOT, 'rules', rule), 'rb') as f:
            write('rules', rule, f.read())
base_rule = 'id: deep\ntitle: t\nseverity: warning\nselect: session\nmessage: m\nwhen: '
# issue 14: 200k nested parentheses overflowed the stack of the recursive parser
write('rules', 'nested-parens', base_rule + '(' * 200000 + 'x' + ')' * 200000 + '\n')
write('rules', 'nested-not', base_rule + 'not ' * 100000 + 'x\n')
write('rules', 'nested-minus', base_rule + '-' * 200000 + 'x\n')
write('rules', 'long-chain', base_rule + 'x' + ' + x' * 100000 + '\n')
write('rules', 'set-override', 'fuzz.limit=5ms')

# ---- ring (side records: header {type, len}, then fields {tag, pad, len} padded to 8) ----
def side(rtype, fields):
    body = b''
    for tag, value in fields:
        body += struct.pack('<HHI', tag, 0, len(value)) + value + bytes(-len(value) % 8)
    return struct.pack('<II', rtype, len(body)) + body


write('ring', 'process', side(1, [(1, struct.pack('<q', 4242)), (6, b'["python","x.py"]'), (7, b'3.11')]))
write('ring', 'trace', side(3, [(20, b'train_step'), (21, b'/x.py'), (22, struct.pack('<q', 7))]))
write('ring', 'huge-field-length', side(3, [(20, b'a')])[:8] + struct.pack('<HHI', 20, 0, 0xfffffff0) + b'abc')
write('ring', 'unpadded', struct.pack('<II', 2, 9) + struct.pack('<HHI', 9, 0, 1) + b'x')
