"""What the vLLM patches share."""

ENGINE = "vllm"


def counter(patch):
    return "%s.%s" % (ENGINE, patch)
