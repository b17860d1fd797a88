"""A payload checked strictly against a peer's own pydantic models: an unknown or a missing field fails.

Peers' models are lenient by default (pydantic ignores unknown fields, and fills unsent ones from defaults), so a
field the peer does not know, or a misspelt one, is dropped without a word. `problems()` walks the model's own
field declarations (pydantic v1 or v2) and its type hints, then also runs the model's own validation.
"""

from __future__ import annotations

import enum
import types
from typing import Annotated, Any, Literal, Union, get_args, get_origin, get_type_hints


def _fields(model: type) -> dict[str, tuple[str, bool, Any]]:
    """Field name -> (key on the wire, required, annotation), for pydantic v2 and v1 (`pydantic.v1`) models."""
    if hasattr(model, "model_fields"):  # v2 has resolved the annotations itself
        return {name: (f.alias or name, f.is_required(), f.annotation) for name, f in model.model_fields.items()}
    hints = get_type_hints(model)
    return {name: (f.alias, bool(f.required), hints[name]) for name, f in model.__fields__.items()}


def is_model(hint: Any) -> bool:
    return isinstance(hint, type) and (hasattr(hint, "model_fields") or hasattr(hint, "__fields__"))


def problems(model: type, payload: Any, where: str = "$", *, every_field: bool = False) -> list[str]:
    """Why `payload` is not exactly a `model`; [] when it is. `every_field`: each declared field must be sent
    explicitly (a request that leaves a field to the peer's default leaves that setting to the peer)."""
    found = _check(payload, model, where, every_field)
    if not found:
        try:
            model.model_validate(payload) if hasattr(model, "model_validate") else model.parse_obj(payload)
        except Exception as error:  # the model's own verdict, whatever its pydantic major version raises
            found.append(f"{where}: {model.__name__} refuses it: {error}")
    return found


def _check(value: Any, hint: Any, where: str, every_field: bool) -> list[str]:
    if hint is Any:
        return []
    origin = get_origin(hint)
    if origin is Annotated:
        return _check(value, get_args(hint)[0], where, every_field)
    if origin in (Union, types.UnionType):
        arms = [_check(value, arm, where, every_field) for arm in get_args(hint)]
        return [] if any(not a for a in arms) else min(arms, key=len)
    if hint is type(None):
        return [] if value is None else [f"{where}: {value!r} is not null"]
    if origin is Literal:
        return [] if value in get_args(hint) else [f"{where}: {value!r} is none of {list(get_args(hint))}"]
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        allowed = [m.value for m in hint]
        return [] if value in allowed else [f"{where}: {value!r} is none of {allowed}"]
    if is_model(hint):
        return _check_model(value, hint, where, every_field)
    if origin is dict:  # Dict[...] too
        key_hint, value_hint = get_args(hint) or (Any, Any)
        if not isinstance(value, dict):
            return [f"{where}: {type(value).__name__} where an object belongs"]
        return [p for k, v in value.items() for p in _check(k, key_hint, f"{where}.<key>", every_field)
                + _check(v, value_hint, f"{where}[{k!r}]", every_field)]
    if origin is list:
        (item_hint,) = get_args(hint) or (Any,)
        if not isinstance(value, list):
            return [f"{where}: {type(value).__name__} where an array belongs"]
        return [p for i, v in enumerate(value) for p in _check(v, item_hint, f"{where}[{i}]", every_field)]
    return _check_scalar(value, hint, where)


def _check_scalar(value: Any, hint: Any, where: str) -> list[str]:
    # JSON types, without the coercions pydantic allows ("10" for a float, 1 for a bool).
    accepted = {str: (str,), bool: (bool,), int: (int,), float: (int, float)}.get(hint)
    if accepted is None:
        return [f"{where}: the check does not know the annotation {hint!r}"]
    if isinstance(value, bool) and hint is not bool or not isinstance(value, accepted):
        return [f"{where}: {type(value).__name__} {value!r} where a {hint.__name__} belongs"]
    return []


def _check_model(value: Any, model: type, where: str, every_field: bool) -> list[str]:
    if not isinstance(value, dict):
        return [f"{where}: {type(value).__name__} where a {model.__name__} object belongs"]
    fields = _fields(model)
    keys = {key: name for name, (key, _, _) in fields.items()}
    found = [f"{where}.{k}: unknown to {model.__name__} (fields: {sorted(keys)})" for k in value if k not in keys]
    for key, required, hint in fields.values():
        if key not in value:
            if required or every_field:
                found.append(f"{where}.{key}: missing ({model.__name__} declares it"
                             f"{', required' if required else ''})")
            continue
        found += _check(value[key], hint, f"{where}.{key}", every_field)
    return found
