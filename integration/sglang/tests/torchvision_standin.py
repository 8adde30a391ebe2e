"""SGLang's modules import torchvision (its vision models' transforms), which this CPU environment
cannot have: the index has no CPU build of it, and the CUDA one replaces torch. install() puts a
stand-in for the names they import in sys.modules. conftest.py installs it in the test's process;
sitecustomize.py, where a test has it, in every Python process the test starts (SGLang's
scheduler and detokenizer import those modules before anything of hk runs)."""

import enum
import importlib.machinery
import sys
import types


def install():
    """SGLang's config modules import torchvision.transforms (for vision models only). A stand-in
    in sys.modules serves those imports; transformers must have decided that torchvision is
    absent before it exists (it caches the answer), or it would import torchvision.io."""
    if "torchvision" in sys.modules:
        return
    from transformers.utils import import_utils

    assert not import_utils.is_torchvision_available()
    import_utils.is_torchvision_v2_available()

    class InterpolationMode(enum.Enum):
        NEAREST, NEAREST_EXACT, BILINEAR, BICUBIC = "nearest", "nearest-exact", "bilinear", "bicubic"
        BOX, HAMMING, LANCZOS = "box", "hamming", "lanczos"

    def missing(module_name):
        def __getattr__(attr):
            raise AttributeError("torchvision is not installed (a stand-in has no %s.%s)" % (module_name, attr))
        return __getattr__

    modules = {}
    for name in ("torchvision", "torchvision.transforms", "torchvision.transforms.functional",
                 "torchvision.transforms.v2", "torchvision.transforms.v2.functional"):
        package = not name.endswith("functional")
        module = types.ModuleType(name)
        module.__spec__ = importlib.machinery.ModuleSpec(name, None, is_package=package)
        if package:
            module.__path__ = []
        module.__getattr__ = missing(name)
        if name != "torchvision":
            module.InterpolationMode = InterpolationMode
            parent, _, leaf = name.rpartition(".")
            setattr(modules[parent], leaf, module)
        modules[name] = sys.modules[name] = module
    modules["torchvision"].__version__ = "0.0.0+standin"
