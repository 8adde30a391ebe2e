"""The AST rewrite: Python `for`, `if` and `while` in a kernel become calls into hk.dsl.control.

    for i in hk.range(n):            def _hk_for_3(i, acc):
        acc = acc + f(i)      ->         acc = acc + f(i)
                                         return (acc,)
                                     (acc,) = _hk_control.for_loop(hk.range(n), _hk_for_3, (acc,), ...)

The helpers decide at trace time: a loop over Python values (range(4), a list) runs in Python,
so it unrolls; a loop over hk.range with device bounds becomes scf.for carrying the names the
body assigns. An `if` on a Python value runs one branch; on a device scalar it becomes scf.if.
Line numbers are kept, so every operation still points at the user's line.
"""

import ast
import collections
import copy
import inspect
import textwrap

from hk.errors import Location, TraceError

_CONTROL = "_hk_control"


def _assigned(nodes):
    """Names bound by assignments (and loop targets) in `nodes`, not in nested functions."""
    names = []

    class Visitor(ast.NodeVisitor):
        def visit_Name(self, node):
            if isinstance(node.ctx, ast.Store) and node.id not in names:
                names.append(node.id)

        def visit_FunctionDef(self, node):
            if node.name not in names:
                names.append(node.name)

        visit_AsyncFunctionDef = visit_FunctionDef

        def visit_Lambda(self, node):
            pass

        def visit_comprehension_scope(self, node):
            # A comprehension's targets are its own; only a walrus inside binds outside it.
            for n in ast.walk(node):
                if isinstance(n, ast.NamedExpr) and n.target.id not in names:
                    names.append(n.target.id)

        visit_ListComp = visit_SetComp = visit_DictComp = visit_GeneratorExp = visit_comprehension_scope

    for n in nodes:
        Visitor().visit(n)
    return names


def _jumps(body):
    """The return, break, continue and yield statements of `body`, outside nested functions."""
    todo = collections.deque(body)  # breadth first: the outermost, earliest jump comes first
    while todo:
        n = todo.popleft()
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        if isinstance(n, (ast.Return, ast.Break, ast.Continue, ast.Yield)):
            yield n
        todo.extend(ast.iter_child_nodes(n))


def _located(node, template):
    """`node` and the nodes under it that have no location take `template`'s; nodes that have
    one (the user's, parsed from the source) keep it, and the walk does not enter them."""
    todo = [node]
    while todo:
        n = todo.pop()
        if "lineno" in n._attributes:
            if getattr(n, "lineno", None) is not None and n is not node:
                continue
            ast.copy_location(n, template)
        todo.extend(ast.iter_child_nodes(n))
    return node


class _Rewriter(ast.NodeTransformer):
    def __init__(self, filename, params):
        self.filename = filename
        self.defined = [list(params)]
        self.counter = 0

    def _fresh(self, kind, node):
        self.counter += 1
        return "_hk_%s_%d_%d" % (kind, node.lineno, self.counter)

    def _refuse_jumps(self, body, what, node):
        n = next(_jumps(body), None)
        if n is not None:
            raise TraceError(
                "'%s' inside %s is not supported in a kernel" % (type(n).__name__.lower(), what),
                location=Location(self.filename, n.lineno, n.col_offset + 1),
                hint="compute a flag and test it after the loop, or restructure with hk.where")

    def _visit_block(self, body):
        out = []
        for stmt in body:
            result = self.visit(stmt)
            out.extend(result if isinstance(result, list) else [result])
            # A loop's body names stay in the body (only names known before are carried out);
            # an if's names flow out (possibly UNDEFINED); other statements bind what they assign.
            if not isinstance(stmt, (ast.For, ast.While)):
                self.defined[-1].extend(n for n in _assigned([stmt]) if n not in self.defined[-1])
        return out

    def _known(self):
        return [n for scope in self.defined for n in scope]

    def _function(self, name, args, body, returns, template, defined=None):
        """def name(*args): body; return returns -- a name in `returns` the body may leave
        unbound (one branch of an if) returns hk.dsl.control.UNDEFINED instead."""
        elts = []
        for r in returns:
            if defined is None or r in defined or r in args:
                elts.append(ast.Name(id=r, ctx=ast.Load()))
            else:
                elts.append(ast.Attribute(value=ast.Name(id=_CONTROL, ctx=ast.Load()),
                                          attr="UNDEFINED", ctx=ast.Load()))
        ret = ast.Return(value=ast.Tuple(elts=elts, ctx=ast.Load()))
        fn = ast.FunctionDef(
            name=name,
            args=ast.arguments(posonlyargs=[], args=[ast.arg(arg=a) for a in args], vararg=None,
                               kwonlyargs=[], kw_defaults=[], kwarg=None, defaults=[]),
            body=body + [_located(ret, body[-1] if body else template)],
            decorator_list=[], returns=None, type_params=[])
        return _located(fn, template)

    def _call(self, helper, args, targets, template):
        call = ast.Call(func=ast.Attribute(value=ast.Name(id=_CONTROL, ctx=ast.Load()), attr=helper,
                                           ctx=ast.Load()),
                        args=args, keywords=[])
        target = ast.Tuple(elts=[ast.Name(id=t, ctx=ast.Store()) for t in targets], ctx=ast.Store())
        return _located(ast.Assign(targets=[target], value=call), template)

    @staticmethod
    def _names_tuple(names):
        return ast.Tuple(elts=[ast.Name(id=n, ctx=ast.Load()) for n in names], ctx=ast.Load())

    @staticmethod
    def _strings(names):
        return ast.Tuple(elts=[ast.Constant(value=n) for n in names], ctx=ast.Load())

    def _location(self, node):
        return ast.Tuple(elts=[ast.Constant(self.filename), ast.Constant(node.lineno),
                               ast.Constant(node.col_offset + 1)], ctx=ast.Load())

    # Statements ----------------------------------------------------------------------------------

    def visit_FunctionDef(self, node):
        return node  # nested helper functions are left alone

    def visit_For(self, node):
        if node.orelse:
            raise TraceError("for ... else is not supported in a kernel",
                             location=Location(self.filename, node.lineno, node.col_offset + 1))
        self._refuse_jumps(node.body, "a loop", node)
        known = self._known()
        targets = _assigned([node.target])
        self.defined.append(list(targets))
        body = self._visit_block(node.body)
        self.defined.pop()
        carried = [n for n in _assigned(node.body) if n in known and n not in targets]
        local = self._locals(node.body, known + targets)
        name = self._fresh("for", node)
        if isinstance(node.target, ast.Name):
            param = node.target.id
        else:
            # `for k, x in enumerate(...)`: the body takes the item and unpacks it first.
            param = self._fresh("item", node)
            unpack = ast.Assign(targets=[node.target], value=ast.Name(id=param, ctx=ast.Load()))
            body = [_located(unpack, node)] + body
        fn = self._function(name, [param] + carried, body or [ast.Pass()], carried + local, node)
        # As in Python, the loop's variable keeps its last value after the loop (or the one it
        # had before a loop that ran no iteration), and so do the names first bound in its body;
        # for_loop returns them after the carried names.
        last = self._fresh("last", node)
        prior = (ast.Name(id=node.target.id, ctx=ast.Load())
                 if isinstance(node.target, ast.Name) and node.target.id in known
                 else ast.Attribute(value=ast.Name(id=_CONTROL, ctx=ast.Load()), attr="NO_ITERATION",
                                    ctx=ast.Load()))
        call = self._call("for_loop", [self.visit(node.iter), ast.Name(id=name, ctx=ast.Load()),
                                       self._names_tuple(carried), self._strings(carried),
                                       self._location(node), prior, ast.Constant(len(local))],
                          carried + local + [last], node)
        rebind = _located(ast.Assign(targets=[copy.deepcopy(node.target)], value=ast.Name(id=last, ctx=ast.Load())),
                          node)
        return [fn, call, rebind]

    def _locals(self, body, known):
        """Names a loop body binds that were not bound before it (not the loop's own helpers)."""
        return [n for n in _assigned(body) if n not in known and not n.startswith("_hk_")]

    def visit_While(self, node):
        if node.orelse:
            raise TraceError("while ... else is not supported in a kernel",
                             location=Location(self.filename, node.lineno, node.col_offset + 1))
        self._refuse_jumps(node.body, "a loop", node)
        known = self._known()
        self.defined.append([])
        body = self._visit_block(node.body)
        self.defined.pop()
        carried = [n for n in _assigned(node.body) if n in known]
        local = self._locals(node.body, known)
        cond_name, body_name = self._fresh("cond", node), self._fresh("while", node)
        cond_ret = ast.Return(value=self.visit(node.test))
        cond_fn = ast.FunctionDef(
            name=cond_name,
            args=ast.arguments(posonlyargs=[], args=[ast.arg(arg=a) for a in carried], vararg=None,
                               kwonlyargs=[], kw_defaults=[], kwarg=None, defaults=[]),
            body=[_located(cond_ret, node)], decorator_list=[], returns=None, type_params=[])
        cond_fn = _located(cond_fn, node)
        body_fn = self._function(body_name, carried, body or [ast.Pass()], carried + local, node)
        call = self._call("while_loop", [ast.Name(id=cond_name, ctx=ast.Load()),
                                         ast.Name(id=body_name, ctx=ast.Load()),
                                         self._names_tuple(carried), self._strings(carried),
                                         self._location(node), ast.Constant(len(local))],
                          carried + local, node)
        return [cond_fn, body_fn, call]

    def visit_If(self, node):
        # The branches become functions of their own, so a `return` in one would leave only
        # the branch. (break and continue are refused by the enclosing loop.)
        n = next((j for j in _jumps(node.body + node.orelse) if isinstance(j, (ast.Return, ast.Yield))), None)
        if n is not None:
            raise TraceError(
                "'%s' inside an if is not supported in a kernel or @hk.func" % type(n).__name__.lower(),
                location=Location(self.filename, n.lineno, n.col_offset + 1),
                hint="assign the result in both branches and return it after the if")
        known = self._known()
        self.defined.append([])
        then = self._visit_block(node.body)
        self.defined.pop()
        self.defined.append([])
        other = self._visit_block(node.orelse)
        self.defined.pop()
        assigned_then, assigned_else = _assigned(node.body), _assigned(node.orelse)
        # Every name a branch binds flows out; one the other branch leaves unbound comes out as
        # UNDEFINED (an error if it is used after a device `if`).
        outs = [n for n in assigned_then + [m for m in assigned_else if m not in assigned_then]
                if not n.startswith("_hk_")]
        ins = [n for n in outs if n in known]
        then_name, else_name = self._fresh("then", node), self._fresh("else", node)
        then_fn = self._function(then_name, ins, then or [ast.Pass()], outs, node, assigned_then)
        else_fn = self._function(else_name, ins, other or [ast.Pass()], outs, node, assigned_else)
        call = self._call("if_else", [self.visit(node.test), ast.Name(id=then_name, ctx=ast.Load()),
                                      ast.Name(id=else_name, ctx=ast.Load()),
                                      self._names_tuple(ins), self._strings(outs),
                                      self._location(node)], outs, node)
        return [then_fn, else_fn, call]


def first_of(fn, kinds, valued=False):
    """The Location of the first node of one of the ast `kinds` in `fn`'s own body (not in
    nested functions); with `valued`, only one that has a value (`return x`). None without
    source or without such a node."""
    try:
        source = textwrap.dedent(inspect.getsource(fn))
        tree = ast.parse("\n" * (fn.__code__.co_firstlineno - 1) + source)
    except (OSError, TypeError, SyntaxError):
        return None
    func = tree.body[0]
    todo, found = list(getattr(func, "body", [])), []
    while todo:
        n = todo.pop()
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        if type(n).__name__ in kinds and (not valued or getattr(n, "value", None) is not None):
            found.append((n.lineno, n.col_offset + 1))
        todo.extend(ast.iter_child_nodes(n))
    return Location(fn.__code__.co_filename, *min(found)) if found else None


def refuse_generators(fn, what):
    """A generator or coroutine body would never run while traced: refused at its first yield."""
    kind = ("a generator" if inspect.isgeneratorfunction(fn) else
            "an async generator" if inspect.isasyncgenfunction(fn) else
            "a coroutine" if inspect.iscoroutinefunction(fn) else None)
    if kind:
        raise TraceError("%s %s is %s function; its body would not run when it is traced"
                         % (what, fn.__name__, kind),
                         location=first_of(fn, ("Yield", "YieldFrom", "Await")) or Location.of_function(fn),
                         hint="remove the yield / await (and async): the body runs once, while it is traced")


def rewrite(fn):
    """`fn` with its control flow routed through hk.dsl.control; fn itself when it has none."""
    try:
        source = textwrap.dedent(inspect.getsource(fn))
    except (OSError, TypeError):
        return fn  # no source (e.g. typed at a prompt): Python control flow only
    if not any(word in source for word in ("for ", "if ", "while ")):
        return fn  # no control flow to rewrite
    # Blank lines in front put every node at its line in the file, with no pass over the tree.
    tree = ast.parse("\n" * (fn.__code__.co_firstlineno - 1) + source)
    func = tree.body[0]
    if not isinstance(func, ast.FunctionDef):
        return fn
    func.decorator_list = []
    # Annotations and defaults were evaluated with fn itself; evaluated again here they could
    # name a variable of the enclosing scope that only they use (hk.Tensor[dtype], BN=64 if
    # wide else 128), which is no free variable of the body. The defaults are fn's own, below.
    for a in func.args.posonlyargs + func.args.args + func.args.kwonlyargs:
        a.annotation = None
    func.returns = None
    func.args.defaults = []
    func.args.kw_defaults = [None] * len(func.args.kwonlyargs)
    params = [a.arg for a in func.args.posonlyargs + func.args.args + func.args.kwonlyargs]
    func.body = _Rewriter(fn.__code__.co_filename, params)._visit_block(func.body)
    freevars = fn.__code__.co_freevars
    factory = ast.FunctionDef(
        name="_hk_factory",
        args=ast.arguments(posonlyargs=[], args=[ast.arg(arg=v) for v in freevars], vararg=None,
                           kwonlyargs=[], kw_defaults=[], kwarg=None, defaults=[]),
        body=[func, ast.Return(value=ast.Name(id=func.name, ctx=ast.Load()))],
        decorator_list=[], returns=None, type_params=[])
    # Only the factory itself takes the function's location: every statement keeps its own line.
    _located(factory, func)
    module = ast.Module(body=[factory], type_ignores=[])
    code = compile(module, fn.__code__.co_filename, "exec")
    from hk.dsl import control

    namespace = dict(fn.__globals__)
    namespace[_CONTROL] = control
    exec(code, namespace)
    cells = [c.cell_contents for c in (fn.__closure__ or ())]
    rewritten = namespace["_hk_factory"](*cells)
    rewritten.__defaults__, rewritten.__kwdefaults__ = fn.__defaults__, fn.__kwdefaults__
    return rewritten
