"""toolchains/engine_env.py: an environment built from pinned requirements (here a local wheel
with a console command, so no network is needed) under a temporary name and renamed into place,
its commands runnable from there; the same requirements again reuse it."""

import os
import subprocess
import sys
import zipfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import engine_env  # noqa: E402

DIST_INFO = "demo-1.0.dist-info"


def demo_wheel(path):
    """A wheel of one module and a console command `demo` that prints its interpreter's prefix."""
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("demo.py", "import sys\ndef main():\n    print(sys.prefix)\n")
        z.writestr(DIST_INFO + "/METADATA", "Metadata-Version: 2.1\nName: demo\nVersion: 1.0\n")
        z.writestr(DIST_INFO + "/WHEEL", "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
        z.writestr(DIST_INFO + "/entry_points.txt", "[console_scripts]\ndemo = demo:main\n")
        z.writestr(DIST_INFO + "/RECORD", "")
    return path


def test_a_built_environment_runs_its_commands_from_where_it_was_renamed(tmp_path):
    requirements = tmp_path / "requirements.txt"
    requirements.write_text(str(demo_wheel(tmp_path / "demo-1.0-py3-none-any.whl")) + "\n")
    root = tmp_path / "envs"
    env_dir = engine_env.build(str(root), "demo", str(requirements), sys.executable, log=open(os.devnull, "w"))
    assert os.path.basename(env_dir).startswith("demo-") and ".partial" not in env_dir
    assert not [d for d in os.listdir(root) if ".partial" in d]
    out = subprocess.run([os.path.join(env_dir, "bin", "demo")], stdout=subprocess.PIPE, universal_newlines=True,
                         check=True)
    assert os.path.realpath(out.stdout.strip()) == os.path.realpath(env_dir)
    assert env_dir in open(os.path.join(env_dir, "bin", "activate")).read()
    assert engine_env.build(str(root), "demo", str(requirements), sys.executable) == env_dir


def test_relocate_rewrites_only_text_files_that_name_the_old_directory(tmp_path):
    (tmp_path / "script").write_text("#!/old/bin/python\nprint(1)\n")
    (tmp_path / "other").write_text("#!/usr/bin/env python\n")
    (tmp_path / "binary").write_bytes(b"\0/old/bin\0")
    os.chmod(tmp_path / "script", 0o755)
    assert engine_env.relocate(str(tmp_path), "/old", "/new") == ["script"]
    assert (tmp_path / "script").read_text() == "#!/new/bin/python\nprint(1)\n"
    assert os.stat(tmp_path / "script").st_mode & 0o777 == 0o755
    assert (tmp_path / "binary").read_bytes() == b"\0/old/bin\0"
