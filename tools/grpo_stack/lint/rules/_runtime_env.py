"""The environment a Ray resource hands its own program: a RayJob's `runtimeEnvYAML` (its entrypoint's runtime
env) and each Serve application's `runtime_env` in a RayService's `serveConfigV2`, both held in the spec as YAML
text."""

from __future__ import annotations

from collections.abc import Iterator

from ...errors import InputError


def embedded_yaml(o, field: str) -> list | None:
    """The YAML documents a Ray resource's spec holds as text (`serveConfigV2`, `runtimeEnvYAML`), or None where
    the field is absent or not YAML."""
    spec = o.obj.get("spec") if isinstance(o.obj.get("spec"), dict) else {}
    text = spec.get(field)
    if not isinstance(text, str):
        return None
    # Imported here: the in-pod job gate imports every rule with only the standard library (no PyYAML).
    from ...safeyaml import load_documents

    try:
        return load_documents(text, o.name)
    except InputError:
        return None


def runtime_envs(o) -> Iterator[tuple[str, dict]]:
    """(spec field, runtime env) of a RayJob's entrypoint and of each RayService application."""
    if o.kind not in ("RayJob", "RayService"):
        return
    field = "runtimeEnvYAML" if o.kind == "RayJob" else "serveConfigV2"
    docs = embedded_yaml(o, field)
    if docs is None:
        return
    doc = docs[0] if docs and isinstance(docs[0], dict) else {}
    apps = doc.get("applications") if o.kind == "RayService" else [{"runtime_env": doc}]
    for app in apps if isinstance(apps, list) else []:
        runtime = app.get("runtime_env") if isinstance(app, dict) else None
        if isinstance(runtime, dict):
            yield field, runtime


def runtime_env_vars(o) -> Iterator[tuple[str, dict[str, str]]]:
    """(spec field, env_vars as strings) of a RayJob's runtime env and of each RayService application's."""
    for field, runtime in runtime_envs(o):
        env_vars = runtime.get("env_vars")
        if isinstance(env_vars, dict):
            yield field, {str(k): str(v) for k, v in env_vars.items() if isinstance(v, str | int | float)}


def runtime_env_packages(o) -> Iterator[tuple[str, str, list[str]]]:
    """(spec field, `pip` or `uv`, requirements) that each runtime env installs when its workers start: Ray's
    `pip` / `uv` field, a list or `{packages: [...]}`; a requirements file named by path is not read."""
    for field, runtime in runtime_envs(o):
        for key in ("pip", "uv"):
            value = runtime.get(key)
            packages = value.get("packages") if isinstance(value, dict) else value
            if isinstance(packages, list):
                yield field, key, [str(p) for p in packages if isinstance(p, str)]


def serve_llm_models(o) -> Iterator[tuple[str, str | None]]:
    """(model source, `engine_kwargs.revision` or None) of each Ray Serve LLM config (`ray.serve.llm`) in a
    RayService's `serveConfigV2`: `model_loading_config.model_source`, or without it `model_id`."""
    if o.kind != "RayService":
        return
    for llm in _llm_configs(embedded_yaml(o, "serveConfigV2") or []):
        loading = llm["model_loading_config"]
        source = loading.get("model_source") or loading.get("model_id")
        engine = llm.get("engine_kwargs") if isinstance(llm.get("engine_kwargs"), dict) else {}
        if isinstance(source, str):
            revision = engine.get("revision")
            yield source, revision if isinstance(revision, str) else None


def _llm_configs(node) -> Iterator[dict]:
    if isinstance(node, dict):
        if isinstance(node.get("model_loading_config"), dict):
            yield node
        for v in node.values():
            yield from _llm_configs(v)
    elif isinstance(node, list):
        for v in node:
            yield from _llm_configs(v)
