"""Where a credential is written outside a Secret reference: command-line flags, config-file lines, CRD fields
(not a rule: no CODE). The placeholder and switch patterns are literal_secret's, so every reader agrees on
what is "not a real value"."""

from __future__ import annotations

import re
from functools import lru_cache

from ...apivalidation.objects import sops_ciphertext

# Words of a flag or key name that make it a credential (`--api-key`, `redis-password`, `HF_TOKEN`, `secretKey`).
SECRET_WORDS = frozenset({"token", "password", "passwd", "pwd", "secret", "apikey", "credential", "credentials",
                          "passphrase", "requirepass", "masterauth"})
SECRET_PAIRS = (("api", "key"), ("access", "key"), ("secret", "key"), ("private", "key"), ("auth", "token"),
                ("client", "secret"), ("master", "key"), ("admin", "key"))  # a proxy's master_key, an admin key
# Words that make the name about the credential, not the credential (`--token-file`, `--secret-name`), or about
# something else (`--max-tokens`, `tokenizer`, and the timings of generated tokens: `--time-to-first-token`,
# `--inter-token-latency`, `--prefill-time-per-token`; how long a credential is trusted or cached:
# Cassandra's `credentials_validity_in_ms`, `credentials_update_interval_in_ms`; a tokenizer's special tokens:
# `pad_token`, `eos_token`, `bos_token`, `unk_token`, `sep_token`, `cls_token`, `mask_token`).
NOT_SECRET_WORDS = frozenset({"file", "path", "dir", "name", "ref", "env", "var", "length", "len", "limit",
                              "tokens", "tokenizer", "budget", "max", "min", "num", "count", "size", "ttl",
                              "expiry", "expires", "header", "type", "mode", "enabled", "enable", "disable",
                              "disabled", "required", "policy", "id", "url", "endpoint", "source",
                              "mount", "command", "cmd", "rotation", "timeout", "prefix", "field", "format",
                              "stdin", "prompt", "no", "time", "latency", "per", "rate", "throughput",
                              "validity", "interval", "period", "lifetime", "ms", "seconds", "secs",
                              "pad", "eos", "bos", "unk", "sep", "cls", "mask"})
ENV_REFERENCE = re.compile(r"^\$\(?\{?[A-Za-z_][A-Za-z0-9_]*(:?-[^}]*)?\}?\)?$")
# An upper-case identifier (`AWS_ACCESS_KEY_ID`): the name of a variable holding the credential, not the credential.
VARIABLE_NAME = re.compile(r"^[A-Z][A-Z0-9]*(_[A-Z0-9]+)+$")
# A config-file line `key: value` / `key = value` / `requirepass value` (redis.conf).
CONFIG_LINE = re.compile(r"^\s*[\"']?([A-Za-z][\w.-]*)[\"']?\s*(?:[:=]\s*|\s+(?=\S))(.*?)\s*$")
SPACE_DIRECTIVES = frozenset({"requirepass", "masterauth"})


_ACRONYM_WORD = re.compile(r"([A-Z]+)([A-Z][a-z])")
_CAMEL_WORD = re.compile(r"([a-z0-9])([A-Z])")
_NOT_ALNUM = re.compile(r"[^A-Za-z0-9]+")
_KEY_THEN_SEPARATOR = re.compile(r"^\s*[\"']?[A-Za-z][\w.-]*[\"']?\s*[:=]")


def name_words(name: str) -> list[str]:
    """`--redis-password` -> [redis, password]; `secretAccessKey` -> [secret, access, key]."""
    spaced = _ACRONYM_WORD.sub(r"\1 \2", name.lstrip("-"))  # IDName -> ID Name
    spaced = _CAMEL_WORD.sub(r"\1 \2", spaced)
    return [w for w in _NOT_ALNUM.split(spaced.lower()) if w]


@lru_cache(maxsize=8192)  # the same keys and flags recur in every object of a release
def secret_name(name: str) -> bool:
    words = name_words(name)
    if not words or any(w in NOT_SECRET_WORDS for w in words):
        return False
    if any(w in SECRET_WORDS for w in words):
        return True
    return any(a in words and b in words[words.index(a) + 1:] for a, b in SECRET_PAIRS) or "apikey" in "".join(words)


def real_value(value: str, placeholder: re.Pattern, not_a_credential: re.Pattern) -> bool:
    """A value that is a credential someone wrote, not a stand-in, a switch, a path or a variable reference."""
    v = value.strip().strip("'\"")
    return bool(v) and not placeholder.match(v) and not not_a_credential.match(v) and not ENV_REFERENCE.match(v) \
        and "$(" not in v and "${" not in v and not v.startswith("$") and v.lower() not in ("none", "null", "-") \
        and not VARIABLE_NAME.match(v) and not v.startswith("os.environ/") \
        and not sops_ciphertext(v)  # os.environ/: LiteLLM's reference to an env var; SOPS ciphertext: no credential


def flag_values(words: list[str]) -> list[tuple[int, str, str]]:
    """(index of the value's word, flag, value) for each `--flag value` / `--flag=value` whose flag names a
    credential."""
    out = []
    for i, raw in enumerate(words):
        word = raw.strip("'\"")
        if not word.startswith("-"):
            continue
        flag, eq, value = word.partition("=")
        if not secret_name(flag):
            continue
        if eq:
            out.append((i, flag, value))
        elif i + 1 < len(words) and not words[i + 1].startswith("-"):
            out.append((i + 1, flag, words[i + 1].strip("'\"")))
    return out


def config_lines(text: str) -> list[tuple[int, str, str]]:
    """(line number, key, value) for each line of a config file whose key names a credential."""
    out = []
    for n, line in enumerate(text.splitlines(), start=1):
        if line.lstrip().startswith(("#", ";", "//")):
            continue
        m = CONFIG_LINE.match(line)
        if not m:
            continue
        key, value = m.group(1), m.group(2).split(" #", 1)[0].strip().rstrip(",")
        spaced = not _KEY_THEN_SEPARATOR.match(line)
        if spaced and key.lower() not in SPACE_DIRECTIVES:
            continue
        if CODE_READ.match(value):
            value = _code_default(value)  # the literal a read falls back to, if it gives one
        if secret_name(key) and value and not value.startswith(("{", "[", "|", ">")):
            out.append((n, key, value))
    return out


QUOTED = re.compile(r"""(['"])([^'"]*)\1""")


def _code_default(code: str) -> str:
    """The literal a code read falls back to (`os.getenv('SECRET', 'ef28…')`: the second quoted string), or "" where
    it names only where it reads from (`open(PATH).read()`, `os.environ['SECRET']`)."""
    literals = [m.group(2) for m in QUOTED.finditer(code)]
    return literals[-1] if len(literals) > 1 else ""


# A value that is code reading the credential from elsewhere, not the credential: a call or a subscript of a
# (dotted) name (`token=os.environ.get('HF_TOKEN')`, `password=secrets["db"]`, a Python config's
# `c.OAuthenticator.client_secret = open("/etc/jupyterhub/secrets/id").read()`).
CODE_READ = re.compile(r"^(?:[A-Za-z_]\w*\.)*[A-Za-z_]\w*\s*[(\[]")


# Several `key:value` / `key=value` pairs in one argument, split by `,` or `;` (a connection string: an object
# store's `endpoint:…,access_key:…`, a driver's `user=…;password=…`).
PAIR_SEPARATOR = re.compile(r"[,;]")
PAIR = re.compile(r"^\s*([A-Za-z][\w.-]*)\s*[:=]\s*(.*?)\s*$")


def embedded_pairs(word: str) -> list[tuple[str, str]]:
    """(key, value) for each pair of a connection-string argument whose key names a credential; a leading
    `--flag=` is the argument's own name, not a pair."""
    text = word.strip("'\"")
    if text.startswith("-") and "=" in text:
        text = text.split("=", 1)[1]
    if not PAIR_SEPARATOR.search(text):
        return []
    pairs = [PAIR.match(part) for part in PAIR_SEPARATOR.split(text)]
    return [(m.group(1), m.group(2)) for m in pairs if m and secret_name(m.group(1)) and m.group(2)]
