"""What the engine plugins' end-to-end tests and examples share: tiny models written from scratch
(hk_engine.testing.models) and the float32 reference they are checked against
(hk_engine.testing.reference). They need transformers, tokenizers and safetensors, which the
engines depend on; nothing here is imported by the plugins themselves."""

import os

# A routing table that sends every op to hk wherever its kernel covers the call: what a CPU run
# (hk's interpreter or emulator) routes by, since the tables' speed measurements are for GPUs.
ALL_HK_ROUTES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "all_hk_routes.json")
