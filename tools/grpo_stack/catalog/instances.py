"""EC2 instance capacity for pod-fit checks, with the source lines of every row.

Allocatable cpu/memory is Karpenter's estimate for an AL2023 node (capacity minus kube-reserved, eviction
threshold and VM overhead) from aws/karpenter-provider-aws@1d927085 website/content/en/v1.14/reference/
instance-types.md (K:<line>). EFA is EC2 MaximumEfaInterfaces: the most `vpc.amazonaws.com/efa` a node can
expose. V: and E: are the vpclimits and amazon-eks-ami instance-info lines. DaemonSets are not subtracted.
Every row is in the shared reference instances-and-kuberay.md (p4d, p4de, p5, p5e, p5en, p6-b200, p6-b300, g5,
g6, g6e and the CPU types). Left out: p6e-gb200.36xlarge, whose capacity no primary source gives (GRPO613 warns
that such a type cannot be checked).

SageMaker HyperPod names the same hardware `ml.<type>` (`ml.p5en.48xlarge`); `lookup` maps it to the EC2 row.
Which `ml.` types HyperPod offers is not in the reference, so the catalogue does not list them separately.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class InstanceType:
    name: str
    vcpu: int
    memory_gib: float
    gpus: int
    efa: int
    allocatable_millicpu: int
    allocatable_memory_mib: int
    source: str
    gpu_memory_mib: int | None = None  # stated for a type the catalogue lacks; catalogued: GPU_MEMORY_MIB

    @property
    def origin(self) -> str:
        """Where the row's figures come from, in words a message can show: a catalogue row's source is a set of
        reference line numbers (K:…, V:…, E:…), meaningful in the catalogue only."""
        return "EC2 and Karpenter instance data" if self.source.startswith("K:") else self.source


_ROWS = [
    # name, vCPU, memory GiB, GPUs, max EFA, allocatable m, allocatable Mi, source lines
    ('p4d.24xlarge', 96, 1152.0, 8, 4, 95690, 1082712, 'K:25995 · V:14278 · E:913'),
    ('p4de.24xlarge', 96, 1152.0, 8, 4, 95690, 1082712, 'K:26031 · V:14308 · E:914'),
    ('p5.4xlarge', 16, 256.0, 1, 1, 15890, 240830, 'K:26067 · V:14508 · E:916'),
    ('p5.48xlarge', 192, 2048.0, 8, 32, 191450, 1938410, 'K:26102 · V:14338 · E:915'),
    ('p5e.48xlarge', 192, 2048.0, 8, 32, 191450, 1938410, 'K:26138 · V:14523 · E:917'),
    ('p5en.48xlarge', 192, 2048.0, 8, 16, 191450, 1937332, 'K:26174 · V:14693 · E:918'),
    ('p6-b200.48xlarge', 192, 2048.0, 8, 8, 191450, 1937332, 'K:26210 · V:14783 · E:919'),
    ('p6-b300.48xlarge', 192, 4096.0, 8, 16, 191450, 3877198, 'K:26246 · V:14833 · E:920'),
    ('g5.xlarge', 4, 16.0, 1, 0, 3920, 14162, 'K:10310 · V:5903 · E:373'),
    ('g5.2xlarge', 8, 32.0, 1, 0, 7910, 29317, 'K:10344 · V:5843 · E:369'),
    ('g5.4xlarge', 16, 64.0, 1, 0, 15890, 57691, 'K:10378 · V:5873 · E:371'),
    ('g5.8xlarge', 32, 128.0, 1, 1, 31850, 118312, 'K:10412 · V:5888 · E:372'),
    ('g5.12xlarge', 48, 192.0, 4, 1, 47810, 173400, 'K:10447 · V:5798 · E:366'),
    ('g5.16xlarge', 64, 256.0, 1, 1, 63770, 239554, 'K:10482 · V:5813 · E:367'),
    ('g5.24xlarge', 96, 384.0, 4, 1, 95690, 355262, 'K:10517 · V:5828 · E:368'),
    ('g5.48xlarge', 192, 768.0, 8, 1, 191450, 723299, 'K:10552 · V:5858 · E:370'),
    ('g6.xlarge', 4, 16.0, 1, 0, 3920, 14162, 'K:10787 · V:6113 · E:387'),
    ('g6.2xlarge', 8, 32.0, 1, 0, 7910, 29317, 'K:10821 · V:6053 · E:383'),
    ('g6.4xlarge', 16, 64.0, 1, 0, 15890, 57691, 'K:10855 · V:6083 · E:385'),
    ('g6.8xlarge', 32, 128.0, 1, 1, 31850, 118312, 'K:10889 · V:6098 · E:386'),
    ('g6.12xlarge', 48, 192.0, 4, 1, 47810, 178933, 'K:10924 · V:6008 · E:380'),
    ('g6.16xlarge', 64, 256.0, 1, 1, 63770, 234021, 'K:10959 · V:6023 · E:381'),
    ('g6.24xlarge', 96, 384.0, 4, 1, 95690, 355262, 'K:10994 · V:6038 · E:382'),
    ('g6.48xlarge', 192, 768.0, 8, 1, 191450, 718987, 'K:11029 · V:6068 · E:384'),
    ('g6e.xlarge', 4, 32.0, 1, 0, 3920, 29317, 'K:11065 · V:6253 · E:395'),
    ('g6e.2xlarge', 8, 64.0, 1, 0, 7910, 59627, 'K:11099 · V:6178 · E:391'),
    ('g6e.4xlarge', 16, 128.0, 1, 0, 15890, 118312, 'K:11133 · V:6223 · E:393'),
    ('g6e.8xlarge', 32, 256.0, 1, 1, 31850, 239554, 'K:11167 · V:6238 · E:394'),
    ('g6e.12xlarge', 48, 384.0, 4, 1, 47810, 360157, 'K:11202 · V:6128 · E:388'),
    ('g6e.16xlarge', 64, 512.0, 1, 1, 63770, 476504, 'K:11237 · V:6143 · E:389'),
    ('g6e.24xlarge', 96, 768.0, 4, 2, 95690, 721682, 'K:11272 · V:6158 · E:390'),
    ('g6e.48xlarge', 192, 1536.0, 8, 4, 191450, 1449132, 'K:11307 · V:6193 · E:392'),
    ('m5.large', 2, 8.0, 0, 0, 1930, 6903, 'K:15712 · V:8513 · E:551'),
    ('m5.xlarge', 4, 16.0, 0, 0, 3920, 14162, 'K:15740 · V:8543 · E:553'),
    ('m5.2xlarge', 8, 32.0, 0, 0, 7910, 29317, 'K:15768 · V:8468 · E:548'),
    ('m5.4xlarge', 16, 64.0, 0, 0, 15890, 57691, 'K:15796 · V:8483 · E:549'),
    ('m5.8xlarge', 32, 128.0, 0, 0, 31850, 118312, 'K:15824 · V:8498 · E:550'),
    ('m5.12xlarge', 48, 192.0, 0, 0, 47810, 178933, 'K:15852 · V:8423 · E:545'),
    ('m5.16xlarge', 64, 256.0, 0, 0, 63770, 234021, 'K:15880 · V:8438 · E:546'),
    ('m5.24xlarge', 96, 384.0, 0, 0, 95690, 355262, 'K:15908 · V:8453 · E:547'),
    ('m5.metal', 96, 384.0, 0, 0, 95690, 355262, 'K:15936 · V:8528 · E:552'),
    ('m6i.large', 2, 8.0, 0, 0, 1930, 6903, 'K:18229 · V:9848 · E:640'),
    ('m6i.xlarge', 4, 16.0, 0, 0, 3920, 14162, 'K:18257 · V:9878 · E:642'),
    ('m6i.2xlarge', 8, 32.0, 0, 0, 7910, 29317, 'K:18285 · V:9788 · E:636'),
    ('m6i.4xlarge', 16, 64.0, 0, 0, 15890, 57691, 'K:18313 · V:9818 · E:638'),
    ('m6i.8xlarge', 32, 128.0, 0, 0, 31850, 118312, 'K:18341 · V:9833 · E:639'),
    ('m6i.12xlarge', 48, 192.0, 0, 0, 47810, 178933, 'K:18369 · V:9743 · E:633'),
    ('m6i.16xlarge', 64, 256.0, 0, 0, 63770, 234021, 'K:18397 · V:9758 · E:634'),
    ('m6i.24xlarge', 96, 384.0, 0, 0, 95690, 355262, 'K:18425 · V:9773 · E:635'),
    ('m6i.32xlarge', 128, 512.0, 0, 1, 127610, 476504, 'K:18453 · V:9803 · E:637'),
    ('m6i.metal', 128, 512.0, 0, 1, 127610, 476504, 'K:18482 · V:9863 · E:641'),
    ('m7i.large', 2, 8.0, 0, 0, 1930, 6903, 'K:20239 · V:11113 · E:717'),
    ('m7i.xlarge', 4, 16.0, 0, 0, 3920, 14162, 'K:20267 · V:11158 · E:720'),
    ('m7i.2xlarge', 8, 32.0, 0, 0, 7910, 29317, 'K:20295 · V:11053 · E:713'),
    ('m7i.4xlarge', 16, 64.0, 0, 0, 15890, 57691, 'K:20323 · V:11083 · E:715'),
    ('m7i.8xlarge', 32, 128.0, 0, 0, 31850, 118312, 'K:20351 · V:11098 · E:716'),
    ('m7i.12xlarge', 48, 192.0, 0, 0, 47810, 178933, 'K:20379 · V:11008 · E:710'),
    ('m7i.16xlarge', 64, 256.0, 0, 0, 63770, 234021, 'K:20407 · V:11023 · E:711'),
    ('m7i.24xlarge', 96, 384.0, 0, 0, 95690, 355262, 'K:20435 · V:11038 · E:712'),
    ('m7i.metal-24xl', 96, 384.0, 0, 0, 95690, 355262, 'K:20463 · V:11128 · E:718'),
    ('m7i.48xlarge', 192, 768.0, 0, 1, 191450, 718987, 'K:20491 · V:11068 · E:714'),
    ('m7i.metal-48xl', 192, 768.0, 0, 1, 191450, 718987, 'K:20520 · V:11143 · E:719'),
    ('c5.xlarge', 4, 8.0, 0, 0, 3920, 6584, 'K:522 · V:438 · E:28'),
    ('c5.2xlarge', 8, 16.0, 0, 0, 7910, 14162, 'K:550 · V:363 · E:23'),
    ('c5.4xlarge', 16, 32.0, 0, 0, 15890, 27381, 'K:578 · V:378 · E:24'),
    ('c5.9xlarge', 36, 72.0, 0, 0, 35840, 65269, 'K:606 · V:393 · E:25'),
    ('c5.12xlarge', 48, 96.0, 0, 0, 47810, 88002, 'K:634 · V:318 · E:20'),
    ('c5.18xlarge', 72, 144.0, 0, 0, 71750, 127934, 'K:662 · V:333 · E:21'),
    ('c5.24xlarge', 96, 192.0, 0, 0, 95690, 173400, 'K:690 · V:348 · E:22'),
    ('c5.metal', 96, 192.0, 0, 0, 95690, 173400, 'K:718 · V:423 · E:27'),
    ('c6i.large', 2, 4.0, 0, 0, 1930, 3114, 'K:2719 · V:1593 · E:107'),
    ('c6i.xlarge', 4, 8.0, 0, 0, 3920, 6584, 'K:2747 · V:1623 · E:109'),
    ('c6i.2xlarge', 8, 16.0, 0, 0, 7910, 14162, 'K:2775 · V:1533 · E:103'),
    ('c6i.4xlarge', 16, 32.0, 0, 0, 15890, 27381, 'K:2803 · V:1563 · E:105'),
    ('c6i.8xlarge', 32, 64.0, 0, 0, 31850, 57691, 'K:2831 · V:1578 · E:106'),
    ('c6i.12xlarge', 48, 96.0, 0, 0, 47810, 88002, 'K:2859 · V:1488 · E:100'),
    ('c6i.16xlarge', 64, 128.0, 0, 0, 63770, 112779, 'K:2887 · V:1503 · E:101'),
    ('c6i.24xlarge', 96, 192.0, 0, 0, 95690, 173400, 'K:2915 · V:1518 · E:102'),
    ('c6i.32xlarge', 128, 256.0, 0, 1, 127610, 234021, 'K:2943 · V:1548 · E:104'),
    ('c6i.metal', 128, 256.0, 0, 1, 127610, 234021, 'K:2972 · V:1608 · E:108'),
    ('r5.large', 2, 16.0, 0, 0, 1930, 14481, 'K:26572 · V:15183 · E:938'),
    ('r5.xlarge', 4, 32.0, 0, 0, 3920, 29317, 'K:26600 · V:15213 · E:940'),
    ('r5.2xlarge', 8, 64.0, 0, 0, 7910, 59627, 'K:26628 · V:15138 · E:935'),
    ('r5.4xlarge', 16, 128.0, 0, 0, 15890, 118312, 'K:26656 · V:15153 · E:936'),
    ('r5.8xlarge', 32, 256.0, 0, 0, 31850, 239554, 'K:26684 · V:15168 · E:937'),
    ('r5.12xlarge', 48, 384.0, 0, 0, 47810, 360795, 'K:26712 · V:15093 · E:932'),
    ('r5.16xlarge', 64, 512.0, 0, 0, 63770, 476504, 'K:26740 · V:15108 · E:933'),
    ('r5.24xlarge', 96, 768.0, 0, 0, 95690, 718987, 'K:26768 · V:15123 · E:934'),
    ('r5.metal', 96, 768.0, 0, 0, 95690, 718987, 'K:26796 · V:15198 · E:939'),
]

INSTANCE_TYPES: dict[str, InstanceType] = {row[0]: InstanceType(*row) for row in _ROWS}


def lookup(name: str) -> InstanceType | None:
    """The capacity of an instance type; `ml.` SageMaker HyperPod names map to the EC2 type."""
    return INSTANCE_TYPES.get(name.removeprefix("ml."))


# What an EC2 / HyperPod type name looks like (`p5en.48xlarge`, `ml.g6e.xlarge`, `m7i.metal-24xl`); GKE
# (`a2-highgpu-8g`) and AKS (`Standard_ND96asr_v4`) machine names do not.
EC2_NAME = re.compile(r"^(ml\.)?[a-z][a-z0-9-]*\.[a-z0-9-]+$")

# Every name a values file may write: the EC2 names and their `ml.` HyperPod spellings.
KNOWN_NAMES: tuple[str, ...] = (*INSTANCE_TYPES, *(f"ml.{n}" for n in INSTANCE_TYPES))


def edit_distance(a: str, b: str) -> int:
    """Edit distance with adjacent transpositions (optimal string alignment): `p5ne` -> `p5en` is one edit."""
    prev2, prev = [], list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        cur = [i] + [0] * len(b)
        for j in range(1, len(b) + 1):
            cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] != b[j - 1]))
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                cur[j] = min(cur[j], prev2[j - 2] + 1)
        prev2, prev = prev, cur
    return prev[-1]


def _deletions(name: str) -> set[str]:
    return {name} | {name[:i] + name[i + 1:] for i in range(len(name))}


# Each name and its one-character deletions -> names: two strings one edit apart (any of the four kinds) share
# a key, so one-edit typos are found without scanning the catalogue.
_BY_DELETION: dict[str, set[str]] = {}
for _name in KNOWN_NAMES:
    for _key in _deletions(_name):
        _BY_DELETION.setdefault(_key, set()).add(_name)


def suggestions(name: str, limit: int = 6) -> list[str]:
    """Catalogued names closest to `name` (at most `limit`, all at the same smallest distance, those of the
    same family first): a name the catalogue extends (`p5.48xl`), else any within three edits. Empty when
    nothing is close. A typo one edit from several names (`5.4xlarge`) names them all."""
    name = name.strip().lower()
    extended = sorted((n for n in KNOWN_NAMES if n.startswith(name) and "." in name), key=len)
    if extended:
        return extended[:1]
    near = {n for key in _deletions(name) for n in _BY_DELETION.get(key, ())}
    family = name.removeprefix("ml.").split(".")[0]
    one_edit = sorted((n for n in near if edit_distance(name, n) <= 1),
                      key=lambda n: (n.removeprefix("ml.").split(".")[0] != family, n))
    if one_edit:
        return one_edit[:limit]
    scored = [(d, n) for n in KNOWN_NAMES if abs(len(n) - len(name)) <= 3 and (d := edit_distance(name, n)) <= 3]
    best = min((d for d, _ in scored), default=None)
    return [n for d, n in scored if d == best][:limit]


def did_you_mean(name: str) -> str:
    """` (did you mean p5.48xlarge?)`, or "" when no catalogued name is close."""
    found = suggestions(name)
    return f" (did you mean {' or '.join(found)}?)" if found else ""


# Memory of one GPU, MiB, per GPU instance family: EC2 DescribeInstanceTypes GpuInfo.Gpus[0].MemoryInfo.SizeInMiB,
# which Karpenter labels `karpenter.k8s.aws/instance-gpu-memory` (K, per GPU; the reference table's "GPU mem / GPU"
# column). Marketing figures (141 GB H200, 180 GB B200) differ and are not used.
GPU_MEMORY_MIB: dict[str, int] = {
    "p4d": 40960, "p4de": 81920, "p5": 81920, "p5e": 144384, "p5en": 144384, "p6-b200": 183359, "p6-b300": 275040,
    "g5": 22888, "g6": 22888, "g6e": 45776,
}


def gpu_memory_mib(name: str, stated: InstanceType | None = None) -> int | None:
    """Memory of one GPU of an instance type (MiB): the catalogue's, else what `stated` (a type the catalogue
    lacks, as the values or `.grpo-lint.yaml` state it) says; None for a type without GPUs or not known."""
    node = lookup(name)
    if node is not None:
        return GPU_MEMORY_MIB.get(node.name.split(".")[0]) if node.gpus else None
    return stated.gpu_memory_mib if stated is not None and stated.gpus else None
