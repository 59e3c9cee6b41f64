# codefacts.py - what the user's source files say, read with CPython's own
# ast at the end of a run (writer/parse_source.c runs it with the workload's
# interpreter: `python -I -S -c THIS FILE...`).  The analyzer chooses its
# advice with these facts (docs/schema.md, code_facts): which function or
# loop holds a line, what in it cannot be traced, which calls go to
# TensorFlow, NumPy, Python's random or I/O, and how a call's result is used
# on the next lines.  One fact a line on stdout:
#   path TAB kind TAB line TAB col TAB end_line TAB name TAB detail
# Text fields have their tabs and newlines replaced; a file that does not
# parse gives one 'error' fact.  Columns are ast's: UTF-8 byte offsets in the
# line.  The fix engine edits at these positions (call-span, arg, def,
# param, decorator facts), never at positions found by scanning the text.
# After the argument --library, each argument is LINES:PATH, a library
# file (never edited): only its functions' signatures, and the calls and
# arguments that start on LINES (comma-separated), the library's lines in
# the recorded call chains: which parameter of the function a user called
# reaches which argument of the traced function (analyzer/model/model.c).
import ast
import sys

MAX_BYTES = 4 << 20      # larger files are not read
MAX_FACTS = 50000        # per file (arguments and positions included)
NEXT_STATEMENTS = 4      # how far a call's result is followed

# Methods of a NumPy array that a tf.Tensor lacks (or where it differs):
# the result is used as NumPy.
NUMPY_METHODS = {"reshape", "astype", "tolist", "flatten", "ravel", "copy", "item", "argmax", "argmin", "mean",
                 "sum", "max", "min", "std", "squeeze", "tobytes", "fill", "sort", "clip", "round", "T"}
IO_CALLS = {"print", "open", "input", "breakpoint"}
IO_MODULES = {"logging", "os", "shutil", "pickle", "json", "csv", "matplotlib", "plt", "sys", "subprocess",
              "imageio", "PIL", "cv2", "wandb"}
IO_NUMPY = {"save", "savez", "savez_compressed", "savetxt", "load", "loadtxt", "fromfile", "genfromtxt"}
TO_PYTHON = {"numpy", "item", "tolist"}


def clean(text, limit=200):
    return str(text).replace("\t", " ").replace("\n", " ").replace("\r", " ")[:limit]


def dotted(node):
    """a.b.c of a Name/Attribute chain (calls and subscripts inside as '()' and '[]'), or None."""
    parts = []
    while True:
        if isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        elif isinstance(node, ast.Name):
            parts.append(node.id)
            return ".".join(reversed(parts))
        elif isinstance(node, ast.Call):
            parts.append("()")
            node = node.func
        elif isinstance(node, ast.Subscript):
            parts.append("[]")
            node = node.value
        else:
            return None


class Aliases:
    """What the file's imports bind: tf, np, random, time and their from-imports."""

    def __init__(self, tree):
        self.modules = {}
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for a in node.names:
                    self.modules[(a.asname or a.name).split(".")[0]] = a.name if a.asname else a.name.split(".")[0]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                for a in node.names:
                    self.modules[a.asname or a.name] = node.module + "." + a.name

    def full(self, name):
        """name with its first part replaced by the module it was imported as (np.x -> numpy.x)."""
        head, _, rest = name.partition(".")
        mod = self.modules.get(head)
        return (mod + ("." + rest if rest else "")) if mod else name


def call_class(call, name, aliases):
    """What a call is: tf, numpy, numpy-random, numpy-io, python-random, time, io, to-python, or other."""
    full = aliases.full(name) if name else ""
    top = full.split(".")[0]
    last = name.rsplit(".", 1)[-1] if name else ""
    if isinstance(call.func, ast.Attribute) and call.func.attr in TO_PYTHON and not call.args:
        return "to-python"
    if top in ("tensorflow", "keras", "tf_keras", "tensorflow_probability"):
        return "tf"
    if top == "numpy":
        if ".random." in full + ".":
            return "numpy-random"
        return "numpy-io" if last in IO_NUMPY else "numpy"
    if top == "random":
        return "python-random"
    if top == "time":
        return "time"
    if name in IO_CALLS or top in IO_MODULES or last in ("write", "writelines", "flush", "savefig", "show"):
        return "io"
    return "other"


def call_key(node):
    """Where a call's facts sit: where it starts; for a method called on another call's result
    (f(x).numpy(), ds.map(f).batch(32)), which starts where that call does, where its own name
    is, the line a traceback names for it: each call of a chain its own key, its arguments its own."""
    f, base = node.func, node.func
    while isinstance(base, (ast.Attribute, ast.Subscript)):
        base = base.value
    if not (isinstance(f, ast.Attribute) and isinstance(base, ast.Call)):
        return node
    return ast.Pass(lineno=f.end_lineno, col_offset=f.end_col_offset - len(f.attr.encode("utf-8")),
                    end_lineno=node.end_lineno)


def signature(node):
    """A def's decorators and parameters in order with their kinds: 'staticmethod;self:arg,x:arg,args:vararg'."""
    a = node.args
    kinds = [(p, "posonly") for p in a.posonlyargs] + [(p, "arg") for p in a.args]
    kinds += [(a.vararg, "vararg")] if a.vararg else []
    kinds += [(p, "kwonly") for p in a.kwonlyargs] + ([(a.kwarg, "kwarg")] if a.kwarg else [])
    decorators = ",".join(dotted(d.func if isinstance(d, ast.Call) else d) or "?" for d in node.decorator_list)
    return decorators + ";" + ",".join("%s:%s" % (p.arg, k) for p, k in kinds)


class Facts(ast.NodeVisitor):
    def __init__(self, path, aliases, out, lines=None):
        """lines: a library file's lines whose calls to record (its other facts but signatures left out)."""
        self.path, self.aliases, self.out, self.n, self.lines = path, aliases, out, 0, lines

    def emit(self, kind, node, name, detail="", limit=200):
        if self.n >= MAX_FACTS:
            return
        self.n += 1
        end = getattr(node, "end_lineno", None) or node.lineno
        self.out.append("\t".join((self.path, kind, str(node.lineno), str(getattr(node, "col_offset", 0)), str(end),
                                   clean(name), clean(detail, limit))))

    def visit_FunctionDef(self, node):
        # a decorated def starts at its first decorator, as Python's co_firstlineno says
        first = min([d.lineno for d in node.decorator_list] + [node.lineno])
        start = ast.Pass(lineno=first, col_offset=node.col_offset, end_lineno=node.end_lineno)
        self.emit("signature", start, node.name, signature(node), 4000)
        if self.lines is None:
            decorators = ",".join(dotted(d.func if isinstance(d, ast.Call) else d) or "?" for d in node.decorator_list)
            params = [a.arg for a in node.args.posonlyargs + node.args.args + node.args.kwonlyargs]
            self.emit("function", start, node.name, decorators + ";" + ",".join(params))
            self.def_facts(node, first)
        self.generic_visit(node)

    def def_facts(self, node, first):
        """The def line, its decorators and parameters: where an edit of the def goes (tied by first)."""
        self.emit("def", ast.Pass(lineno=node.lineno, col_offset=node.col_offset, end_lineno=node.lineno),
                  node.name, str(first))
        for d in node.decorator_list:
            self.emit("decorator", d, dotted(d.func if isinstance(d, ast.Call) else d) or "?",
                      "%d %d" % (d.end_col_offset, node.lineno))
        a = node.args
        plain = [(p, "posonly") for p in a.posonlyargs] + [(p, "arg") for p in a.args]
        defaults = len(plain) - len(a.defaults)  # the last len(defaults) plain parameters have one
        kinds = [(p, k + (" default" if i >= defaults else "")) for i, (p, k) in enumerate(plain)]
        if a.vararg:
            kinds.append((a.vararg, "vararg"))
        kinds += [(p, "kwonly" + (" default" if d is not None else "")) for p, d in zip(a.kwonlyargs, a.kw_defaults)]
        if a.kwarg:
            kinds.append((a.kwarg, "kwarg"))
        for i, (p, kind) in enumerate(kinds):
            self.emit("param", p, p.arg, "%d %d %s" % (node.lineno, i, kind))

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_For(self, node):
        if self.lines is None:
            self.emit("loop", node, "for", ast.unparse(node.iter)[:80])
        self.generic_visit(node)

    visit_AsyncFor = visit_For

    def visit_While(self, node):
        if self.lines is None:
            self.emit("loop", node, "while", "")
        self.generic_visit(node)

    def visit_comprehension_owner(self, node):
        if self.lines is None:
            self.emit("loop", node, "comprehension", "")
        self.generic_visit(node)

    visit_ListComp = visit_SetComp = visit_DictComp = visit_GeneratorExp = visit_comprehension_owner

    def visit_Call(self, node):
        name = dotted(node.func) or ""
        key = call_key(node)
        if self.lines is None or key.lineno in self.lines:
            self.emit("call", key, name or "?", call_class(node, name, self.aliases))
            self.call_positions(node, key, name)
        self.generic_visit(node)

    def call_positions(self, node, key, name):
        """The call's end, and each argument's span, tied to the call by its key's line and column."""
        self.emit("call-span", key, name or "?", str(node.end_col_offset))
        tie = "%d %d" % (key.lineno, key.col_offset)
        for i, a in enumerate(node.args):
            starred = isinstance(a, ast.Starred)
            self.emit("arg", a, "*" if starred else "#%d" % i,
                      "%d %s %d %d" % (a.end_col_offset, tie, a.lineno, a.col_offset))
        for k in node.keywords:
            # a keyword's own position (its name) exists since 3.9; the value's span is what an edit wraps
            self.emit("arg", k.value, k.arg or "**",
                      "%d %s %d %d" % (k.value.end_col_offset, tie, k.lineno, k.col_offset))

    def visit_Global(self, node):
        if self.lines is None:
            self.emit("global", node, ",".join(node.names))

    visit_Nonlocal = visit_Global

    def visit_Assign(self, node):
        if self.lines is None:
            self.store_facts(node, node.targets)
        self.generic_visit(node)

    def visit_AugAssign(self, node):
        if self.lines is None:
            self.store_facts(node, [node.target])
        self.generic_visit(node)

    def store_facts(self, node, targets):
        """Attribute stores (self.x = ..., obj.n += 1): Python state a trace would set once."""
        for t in targets:
            if isinstance(t, ast.Attribute):
                self.emit("store", t, dotted(t) or "?", "attribute")
            elif isinstance(t, ast.Subscript):
                self.emit("store", t, dotted(t.value) or "?", "item")


def uses_as_numpy(name, stmt, aliases):
    """How stmt uses name as a NumPy array (a method a tensor lacks, an item store, an np.* argument), or None."""
    for node in ast.walk(stmt):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == name \
                and node.attr in NUMPY_METHODS:
            return "." + node.attr
        if isinstance(node, (ast.Assign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for t in targets:
                if isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name) and t.value.id == name:
                    return "item store"
        if isinstance(node, ast.Call) and any(isinstance(a, ast.Name) and a.id == name for a in node.args):
            callee = aliases.full(dotted(node.func) or "")
            if callee.startswith("numpy."):
                return callee.replace("numpy.", "np.", 1) + "()"
    return None


def result_uses(path, tree, aliases, out):
    """name = CALL followed, within a few statements of the same block, by a NumPy use of name."""
    for block in ast.walk(tree):
        for field in ("body", "orelse", "finalbody"):
            stmts = getattr(block, field, None)
            if not isinstance(stmts, list):
                continue
            for i, st in enumerate(stmts):
                if not (isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(st.targets[0], ast.Name)
                        and isinstance(st.value, ast.Call)):
                    continue
                name = st.targets[0].id
                for nxt in stmts[i + 1:i + 1 + NEXT_STATEMENTS]:
                    use = uses_as_numpy(name, nxt, aliases)
                    if use:
                        out.append("\t".join((path, "numpy-use", str(st.lineno), str(st.value.col_offset),
                                              str(nxt.lineno), clean(name), clean(use))))
                        break
                    if any(isinstance(t, ast.Name) and t.id == name for t in getattr(nxt, "targets", [])):
                        break  # name bound anew


def facts_of(path, lines=None):
    """A user file's facts; with lines, a library file's signatures and the calls on those lines (no error fact)."""
    out = []
    try:
        with open(path, "rb") as f:
            source = f.read(MAX_BYTES + 1)
        if len(source) > MAX_BYTES:
            return []
        tree = ast.parse(source, filename=path)
    except (OSError, SyntaxError, ValueError, RecursionError) as e:
        return [] if lines is not None else ["\t".join((path, "error", "0", "0", "0", type(e).__name__, clean(e)))]
    aliases = Aliases(tree)
    try:
        Facts(path, aliases, out, lines).visit(tree)
        if lines is None:
            result_uses(path, tree, aliases, out)
    except RecursionError:
        return [] if lines is not None else ["\t".join((path, "error", "0", "0", "0", "RecursionError",
                                                        "too deeply nested"))]
    return out


def library_item(arg):
    """'40,16:/path/lib.py' as ('/path/lib.py', {40, 16}); None when it is not one."""
    head, sep, path = arg.partition(":")
    try:
        return (path, {int(n) for n in head.split(",") if n}) if sep and path else None
    except ValueError:
        return None


def main():
    write = sys.stdout.write
    library = False
    for arg in sys.argv[1:]:
        if arg == "--library":
            library = True
            continue
        item = library_item(arg) if library else (arg, None)
        for line in facts_of(*item) if item else ():
            write(line + "\n")


main()
