"""Reading an AMDGPU code object: kernels, their descriptors and their kernarg layouts.

The ELF is read with pyelftools and the metadata note (NT_AMDGPU_METADATA, msgpack) with msgpack.
A kernel descriptor is the 64-byte `<name>.kd` object of the AMDGPU code object format; its
fields and enable bits are decoded into KernelDescriptor.
"""

import dataclasses
import io

import msgpack
from elftools.common.exceptions import ELFError
from elftools.elf.elffile import ELFFile

from hk.emu.errors import CodeObjectError

NT_AMDGPU_METADATA = 32
EM_AMDGPU = 224

# Families the emulator knows: wave size, and whether the work-item ids come packed in v0.
ARCHS = {
    "gfx1100": dict(family="rdna3", wave=32, packed_tid=True),
    "gfx1101": dict(family="rdna3", wave=32, packed_tid=True),
    "gfx1102": dict(family="rdna3", wave=32, packed_tid=True),
    "gfx1200": dict(family="rdna4", wave=32, packed_tid=True),
    "gfx1201": dict(family="rdna4", wave=32, packed_tid=True),
    "gfx942": dict(family="cdna3", wave=64, packed_tid=True),
    "gfx950": dict(family="cdna4", wave=64, packed_tid=True),
}


def _bits(value, lo, width):
    return (value >> lo) & ((1 << width) - 1)


@dataclasses.dataclass(frozen=True)
class KernelDescriptor:
    """The fields of the 64-byte kernel descriptor that decide how a wave starts."""

    group_segment_fixed_size: int
    private_segment_fixed_size: int
    kernarg_size: int
    entry_offset: int            # kernel_code_entry_byte_offset, from the descriptor's address
    rsrc1: int
    rsrc2: int
    rsrc3: int
    properties: int              # kernel_code_properties
    kernarg_preload: int

    @classmethod
    def parse(cls, raw):
        if len(raw) != 64:
            raise CodeObjectError("a kernel descriptor is 64 bytes, got %d" % len(raw))
        i = int.from_bytes
        return cls(
            group_segment_fixed_size=i(raw[0:4], "little"),
            private_segment_fixed_size=i(raw[4:8], "little"),
            kernarg_size=i(raw[8:12], "little"),
            entry_offset=i(raw[16:24], "little", signed=True),
            rsrc3=i(raw[44:48], "little"),
            rsrc1=i(raw[48:52], "little"),
            rsrc2=i(raw[52:56], "little"),
            properties=i(raw[56:58], "little"),
            kernarg_preload=i(raw[58:60], "little"),
        )

    # compute_pgm_rsrc2
    @property
    def enable_private_segment(self):
        return bool(_bits(self.rsrc2, 0, 1))

    @property
    def user_sgpr_count(self):
        return _bits(self.rsrc2, 1, 5)

    @property
    def workgroup_id_enabled(self):
        return tuple(bool(_bits(self.rsrc2, 7 + d, 1)) for d in range(3))

    @property
    def workgroup_info_enabled(self):
        return bool(_bits(self.rsrc2, 10, 1))

    @property
    def vgpr_workitem_id(self):
        """0: x only, 1: x and y, 2: x, y and z."""
        return _bits(self.rsrc2, 11, 2)

    # compute_pgm_rsrc1
    @property
    def float_denorm_mode_32(self):
        """3 keeps f32 denormals; 0 flushes them (in and out)."""
        return _bits(self.rsrc1, 16, 2)

    @property
    def float_denorm_mode_16_64(self):
        return _bits(self.rsrc1, 18, 2)

    # kernel_code_properties: the user SGPRs the kernel asks for, in setup order.
    USER_SGPRS = (
        ("private_segment_buffer", 0, 4),
        ("dispatch_ptr", 1, 2),
        ("queue_ptr", 2, 2),
        ("kernarg_segment_ptr", 3, 2),
        ("dispatch_id", 4, 2),
        ("flat_scratch_init", 5, 2),
        ("private_segment_size", 6, 1),
    )

    def user_sgprs(self):
        """[(name, count)] of the enabled user SGPRs, in the order the hardware loads them."""
        return [(name, n) for name, bit, n in self.USER_SGPRS if _bits(self.properties, bit, 1)]

    @property
    def wavefront_size32(self):
        return bool(_bits(self.properties, 10, 1))

    @property
    def kernarg_preload_length(self):
        """Kernarg dwords preloaded into user SGPRs (gfx942/gfx950)."""
        return _bits(self.kernarg_preload, 0, 7)

    @property
    def kernarg_preload_offset(self):
        return _bits(self.kernarg_preload, 7, 9)


@dataclasses.dataclass
class KernelArg:
    offset: int
    size: int
    value_kind: str
    name: str = ""
    address_space: str = ""


@dataclasses.dataclass
class Kernel:
    name: str
    descriptor: KernelDescriptor
    entry: int                   # virtual address of the first instruction
    args: list                   # [KernelArg], explicit and hidden, in metadata order
    kernarg_segment_size: int
    metadata: dict

    @property
    def explicit_args(self):
        return [a for a in self.args if not a.value_kind.startswith("hidden_")]


@dataclasses.dataclass
class CodeObject:
    arch: str
    kernels: dict                # name -> Kernel
    segments: list               # [(vaddr, bytes, memsz)] of the PT_LOAD segments
    text: tuple                  # (vaddr, size) of .text
    symbols: dict                # function name -> vaddr
    raw: bytes

    def kernel(self, name):
        if name not in self.kernels:
            raise CodeObjectError("no kernel %r in the code object" % name,
                                  hint="it has: " + ", ".join(sorted(self.kernels)))
        return self.kernels[name]


def _target_arch(target):
    # "amdgcn-amd-amdhsa--gfx1100" or "amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-"
    arch = target.rpartition("-")[2].split(":")[0]
    if arch not in ARCHS:
        raise CodeObjectError("the code object is for %s, which the emulator does not run" % arch,
                              hint="supported: " + ", ".join(sorted(ARCHS)))
    return arch


def _decode(value):
    if isinstance(value, bytes):
        return value.decode()
    if isinstance(value, dict):
        return {_decode(k): _decode(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_decode(v) for v in value]
    return value


def load(data):
    """Parses a code object (bytes) into a CodeObject; CodeObjectError if it is not one."""
    try:
        elf = ELFFile(io.BytesIO(data))
        if elf["e_machine"] not in ("EM_AMDGPU", EM_AMDGPU):
            raise CodeObjectError("not an AMDGPU ELF (machine %s)" % elf["e_machine"])
        metadata = None
        for section in elf.iter_sections():
            if section["sh_type"] != "SHT_NOTE":
                continue
            for note in section.iter_notes():
                if note["n_name"] == "AMDGPU" and note["n_type"] in (NT_AMDGPU_METADATA, "NT_AMDGPU_METADATA"):
                    desc = note["n_desc"]
                    metadata = _decode(msgpack.unpackb(desc if isinstance(desc, bytes) else desc.encode("latin-1"),
                                                       raw=True, strict_map_key=False))
        if metadata is None:
            raise CodeObjectError("the code object has no AMDGPU metadata note")
        arch = _target_arch(metadata.get("amdhsa.target", ""))

        segments = []
        for seg in elf.iter_segments():
            if seg["p_type"] == "PT_LOAD":
                segments.append((seg["p_vaddr"], seg.data(), seg["p_memsz"]))

        def read(vaddr, size):
            for base, blob, memsz in segments:
                if base <= vaddr and vaddr + size <= base + memsz:
                    chunk = blob[vaddr - base:vaddr - base + size]
                    return chunk + bytes(size - len(chunk))
            raise CodeObjectError("address 0x%x (+%d) is in no loadable segment" % (vaddr, size))

        symbols, kd_addr = {}, {}
        symtab = elf.get_section_by_name(".symtab") or elf.get_section_by_name(".dynsym")
        if symtab is None:
            raise CodeObjectError("the code object has no symbol table")
        for sym in symtab.iter_symbols():
            if sym["st_info"]["type"] == "STT_FUNC":
                symbols[sym.name] = sym["st_value"]
            elif sym.name.endswith(".kd"):
                kd_addr[sym.name] = sym["st_value"]
        text = elf.get_section_by_name(".text")
        if text is None:
            raise CodeObjectError("the code object has no .text section")

        kernels = {}
        for k in metadata.get("amdhsa.kernels", []):
            name = k[".name"]
            sym = k.get(".symbol", name + ".kd")
            if sym not in kd_addr:
                raise CodeObjectError("kernel %s: no descriptor symbol %s" % (name, sym))
            kd = KernelDescriptor.parse(read(kd_addr[sym], 64))
            args = [KernelArg(offset=a[".offset"], size=a[".size"], value_kind=a[".value_kind"],
                              name=a.get(".name", ""), address_space=a.get(".address_space", ""))
                    for a in k.get(".args", [])]
            kernels[name] = Kernel(name=name, descriptor=kd, entry=kd_addr[sym] + kd.entry_offset,
                                   args=args, kernarg_segment_size=k.get(".kernarg_segment_size", 0),
                                   metadata=k)
        return CodeObject(arch=arch, kernels=kernels, segments=segments,
                          text=(text["sh_addr"], text["sh_size"]), symbols=symbols, raw=bytes(data))
    except (ELFError, msgpack.UnpackException, ValueError, KeyError, TypeError) as e:
        if isinstance(e, CodeObjectError):
            raise
        raise CodeObjectError("not a readable AMDGPU code object: %s" % e) from e
