"""Input errors: one line naming the file, the line and the key path; the CLIs exit 2 on them."""

from __future__ import annotations


class InputError(Exception):
    def __init__(self, file: str, message: str, line: int | None = None, column: int | None = None,
                 key_path: str | None = None):
        self.file, self.message, self.line, self.column, self.key_path = file, message, line, column, key_path
        super().__init__(str(self))

    def __str__(self) -> str:
        where = self.file
        if self.line is not None:
            where += f":{self.line}" + (f":{self.column}" if self.column is not None else "")
        key = f" {self.key_path}:" if self.key_path else ""
        return printable(f"{where}:{key} {self.message}")


def printable(text: str) -> str:
    """One line, always: control characters from the input are shown escaped."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)
