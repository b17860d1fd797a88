"""Output formats: text (colour on a TTY), json, sarif (2.1.0), github (workflow annotations)."""

from __future__ import annotations

from . import github, json_format, sarif, text

FORMATTERS = {"text": text.render, "json": json_format.render, "sarif": sarif.render, "github": github.render}
