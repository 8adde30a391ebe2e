// The documentation root: the dialect with its types and ops, and the passes.
include "hk/HKOps.td"
include "hk/HKPasses.td"
