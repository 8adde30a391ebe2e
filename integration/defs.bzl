"""engine_py_test: a pytest file run inside an engine's environment against hk's wheels."""

load("//tests:defs.bzl", "TOOLCHAIN_DATA", "TOOLCHAIN_ENV")

_WHEELS = [
    "//dist:hk_dsl",
    "//dist:hk_engine",
]

def engine_py_test(name, src, engine, wheel, data = [], size = "large", toolchain = False, env = {}, pytest_args = [], **kwargs):
    """A test of an engine plugin, run by the engine's own interpreter (@<engine>_env) with
    hk-dsl, hk-engine and the plugin's wheel unpacked into its temporary directory.

    Args:
      name: the test's name.
      src: the pytest file.
      engine: "vllm" or "sglang" (the environment @<engine>_env).
      wheel: the plugin's wheel target.
      data: more files the test reads (a conftest.py beside it, a model, ...).
      size: the Bazel test size.
      toolchain: whether hk compiles kernels (HK_DEVICE=emu): adds the hermetic toolchain.
      env: more environment variables of the test.
      pytest_args: more arguments of pytest, after the file (["--capture=sys"]: what the test
        prints to sys.__stdout__ reaches the test's log, passed or failed).
      **kwargs: passed to py_test.

    Example:
        engine_py_test(name = "linear_test", src = "tests/linear_test.py", engine = "vllm",
                       wheel = "//dist:hk_vllm")
    """
    wheels = _WHEELS + [wheel]
    python = "@%s_env//:python" % engine
    native.py_test(
        name = name,
        srcs = ["//integration:run_in_env.py"],
        main = "//integration:run_in_env.py",
        args = ["--python=$(rootpath %s)" % python] +
               ["--wheel=$(rootpath %s)" % w for w in wheels] +
               ["$(rootpath %s)" % src] + pytest_args,
        data = [src, python] + wheels + data + (TOOLCHAIN_DATA + ["//hk/include:headers"] if toolchain else []),
        env = dict(TOOLCHAIN_ENV, **env) if toolchain else env,
        size = size,
        # The engine's interpreter is a wrapper around a virtualenv under this machine's
        # HK_CACHE_DIR, which no remote worker has; the result is still keyed by that
        # environment's path (its requirements' digest), so it may be cached.
        tags = kwargs.pop("tags", []) + ["no-remote-exec"],
        **kwargs
    )
