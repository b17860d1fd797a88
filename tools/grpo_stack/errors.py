"""Input errors: one line naming the file, the line and the key path; the CLIs exit 2 on them."""

from __future__ import annotations

# An error line stays readable whatever the input: a bad value is shown as a short excerpt, and the whole
# message is cut at MAX_MESSAGE characters (a 1.5 M-character string once produced 9.4 MB of output).
EXCERPT_CHARS = 60
MAX_MESSAGE = 400


class InputError(Exception):
    def __init__(self, file: str, message: str, line: int | None = None, column: int | None = None,
                 key_path: str | None = None):
        self.file, self.line, self.column, self.key_path = file, line, column, key_path
        self.message = clip(message, MAX_MESSAGE)
        super().__init__(str(self))

    def __str__(self) -> str:
        where = self.file
        if self.line is not None:
            where += f":{self.line}" + (f":{self.column}" if self.column is not None else "")
        key = f" {clip(self.key_path, MAX_MESSAGE)}:" if self.key_path else ""
        return printable(f"{where}:{key} {self.message}")


def printable(text: str) -> str:
    """One line, always: control characters from the input are shown escaped."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def clip(text: str, limit: int) -> str:
    text = str(text)
    return text if len(text) <= limit else f"{text[:limit]}… ({len(text)} characters)"


def excerpt(value: object, limit: int = EXCERPT_CHARS) -> str:
    """A bounded, printable quotation of a bad value for an error message."""
    try:
        text = value if isinstance(value, str) else repr(value)
    except ValueError:  # an int too long to print (Python's digit limit)
        text = f"<integer of {value.bit_length()} bits>"  # type: ignore[attr-defined]
    shown = printable(text[:limit])
    more = f"… ({len(text)} characters)" if len(text) > limit else ""
    return f"{shown!r}{more}" if isinstance(value, str) else f"{shown}{more}"
