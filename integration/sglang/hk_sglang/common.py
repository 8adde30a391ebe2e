"""What the SGLang patches share."""

ENGINE = "sglang"


def counter(patch):
    return "%s.%s" % (ENGINE, patch)
