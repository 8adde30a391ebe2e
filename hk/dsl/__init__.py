"""The language: @kernel, values and operators, the AST rewrite, control flow, and the
hk.arch / hk.lds / hk.math namespaces."""
