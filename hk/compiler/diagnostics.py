"""MLIR diagnostics (as hk._mlir returns them) as hk errors at the user's lines."""

from hk.errors import Location, VerifyError


def location_of(diagnostic):
    loc = diagnostic.get("location")
    if not loc:
        return None
    return Location(loc[0], loc[1], loc[2])


def format_diagnostic(diagnostic):
    """`file:line:col: severity: message` with its notes, one per line."""
    loc = location_of(diagnostic)
    text = "%s%s: %s" % ("%s: " % loc if loc else "", diagnostic["severity"], diagnostic["message"])
    for note in diagnostic.get("notes", ()):
        nloc = location_of(note)
        text += "\n  %snote: %s" % ("%s: " % nloc if nloc else "", note["message"])
    return text


def with_notes(diagnostic):
    """Its message, then each note on a line of its own with its place, as errors print them."""
    text = diagnostic["message"]
    for note in diagnostic.get("notes", ()):
        loc = location_of(note)
        text += "\n  note: %s%s" % ("%s: " % loc if loc else "", note["message"])
    return text


def raise_errors(diagnostics, what, hint=None):
    """Raises a VerifyError at the first error's location, carrying every diagnostic."""
    errors = [d for d in diagnostics if d["severity"] == "error"]
    if not errors:
        raise VerifyError("%s failed without a diagnostic" % what, diagnostics=diagnostics)
    first = errors[0]
    notes = [(location_of(n), n["message"]) for n in first.get("notes", ())]
    for other in errors[1:]:
        notes.append((location_of(other), "error: " + other["message"]))
    raise VerifyError(first["message"], location=location_of(first), notes=notes, hint=hint,
                      diagnostics=diagnostics)
