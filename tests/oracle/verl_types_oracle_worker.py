"""Run inside the oracle venv (verl 0.9.1): how verl itself takes a value at each typed key of the catalogue.

stdin: {"config_name": ..., "build_overrides": [...], "converted": [keys], "as_given": {key: kinds},
        "probes": [values]}; stdout: one JSON object
  converted: key -> [true | false per probe]: OmegaConf's structured merge of the key's dataclass (verl's
             omega_conf_to_dataclass with a dataclass type) takes the value;
  as_given:  key -> "as given" | "converted" | "refused: ...": verl's omega_conf_to_dataclass on the composed
             section with the key set to a string the declared type is not (instantiated the way verl's workers
             do), read back from the built object.
"""

from __future__ import annotations

import json
import os
import sys
import warnings


def main() -> None:
    warnings.filterwarnings("ignore")
    import verl
    from hydra import compose, initialize_config_dir
    from hydra.utils import get_class
    from omegaconf import OmegaConf, open_dict
    from verl.utils.config import omega_conf_to_dataclass

    ask = json.load(sys.stdin)
    config_dir = os.path.join(os.path.dirname(verl.__file__), "trainer", "config")
    with initialize_config_dir(config_dir=config_dir, version_base=None):
        cfg = compose(config_name=ask["config_name"], overrides=ask["build_overrides"])
    structured: dict[str, object] = {}

    def section(key: str):
        prefix, _, name = key.rpartition(".")
        return OmegaConf.select(cfg, prefix), prefix, name

    converted = {}
    for key in ask["converted"]:
        node, _prefix, name = section(key)
        target = node["_target_"]
        if target not in structured:
            structured[target] = OmegaConf.structured(get_class(target))
        verdicts = []
        for value in ask["probes"]:
            try:
                OmegaConf.merge(structured[target], {name: value})
                verdicts.append(True)
            except Exception:  # noqa: BLE001 - refused: the verdict is the answer
                verdicts.append(False)
        converted[key] = verdicts

    as_given = {}
    for key, kinds in ask["as_given"].items():
        _node, prefix, name = section(key)
        text = "not-a-" + "-".join(sorted(kinds))
        copy = OmegaConf.create(OmegaConf.to_container(cfg, resolve=True))
        with open_dict(copy):
            OmegaConf.update(copy, key, text, force_add=True)
        try:
            built = omega_conf_to_dataclass(OmegaConf.select(copy, prefix))
            got = getattr(built, name)
            as_given[key] = "as given" if got == text else f"converted to {got!r}"
        except Exception as exc:  # noqa: BLE001 - verl refused it while building: also not taken as declared
            as_given[key] = f"refused: {type(exc).__name__}"
    json.dump({"converted": converted, "as_given": as_given}, sys.stdout)


if __name__ == "__main__":
    main()
