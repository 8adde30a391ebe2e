"""The text of a code object's instructions, from the hermetic llvm-objdump.

Each instruction becomes a Line: its address, its size in bytes, its mnemonic and its operand
text. decode.py turns Lines into the emulator's instruction records.
"""

import dataclasses
import os
import re
import subprocess
import tempfile

from hk.emu.errors import CodeObjectError, EmuError
from hk.runtime import objdump

_LINE = re.compile(r"^\s+(\S.*?)\s*//\s*([0-9A-Fa-f]+):((?:\s+[0-9A-Fa-f]{8})+)")


@dataclasses.dataclass
class Line:
    address: int
    size: int
    mnemonic: str
    operands: str
    text: str


def objdump_path():
    """llvm-objdump: HK_LLVM_OBJDUMP, else the toolchain's (hk.runtime.toolchain)."""
    path = os.environ.get("HK_LLVM_OBJDUMP")
    if path:
        return path
    from hk.runtime import toolchain
    return toolchain.find().tool("llvm-objdump")


def disassemble(code_object_bytes, arch):
    """[Line] for every instruction in the object's executable sections, in address order."""
    with tempfile.NamedTemporaryFile(suffix=".co") as f:
        f.write(code_object_bytes)
        f.flush()
        cmd = [objdump_path(), "-d", "--mcpu=" + arch] + objdump.features(arch) + [f.name]
        try:
            out = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                 universal_newlines=True)
        except OSError as e:
            raise EmuError("cannot run llvm-objdump: %s" % e,
                           hint="set HK_LLVM_OBJDUMP to the hermetic llvm-objdump") from e
    if out.returncode != 0:
        raise CodeObjectError("llvm-objdump could not disassemble the code object:\n" + out.stderr.strip())
    lines = []
    for raw in out.stdout.splitlines():
        m = _LINE.match(raw)
        if not m:
            continue
        text, addr, words = m.group(1), int(m.group(2), 16), m.group(3).split()
        mnemonic, _, rest = text.partition(" ")
        lines.append(Line(addr, 4 * len(words), mnemonic, rest.strip(), text))
    return lines
