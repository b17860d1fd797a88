"""grpo-lint reads every scalar as Helm does, or refuses it at its key (issue: `1:30` was 90 to grpo-lint and a
string to Helm, `y` a string to grpo-lint and a boolean to Helm, `! 8` a number and a string).

Each form is installed into a one-template chart by the pinned Helm binaries (4.1.4 and 3.17.3), which print
`.Values` as JSON: that is Helm's own reading. grpo-lint's reader must either refuse the form with its line or
give exactly Helm's value; the forms the issue names must be refused, and so must every leading-zero integer.
A value Helm reads as a number (`lr: 1e-6`, verl's own spelling; `1E-6`, `1e6`, `+.5`, `0o17`) is never refused:
it is read as Helm reads it, over a property test of float spellings; every fix a refusal suggests is accepted.
"""

from __future__ import annotations

import json
import re
import subprocess

import pytest
import yaml
from grpo_stack import goyaml
from grpo_stack.errors import InputError
from grpo_stack.safeyaml import load_documents
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

# Values: Helm-divergent spellings (YAML 1.1 vs go-yaml v2), leading zeros, and forms both read alike.
DIVERGENT = ["1:30", "1:30.5", "-1:30", "y", "Y", "n", "N", "08", "09", "010", "0_10", "-010", "+010", "00", "! 8",
             "! true", "! null", "! 1.5", "._5"]
# Numbers to Helm that YAML 1.1 reads as strings: accepted, with Helm's value.
HELM_NUMBERS = ["1e-6", "1e-06", "1E-6", "1e6", "1e3", "1E3", "-1e3", "+.5", ".5e3", "1.5e3", "0o17", "5e-7",
                "1.0E+6", "2E-05"]
AGREE = ["8", "-8", "+8", "0", "-0", "0.5", "1.5", ".5", "1.0e+3", "1_000", "0x1F", "0b101", "yes", "no", "on",
         "off", "true", "False", "null", "~", "abc", "'y'", "'08'", "'1:30'", "!!str y", "!!int 8", "! abc",
         "1e400", ".5_0", ".5_", "y1", "no_way", "1:3x", "--1", "0x", "9223372036854775807", "0.0", "-.5", "3.",
         "2024-13-01", "2024-1-2", "2024-01-02T3:04:05Z"]
# Keys go through the same resolution (a key Helm reads as a boolean becomes "true" in .Values).
KEYS = ["y", "n", "08", "1e3", "2024-1-2", "yes", "abc", "on"]  # 2024-1-2: a string to both
MUST_REFUSE = {"1:30", "y", "n", "! 8", "010", "08"}


def helm_reading(helm, env, tmp_path, text: str) -> dict:
    chart = tmp_path / "chart"
    (chart / "templates").mkdir(parents=True, exist_ok=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: probe\nversion: 0.1.0\n")
    (chart / "templates" / "values.yaml").write_text("json: {{ toJson .Values | quote }}\n")
    values = tmp_path / "values.yaml"
    values.write_text(text)
    out = subprocess.run([str(helm), "template", "probe", str(chart), "-f", str(values)], env=env,
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    return json.loads(yaml.safe_load(out.stdout)["json"])


def own_reading(text: str):
    try:
        return load_documents(text, "values.yaml")[0]
    except InputError as exc:
        return exc


def _same(a, b) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return float(a) == float(b)  # Helm's values are JSON numbers (float64)
    return a == b


@pytest.fixture(scope="module", params=["helm_bin", "helm3_bin"])
def helm_values(request, helm_env, tmp_path_factory):
    """Helm's reading of every form, one key per line: {line: value}."""
    helm = request.getfixturevalue(request.param)
    forms = DIVERGENT + AGREE + HELM_NUMBERS
    text = "".join(f"k{i}: {form}\n" for i, form in enumerate(forms))
    text += "".join(f"{key}: {i}\n" for i, key in enumerate(KEYS))
    return helm_reading(helm, helm_env, tmp_path_factory.mktemp("probe"), text)


@pytest.mark.parametrize("form", DIVERGENT + AGREE + HELM_NUMBERS)
def test_each_value_form_reads_as_helm_or_is_refused(helm_values, form):
    i = (DIVERGENT + AGREE + HELM_NUMBERS).index(form)
    helm = helm_values[f"k{i}"]
    mine = own_reading(f"k{i}: {form}\n")
    if form in HELM_NUMBERS:
        assert isinstance(helm, int | float) and not isinstance(helm, bool), (form, helm)
        assert not isinstance(mine, InputError), (form, mine.message)
    if isinstance(mine, InputError):
        assert mine.line == 1 and mine.key_path == f"k{i}", mine
        if form in DIVERGENT:
            assert "quote" in mine.message or "write" in mine.message, mine  # the fix is named
    else:
        assert _same(mine[f"k{i}"], helm), (form, mine, helm)
        assert form not in MUST_REFUSE
    if form in MUST_REFUSE:
        assert isinstance(mine, InputError), (form, mine, helm)


@pytest.mark.parametrize("key", KEYS)
def test_each_key_reads_as_helm_or_is_refused(helm_values, key):
    mine = own_reading(f"{key}: 1\n")
    helm_keys = {k for k, v in helm_values.items() if not k.startswith("k") or not k[1:].isdigit()}
    if isinstance(mine, InputError):
        assert mine.line == 1
        assert key not in helm_keys  # Helm renamed it (y -> "true", 08 -> "8")
    else:
        assert key in helm_keys, (key, sorted(helm_keys))


@pytest.mark.parametrize("form", [f for f in DIVERGENT + AGREE + HELM_NUMBERS if not f.startswith(("!", "'"))])
def test_restated_resolution_is_helms(helm_values, form):
    """goyaml.plain_scalar (what the refusals rest on) gives Helm's own value for every plain form."""
    i = (DIVERGENT + AGREE + HELM_NUMBERS).index(form)
    kind, value = goyaml.plain_scalar(form)
    helm = helm_values[f"k{i}"]
    assert _same(value, helm), (form, kind, value, helm)


# Float spellings: sign, digits (with go-yaml's ignored underscores), fraction, exponent of either case and sign.
FLOAT_SPELLING = st.from_regex(r"[-+]?(0|[1-9][0-9]{0,2}(_[0-9]{1,2})?|0[0-9]{1,2})?(\.[0-9]{0,3}(_[0-9])?)?"
                               r"([eE][-+]?[0-9]{1,3})?", fullmatch=True).filter(
    lambda t: any(c.isdigit() for c in t) and any(c in t for c in ".eE"))
LEADING_ZERO_INTEGER = re.compile(r"[-+]?0[0-9_]+")


def _readings(helm_values: dict, forms: list[str]) -> list[tuple[str, object, object]]:
    return [(form, helm_values[f"k{i}"], own_reading(f"k{i}: {form}\n")) for i, form in enumerate(forms)]


@pytest.mark.parametrize("binary", ["helm_bin", "helm3_bin"])
def test_float_spellings_read_as_helm_reads_them(request, binary, helm_env, tmp_path_factory):
    """Property: every float spelling Helm reads as a number is accepted with Helm's number; one Helm reads as a
    string is that string or refused at its key."""
    helm = request.getfixturevalue(binary)

    # No shrinking: each example is one Helm run; a failure names its spelling already.
    @settings(max_examples=6, deadline=None, suppress_health_check=list(HealthCheck),
              phases=(Phase.explicit, Phase.generate))
    @given(st.lists(FLOAT_SPELLING, min_size=30, max_size=80, unique=True))
    def check(forms):
        text = "".join(f"k{i}: {form}\n" for i, form in enumerate(forms))
        values = helm_reading(helm, helm_env, tmp_path_factory.mktemp("floats"), text)
        for form, theirs, mine in _readings(values, forms):
            if isinstance(theirs, int | float) and not LEADING_ZERO_INTEGER.fullmatch(form):
                assert not isinstance(mine, InputError), (form, theirs, mine.message)
            if isinstance(mine, InputError):
                assert (mine.line == 1 and not isinstance(theirs, int | float)) or LEADING_ZERO_INTEGER.fullmatch(form)
            else:
                assert _same(mine[next(iter(mine))], theirs), (form, mine, theirs)

    check()


_FIXES = re.compile(r"write (\S+) for the|quote it \((.+?)\)")


@pytest.mark.parametrize("binary", ["helm_bin", "helm3_bin"])
def test_every_suggested_fix_is_accepted(request, binary, helm_env, tmp_path):
    """Each spelling a refusal offers (`write 1e-06 for the number`, `quote it ('y')`) is accepted, and reads
    as Helm reads it."""
    refused = [form for form in DIVERGENT + AGREE + HELM_NUMBERS if isinstance(own_reading(f"k: {form}\n"), InputError)]
    assert refused
    fixes = []
    for form in refused:
        found = [a or b for a, b in _FIXES.findall(own_reading(f"k: {form}\n").message)]
        fixes += [fix for fix in found if fix not in fixes]
    assert any(not fix.startswith("'") for fix in fixes)  # numbers and booleans are among the fixes
    values = helm_reading(request.getfixturevalue(binary), helm_env, tmp_path,
                          "".join(f"k{i}: {fix}\n" for i, fix in enumerate(fixes)))
    for fix, theirs, mine in _readings(values, fixes):
        assert not isinstance(mine, InputError), (fix, mine.message)
        assert _same(mine[next(iter(mine))], theirs), (fix, mine, theirs)
