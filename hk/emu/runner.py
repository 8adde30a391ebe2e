"""Launching a kernel on the emulator: device memory, the kernarg segment (explicit and hidden
arguments), the dispatch packet, the user SGPRs the descriptor asks for, and the copy back."""

import hashlib
import os
import struct

import numpy as np

from hk.emu import _native, codeobject, decode, disasm
from hk.emu.args import ByValue, Zeros
from hk.emu.errors import CodeObjectError, EmuError, HazardError, MemoryFault

_CACHE = {}       # sha256 of a code object -> (CodeObject, Program, pc -> index)
_UNKNOWN = {}     # sha256 -> [(pc, text, why)] of what decoded to __unknown
_LISTING = {}     # sha256 -> [(pc, text, operation)] per instruction index


def load(code_object):
    """(CodeObject, Program, index_of_pc) for bytes or a path; decoded once per content."""
    if isinstance(code_object, (str, os.PathLike)):
        with open(code_object, "rb") as f:
            data = f.read()
    elif isinstance(code_object, (bytes, bytearray, memoryview)):
        data = bytes(code_object)
    else:
        raise CodeObjectError("a code object is bytes or a path, not %s" % type(code_object).__name__)
    key = hashlib.sha256(data).hexdigest()
    if key not in _CACHE:
        co = codeobject.load(data)
        info = codeobject.ARCHS[co.arch]
        lines = disasm.disassemble(data, co.arch)
        family = _native.FAMILIES[info["family"]]
        try:
            program, index_of_pc, unknown, listing = decode.decode(lines, family, info["family"].startswith("cdna"),
                                                                   co.text)
        except ValueError as e:
            raise CodeObjectError("cannot decode the code object: %s" % e) from None
        _CACHE[key] = (co, program, index_of_pc)
        _UNKNOWN[key] = unknown
        _LISTING[key] = listing
    return _CACHE[key]


def listing(code_object):
    """[(pc, text, operation)] of a code object's instructions, by the index a profile's streams use."""
    data = _bytes_of(code_object)
    load(data)
    return _LISTING[hashlib.sha256(data).hexdigest()]


def _bytes_of(code_object):
    if isinstance(code_object, (str, os.PathLike)):
        with open(code_object, "rb") as f:
            return f.read()
    return bytes(code_object)


def unsupported(code_object):
    """[(pc, text, why)] of the instructions of a code object the emulator cannot run."""
    data = _bytes_of(code_object)
    load(data)
    return list(_UNKNOWN[hashlib.sha256(data).hexdigest()])


def _as_array(value):
    """(numpy view, is_writable_back) of a buffer argument; torch CPU tensors share memory."""
    if isinstance(value, np.ndarray):
        if not value.flags["C_CONTIGUOUS"]:
            raise EmuError("array arguments must be C-contiguous", hint="pass np.ascontiguousarray(x)")
        return value
    mod = type(value).__module__
    if mod.startswith("torch"):
        if value.device.type != "cpu":
            raise EmuError("torch tensors must be on the CPU for the emulator")
        if not value.is_contiguous():
            raise EmuError("tensor arguments must be contiguous", hint="pass x.contiguous()")
        t = value.detach()
        try:
            return t.numpy()
        except TypeError:                       # bf16 and friends: view the bytes
            import torch
            return t.view(torch.uint8).numpy() if t.element_size() == 1 else t.view(torch.int16).numpy() \
                if t.element_size() == 2 else t.view(torch.int32).numpy()
    if isinstance(value, (bytes, bytearray)):
        return np.frombuffer(bytearray(value), dtype=np.uint8)
    raise EmuError("cannot pass %s as a buffer argument" % type(value).__name__,
                   hint="pass a numpy array, a CPU torch tensor or bytes")


def _pack_scalar(value, size, name):
    if isinstance(value, np.generic):
        raw = value.tobytes()
        if len(raw) > size:
            raise EmuError("argument %s: a %d-byte scalar does not fit %d bytes" % (name, len(raw), size))
        return raw + bytes(size - len(raw))
    if isinstance(value, bool):
        value = int(value)
    if isinstance(value, int):
        if value < 0:
            value += 1 << (8 * size)
        if not 0 <= value < 1 << (8 * size):
            raise EmuError("argument %s: %d does not fit %d bytes" % (name, value, size))
        return value.to_bytes(size, "little")
    if isinstance(value, float):
        if size == 4:
            return struct.pack("<f", value)
        if size == 8:
            return struct.pack("<d", value)
        if size == 2:
            return struct.pack("<e", value)
    if isinstance(value, (bytes, bytearray)) and len(value) == size:
        return bytes(value)
    raise EmuError("argument %s: cannot pass %r as a %d-byte value" % (name, value, size))


def _prepare(code_object, kernel_name, grid, block, args, arch, shared_mem):
    """(program, memory, family, launch dict, the buffers to copy back, every buffer's (address,
    bytes)) of a launch."""
    co, program, index_of_pc = load(code_object)
    if arch is not None and arch != co.arch:
        raise CodeObjectError("the code object is for %s, not %s" % (co.arch, arch))
    k = co.kernel(kernel_name)
    kd = k.descriptor
    info = codeobject.ARCHS[co.arch]
    grid = (grid,) if isinstance(grid, int) else tuple(grid)
    block = (block,) if isinstance(block, int) else tuple(block)
    if not 1 <= len(grid) <= 3 or not 1 <= len(block) <= 3:
        raise EmuError("grid and block have one to three dimensions")
    grid = tuple(int(g) for g in grid) + (1,) * (3 - len(grid))
    block = tuple(int(b) for b in block) + (1,) * (3 - len(block))
    if any(int(g) < 1 for g in grid) or any(int(b) < 1 for b in block):
        raise EmuError("grid and block dimensions must be at least 1")
    nthreads = block[0] * block[1] * block[2]
    max_wg = k.metadata.get(".max_flat_workgroup_size", 1024)
    if nthreads > max_wg:
        raise EmuError("a block of %d work-items exceeds the kernel's maximum of %d" % (nthreads, max_wg))

    mem = _native.Memory()
    for vaddr, blob, memsz in co.segments:
        base = mem.alloc(memsz, _native.CODE_BASE + vaddr)
        if blob:
            mem.write(base, np.frombuffer(blob, dtype=np.uint8))

    explicit = k.explicit_args
    if len(args) != len(explicit):
        raise EmuError("kernel %s takes %d arguments, %d given" % (kernel_name, len(explicit), len(args)))
    # Rounded up to 64 bytes, as a runtime's kernarg allocation is: the compiler reads the last
    # arguments with wide scalar loads (s_load_b128 at the end of a 0x1bc-byte segment).
    kernarg_size = -(-max(k.kernarg_segment_size, kd.kernarg_size, 256) // 64) * 64
    kernarg = bytearray(kernarg_size)
    copy_back = []
    buffers = []

    def alloc(value):
        if isinstance(value, Zeros):
            addr = mem.alloc(max(value.nbytes, 1))
            buffers.append((addr, value.nbytes))
            return addr
        arr = _as_array(value)
        nbytes = arr.nbytes
        addr = mem.alloc(max(nbytes, 1))
        buffers.append((addr, nbytes))
        if nbytes:
            mem.write(addr, arr.reshape(-1).view(np.uint8))
        if arr.flags["WRITEABLE"]:
            copy_back.append((addr, arr))
        return addr

    for value, arg in zip(args, explicit):
        name = arg.name or "#%d" % explicit.index(arg)
        if isinstance(value, ByValue):
            raw = bytes(value.pack(alloc))
            if len(raw) != arg.size:
                raise EmuError("argument %s: %d bytes packed for a %d-byte argument" % (name, len(raw), arg.size))
            kernarg[arg.offset:arg.offset + arg.size] = raw
        elif arg.value_kind == "global_buffer" or (arg.value_kind == "by_value" and arg.address_space == "global"):
            if value is None:
                addr = 0
            elif isinstance(value, int):
                addr = value                       # a raw device address
            else:
                addr = alloc(value)
            kernarg[arg.offset:arg.offset + arg.size] = addr.to_bytes(8, "little")[:arg.size]
        else:
            kernarg[arg.offset:arg.offset + arg.size] = _pack_scalar(value, arg.size, name)

    dispatch = mem.alloc(64)
    queue = mem.alloc(256)
    kernarg_addr = mem.alloc(len(kernarg))
    hidden = {
        "hidden_block_count_x": grid[0], "hidden_block_count_y": grid[1], "hidden_block_count_z": grid[2],
        "hidden_group_size_x": block[0], "hidden_group_size_y": block[1], "hidden_group_size_z": block[2],
        "hidden_remainder_x": 0, "hidden_remainder_y": 0, "hidden_remainder_z": 0,
        "hidden_grid_dims": 1 + (grid[1] * block[1] > 1 or grid[2] * block[2] > 1) + (grid[2] * block[2] > 1),
        "hidden_dynamic_lds_size": shared_mem, "hidden_private_base": _native.PRIVATE_HI,
        "hidden_shared_base": _native.SHARED_HI, "hidden_queue_ptr": queue,
    }
    for arg in k.args:
        if arg.value_kind in hidden:
            kernarg[arg.offset:arg.offset + arg.size] = int(hidden[arg.value_kind]).to_bytes(8, "little")[:arg.size]
    mem.write(kernarg_addr, np.frombuffer(bytes(kernarg), dtype=np.uint8))
    kd_addr = _native.CODE_BASE + k.entry - kd.entry_offset
    packet = struct.pack("<HHHHHHIIIIIQQQQ", 0, 3, block[0], block[1], block[2], 0,
                         grid[0] * block[0], grid[1] * block[1], grid[2] * block[2],
                         kd.private_segment_fixed_size, kd.group_segment_fixed_size + shared_mem,
                         kd_addr, kernarg_addr, 0, 0)
    mem.write(dispatch, np.frombuffer(packet, dtype=np.uint8))

    values = {"private_segment_buffer": [0, 0, 0, 0], "dispatch_ptr": [dispatch & 0xFFFFFFFF, dispatch >> 32],
              "queue_ptr": [queue & 0xFFFFFFFF, queue >> 32],
              "kernarg_segment_ptr": [kernarg_addr & 0xFFFFFFFF, kernarg_addr >> 32],
              "dispatch_id": [0, 0], "flat_scratch_init": [0, 0],
              "private_segment_size": [kd.private_segment_fixed_size]}
    user = []
    for name, count in kd.user_sgprs():
        user += values[name][:count]
    if kd.kernarg_preload_length:
        start = kd.kernarg_preload_offset * 4
        words = np.frombuffer(bytes(kernarg[start:start + 4 * kd.kernarg_preload_length]), dtype="<u4")
        user += [int(x) for x in words]
    user = (user + [0] * kd.user_sgpr_count)[:max(kd.user_sgpr_count, len(user))]

    if k.entry not in index_of_pc:
        raise CodeObjectError("kernel %s: its entry 0x%x is not an instruction" % (kernel_name, k.entry))
    wave = 32 if (kd.wavefront_size32 and info["wave"] == 32) else 64
    if info["wave"] == 64:
        wave = 64
    nvgpr = int(k.metadata.get(".vgpr_count", 256)) + int(k.metadata.get(".agpr_count", 0))
    launch = {
        "entry": index_of_pc[k.entry], "grid": list(grid), "block": list(block), "wave_size": wave,
        "user_sgprs": [int(u) & 0xFFFFFFFF for u in user], "workgroup_id": list(kd.workgroup_id_enabled),
        "workgroup_info": kd.workgroup_info_enabled, "private_segment": kd.enable_private_segment,
        "packed_tid": info["packed_tid"], "vgpr_workitem_id": kd.vgpr_workitem_id,
        "lds_bytes": kd.group_segment_fixed_size + shared_mem,
        "private_bytes": kd.private_segment_fixed_size + (16384 if k.metadata.get(".uses_dynamic_stack") else 0),
        "nvgpr": min(512, nvgpr + 8),
        "float_denorm_mode_32": kd.float_denorm_mode_32,
    }
    return program, mem, _native.FAMILIES[info["family"]], launch, copy_back, buffers


def _native_errors(call):
    """`call()`, with the core's exceptions as hk.emu's."""
    try:
        return call()
    except _native.Hazard as e:
        raise HazardError(str(e)) from None
    except _native.MemFault as e:
        raise MemoryFault(str(e)) from None
    except _native.Fault as e:
        raise EmuError(str(e)) from None


def run(code_object, kernel_name, grid, block, args, *, arch=None, hazards=True, random_order_seed=None,
        shared_mem=0, max_instructions=2_000_000_000):
    program, mem, family, launch, copy_back, _ = _prepare(code_object, kernel_name, grid, block, args, arch,
                                                       shared_mem)
    executed = _native_errors(lambda: _native.run(
        program, mem, family, kernel_name, launch, bool(hazards), random_order_seed is not None,
        int(random_order_seed or 0), int(max_instructions)))
    for addr, arr in copy_back:
        if arr.nbytes:
            mem.read_into(addr, arr.reshape(-1).view(np.uint8))
    return executed


def profile(code_object, kernel_name, grid, block, args, *, workgroups, arch=None, hazards=True, shared_mem=0,
            lds_banks=32, lds_bank_bytes=4, line_bytes=128, max_instructions=2_000_000_000, prefix=0):
    """(executed, [per workgroup, per wave: (n, 3) int32 stream], [per workgroup: (lines read,
    lines written)], [(address, bytes) of each buffer]) of the listed workgroups (see
    hk.emu.profile); the buffers are not copied back."""
    program, mem, family, launch, _, buffers = _prepare(code_object, kernel_name, grid, block, args, arch, shared_mem)
    options = {"workgroups": [list(map(int, g)) for g in workgroups], "lds_banks": int(lds_banks),
               "lds_bank_bytes": int(lds_bank_bytes), "line_bytes": int(line_bytes),
               "max_instructions": int(max_instructions), "prefix": int(prefix)}
    executed, streams, lines = _native_errors(lambda: _native.profile(
        program, mem, family, kernel_name, launch, bool(hazards), options))
    waves = len(streams) // max(1, len(workgroups))
    return executed, [streams[i * waves:(i + 1) * waves] for i in range(len(workgroups))], lines, buffers
