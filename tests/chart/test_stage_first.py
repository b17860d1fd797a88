"""A stage-first install (raycluster.worker.scaleToZero at install, docs/day-2.md): no rendered pod asks for a GPU,
and the install notes say how to go on (stage, dry run, upgrade); without it the notes say nothing of it."""

from __future__ import annotations

STAGE_FIRST = {"raycluster.worker.scaleToZero": True}


def gpu_requests(rendered) -> list[str]:
    out = []
    for o in rendered.objects:
        text = str(o.obj)
        if "nvidia.com/gpu" in text and o.kind in ("RayCluster", "Deployment", "Job", "StatefulSet"):
            for group in (o.obj.get("spec") or {}).get("workerGroupSpecs") or []:
                if group.get("replicas"):
                    out.append(f"{o.kind} {o.name} {group.get('groupName')}")
            if o.kind != "RayCluster":
                out.append(f"{o.kind} {o.name}")
    return out


def test_nothing_asks_for_a_gpu_and_the_notes_say_what_next(render_values):
    staged = render_values("qwen3-8b", STAGE_FIRST)
    assert gpu_requests(staged) == []
    assert "Stage first: the GPU workers are scaled to zero" in staged.notes
    assert "--set raycluster.worker.scaleToZero=false" in staged.notes
    usual = render_values("qwen3-8b")
    assert gpu_requests(usual) != []  # the check above can see a GPU request
    assert "Stage first" not in usual.notes
