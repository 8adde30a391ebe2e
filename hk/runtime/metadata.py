"""The AMDGPU metadata of a code object, read with pyelftools and msgpack.

A code object's NT_AMDGPU_METADATA note (owner "AMDGPU", type 32) holds a msgpack map with
one entry per kernel: registers, spills, scratch, LDS, wave size, arguments. Offload bundles
(clang's default HIP output) are unpacked first.
"""

import dataclasses
import io

import msgpack
from elftools.elf.elffile import ELFFile
from elftools.elf.sections import NoteSection

from hk.errors import HKError

NT_AMDGPU_METADATA = 32
_BUNDLE_MAGIC = b"__CLANG_OFFLOAD_BUNDLE__"


class MetadataError(HKError):
    """A file is not an AMDGPU code object, or its metadata cannot be read."""


@dataclasses.dataclass(frozen=True)
class KernelMetadata:
    """What the compiler recorded about one kernel."""

    name: str
    target: str  # e.g. amdgcn-amd-amdhsa--gfx1100
    vgprs: int
    agprs: int
    sgprs: int
    vgpr_spills: int
    sgpr_spills: int
    scratch_bytes: int
    lds_bytes: int
    wave_size: int
    max_workgroup_size: int
    kernarg_bytes: int
    args: tuple

    @property
    def arch(self):
        return self.target.rsplit("-", 1)[-1].split(":")[0]

    @property
    def spills(self):
        return self.vgpr_spills + self.sgpr_spills


def code_objects(data):
    """The ELF code objects in `data`: the file itself, or each AMDGPU entry of a bundle."""
    if data[:4] == b"\x7fELF":
        return [data]
    if data.startswith(_BUNDLE_MAGIC):
        import struct

        count = struct.unpack_from("<Q", data, len(_BUNDLE_MAGIC))[0]
        pos = len(_BUNDLE_MAGIC) + 8
        out = []
        for _ in range(count):
            offset, size, id_len = struct.unpack_from("<QQQ", data, pos)
            pos += 24
            triple = data[pos:pos + id_len].decode("ascii", "replace")
            pos += id_len
            if triple.startswith("hip") and "amdgcn" in triple:
                out.append(data[offset:offset + size])
        if not out:
            raise MetadataError("the offload bundle holds no AMDGPU code object")
        return out
    raise MetadataError("not an ELF code object or a clang offload bundle")


def workitem_id_vgprs(obj, kernel):
    """How many work-item ids the kernel descriptor of `kernel` (`<kernel>.kd`) has the hardware
    put in v0 (1: x only; 2: x and y; 3: x, y and z), or None when the code object has no such
    descriptor. Its field is ENABLE_VGPR_WORKITEM_ID, bits 11-12 of COMPUTE_PGM_RSRC2 (byte 52)."""
    import struct

    try:
        elf = ELFFile(io.BytesIO(obj))
        symtab = elf.get_section_by_name(".symtab")
        if symtab is None:
            return None
        for sym in symtab.iter_symbols():
            if sym.name != kernel + ".kd":
                continue
            section = elf.get_section(sym["st_shndx"])
            start = sym["st_value"] - section["sh_addr"] + 52
            data = section.data()
            if start + 4 > len(data):
                return None
            return ((struct.unpack_from("<I", data, start)[0] >> 11) & 3) + 1
    except Exception:  # a damaged or unusual file: the caller assumes nothing
        return None
    return None


def _note(elf):
    for section in elf.iter_sections():
        if not isinstance(section, NoteSection):
            continue
        for note in section.iter_notes():
            if note["n_name"] == "AMDGPU" and note["n_type"] == NT_AMDGPU_METADATA:
                desc = note["n_descdata"]
                return desc if isinstance(desc, bytes) else bytes(desc, "latin-1")
    return None


def read(data):
    """The kernels of a code object (bytes or a path): a list of KernelMetadata."""
    if isinstance(data, str):
        with open(data, "rb") as f:
            data = f.read()
    kernels = []
    for obj in code_objects(data):
        try:
            elf = ELFFile(io.BytesIO(obj))
            raw = _note(elf)
        except Exception as e:  # pyelftools raises its own errors on damaged files
            raise MetadataError("cannot read the ELF code object: %s" % e) from None
        if raw is None:
            raise MetadataError("the code object has no AMDGPU metadata note (code object v3+ expected)")
        try:
            kernels += _kernels(msgpack.unpackb(raw, raw=False, strict_map_key=False))
        except (ValueError, TypeError, AttributeError) as e:  # msgpack's errors are ValueErrors
            raise MetadataError("the code object's AMDGPU metadata note is damaged (%s: %s)"
                                % (type(e).__name__, e)) from None
    return kernels


def _kernels(meta):
    """The KernelMetadata of a decoded metadata note."""
    kernels = []
    target = meta.get("amdhsa.target", "")
    for k in meta.get("amdhsa.kernels", []):
        kernels.append(KernelMetadata(
            name=k.get(".name", ""),
            target=target,
            vgprs=int(k.get(".vgpr_count", 0)),
            agprs=int(k.get(".agpr_count", 0)),
            sgprs=int(k.get(".sgpr_count", 0)),
            vgpr_spills=int(k.get(".vgpr_spill_count", 0)),
            sgpr_spills=int(k.get(".sgpr_spill_count", 0)),
            scratch_bytes=int(k.get(".private_segment_fixed_size", 0)),
            lds_bytes=int(k.get(".group_segment_fixed_size", 0)),
            wave_size=int(k.get(".wavefront_size", 64)),
            max_workgroup_size=int(k.get(".max_flat_workgroup_size", 0)),
            kernarg_bytes=int(k.get(".kernarg_segment_size", 0)),
            args=tuple(k.get(".args", ())),
        ))
    return kernels
