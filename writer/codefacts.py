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
# param, decorator, assign facts) and reads what a statement depends on from
# the bind, block and loop facts, never from scanning the text.  A file whose
# facts are complete starts with one 'facts' fact naming FACTS_VERSION.
# `--cells FILE` reads notebook cells instead: FILE is JSON, {the file name
# IPython compiled a cell under: the code it compiled}, each parsed as a file
# of that name, so a cell's facts are keyed and numbered as its locations.
# After the argument --library, each argument is LINES:PATH, a library
# file (never edited): only its functions' signatures, and the calls and
# arguments keyed on LINES (comma-separated), the library's lines in the
# recorded call chains: which parameter of the function a user called
# reaches which argument of the traced function (analyzer/model/model.c).
import ast
import sys

MAX_BYTES = 4 << 20      # larger files are not read
MAX_FACTS = 50000        # per file (arguments and positions included)
NEXT_STATEMENTS = 4      # how far a call's result is followed
FACTS_VERSION = "2"      # docs/schema.md, code_facts: 2 adds facts, assign, bind, block, yield, ref, chained calls
MAX_READS = 120          # an assignment's value reading more names (as text) is told as "*"

# Methods of a NumPy array that a tf.Tensor lacks (or where it differs):
# the result is used as NumPy.
NUMPY_METHODS = {"reshape", "astype", "tolist", "flatten", "ravel", "copy", "item", "argmax", "argmin", "mean",
                 "sum", "max", "min", "std", "squeeze", "tobytes", "fill", "sort", "clip", "round", "T"}
IO_CALLS = {"print", "open", "input", "breakpoint"}
IO_MODULES = {"logging", "os", "shutil", "pickle", "json", "csv", "matplotlib", "plt", "sys", "subprocess",
              "imageio", "PIL", "cv2", "wandb"}
IO_NUMPY = {"save", "savez", "savez_compressed", "savetxt", "load", "loadtxt", "fromfile", "genfromtxt"}
TO_PYTHON = {"numpy", "item", "tolist"}
LIBRARY_KINDS = {"signature", "call", "call-span", "arg"}  # what a library file's facts hold


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
    """What the file's imports bind (tf, np, random, time and their from-imports), and the names of its defs."""

    def __init__(self, tree):
        self.modules, self.defs = {}, set()
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self.defs.add(node.name)
            elif isinstance(node, ast.Import):
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


def chained(node):
    """Whether a call's result is used by another part of its expression: x.f().g, x.f()[0], x.f()(y)."""
    parent = getattr(node, "agp_parent", None)
    if isinstance(parent, (ast.Attribute, ast.Subscript)):
        return parent.value is node
    return isinstance(parent, ast.Call) and parent.func is node


def alone_in_block(node):
    """Whether node is the only statement of its block (moving it out leaves the block empty)."""
    parent = getattr(node, "agp_parent", None)
    for field in ("body", "orelse", "finalbody"):
        stmts = getattr(parent, field, None)
        if isinstance(stmts, list) and any(st is node for st in stmts):
            return len(stmts) == 1
    return False


def value_facts(value):
    """The names an expression reads, comma-separated ("-": none; "*": too many to list), and whether a
    string in it spans lines (its lines cannot be re-indented): one walk."""
    local, names, mlstring = set(), set(), False
    for node in ast.walk(value):
        if isinstance(node, ast.Name):
            if isinstance(node.ctx, ast.Load):
                names.add(node.id)
        elif isinstance(node, ast.Lambda):
            a = node.args
            local.update(p.arg for p in a.posonlyargs + a.args + a.kwonlyargs + [a.vararg, a.kwarg] if p)
        elif isinstance(node, ast.comprehension):
            local.update(n.id for n in ast.walk(node.target) if isinstance(n, ast.Name))
        elif isinstance(node, (ast.Constant, ast.JoinedStr)) and node.lineno != node.end_lineno:
            mlstring = mlstring or isinstance(getattr(node, "value", ""), str)
    text = ",".join(sorted(names - local))
    return ("*" if len(text) > MAX_READS else text or "-"), mlstring


def target_name(t):
    if isinstance(t, ast.Name):
        return t.id
    return (dotted(t) if isinstance(t, ast.Attribute) else None) or "?"


def param_kinds(a):
    """A def's parameters (ast.arguments a) in order with their kinds: posonly, arg, vararg, kwonly, kwarg."""
    kinds = [(p, "posonly") for p in a.posonlyargs] + [(p, "arg") for p in a.args]
    kinds += [(a.vararg, "vararg")] if a.vararg else []
    return kinds + [(p, "kwonly") for p in a.kwonlyargs] + ([(a.kwarg, "kwarg")] if a.kwarg else [])


class Facts(ast.NodeVisitor):
    def __init__(self, path, aliases, out, lines=None):
        """lines: a library file's lines whose calls to record (its other facts but signatures left out)."""
        self.path, self.aliases, self.out, self.n, self.lines = path, aliases, out, 0, lines
        self.scope = ["module"]  # where a name bound now lives: "module", "function LINE", "class LINE"
        # the names of the file's defs: where one is read other than as a callee, it is passed around
        self.defs = aliases.defs

    def generic_visit(self, node):
        """Each child visited with its parent as child.agp_parent (the chained-call flag and an assignment's
        block need it)."""
        for child in ast.iter_child_nodes(node):
            child.agp_parent = node
            self.visit(child)

    def emit(self, kind, node, name, detail="", limit=200):
        if self.n >= MAX_FACTS or (self.lines is not None and kind not in LIBRARY_KINDS):
            return
        self.n += 1
        end = getattr(node, "end_lineno", None) or node.lineno
        self.out.append("\t".join((self.path, kind, str(node.lineno), str(getattr(node, "col_offset", 0)), str(end),
                                   clean(name), clean(detail, limit))))

    def visit_FunctionDef(self, node):
        decorators = ",".join(dotted(d.func if isinstance(d, ast.Call) else d) or "?" for d in node.decorator_list)
        params = [a.arg for a in node.args.posonlyargs + node.args.args + node.args.kwonlyargs]
        # a decorated def starts at its first decorator, as Python's co_firstlineno says
        first = min([d.lineno for d in node.decorator_list] + [node.lineno])
        start = ast.Pass(lineno=first, col_offset=node.col_offset, end_lineno=node.end_lineno)
        self.emit("function", start, node.name, decorators + ";" + ",".join(params))
        if self.lines is not None:  # a library's: which parameter a positional argument reaches
            self.emit("signature", start, node.name, decorators + ";" + ",".join(
                "%s:%s" % (p.arg, k) for p, k in param_kinds(node.args)), 4000)
        self.bind(ast.Pass(lineno=node.lineno, col_offset=node.col_offset, end_lineno=node.lineno), node.name, "def")
        self.def_facts(node, first)
        self.scope.append("function %d" % first)
        a = node.args
        for p in a.posonlyargs + a.args + a.kwonlyargs + [x for x in (a.vararg, a.kwarg) if x]:
            self.bind(p, p.arg, "param")
        self.generic_visit(node)
        self.scope.pop()

    def def_facts(self, node, first):
        """The def line, its decorators and parameters: where an edit of the def goes (tied by first)."""
        self.emit("def", ast.Pass(lineno=node.lineno, col_offset=node.col_offset, end_lineno=node.lineno),
                  node.name, str(first))
        for d in node.decorator_list:
            self.emit("decorator", d, dotted(d.func if isinstance(d, ast.Call) else d) or "?",
                      "%d %d" % (d.end_col_offset, node.lineno))
        a = node.args
        plain = len(a.posonlyargs) + len(a.args)
        defaults = dict(zip(a.kwonlyargs, a.kw_defaults))
        for i, (p, kind) in enumerate(param_kinds(a)):
            # the last len(a.defaults) plain parameters have a default; a kwonly one where kw_defaults says
            has = (plain - len(a.defaults) <= i < plain) or (kind == "kwonly" and defaults[p] is not None)
            self.emit("param", p, p.arg, "%d %d %s" % (node.lineno, i, kind + (" default" if has else "")))

    visit_AsyncFunctionDef = visit_FunctionDef

    def bind(self, node, name, how):
        """name bound (how: store, del, def, class, param, import M, except, match) in the scope being read
        (module, function LINE, class LINE): detail HOW;SCOPE."""
        self.emit("bind", node, name, "%s;%s" % (how, self.scope[-1]))

    def visit_For(self, node):
        self.emit("loop", node, "for", ast.unparse(node.iter)[:80])
        self.generic_visit(node)

    visit_AsyncFor = visit_For

    def visit_While(self, node):
        self.emit("loop", node, "while", "")
        self.generic_visit(node)

    def visit_comprehension_owner(self, node):
        self.emit("loop", node, "comprehension", "")
        self.generic_visit(node)

    visit_ListComp = visit_SetComp = visit_DictComp = visit_GeneratorExp = visit_comprehension_owner

    def visit_Call(self, node):
        name = dotted(node.func) or ""
        # calls of one chain (ds.map(f).batch(4)) start at one position, the facts' key: the inner ones are
        # keyed just past their callee instead, their start told in call-span's detail
        key = ast.Pass(lineno=node.func.end_lineno, col_offset=node.func.end_col_offset,
                       end_lineno=node.end_lineno) if chained(node) else node
        if self.lines is None or key.lineno in self.lines:
            self.emit("call", key, name or "?", call_class(node, name, self.aliases))
            self.call_positions(node, key, name)
        self.generic_visit(node)

    def call_positions(self, node, key, name):
        """The call's end, and each argument's span, tied to the call by its key's line and column."""
        self.emit("call-span", key, name or "?", str(node.end_col_offset) +
                  (" chained from %d %d" % (node.lineno, node.col_offset) if key is not node else ""))
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
        self.emit("global", node, ",".join(node.names))

    visit_Nonlocal = visit_Global

    def visit_Assign(self, node):
        self.store_facts(node, node.targets)
        self.assign_fact(node, node.targets)
        self.generic_visit(node)

    def visit_AnnAssign(self, node):
        if node.value is not None:
            self.assign_fact(node, [node.target])
        self.generic_visit(node)

    def assign_fact(self, node, targets):
        """An assignment: its targets, where it ends, its value's span and the names the value reads."""
        v = node.value
        reads, mlstring = value_facts(v)
        flags = ",".join(f for f, on in (("alone", alone_in_block(node)), ("mlstring", mlstring)) if on)
        self.emit("assign", node, ",".join(target_name(t) for t in targets),
                  "%d %d %d %d %d %s %s" % (node.end_col_offset, v.lineno, v.col_offset, v.end_lineno,
                                             v.end_col_offset, flags or "-", reads))

    def visit_Name(self, node):
        if isinstance(node.ctx, (ast.Store, ast.Del)):
            self.bind(node, node.id, "del" if isinstance(node.ctx, ast.Del) else "store")
        elif node.id in self.defs and not chained(node):
            self.emit("ref", node, node.id)  # a def's name passed around (map(f, xs), g = f), not called

    def visit_Import(self, node):
        for a in node.names:
            bound = a.asname or a.name.split(".")[0]
            self.bind(a if hasattr(a, "lineno") else node, bound, "import " + (a.name if a.asname else bound))

    def visit_ImportFrom(self, node):
        module = "." * node.level + (node.module or "")
        for a in node.names:
            self.bind(a if hasattr(a, "lineno") else node, a.asname or a.name, "import %s.%s" % (module, a.name))

    def visit_ClassDef(self, node):
        self.bind(ast.Pass(lineno=node.lineno, col_offset=node.col_offset, end_lineno=node.lineno), node.name, "class")
        self.scope.append("class %d" % min([d.lineno for d in node.decorator_list] + [node.lineno]))
        self.generic_visit(node)
        self.scope.pop()

    def visit_ExceptHandler(self, node):
        if node.name:
            self.bind(node, node.name, "except")
        self.generic_visit(node)

    def visit_match_name(self, node):
        name = getattr(node, "name", None) or getattr(node, "rest", None)
        if name:
            self.bind(node, name, "match")
        self.generic_visit(node)

    visit_MatchAs = visit_MatchStar = visit_MatchMapping = visit_match_name

    def visit_block(self, node):
        kind = type(node).__name__.lower().replace("async", "").replace("star", "")
        self.emit("block", node, kind)
        self.generic_visit(node)

    visit_If = visit_With = visit_AsyncWith = visit_Try = visit_TryStar = visit_Match = visit_block

    def visit_yield(self, node):
        self.emit("yield", node, {"Yield": "yield", "YieldFrom": "yield from", "Await": "await"}[type(node).__name__])
        self.generic_visit(node)

    visit_Yield = visit_YieldFrom = visit_Await = visit_yield

    def visit_AugAssign(self, node):
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


def facts_of(path, lines=None, source=None):
    """A user file's facts (of source, bytes, under the name path when given); with lines, a library file's
    signatures and the calls on those lines (no error fact)."""
    out = []
    try:
        if source is None:
            with open(path, "rb") as f:
                source = f.read(MAX_BYTES + 1)
        if len(source) > MAX_BYTES:
            return []
        tree = ast.parse(source, filename=path)
    except (OSError, SyntaxError, ValueError, RecursionError) as e:
        return [] if lines is not None else ["\t".join((path, "error", "0", "0", "0", type(e).__name__, clean(e)))]
    aliases = Aliases(tree)
    try:
        facts = Facts(path, aliases, out, lines)
        facts.visit(tree)
        if lines is not None:
            return out  # a library's: in part by design, no marker
        result_uses(path, tree, aliases, out)
    except RecursionError:
        return [] if lines is not None else ["\t".join((path, "error", "0", "0", "0", "RecursionError",
                                                        "too deeply nested"))]
    if facts.n < MAX_FACTS:  # complete: the marker that the edits needing every bind and block may trust them
        out.insert(0, "\t".join((path, "facts", "0", "0", "0", FACTS_VERSION, "python %d.%d" % sys.version_info[:2])))
    return out


MAX_CELLS = 4096  # as the analyzer reads them (analyzer/model/user_code.c)


def cells_of(path):
    """(file name, code) of the cells of JSON file path; bounded, each as facts_of reads a file."""
    import json
    with open(path, "rb") as f:
        cells = json.loads(f.read(64 << 20))
    for name in sorted(cells)[:MAX_CELLS] if isinstance(cells, dict) else ():
        if isinstance(cells[name], str):
            yield name, cells[name].encode("utf-8", "replace")


def library_item(arg):
    """'40,16:/path/lib.py' as ('/path/lib.py', {40, 16}); None when it is not one."""
    head, sep, path = arg.partition(":")
    try:
        return (path, {int(n) for n in head.split(",") if n}) if sep and path else None
    except ValueError:
        return None


def main():
    write = sys.stdout.write
    if sys.argv[1:2] == ["--cells"]:
        for path, code in cells_of(sys.argv[2]):
            for line in facts_of(path, source=code):
                write(line + "\n")
        return
    library = False
    for arg in sys.argv[1:]:
        if arg == "--library":
            library = True
            continue
        item = library_item(arg) if library else (arg, None)
        for line in facts_of(*item) if item else ():
            write(line + "\n")


main()
