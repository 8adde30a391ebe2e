"""Run at the start of every Python process of a test that has this file beside it (its directory
is on PYTHONPATH): the torchvision stand-in, before SGLang's modules import torchvision."""

import torchvision_standin

torchvision_standin.install()
