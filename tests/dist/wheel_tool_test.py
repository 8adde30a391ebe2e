"""dist/wheel.py: the same files give the same wheel, byte for byte, whatever their timestamps;
its RECORD lists every file with its digest; metadata, extras and entry points as given."""

import base64
import hashlib
import os
import subprocess
import sys
import time
import zipfile

TOOL = os.path.join(os.environ.get("TEST_SRCDIR", ""), "hk_dsl", "dist", "wheel.py")


def pack(tmp_path, name, touch):
    src = tmp_path / "src"
    src.mkdir(exist_ok=True)
    (src / "a.py").write_text("A = 1\n")
    (src / "lib.so").write_bytes(b"\x7fELF...")
    os.chmod(src / "lib.so", 0o755)
    if touch:
        stamp = time.time() + 1000
        for f in src.iterdir():
            os.utime(f, (stamp, stamp))
    files = tmp_path / (name + ".files")
    files.write_text("pkg/a.py\t%s\npkg/lib.so\t%s\n" % (src / "a.py", src / "lib.so"))
    out = tmp_path / (name + ".whl")
    subprocess.run([sys.executable, TOOL, "--out=%s" % out, "--files=%s" % files, "--distribution=hk-x",
                    "--version=1.2.3", "--tag=cp311-cp311-manylinux_2_36_x86_64", "--requires=numpy>=1.26",
                    "--extra=torch:torch>=2.13", "--entry_point=console_scripts:hk-x = pkg.a:main"], check=True)
    return out


def test_reproducible_and_complete(tmp_path):
    one, other = pack(tmp_path, "one", False), pack(tmp_path, "other", True)
    assert one.read_bytes() == other.read_bytes()
    z = zipfile.ZipFile(one)
    names = z.namelist()
    assert names == sorted(names[:-4]) + names[-4:]  # the files, then METADATA, WHEEL, entry points, RECORD
    record = z.read("hk_x-1.2.3.dist-info/RECORD").decode().splitlines()
    listed = {line.split(",")[0]: line.split(",")[1:] for line in record}
    for name in names:
        if name.endswith("RECORD"):
            assert listed[name] == ["", ""]
            continue
        data = z.read(name)
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        assert listed[name] == ["sha256=" + digest, str(len(data))], name
    assert z.getinfo("pkg/lib.so").external_attr >> 16 & 0o777 == 0o755
    assert z.getinfo("pkg/a.py").external_attr >> 16 & 0o777 == 0o644
    metadata = z.read("hk_x-1.2.3.dist-info/METADATA").decode()
    assert "Requires-Dist: numpy>=1.26" in metadata
    assert 'Requires-Dist: torch>=2.13 ; extra == "torch"' in metadata and "Provides-Extra: torch" in metadata
    wheel = z.read("hk_x-1.2.3.dist-info/WHEEL").decode()
    assert "Root-Is-Purelib: false" in wheel and "Tag: cp311-cp311-manylinux_2_36_x86_64" in wheel
    assert z.read("hk_x-1.2.3.dist-info/entry_points.txt").decode() == "[console_scripts]\nhk-x = pkg.a:main\n\n"
