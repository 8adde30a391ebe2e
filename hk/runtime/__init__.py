"""hk's runtime: finding the toolchain, compiling, gating and launching code objects."""
