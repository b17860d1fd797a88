"""The local cluster's wait on an object's condition, read the way the API server serves objects."""

from grpo_stack.localcluster.cluster import condition_true


def test_a_freshly_created_crd_with_null_conditions_is_not_yet_established():
    """The API server serves a CRD it has not yet named with `status.conditions: null` (the field has no omitempty);
    `kubectl wait` fails outright on that, which once stopped the local cluster starting. Here it is 'not yet'."""
    fresh = {"kind": "CustomResourceDefinition", "metadata": {"name": "rayjobs.ray.io"},
             "status": {"acceptedNames": {"kind": "", "plural": ""}, "conditions": None, "storedVersions": ["v1"]}}
    assert not condition_true(fresh, "Established")
    assert not condition_true({"kind": "Node", "metadata": {"name": "n"}}, "Ready")


def test_the_condition_counts_only_when_its_status_is_true():
    def crd(*conditions):
        return {"kind": "CustomResourceDefinition", "metadata": {"name": "x"},
                "status": {"conditions": list(conditions)}}

    names = {"type": "NamesAccepted", "status": "True"}
    assert not condition_true(crd(names), "Established")
    assert not condition_true(crd(names, {"type": "Established", "status": "False"}), "Established")
    assert condition_true(crd(names, {"type": "Established", "status": "True"}), "Established")
