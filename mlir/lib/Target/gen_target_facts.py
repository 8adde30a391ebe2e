"""Write hk/target/targets.json as a C++ table (TargetFacts.inc) for the passes.

    python3 gen_target_facts.py targets.json TargetFacts.inc
"""

import json
import sys


def cpp_bool(value):
    return "true" if value else "false"


def main(argv):
    src, out = argv[1], argv[2]
    with open(src) as f:
        facts = json.load(f)
    lines = ["// Generated from hk/target/targets.json by gen_target_facts.py. Do not edit.", ""]
    for arch in sorted(facts["targets"]):
        t = facts["targets"][arch]
        shapes = ", ".join(
            '{"%s", "%s", "%s", %d, %d, %d}' % (s["a"], s["b"], s["acc"], s["m"], s["n"], s["k"])
            for s in t["mma_shapes"])
        lines.append(
            'HK_TARGET("{arch}", "{family}", {wave}, {vgprs}, {agprs}, {per_simd}, {granule}, '
            '{sgprs}, {waves}, {lds}, {wg}, "{matrix}", {async_lds}, "{b128}", "{tr}", "{waitcnt}", '
            '"{fp8}", {{{shapes}}})'.format(
                arch=arch, family=t["family"], wave=t["wave_size"], vgprs=t["max_vgprs"],
                agprs=t["max_agprs"], per_simd=t["vgprs_per_simd"], granule=t["vgpr_granule"],
                sgprs=t["max_sgprs"], waves=t["max_waves_per_simd"], lds=t["lds_bytes"],
                wg=t["max_workgroup_size"], matrix=t["matrix"],
                async_lds=cpp_bool(t["async_global_to_lds"]), b128=t["lds_read_b128"],
                tr=t["lds_transpose_read"] or "",
                waitcnt=t["waitcnt"], fp8=t["fp8_format"] or "", shapes=shapes))
    lines.append("")
    with open(out, "w") as f:
        f.write("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
