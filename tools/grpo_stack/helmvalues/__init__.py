"""Values as Helm's command line gives them: `-f` layers and `--set`, `--set-string`, `--set-file`, `--set-json`,
`--set-literal`, with Helm 4's own grammar and order, for grpo-lint and grpo-render."""

from .options import (
    SET_FLAGS,
    ValueOptions,
    add_value_options,
    command_line_layers,
    split_releases,
    value_options,
)

__all__ = ["SET_FLAGS", "ValueOptions", "add_value_options", "command_line_layers", "split_releases",
           "value_options"]
