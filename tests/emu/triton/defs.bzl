"""triton_code_object: one kernel of the Triton corpus compiled ahead of time for one target."""

def triton_code_object(name, spec, arch):
    """Runs Triton's compiler on kernels.SPECS[spec] for `arch`, as a cached build action.

    Outputs <spec>.<arch>.co (the code object) and <spec>.<arch>.json (the kernel's name, waves
    and dynamic LDS bytes). Triton's cache lives in the action's output directory, not HOME.

    Args:
      name: the target.
      spec: a key of SPECS in kernels.py.
      arch: gfx1100, gfx1201, gfx942 or gfx950.

    Example:
        triton_code_object(name = "vector_add_gfx1100", spec = "vector_add", arch = "gfx1100")
    """
    base = "%s.%s" % (spec, arch)
    native.genrule(
        name = name,
        outs = [base + ".co", base + ".json"],
        cmd = "$(execpath :compile) --spec=%s --arch=%s --out=$(location %s.co) --meta=$(location %s.json)" %
              (spec, arch, base, base),
        tools = [":compile"],
        message = "Compiling the Triton kernel %s for %s" % (spec, arch),
    )
