# pytrace.py - trace-time introspection, run inside the workload's interpreter
# by the collector (collector/pytrace.c) when TensorFlow starts building the
# FuncGraph of a tf.function trace.  It only reads: the tracing frame's locals
# (TracingOptions, the cache key) and the frames above it.  It lives in a
# private namespace, never in the workload's modules.

_FRAMEWORK_DIRS = ('/tensorflow/', '/keras/', '/tf_keras/', '/absl/')


def _is_framework(path):
    return path.startswith('<frozen') or any(d in path for d in _FRAMEWORK_DIRS)


def _shape_text(shape):
    try:
        dims = shape.as_list()
    except Exception:
        return '?'
    return '[' + ','.join('None' if d is None else str(d) for d in dims) + ']'


def _short_repr(value):
    try:
        text = repr(value)
    except Exception:
        text = '<%s>' % type(value).__name__
    return text if len(text) <= 200 else text[:197] + '...'


def _flatten(name, tc, out):
    """Append (name, kind, dtype, shape, value) for one trace type."""
    kind = type(tc).__name__
    if hasattr(tc, 'dtype') and hasattr(tc, 'shape'):
        dtype = getattr(tc.dtype, 'name', str(tc.dtype))
        if kind.endswith('VariableSpec') or dtype == 'resource' and 'Variable' in kind:
            out.append((name, 'variable', dtype, _shape_text(tc.shape), None))
        else:
            out.append((name, 'tensor', dtype, _shape_text(tc.shape), None))
    elif kind == 'Literal':
        value = getattr(tc, 'value', None)
        out.append((name, 'none' if value is None else 'python', None, None, _short_repr(value)))
    elif kind == 'Tuple' and hasattr(tc, 'components'):
        for i, c in enumerate(tc.components):
            _flatten('%s[%d]' % (name, i), c, out)
    elif kind == 'List' and hasattr(tc, 'components_tuple'):
        for i, c in enumerate(tc.components_tuple.components):
            _flatten('%s[%d]' % (name, i), c, out)
    elif kind in ('NamedTuple', 'Attrs') and hasattr(tc, 'attributes'):
        names = getattr(tc, 'attribute_names', None) or ()
        for i, c in enumerate(getattr(tc.attributes, 'components', ())):
            _flatten('%s.%s' % (name, names[i]) if i < len(names) else '%s[%d]' % (name, i), c, out)
    elif kind == 'Dict' and hasattr(tc, 'mapping'):
        for k in sorted(tc.mapping, key=repr):
            _flatten('%s[%r]' % (name, k), tc.mapping[k], out)
    elif kind == 'Weakref':
        ref = getattr(tc, '_ref', None) or getattr(tc, 'ref', None)
        obj = ref() if callable(ref) else None
        out.append((name, 'object', None, None,
                    '%s at 0x%x' % (type(obj).__name__, id(obj)) if obj is not None else _short_repr(tc)))
    else:
        out.append((name, 'object', None, None, '%s: %s' % (kind, _short_repr(tc))))


# tf.function objects are told apart by their FunctionCache.  Its address is
# reused once an object dies (FunctionCache takes no weak references), but a
# fresh cache is empty: the first trace into a cache starts a new serial.
_object_serials = {}
_last_serial = [0]


def _object_serial(cache, count):
    key = id(cache)
    if count <= 1 or key not in _object_serials:
        _last_serial[0] += 1
        _object_serials[key] = _last_serial[0]
    return _object_serials[key]


def _site_frames(frame, limit=32):
    """(file, line, function) of the frames above TensorFlow's, innermost
    first; the collector tells library from user code (pyframe.c)."""
    out = []
    while frame is not None and len(out) < limit:
        if not _is_framework(frame.f_code.co_filename):
            out.append((frame.f_code.co_filename, frame.f_lineno, frame.f_code.co_name))
        frame = frame.f_back
    return tuple(out)


def describe(frame):
    """Facts about the trace starting in `frame`'s callers, or None."""
    f = frame
    while f is not None and f.f_code.co_name == '__init__':
        f = f.f_back
    if (f is None or f.f_code.co_name != '_maybe_define_function'
            or not f.f_code.co_filename.endswith('tracing_compilation.py')):
        return None
    loc = f.f_locals
    opts = loc.get('tracing_options')
    if opts is None:
        return None
    fn = getattr(opts, 'python_function', None)
    # tf.function wraps the user's function (wrapped_fn -> __wrapped__ ...),
    # methods arrive bound: follow both to the function the user wrote.
    for _ in range(32):
        if not hasattr(fn, '__wrapped__'):
            break
        fn = fn.__wrapped__
    fn = getattr(fn, '__func__', fn)
    code = getattr(fn, '__code__', None)
    name = getattr(fn, '__name__', None) or getattr(opts, 'name', '?')
    cache = getattr(opts, 'function_cache', None)
    try:
        count = len(cache) + 1 if cache is not None else 1
    except Exception:
        count = 0
    key = loc.get('lookup_func_type')
    inputs = []
    if key is not None:
        for pname, param in key.parameters.items():
            _flatten(pname, param.type_constraint, inputs)
    attrs = getattr(opts, 'attributes', None) or {}
    return (
        str(name),
        code.co_filename if code is not None else None,
        code.co_firstlineno if code is not None else 0,
        _object_serial(cache if cache is not None else opts, count),
        count,
        str(key) if key is not None else None,
        _site_frames(f.f_back), None, None,
        1 if attrs.get('_XlaMustCompile') else 0,
        1 if getattr(opts, 'reduce_retracing', False) else 0,
        1 if getattr(opts, 'input_signature', None) is not None else 0,
        tuple(inputs),
    )
