"""GRPO201 literal-secret."""

from __future__ import annotations

import base64
import binascii
import posixpath
import re
from collections.abc import Callable, Iterator

from ...apivalidation.objects import sops_ciphertext
from ..finding import Hit, Severity
from ..shell import command_name, command_words, commands_in, script_in, scripts
from ._credentials import CODE_READ, config_lines, embedded_pairs, flag_values, real_value, secret_name
from ._objects import containers, custom_resource
from ._runtime_env import runtime_env_vars

CODE = "GRPO201"
NAME = "literal-secret"
SEVERITY = Severity.ERROR
CATEGORY = "security"
SUMMARY = "A credential is written as a literal value instead of a Secret reference."
DOC = """## What it does
Looks for credentials in two places: any string in the values that looks like a token (`hf_...`, `AKIA...`,
`ghp_...`, `sk-...`, `xox?-...`, a PEM private key), and any container env var whose name contains TOKEN (as a word
or a word's end, not the start of a longer one: `MAX_INPUT_TOKENS` is a count, `TOKENAGGREGATION` a pooling mode),
SECRET, PASSWORD or KEY and that has a literal `value` instead of `valueFrom.secretKeyRef` — an empty string
included: a pod that starts with an empty credential fails authentication hours into the run (an empty Hub token,
`HF_TOKEN` or `HUGGING_FACE_HUB_TOKEN`, is a warning: the Hub serves public repositories without one). A value that
cannot be a credential (a switch such as `true`, an absolute file path naming a mounted key) is not reported; a
placeholder (`$HF_TOKEN`, `<your-token>`) is a warning: filling it in would put the credential in the pod spec. A
credential in `global.job.extraEnv` is reported once, at its line in the values file (not at each Ray pod the chart
copies it into), with the Secret to create for that variable and the `valueFrom.secretKeyRef` that replaces its
`value`.
Container `command`/`args` and the commands of inline scripts are read for credential flags with a literal value
(`--api-key sk-…`, `--password=…`, `--redis-password …`, `--hf-token hf_…`, `--token=…`; a `$(VAR)` / `$VAR`
reference is what it should be), for credential-shaped values of credential-named keys inside one argument (a
connection string: `--store=endpoint:…,access_key:…`, `user=…;password=…`; code that reads the value, such as
`token=os.environ.get('HF_TOKEN')` in a Python snippet, is not one), and for token-shaped words; so are
KubeRay `rayStartParams` (`redis-password`) and any custom-resource field named for a credential that holds a
literal `value` (`redisPassword: {value: …}`).
A custom resource's own spec field named for a credential (`options: {fs.oss.accessKeySecret: …}`, `auth.token`)
is an error when its value is shaped like a credential: not a name a reference would hold (lower-case letters,
digits, `-` and `.` only), a path or URL, a placeholder or a switch.
ConfigMaps are read key by key and line by line: a credential-named key or config line (`password: …`,
`api_key = …`, redis `requirepass …`) with a real value, or a token-shaped string, is an error; a line whose value
is code that reads the credential from elsewhere (`c.OAuthenticator.client_secret = open(PATH).read()`) is not,
unless it falls back to a literal (`os.getenv('CLIENT_SECRET', 'ef28…')`).
Secret objects in the set are read key by key (except in a file named as an example of the user's own Secret,
`secret.example.yaml`, `secrets.yaml.example`, `secret.yaml.template`, whose values stand for the user's): a
token-shaped or other real value is an error (the credential is in the manifest), except a connection setting kept
beside it (a key naming a database, host, port, region, bucket, endpoint, schema, or the server's URI or URL:
`POSTGRES_DB`, `REDIS_HOST`, `MLFLOW_TRACKING_URI`; an OAuth client's, tenant's or project's id, a callback or
redirect address, a list of admin or allowed users: `ClientID`, `TenantID`, `OAuthCallBack`, `AdminUsers`, camel
case read as words; a URL carrying a password is still one), a value that is a switch (`true`, `off`), and a
settings document (a JSON or YAML mapping, e.g. a connection's endpoints and prefix) with no credential in it: no
key named for one with a real value, no token-shaped string, no URL with a password; an empty value is an error in
the chart's own output (a warning on other manifests, where it is a blank to fill in, and only where something in
the set starts with that key: a pod that reads the whole Secret, or the key with a `secretKeyRef` that is not
`optional`, else, where no pod reads the Secret, another object naming it; a key every reader marks `optional: true`
may stay empty, and a template nothing in the set mounts starts nothing); a placeholder (`<your-token>`,
`CHANGE_ME`, `xxx`, a `${HF_TOKEN}` base64-encoded under `data`) is a warning to fill it in out of band, not a leak.
A `stringData` value that is one shell variable (`${HF_TOKEN}`) is not reported: envsubst fills it from the user's
shell when the file is applied, so the credential is in no file.
A Secret *name* that is itself a token — a long hex or mixed letter-and-digit run with no words in it
(`e3b0c44298fc1c149afbf4c8996fb92427ae41e4`: the token pasted where the name goes) — is reported wherever a
name is written: `global.secrets.*.name` and any `secretKeyRef` in the values; a Secret's own name,
`secretKeyRef`, `envFrom.secretRef`, secret volumes and `imagePullSecrets` in manifests.

## Why is this bad?
A literal in a pod spec is stored in etcd and readable by anyone with `get pod` in the namespace; on the
predecessor's sleep-infinity utility pod the HF token sat there for the life of the cluster.

## Example
```yaml
global:
  job:
    trainer:
      project: hf_AbCdEfGhIjKlMnOpQrStUvWxYz012345
```
Use instead:
```yaml
global:
  secrets:
    hfToken: {name: hf-token, key: HF_TOKEN}
```

## Fix
Create the Secret out of band (`kubectl create secret generic hf-token --from-literal=HF_TOKEN=...`) and
reference it by name under `global.secrets`.
"""

TOKEN_PATTERNS = {
    "Hugging Face token": re.compile(r"\bhf_[A-Za-z0-9]{20,}\b"),
    "AWS access key id": re.compile(r"\b(AKIA|ASIA)[0-9A-Z]{16}\b"),
    "GitHub token": re.compile(r"\bgh[pousr]_[A-Za-z0-9]{30,}\b"),
    "OpenAI-style API key": re.compile(r"\bsk-[A-Za-z0-9_-]{20,}\b"),
    "Slack token": re.compile(r"\bxox[abposr]-[A-Za-z0-9-]{10,}\b"),
    "private key": re.compile(r"-----BEGIN ([A-Z]+ )?PRIVATE KEY-----"),
}
# Values that say "fill me in": templates never rendered, angle-bracket hints, conventional stand-ins.
PLACEHOLDER = re.compile(r"^\s*(<[^<>]*>|\$\{?[A-Za-z_][A-Za-z0-9_]*\}?|\{\{.*\}\}|x{3,}|\*{3,}"
                         r"|(change|replace|fill)[-_ ]?(me|it|this|with|in)([-_ ][\w-]*)?|todo|tbd|placeholder"
                         r"|your[-_ ].*[-_ ]here"
                         r"|(replace|change|fill|insert|enter|put|paste)[-_ ]+((with|in)[-_ ]+)?your[-_ ][\w-]*"
                         r"|your[-_ ][\w-]*(token|key|password|secret|credentials?)"
                         r"|dummy)\s*$", re.IGNORECASE)
# TOKEN as the start of a longer word is not a credential: TOKENS is a count (TGI's MAX_INPUT_TOKENS, a
# TOKENS_PER_STEP), TOKENIZER a model part, TOKENAGGREGATION a pooling mode.
# PASS as a word of its own is a password (RABBITMQ_DEFAULT_PASS, DB_PASS), not BYPASS or PASSTHROUGH.
SENSITIVE_ENV = re.compile(r"TOKEN(?![A-Z])|SECRET|PASSWORD|PASSWD|(?<![A-Z])PASS(?![A-Z])|KEY|CREDENTIAL",
                           re.IGNORECASE)
# Env names that contain KEY but hold no secret.
# Literal values that cannot be a credential: a switch (`RAY_ENABLE_K8S_TOKEN_AUTH: "true"`), an absolute file
# path (`RAY_TLS_SERVER_KEY: /etc/ray/tls/tls.key`: where a mounted key is, not the key), an object-store URL, or
# a relative path to a file (`MODEL_KEY: models/ranker.pkl`: an object key, not a key that opens anything), or the
# stand-in an OpenAI client is given for a server that checks no key (vLLM's docs: `EMPTY`; llama.cpp's server:
# `sk-no-key-required`; `local`, `not-needed`, `dummy-key`, `fake-token`).
NOT_A_CREDENTIAL = re.compile(r"^\s*(true|false|yes|no|on|off|enabled?|disabled?|/[^\s:]*|(s3|gs|az|abfss?)://[^\s@]+"
                              r"|[\w.-]+(/[\w.-]+)+\.[A-Za-z][A-Za-z0-9]{0,5}"
                              r"|empty|local|unused|(sk-)?no-?key(-required)?|not[-_]?(needed|required|used)"
                              r"|(dummy|fake)([-_]?(api[-_]?)?(key|token|secret))?)\s*$",
                              re.I)
NOT_SECRET_ENV = re.compile(r"^(.*_)?(KEY_?PATH|KEY_FILE|PUBLIC_KEY|API_KEY_NAME|SECRET_NAME|SECRET_NAMESPACE"
                            r"|TOKENIZER.*)$", re.I)
# A certificate is public: a Secret's tls.crt / ca.crt is not a leaked credential (its private key is).
CERTIFICATE_ONLY = re.compile(r"^\s*(-----BEGIN CERTIFICATE-----[^-]*-----END CERTIFICATE-----\s*)+$")


# A run of 32+ hex digits, or 24+ letters and digits mixing both: no Secret name a person chooses looks so.
TOKEN_LIKE_NAME = re.compile(r"(^|-)([0-9a-f]{32,}|(?=[a-z0-9]*[0-9])(?=[a-z0-9]*[a-z])[a-z0-9]{24,})(-|$)")
SECRET_NAME_PATH = re.compile(r"(^|\.)(secrets\.[^.]+|secretKeyRef|secretRef)\.name$|\.secret\.secretName$"
                              r"|(^|\.)imagePullSecrets\.\d+\.name$")


def token_like_name(name: str) -> bool:
    return bool(TOKEN_LIKE_NAME.search(name))


def _names_a_secret(path: str) -> bool:
    # every branch ends so and names a secret
    return path.endswith(("name", "Name")) and "ecret" in path and SECRET_NAME_PATH.search(path) is not None


def _secret_names(ctx) -> Iterator[Hit]:
    if ctx.has_values:
        for path, text in ctx.value_strings():
            if _names_a_secret(path) and token_like_name(text):
                yield Hit(path, f"the Secret name {_mask(text)} looks like a token, not a name: the credential is "
                          "written in the values (and in every pod spec that references it)")
        return  # the rendered objects repeat the values' names
    for o in ctx.objects:
        for path, text in ctx.object_strings(o):
            named = (o.kind == "Secret" and path == "metadata.name") or _names_a_secret(path)
            if named and token_like_name(text):
                yield Hit(path, f"{o.kind} {o.name}: the Secret name {_mask(text)} looks like a token, not a name "
                          "(stored in clear in the object)", obj=o)


def check(ctx) -> Iterator[Hit]:
    seen: set[str] = set()
    yield from _secret_names(ctx)
    if ctx.has_values:
        for path, text in ctx.value_strings():
            kind = _token_kind(text)
            if kind:
                seen.add(text)
                yield Hit(path, f"looks like a {kind} written in the values ({_mask(text)})")
    for o in ctx.of_kind("Secret"):
        if not ctx.has_values and TEMPLATE_FILE.search(posixpath.basename(o.template)):
            continue  # a repository's template for the user's own Secret: its values are the blanks to fill in
        yield from _secret_values(o, blank_is_error=ctx.has_values,
                                  referenced=lambda key, o=o: ctx.has_values or _needs_key(ctx, o, key))
    # The values' own tokens are reported at their keys above, not again where the chart renders them.
    fresh = [*_command_lines(ctx), *_crd_fields(ctx), *_configmaps(ctx)] if not seen else []
    yield from fresh
    written: set[tuple[str, str]] = set()
    yield from _extra_env(ctx, seen, written)
    yield from _env_literals(ctx, seen, written)
    yield from _runtime_env_literals(ctx, seen)


def _extra_env(ctx, seen: set[str], written: set[tuple[str, str]]) -> Iterator[Hit]:
    """A literal credential in global.job.extraEnv: reported once, at the user's values line, with the fix for that
    variable; the chart copies the entry into every Ray pod, where it is not reported again (`written`)."""
    if not ctx.has_values:
        return
    entries = ctx.get("global.job.extraEnv")
    for k, env in enumerate(entries if isinstance(entries, list) else []):
        if not isinstance(env, dict) or not isinstance(env.get("value"), str):
            continue
        name, value = str(env.get("name", "")), env["value"]
        written.add((name, value))
        if value in seen or not (SENSITIVE_ENV.search(name) and not NOT_SECRET_ENV.match(name)):
            continue  # a token already reported at this key; a name that holds no secret (the pass below reads it)
        if NOT_A_CREDENTIAL.match(value) and value.strip():
            continue
        secret = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-") or "credentials"
        fix = (f"create the Secret out of band (`kubectl create secret generic {secret} --from-literal={name}=...`) "
               f"and replace this entry's `value` with `valueFrom: {{secretKeyRef: {{name: {secret}, key: {name}}}}}`")
        state = ("is empty: every Ray pod starts without the credential" if not value.strip() else
                 f"is a placeholder ({_mask(value)}): filled in, the credential is written into every Ray pod spec"
                 if PLACEHOLDER.match(value) else
                 f"has a literal value ({_mask(value)}): the chart writes it into every Ray pod spec, readable with "
                 "`get pod`")
        yield Hit(f"global.job.extraEnv.{k}.value", f"env {name} {state}; reference a Secret instead",
                  remediation=fix,
                  severity=Severity.WARNING if value.strip() and PLACEHOLDER.match(value) else None)


def _real(value: str) -> bool:
    return real_value(value, PLACEHOLDER, NOT_A_CREDENTIAL)


def _flag_hits(o, path_at, where: str, words: list[str], detail: str = "") -> Iterator[Hit]:
    """Credential flags with literal values, token-shaped words and connection-string pairs among `words` (a
    container's argv, or one command of a script); `path_at(k)` is where word k is reported."""
    flagged = flag_values(words)
    for k, flag, value in flagged:
        if _real(value):
            yield Hit(path_at(k), f"{o.kind} {o.name}: {where} passes {flag} a literal value ({_mask(value)}){detail}; "
                      "anyone who can read the pod spec or `ps` in the pod has it", obj=o)
    for k, word in enumerate(words):
        kind = _token_kind(word)
        if kind and not any(k == j for j, _f, _v in flagged):
            yield Hit(path_at(k), f"{o.kind} {o.name}: {where} holds a {kind} ({_mask(word)}){detail}", obj=o)
        for key, value in embedded_pairs(word):
            if _credential_shaped(value):
                yield Hit(path_at(k), f"{o.kind} {o.name}: {where} passes {key} a literal value ({_mask(value)}) "
                          f"inside one argument{detail}; anyone who can read the pod spec or `ps` in the pod has it",
                          obj=o)


def _command_lines(ctx) -> Iterator[Hit]:
    """Credential flags and tokens in container command lines and in the commands of their scripts."""
    for o, pod_path, pod in ctx.pod_templates():
        for field, i, c in containers(pod):
            command = c.get("command") if isinstance(c.get("command"), list) else []
            args = c.get("args") if isinstance(c.get("args"), list) else []
            argv = [str(w) for w in (*command, *args)]
            if script_in(argv) is not None:
                continue
            base = f"{pod_path}.{field}.{i}."

            def path_at(k: int, base: str = base, n: int = len(command)) -> str:
                return base + (f"command.{k}" if k < n else f"args.{k - n}")

            yield from _flag_hits(o, path_at, f"container {c.get('name', i)}", argv)
    for s in scripts(ctx):
        for node in commands_in(s.root):
            words = [command_name(node), *command_words(node)]
            yield from _flag_hits(s.obj, lambda _k, path=s.path: path, s.where, words,
                                  f" (script line {s.line_of(node)})")


# What a field named for a credential holds when it refers to one (a Secret's name, a key of it) rather than
# being one: the DNS-1123 shape of Kubernetes names.
REFERENCE_SHAPED = re.compile(r"^[a-z0-9]([-a-z0-9._]*[a-z0-9])?$")


def _credential_shaped(text: str) -> bool:
    v = text.strip()
    return len(v) >= 8 and _real(v) and not REFERENCE_SHAPED.match(v) and not any(ch.isspace() for ch in v) \
        and "://" not in v and not v.startswith(("/", ".")) and not CODE_READ.match(v)




def _crd_fields(ctx) -> Iterator[Hit]:
    """KubeRay rayStartParams flags, custom-resource fields named for a credential with a literal `value`, and a
    custom resource's spec fields named for a credential that hold one."""
    for o in ctx.objects:
        if o.kind in ("Secret", "ConfigMap"):
            continue
        custom = custom_resource(o.obj)
        for path, text in ctx.object_strings(o):
            parts = path.split(".")
            if len(parts) >= 2 and parts[-2] == "rayStartParams" and secret_name(parts[-1]) and _real(text):
                yield Hit(path, f"{o.kind} {o.name}: rayStartParams {parts[-1]} is a literal value ({_mask(text)}); "
                          "KubeRay passes it on the `ray start` command line", obj=o)
            elif (len(parts) >= 2 and parts[-1] == "value" and secret_name(parts[-2]) and ".env." not in
                  f".{path}" and not parts[-2].isdigit() and _real(text)):
                yield Hit(path, f"{o.kind} {o.name}: {parts[-2]} holds a literal value ({_mask(text)}); use its "
                          "valueFrom.secretKeyRef", obj=o)
            elif (custom and parts[0] == "spec" and not parts[-1].isdigit() and ".env." not in f".{path}."
                  and secret_name(parts[-1]) and _credential_shaped(text)):
                yield Hit(path, f"{o.kind} {o.name}: {parts[-1]} holds a literal credential ({_mask(text)}); anyone "
                          f"who can read the {o.kind} has it: keep it in a Secret and give the resource its "
                          "reference", obj=o)


def _configmaps(ctx) -> Iterator[Hit]:
    for o in ctx.of_kind("ConfigMap"):
        data = o.obj.get("data") if isinstance(o.obj.get("data"), dict) else {}
        for key, text in data.items():
            text = str(text if text is not None else "")
            if secret_name(str(key)) and "\n" not in text.strip() and _real(text):
                yield Hit(f"data.{key}", f"ConfigMap {o.name}: {key} holds a literal credential ({_mask(text)}); "
                          "ConfigMaps are readable by anyone with `get configmaps` and never encrypted", obj=o)
                continue
            kind = _token_kind(text)
            if kind:
                yield Hit(f"data.{key}", f"ConfigMap {o.name}: {key} holds a {kind} ({_mask(text)})", obj=o)
                continue
            for line, name, value in config_lines(text):
                if _real(value):
                    yield Hit(f"data.{key}", f"ConfigMap {o.name}: {key} line {line} sets {name} to a literal "
                              f"credential ({_mask(value)}); ConfigMaps are not secret", obj=o)
                    break


# The Hugging Face Hub's token variables (huggingface_hub constants: HF_TOKEN, the older HUGGING_FACE_HUB_TOKEN;
# LangChain's HUGGINGFACEHUB_API_TOKEN): the Hub serves public repositories without one, so an empty one matters
# only for a gated or private repository.
HUB_TOKEN_ENV = frozenset({"HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "HUGGINGFACEHUB_API_TOKEN"})


def _env_literals(ctx, seen: set[str], written: set[tuple[str, str]] = frozenset()) -> Iterator[Hit]:
    for o, pod_path, pod in ctx.pod_templates():
        for field, i, c in containers(pod):
            for j, env in enumerate(c.get("env") or []):
                if not isinstance(env, dict):
                    continue  # the object schema reports it
                name, value = str(env.get("name", "")), env.get("value")
                if value is None or str(value) in seen or (name, str(value)) in written:
                    continue
                what, token = _env_value(name, str(value))
                path, env_of = f"{pod_path}.{field}.{i}.env.{j}.value", f"{o.kind} {o.name}: env {name}"
                if what == "empty" and name in HUB_TOKEN_ENV:
                    yield Hit(path, f"{env_of} is an empty literal; the pod starts without a Hub token (assumed: it "
                              "pulls a gated or private repository; public ones need none); use "
                              "valueFrom.secretKeyRef", obj=o, severity=Severity.WARNING)
                elif what == "empty":
                    yield Hit(path, f"{env_of} is an empty literal; the pod starts without the credential; use "
                              "valueFrom.secretKeyRef", obj=o)
                elif what == "placeholder":
                    yield Hit(path, f"{env_of} is a placeholder ({_mask(str(value))}); filling it in writes the "
                              "credential into the pod spec; use valueFrom.secretKeyRef", obj=o,
                              severity=Severity.WARNING)
                elif what == "literal":
                    yield Hit(path, f"{env_of} has a literal value; use valueFrom.secretKeyRef", obj=o)
                elif what == "token":
                    yield Hit(path, f"{env_of} holds a {token}", obj=o)


def _runtime_env_literals(ctx, seen: set[str]) -> Iterator[Hit]:
    """Credentials in the env a Ray resource hands its program (a RayJob's runtimeEnvYAML, a Serve application's
    runtime_env): the job's spec carries them as text, readable by anyone who can read the RayJob. An empty value
    there sets nothing the pods' own env does not already give the program."""
    for o in ctx.of_kind("RayJob", "RayService"):
        for field, env in runtime_env_vars(o):
            for name, value in env.items():
                if value in seen:
                    continue
                what, token = _env_value(name, value)
                env_of = f"{o.kind} {o.name}: {field} env_vars {name}"
                if what == "placeholder":
                    yield Hit(f"spec.{field}", f"{env_of} is a placeholder ({_mask(value)}); filled in, the "
                              "credential is written into the resource", obj=o, severity=Severity.WARNING)
                elif what == "literal":
                    yield Hit(f"spec.{field}", f"{env_of} has a literal value ({_mask(value)}); set it in the pods' "
                              "env from a Secret (valueFrom.secretKeyRef), which the job's processes inherit", obj=o)
                elif what == "token":
                    yield Hit(f"spec.{field}", f"{env_of} holds a {token}", obj=o)


def _env_value(name: str, value: str) -> tuple[str | None, str | None]:
    """(what an env entry's literal value is, the token kind it holds), the ladder every env reader shares:
    "empty", "placeholder" or "literal" under a credential's name, else "token" where the value is one wherever it
    sits, else None."""
    if SENSITIVE_ENV.search(name) and not NOT_SECRET_ENV.match(name):
        if value.strip() == "":
            return "empty", None
        if PLACEHOLDER.match(value):
            return "placeholder", None
        if not NOT_A_CREDENTIAL.match(value):
            return "literal", None
    token = _token_kind(value)
    return ("token", token) if token else (None, None)


def _named_elsewhere(ctx, secret) -> bool:
    """Another object of the set names the Secret (a pod's secretKeyRef, envFrom or volume, an Ingress's TLS, a
    custom resource's reference): something starts with what it holds."""
    return any(text == secret.name for o in ctx.objects if o is not secret for _, text in ctx.object_strings(o))


def _needs_key(ctx, secret, key: str) -> bool:
    """Something in the set starts with the Secret's `key`: a pod reads the whole Secret (`envFrom`, a volume) or
    that key with a `secretKeyRef` that is not `optional`; where no pod reads the Secret, any other object naming
    it (an Ingress's TLS, a custom resource)."""
    reads = ctx.derived("secret-reads", lambda: _secret_reads(ctx)).get(secret.name)
    if reads is None:
        return _named_elsewhere(ctx, secret)
    whole, required = reads
    return whole or key in required


def _secret_reads(ctx) -> dict[str, tuple[bool, set[str]]]:
    """Per Secret name the pods of the set read: (read whole, the keys read with a required secretKeyRef); a key
    read only with `optional: true` may be left empty."""
    out: dict[str, tuple[bool, set[str]]] = {}

    def note(name: object, whole: bool = False, key: object = None) -> None:
        if isinstance(name, str):
            was, keys = out.get(name, (False, set()))
            out[name] = (was or whole, keys | ({str(key)} if key is not None else set()))

    for _o, _path, pod in ctx.pod_templates():
        for v in pod.get("volumes") or []:
            if isinstance(v, dict):
                note((v.get("secret") or {}).get("secretName") if isinstance(v.get("secret"), dict) else None, True)
                for src in (v.get("projected") or {}).get("sources") or [] if isinstance(v.get("projected"), dict) \
                        else []:
                    if isinstance(src, dict) and isinstance(src.get("secret"), dict):
                        note(src["secret"].get("name"), True)
        for _field, _i, c in containers(pod):
            for e in c.get("envFrom") or []:
                ref = e.get("secretRef") if isinstance(e, dict) else None
                if isinstance(ref, dict):
                    note(ref.get("name"), not ref.get("optional"))
            for e in c.get("env") or []:
                ref = ((e.get("valueFrom") or {}) if isinstance(e, dict) else {}).get("secretKeyRef")
                if isinstance(ref, dict):
                    note(ref.get("name"), key=None if ref.get("optional") else ref.get("key"))
    return out


def _secret_values(o, blank_is_error: bool, referenced: Callable[[str], bool]) -> Iterator[Hit]:
    """Each key of a Secret in the set: leaked, empty (where something in the set uses the Secret: a template
    nothing mounts is a blank to fill in), or a placeholder to fill in."""
    for field in ("data", "stringData"):
        entries = o.obj.get(field)
        if not isinstance(entries, dict):
            continue
        for key, raw in entries.items():
            value = _decoded(raw) if field == "data" else str(raw if raw is not None else "")
            path = f"{field}.{key}"
            if value is None:
                continue  # not base64: the object schema reports it
            if value.strip() == "":
                if not referenced(str(key)):  # asked only of an empty key: it reads other objects' strings
                    continue
                yield Hit(path, f"Secret {o.name}: {key} is empty; whatever mounts it starts without the credential",
                          obj=o, severity=None if blank_is_error else Severity.WARNING)
            elif CERTIFICATE_ONLY.match(value):
                continue
            elif _settings_without_credential(value):
                continue  # a settings document (JSON or YAML) with no credential in it: an endpoint, a prefix
            elif (SETTING_KEY.search(_words(str(key))) or SWITCH.match(value)) and not _token_kind(value) \
                    and not URL_PASSWORD.search(value):
                continue  # a setting kept beside the credential (POSTGRES_DB, REDIS_HOST, ClientID, a `true` flag)
            elif field == "stringData" and SHELL_VARIABLE.match(value):
                continue  # envsubst fills it from the shell at apply time: the credential is in no file
            elif sops_ciphertext(value):
                continue  # encrypted with SOPS, decrypted when it is applied: the credential is in no file
            elif PLACEHOLDER.match(value):
                yield Hit(path, f"Secret {o.name}: {key} is a placeholder ({_mask(value)}); create the Secret out of "
                          "band with the real value and drop it from the manifests", obj=o, severity=Severity.WARNING)
            else:
                kind = _token_kind(value)
                yield Hit(path, f"Secret {o.name}: {key} holds " + (f"a {kind}" if kind else "a literal value")
                          + f" ({_mask(value)}) in the manifests", obj=o)


# A file named as an example of a Secret the user writes (`secret.example.yaml`, `secrets.yaml.example`,
# `secret-sample.yaml`, `secret.yaml.dist`, `.template`): its values stand for the user's own, which are in no file
# of the repository. (A `deployment-template.yaml` that envsubst fills is applied with its literals: not one.)
TEMPLATE_FILE = re.compile(r"(?:^|[._-])(?:example|sample)(?:[._-]|$)|\.(?:dist|template|tmpl)$", re.IGNORECASE)
# A Secret's plain-text value that is one shell variable (`${HF_TOKEN}`, `$HF_TOKEN`): a template that envsubst
# fills from the user's shell when it is applied. (In `data` it is base64 text, which envsubst leaves alone.)
SHELL_VARIABLE = re.compile(r"^\s*\$(?:\{[A-Za-z_][A-Za-z0-9_]*\}|[A-Za-z_][A-Za-z0-9_]*)\s*$")
# Keys of a Secret that name a connection setting, not a credential: a database's name, a host, a port, a region,
# the server's address (a URL that carries a password is still read). A user name is not one: triaged corpora took
# a Secret's MINIO_ROOT_USER (an access key's id) and POSTGRES_USER as part of the leaked login.
# An OAuth client's, a tenant's or a project's id, a callback address and a list of users identify; the client
# secret beside them is the credential.
SETTING_KEY = re.compile(r"(?:^|[_.-])(?:DB|DATABASE|DB_?NAME|HOST|HOSTNAME|PORT|REGION|BUCKET|ENDPOINT|SCHEMA|URI"
                         r"|URL|(?:CLIENT|TENANT|PROJECT|SUBSCRIPTION)_?ID|CALL_?BACK|REDIRECT_?URI"
                         r"|(?:ADMIN|ALLOWED)_?USERS)$",
                         re.IGNORECASE)
# A value that switches something on or off: no credential is a boolean word.
SWITCH = re.compile(r"^\s*(?:true|false|yes|no|on|off)\s*$", re.IGNORECASE)


def _words(key: str) -> str:
    """A key with its camel-case words split by `_` (`TenantID` -> `Tenant_ID`, `OAuthCallBack` -> `OAuth_Call_Back`),
    so the setting names match however the key is written."""
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", key)
# A URL that carries a password (`scheme://user:password@host`).
URL_PASSWORD = re.compile(r"://[^/\s:@]+:[^/\s@]+@")


def _settings_without_credential(value: str) -> bool:
    """The value is a settings document (a JSON or YAML mapping: a connection's endpoints, a prefix) and no key of
    it names a credential with a real value, and no string in it is token-shaped or a URL with a password."""
    if "\n" not in value.strip() and not value.lstrip().startswith("{"):
        return False
    # imported here: the in-pod submit runs the job rules with the standard library alone (no YAML reader)
    from ...errors import InputError
    from ...safeyaml import load_documents

    try:  # bounded like any input: node count and depth capped, aliases cannot blow it up
        docs = load_documents(value, "a Secret value", helm=False)
    except InputError:
        return False
    return len(docs) == 1 and isinstance(docs[0], dict) and bool(docs[0]) and not _holds_credential(docs[0])


def _holds_credential(node) -> bool:
    if isinstance(node, dict):
        return any((secret_name(str(k)) and isinstance(v, str | int | float) and _real(str(v)))
                   or _holds_credential(v) for k, v in node.items())
    if isinstance(node, list):
        return any(_holds_credential(v) for v in node)
    return isinstance(node, str) and (_token_kind(node) is not None or bool(URL_PASSWORD.search(node)))


def _decoded(raw) -> str | None:
    try:
        return base64.b64decode(str(raw if raw is not None else ""), validate=True).decode("utf-8", "replace")
    except (binascii.Error, ValueError):
        return None


# A literal every token shape above contains: a string holding none of them is no token (most strings).
_TOKEN_MARKS = ("hf_", "AKIA", "ASIA", "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "sk-", "xox", "PRIVATE KEY-----")


def _token_kind(text: str) -> str | None:
    if not any(mark in text for mark in _TOKEN_MARKS):
        return None
    return next((kind for kind, rx in TOKEN_PATTERNS.items() if rx.search(text)), None)


def _mask(text: str) -> str:
    return text[:5] + "…" if len(text) > 5 else "…"
