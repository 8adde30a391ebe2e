"""The Python of the pages a new user reads first runs as written, on the interpreter.

Every ```python block of README.md, docs/getting-started.md and docs/language.md is executed
with HK_DEVICE=interp, so that a sentence and the code beside it cannot disagree unnoticed.
The conventions, as few as the pages need:

- A page's blocks run in order in one namespace, as one script would ("Add to first.py"). It
  starts from PRELUDE: `hk` and `torch` imported, the README's `add` kernel, and the bf16
  tensors `a`, `b` and `out` it is launched on.
- A block that cannot run as a script, because hk refuses its calls outside a kernel ("can
  only be used inside an @hk.kernel") or a name it uses is undefined there, is a fragment of a
  kernel body. It runs as the body of FRAGMENT, one workgroup of one wave with
  the tensors `x` and `o` (bf16), `idx` (i32) and `sums` (fp32), each 64 x 128, launched on the
  interpreter. Any other name it uses it defines itself, or an earlier block of the page does.
- Every kernel a page defines is traced, called or not (but for one whose error it shows).
- A block that raises an hk error is followed by a plain ``` block showing that error as it
  prints, with the file's path written as the page likes (/path/to/bad.py).

A failure names the page and the line of the block that failed.
"""

import os
import re

import pytest
import torch

import hk
from hk.errors import HKError, TraceError

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PAGES = ["README.md", "docs/getting-started.md", "docs/language.md"]

PRELUDE = '''\
import hk
import torch

@hk.kernel(grid=lambda p: (hk.cdiv(p.o.cols, 64), hk.cdiv(p.o.rows, 16), p.o.batch))
def add(a: hk.Tensor[hk.bf16], b: hk.Tensor[hk.bf16], o: hk.Tensor[hk.bf16]):
    idx = hk.tile_coord(hk.arch.block_idx.z, 0, hk.arch.block_idx.y, hk.arch.block_idx.x)
    t = hk.RT(hk.bf16, 16, 64)
    o[idx] = a[idx].load(t) + b[idx].load(t)

a = torch.randn(3, 40, 100, dtype=torch.bfloat16)
b = torch.randn(3, 40, 100, dtype=torch.bfloat16)
out = torch.empty_like(a)
'''

FRAGMENT = '''\
@hk.kernel(grid=(1,))
def fragment(x: hk.Tensor[hk.bf16], o: hk.Tensor[hk.bf16], idx: hk.Tensor[hk.i32],
             sums: hk.Tensor[hk.fp32]):
'''
FRAGMENT_LINES = FRAGMENT.count("\n")
OUTSIDE_A_KERNEL = "can only be used inside an @hk.kernel"


def fragment_tensors():
    return (torch.randn(64, 128).to(torch.bfloat16), torch.zeros(64, 128, dtype=torch.bfloat16),
            torch.arange(64 * 128, dtype=torch.int32).reshape(64, 128) % 64, torch.zeros(64, 128))


def blocks(path):
    """(language, first line, text) of each fenced block of the page at `path`."""
    found, fence, start, body = [], None, 0, []
    with open(path) as f:
        for number, line in enumerate(f, 1):
            stripped = line.strip()
            if fence is None and stripped.startswith("```"):
                fence, start, body = stripped[3:].strip(), number + 1, []
            elif fence is not None and stripped == "```":
                found.append((fence, start, "".join(body)))
                fence = None
            elif fence is not None:
                body.append(line)
    return found


class Page:
    """One page's namespace, and the directory its blocks are written to (hk reads a kernel's
    source from its file, as it does a user's)."""

    def __init__(self, tmp_path):
        self.dir, self.count = tmp_path, 0
        self.namespace = {"__name__": "__main__"}
        self.run(PRELUDE, "prelude")

    def run(self, text, name=None):
        self.count += 1
        path = self.dir / ("%s.py" % (name or "block%d" % self.count))
        path.write_text(text)
        self.path = str(path)
        exec(compile(text, self.path, "exec"), self.namespace)

    def run_fragment(self, text):
        """The block as the body of FRAGMENT, launched once."""
        body = "".join("    " + line if line.strip() else line for line in text.splitlines(True))
        self.run(FRAGMENT + body, "fragment%d" % self.count)
        self.namespace["fragment"](*fragment_tensors())


def check_shown_error(where, error, shown):
    """`shown`, the block after one that raised `error`, is that error as it prints."""
    if shown is None or shown[0] not in ("", "text"):
        raise AssertionError("%s raises, and no plain block after it shows the error:\n%s\n(a block meant to "
                             "raise is followed by a plain ``` block showing the error)" % (where, error))
    text = shown[2].rstrip("\n")
    m = re.match(r"(\S+):(\d+):(\d+): ", text)
    if not m:
        raise AssertionError("the error shown at line %d does not begin with FILE:LINE:COL: %r" % (shown[1], text))
    printed = str(error).replace(str(error.location.file), m.group(1))
    if printed != text:
        raise AssertionError("line %d shows\n%s\nbut %s raises\n%s" % (shown[1], text, where, printed))


def is_outside_a_kernel(error):
    """Whether `error` says the block needs a kernel around it: hk refused a call outside one, or
    a name the block uses is not defined at the top level."""
    return isinstance(error, NameError) or (isinstance(error, TraceError) and OUTSIDE_A_KERNEL in error.message)


def line_in(error, path):
    """The line of the file at `path` that `error` names (hk's location, else its traceback)."""
    loc = getattr(error, "location", None)
    if loc is not None and loc.file == path:
        return loc.line
    tb, line = error.__traceback__, None
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == path:
            line = tb.tb_lineno
        tb = tb.tb_next
    return line


def run_page(path, tmp_path):
    """Runs every python block of the page at `path` by the conventions above; an
    AssertionError names the page's line that failed."""
    name = os.path.relpath(path, ROOT) if path.startswith(ROOT + os.sep) else os.path.basename(path)
    found = blocks(path)
    python = [i for i, (lang, _, _) in enumerate(found) if lang == "python"]
    assert python, "%s has no python block" % name
    page = Page(tmp_path)
    refused = set()  # kernels of blocks whose error the page shows
    for i in python:
        _, start, text = found[i]
        offset, before = 0, {id(v) for v in page.namespace.values()}
        try:
            try:
                page.run(text)
            except (TraceError, NameError) as e:
                if not is_outside_a_kernel(e):
                    raise
                offset = FRAGMENT_LINES
                page.run_fragment(text)
        except Exception as e:
            line = line_in(e, page.path)
            where = "%s:%d" % (name, start + line - 1 - offset if line and line > offset else start)
            if not isinstance(e, HKError) or is_outside_a_kernel(e):
                raise AssertionError("%s: %s: %s" % (where, type(e).__name__, e)) from e
            check_shown_error(where, e, found[i + 1] if i + 1 < len(found) else None)
            refused |= {id(v) for v in page.namespace.values() if id(v) not in before}
    for value in list(page.namespace.values()):
        if isinstance(value, hk.Kernel) and id(value) not in refused:
            try:
                value.trace("gfx1100")
            except HKError as e:
                raise AssertionError("%s: kernel %s does not trace:\n%s" % (name, value.name, e)) from e


@pytest.fixture(autouse=True)
def interp(monkeypatch):
    monkeypatch.setenv("HK_DEVICE", "interp")
    monkeypatch.delenv("HK_ARCH", raising=False)


@pytest.mark.parametrize("page", PAGES)
def test_every_python_block_runs(page, tmp_path):
    run_page(os.path.join(ROOT, page), tmp_path)


SAMPLE = """\
A kernel, a fragment and an error:

```python
@hk.kernel(grid=(1,))
def copy(x: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32]):
    o[0, 0, 0, 0] = x[0, 0, 0, 0].load(hk.RT(hk.fp32, 16, 64))
```

```python
t = x[0, 0, 1, 0].load(hk.RT(hk.bf16, 16, 64))
o[0, 0, 0, 1] = t
```

```python
copy(torch.zeros(3), torch.zeros(16, 64, dtype=torch.bfloat16))
```

```
/path/to/bad.py:1:1: kernel copy: argument 'o' must be a tensor of hk.fp32 but is torch.bfloat16
    copy(torch.zeros(3), torch.zeros(16, 64, dtype=torch.bfloat16))
    ^
```
"""


def sample_line(text, needle):
    return 1 + next(i for i, line in enumerate(text.splitlines()) if needle in line)


def test_a_page_that_disagrees_with_its_code_fails(tmp_path):
    """The checker itself: the sample passes as it is; it fails, naming the page's line, when
    the error it shows is not the one its block raises, or when a fragment does not trace."""
    page = tmp_path / "page.md"
    page.write_text(SAMPLE)
    run_page(str(page), tmp_path)

    wrong = SAMPLE.replace("argument 'o' must be a tensor of hk.fp32 but is torch.bfloat16",
                           "argument 'x' must be a tensor of hk.fp32 but is torch.float32")
    page.write_text(wrong)
    with pytest.raises(AssertionError) as e:
        run_page(str(page), tmp_path)
    assert "line %d shows" % sample_line(wrong, "/path/to/bad.py") in str(e.value)
    assert "but page.md:%d raises\n/path/to/bad.py:1:1: kernel copy: argument 'o'" % sample_line(
        wrong, "copy(torch.zeros(3)") in str(e.value)

    broken = SAMPLE.replace("load(hk.RT(hk.bf16, 16, 64))", "load(hk.RT(hk.fp32, 16, 64))")
    page.write_text(broken)
    with pytest.raises(AssertionError) as e:
        run_page(str(page), tmp_path)
    assert str(e.value).startswith("page.md:%d raises, and no plain block after it shows the error"
                                   % sample_line(broken, "t = x[0, 0, 1, 0]"))
    assert "cannot load hk.fp32 elements from x" in str(e.value)
