"""Compiles one kernel of the corpus (kernels.SPECS) for one target with Triton's AMD backend,
ahead of time and without a GPU: writes the code object and a JSON file of what a launch needs
(the kernel's name, its waves and its dynamic LDS bytes).

    compile.py --spec vector_add --arch gfx1100 --out vector_add.gfx1100.co --meta vector_add.gfx1100.json

Triton's cache, home and temporary files are in a fresh directory beside the outputs, removed
when done, so the build action reads and writes nothing of the user's.
"""

import json
import os
import shutil
import sys
import tempfile

from absl import app, flags

FLAGS = flags.FLAGS
flags.DEFINE_string("spec", None, "the SPECS entry to compile")
flags.DEFINE_string("arch", None, "gfx1100, gfx1201, gfx942 or gfx950")
flags.DEFINE_string("out", None, "the code object to write")
flags.DEFINE_string("meta", None, "the launch facts to write (JSON)")


def compile_spec(name, arch):
    """(code object bytes, {"name", "num_warps", "shared"}) of SPECS[name] for `arch`."""
    import triton
    from triton.backends.compiler import GPUTarget

    from tests.emu.triton import kernels

    spec = kernels.SPECS[name]
    # What the JIT would specialize for torch tensors: 16-byte aligned and within 2 GB (which
    # turns on buffer loads, and on gfx950 the pipelined global->LDS copies), aligned integers.
    attrs = {}
    for i, (arg, ty) in enumerate(spec.signature.items()):
        if ty.startswith("*"):
            attrs[(i,)] = [["tt.divisibility", 16], ["tt.pointer_range", 32]]
        elif arg in spec.aligned:
            attrs[(i,)] = [["tt.divisibility", 16]]
    src = triton.compiler.ASTSource(fn=spec.fn, signature=spec.signature, constexprs=spec.constexprs, attrs=attrs)
    compiled = triton.compile(src, target=GPUTarget("hip", arch, kernels.ARCHS[arch]), options=spec.options)
    meta = {"name": compiled.metadata.name, "num_warps": compiled.metadata.num_warps,
            "shared": compiled.metadata.shared}
    return compiled.asm["hsaco"], meta


def main(argv):
    del argv
    out_dir = os.path.dirname(os.path.abspath(FLAGS.out))
    private = tempfile.mkdtemp(prefix="triton-", dir=out_dir)
    try:
        # Set before Triton is first imported: it reads them once.
        os.environ["TRITON_HOME"] = os.path.join(private, "home")
        os.environ["TRITON_CACHE_DIR"] = os.path.join(private, "cache")
        os.environ["TMPDIR"] = private
        tempfile.tempdir = None
        os.environ["TRITON_DEFAULT_FP_FUSION"] = "1"
        co, meta = compile_spec(FLAGS.spec, FLAGS.arch)
    finally:
        shutil.rmtree(private, ignore_errors=True)
    with open(FLAGS.out, "wb") as f:
        f.write(co)
    with open(FLAGS.meta, "w") as f:
        json.dump(meta, f, sort_keys=True)
    return 0


if __name__ == "__main__":
    flags.mark_flags_as_required(["spec", "arch", "out", "meta"])
    sys.exit(app.run(main))
