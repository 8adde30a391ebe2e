"""What the SGLang patches share."""

ENGINE = "sglang"


def counter(patch):
    return "%s.%s" % (ENGINE, patch)


def arguments(signature, args, kwargs):
    """A call's arguments by name, the defaults filled in."""
    bound = signature.bind(*args, **kwargs)
    bound.apply_defaults()
    return bound.arguments
