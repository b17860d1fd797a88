"""Hub pulls a fine-tuning framework's own config file names (not a rule: no CODE).

A ConfigMap often carries the trainer's YAML, mounted where the container runs `axolotl train` or
`llamafactory-cli train` on it. The file, not the command, names the model and the datasets:

- axolotl: `base_model`, pinned by `revision_of_model` (its older spelling `model_revision` is remapped to it), and
  each entry of `datasets` / `test_datasets` whose `path` is a hub id, pinned by the entry's `revision`
  (axolotl docs, config-reference: "The specific revision of the dataset to use when loading from the Hugging
  Face Hub ... If not specified, the latest version will be used");
- LLaMA-Factory: `model_name_or_path`, pinned by `model_revision` (its default is `main`).

A file is read as one of them only when it holds keys that framework's configs carry beside the model key, so a
service's own config with a `base_model` field is not taken for a trainer's.
"""

from __future__ import annotations

from collections.abc import Iterator

from ...errors import InputError
from ._hub import Pull, hub_repo

# Keys an axolotl config carries beside base_model, and a LLaMA-Factory config beside model_name_or_path.
AXOLOTL_KEYS = frozenset({"datasets", "adapter", "sequence_len", "micro_batch_size", "num_epochs", "sample_packing",
                          "load_in_4bit", "load_in_8bit", "lora_r", "gradient_accumulation_steps"})
LLAMA_FACTORY_KEYS = frozenset({"stage", "finetuning_type", "template", "dataset", "cutoff_len"})
# A dataset entry that lists its files may read a local directory of that name: not judged.
LOCAL_DATASET_KEYS = ("data_files",)
# Each pull's `how`, as the functions below name it, and the key of the file that pins it.
PINNED_BY = {"axolotl base_model": "revision_of_model", "axolotl datasets path": "the entry's revision",
             "axolotl test_datasets path": "the entry's revision",
             "LLaMA-Factory model_name_or_path": "model_revision"}


def config_text_pulls(text: str, name: str) -> Iterator[tuple[str, Pull]]:
    """The pulls of a config file's text (a ConfigMap value), when it is a trainer's YAML."""
    if "base_model" not in text and "model_name_or_path" not in text:
        return
    # Imported here: the in-pod job gate imports every rule with only the standard library (no PyYAML).
    from ...safeyaml import load_documents

    try:
        docs = load_documents(text, name)
    except InputError:
        return
    for doc in docs:
        yield from trainer_config_pulls(doc)


def trainer_config_pulls(doc: object) -> Iterator[tuple[str, Pull]]:
    """(key path in the file, pull) for each hub id an axolotl or LLaMA-Factory config names."""
    if not isinstance(doc, dict):
        return
    if isinstance(doc.get("base_model"), str) and AXOLOTL_KEYS & doc.keys():
        yield from _axolotl(doc)
    elif isinstance(doc.get("model_name_or_path"), str) and LLAMA_FACTORY_KEYS & doc.keys():
        if hub_repo(doc["model_name_or_path"]):
            yield "model_name_or_path", Pull(doc["model_name_or_path"].strip(), "LLaMA-Factory model_name_or_path",
                                             _text(doc.get("model_revision")))


def _axolotl(doc: dict) -> Iterator[tuple[str, Pull]]:
    if hub_repo(doc["base_model"]):
        pin = doc.get("revision_of_model") or doc.get("model_revision")
        yield "base_model", Pull(doc["base_model"].strip(), "axolotl base_model", _text(pin))
    for key in ("datasets", "test_datasets"):
        entries = doc.get(key)
        for i, entry in enumerate(entries if isinstance(entries, list) else []):
            if not isinstance(entry, dict) or not isinstance(entry.get("path"), str):
                continue
            if hub_repo(entry["path"]) and not any(entry.get(k) for k in LOCAL_DATASET_KEYS):
                pull = Pull(entry["path"].strip(), f"axolotl {key} path", _text(entry.get("revision")))
                yield f"{key}.{i}.path", pull


def _text(value: object) -> str | None:
    return None if value is None or value == "" else str(value)
