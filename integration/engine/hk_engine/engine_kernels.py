"""The engines' own Triton kernels, compiled ahead of time for a target without a GPU, for
routes_from_model to predict beside hk's.

The kernels are read from the engine's installed package, at the version its pinned requirements
name (the environment Bazel builds: @vllm_env, @sglang_env), never copied into this repository:
the kernel's function and the @triton.jit functions and constants it reaches (in its module or
imported from the engine's other modules) are lifted out of the package's files into a module
written to a temporary directory, which imports only triton and torch (vLLM's environment has no
Triton; the module compiles with ours, the one the engines pin). Names that the engine computes
at import from its platform (a float8 dtype's range, say) are given by the caller.
"""

import ast
import importlib.util
import os
import re
import subprocess
import sys

from hk.errors import HKError

WAVE = {"gfx1100": 32, "gfx1201": 32, "gfx942": 64, "gfx950": 64}
_TRITON_TYPES = {"bfloat16": "bf16", "float16": "fp16", "float32": "fp32", "int32": "i32", "int64": "i64",
                 "uint8": "u8", "int8": "i8", "float8_e4m3fn": "fp8e4nv", "float8_e4m3fnuz": "fp8e4b8"}


class EngineKernelError(HKError):
    """An engine kernel that cannot be found, lifted or compiled for a target."""


def package_root(python=None, root=None):
    """The directory holding an engine's installed packages: `root` when given, else the
    site-packages (purelib) of the engine environment's interpreter `python`."""
    if root:
        return root
    if not python:
        raise EngineKernelError("no engine environment given",
                                hint="pass the engine's interpreter (@vllm_env//:python) or its site-packages")
    out = subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
    if out.returncode != 0:
        raise EngineKernelError("the engine interpreter %s failed: %s" % (python, out.stderr.strip()[-400:]))
    return out.stdout.strip().splitlines()[-1]


def installed_version(root, package):
    """The version of `package` installed under `root`, from its .dist-info directory."""
    for name in sorted(os.listdir(root)):
        m = re.match(r"%s-([^-]+)\.dist-info$" % re.escape(package), name)
        if m:
            return m.group(1)
    raise EngineKernelError("%s is not installed in %s" % (package, root),
                            hint="build the engine's environment from its pinned requirements")


def _module_file(root, module):
    path = os.path.join(root, *module.split(".")) + ".py"
    if not os.path.exists(path):
        path = os.path.join(root, *module.split("."), "__init__.py")
    if not os.path.exists(path):
        raise EngineKernelError("the engine has no module %s under %s" % (module, root),
                                hint="the engine's version may have moved it: update the kernel's module")
    return path


def _is_jit(node):
    return any("jit" in ast.unparse(d) for d in node.decorator_list)


class _Lifter:
    """Collects the definitions a kernel reaches, module by module."""

    def __init__(self, root, package, given):
        self.root, self.package, self.given = root, package, set(given)
        self.parsed = {}
        self.functions = {}   # name -> source (the @triton.jit def, its decorators reduced to @triton.jit)
        self.constants = {}   # name -> source of its assignment
        self.origin = {}      # name -> module

    def module(self, name):
        if name not in self.parsed:
            path = _module_file(self.root, name)
            with open(path) as f:
                text = f.read()
            tree = ast.parse(text)
            defs, consts, imports = {}, {}, {}
            for node in tree.body:
                if isinstance(node, ast.FunctionDef):
                    defs[node.name] = node
                elif isinstance(node, (ast.Assign, ast.AnnAssign)):
                    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                    for t in targets:
                        if isinstance(t, ast.Name):
                            consts[t.id] = node
                elif isinstance(node, ast.ImportFrom) and node.module and node.module.startswith(self.package):
                    for alias in node.names:
                        imports[alias.asname or alias.name] = (node.module, alias.name)
            self.parsed[name] = (text, defs, consts, imports)
        return self.parsed[name]

    def want(self, module, name):
        if name in self.given or name in self.functions or name in self.constants:
            return
        text, defs, consts, imports = self.module(module)
        if name in defs and _is_jit(defs[name]):
            node = defs[name]
            lines = text.splitlines()[node.lineno - 1:node.end_lineno]
            self.functions[name] = "@triton.jit\n" + "\n".join(lines)
            self.origin[name] = module
            self._reach(module, node)
        elif name in consts:
            node = consts[name]
            self.constants[name] = ast.get_source_segment(text, node)
            self.origin[name] = module
            self._reach(module, node.value)
        elif name in imports:
            other, original = imports[name]
            self.want(other, original)
            if original != name:
                self.constants[name] = "%s = %s" % (name, original)

    def _reach(self, module, node):
        _, defs, consts, imports = self.module(module)
        for sub in ast.walk(node):
            if isinstance(sub, ast.Name) and (sub.id in defs or sub.id in consts or sub.id in imports):
                self.want(module, sub.id)


def lift(root, package, module, names, given=None):
    """The source of a module holding `names` (@triton.jit kernels of `module`, a module of the
    engine `package` installed under `root`) and what they reach; `given` maps names the engine
    computes at import to Python expressions (over torch, triton and tl) that stand for them."""
    given = dict(given or {})
    lifter = _Lifter(root, package, given)
    for name in names:
        lifter.want(module, name)
        if name not in lifter.functions:
            raise EngineKernelError("%s has no @triton.jit function %s" % (module, name),
                                    hint="the engine's version may have renamed it")
    parts = ["# Lifted at run time from the installed %s package; not part of any repository." % package,
             "import torch", "import triton", "import triton.language as tl"]
    parts += ["%s = %s" % (k, v) for k, v in sorted(given.items())]
    # Constants before the functions, in their modules' order (one may name another).
    parts += [src for _, src in sorted(lifter.constants.items(), key=lambda kv: _order(lifter, kv[0]))]
    parts += list(lifter.functions.values())
    return "\n\n".join(parts) + "\n"


def _order(lifter, name):
    module = lifter.origin.get(name, "")
    text, _, consts, _ = lifter.parsed.get(module, ("", {}, {}, {}))
    node = consts.get(name)
    return (module, node.lineno if node is not None else 0)


def load(source, directory, name="lifted_kernels"):
    """Imports lifted source from a file under `directory` (Triton reads a kernel's source back
    from its file)."""
    path = os.path.join(directory, "%s.py" % name)
    with open(path, "w") as f:
        f.write(source)
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


class Ptr:
    """A pointer argument: a buffer of `nbytes` zeros, or `array` (indices the kernel reads)."""

    def __init__(self, dtype, nbytes=None, array=None):
        self.dtype, self.nbytes, self.array = dtype, nbytes, array


def compile_kernel(fn, arch, args, constexprs, num_warps, num_stages=2, options=None):
    """(code object, its kernel's name, dynamic LDS bytes, the emulator's arguments) of `fn`
    compiled for `arch` as a launch with `args` (name -> Ptr, int, float or None) and
    `constexprs` specializes it: each value as Triton's launcher specializes it (an integer 1
    becomes a constant, 16-divisible integers and pointers are marked divisible), a None or an
    omitted argument with a default as a constant; `options`: the launch's other compiler
    options (the AMD backend's waves_per_eu, matrix_instr_nonkdim, ...)."""
    import inspect

    import triton
    from triton._C.libtriton import native_specialize_impl
    from triton.backends.compiler import BaseBackend, GPUTarget

    from hk import emu
    from hk.emu import Zeros

    signature, attrs, consts, values = {}, {}, dict(constexprs), []
    for i, param in enumerate(fn.params):
        name = param.name
        if param.is_constexpr or name in constexprs:
            if name not in consts:
                if param.default is inspect.Parameter.empty:
                    raise EngineKernelError("no value for %s's constant %s" % (fn.__name__, name))
                consts[name] = param.default
            signature[name] = "constexpr"
            continue
        if name not in args and param.default is inspect.Parameter.empty:
            raise EngineKernelError("no value for %s's argument %s" % (fn.__name__, name))
        value = args.get(name, param.default)
        if value is None:
            signature[name], consts[name] = "constexpr", None
            continue
        if isinstance(value, Ptr):
            signature[name] = "*" + _TRITON_TYPES[value.dtype]
            attrs[(i,)] = [["tt.divisibility", 16]]
            values.append(value.array if value.array is not None else Zeros(value.nbytes))
            continue
        kind, key = native_specialize_impl(BaseBackend, value, False, not param.do_not_specialize, True)[:2]
        if kind == "constexpr":
            signature[name], consts[name] = "constexpr", value
            continue
        annotated = getattr(param, "annotation_type", None)
        signature[name] = annotated if annotated in ("i64", "u64", "i32", "fp32", "fp64") else kind
        if key == "D":
            attrs[(i,)] = [["tt.divisibility", 16]]
        values.append(value)
    src = triton.compiler.ASTSource(fn=fn, signature=signature, constexprs=consts, attrs=attrs)
    try:
        compiled = triton.compile(src, target=GPUTarget("hip", arch, WAVE[arch]),
                                  options=dict(options or {}, num_warps=num_warps, num_stages=num_stages))
    except Exception as e:  # Triton's own errors: the kernel does not build for this target
        last = (str(e).strip().splitlines() or [type(e).__name__])[-1][:300]
        raise EngineKernelError("Triton cannot compile %s for %s: %s" % (fn.__name__, arch, last)) from e
    co = compiled.asm["hsaco"]
    (name,) = emu.kernels(co)
    return co, name, compiled.metadata.shared, values


def triton_cache(directory):
    """Points Triton's cache and its defaults at a directory of the run (no writes elsewhere)."""
    os.environ.setdefault("TRITON_CACHE_DIR", os.path.join(directory, "triton-cache"))
    os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")
