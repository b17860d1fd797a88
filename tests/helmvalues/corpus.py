"""`--set*` arguments and the values file under them, for comparing grpo-stack's reading with the real Helm
binaries'. HAND is the corpus the parser was written against; HELD_ASIDE is generated from a fixed seed and was
first run once the parser was done (its score is in docs/values-flags.md)."""

from __future__ import annotations

import random

# Keys avoid y/n/on/off: YAML 1.1 reads them as booleans in the file below.
BASE = """\
a:
  b: [1, {c: 2}]
  d: {e: f}
s: str
nul: null
m: {}
num: 3
"""

# (flag, argument) lists, each one command line.
HAND: list[list[tuple[str, str]]] = [
    [("--set", "a.d.e=g")],
    [("--set", "x=1,z=true,w=FALSE,v=Null,u=0,t=007,r=-3,q=+4,p=1.5,o=1e3,k=0x10")],
    [("--set", "big=9223372036854775807,bigger=9223372036854775808,neg=-9223372036854775808")],
    [("--set", "a.b[1].c=3")],
    [("--set", "a.b[3]=x")],
    [("--set", "a.b[0]=x"), ("--set", "a.b[1].k=v")],
    [("--set", "list[0]=a,list[1]=b"), ("--set", "list[3]=d")],
    [("--set", "nested[0][1]=x")],
    [("--set", "a.b[1][0]=x")],
    [("--set", "l={a,b,c}"), ("--set-string", "ls={1,true,null}")],
    [("--set", "l={}")],
    [("--set", "l={a,b}c=1")],
    [("--set", "e=")],
    [("--set", "e=,f=1")],
    [("--set", "esc=a\\,b,dot\\.key=1,eq\\=k=2")],
    [("--set", "x=a=b")],
    [("--set", "trail=1,")],
    [("--set", "a.d=null")],
    [("--set", "s.x=1")],
    [("--set", "num[0]=1")],
    [("--set", "nul.x=1")],
    [("--set", "m.x.y.z=1")],
    [("--set", "a.=1")],
    [("--set", "a.")],
    [("--set", "a[1")],
    [("--set", "a[x]=1")],
    [("--set", "q[-1]=1")],
    [("--set", "q[65536]=1")],
    [("--set", "q[65537]=1")],
    [("--set", "novalue")],
    [("--set", "k.k.k.k.k.k.k.k.k.k.k.k.k.k.k.k.k.k.k.k.k.k.k.k.k.k.k.k.k.k=1")],
    [("--set", "k.k.k.k.k.k.k.k.k.k.k.k.k.k.k.k.k.k.k.k.k.k.k.k.k.k.k.k.k.k.k=1")],
    [("--set", "l={a,b")],
    [("--set", "x=1"), ("--set-string", "x=2"), ("--set-json", "x=3"), ("--set-literal", "x=4")],
    [("--set-literal", "x=4"), ("--set-json", "x=3"), ("--set", "x=1")],
    [("--set-string", "a.d.e=true,n2=10")],
    [("--set-json", 'j={"a":[1,2.5,null,"s"],"b":{"c":true}},k=[1,2]')],
    [("--set-json", "j=")],
    [("--set-json", "j= ,k=1")],
    [("--set-json", "a.b[1]={\"z\":1}")],
    [("--set-json", "j=1e3,k=12345678901234567890")],
    [("--set-json", "j={bad}")],
    [("--set-json", "j=NaN")],
    [("--set-json", '{"a": {"d": {"x": 1}}, "new": [1]}')],
    [("--set-literal", "lit=a,b=c{d}[e]\\f")],
    [("--set-literal", "a.d.e=x.y")],
    [("--set-literal", "l[1]=x,y")],
    [("--set-literal", "noeq")],
    [("--set", "uni.ключ=значение,emoji=🙂")],
    [("--set", "sp ace=a b , c")],
    [("--set", "a.b[0].x=1")],
    [("--set", "[0]=x")],
    [("--set", "=x")],
    [("--set", ".a=1")],
    [("--set", "ends\\")],
]

_ALPHABET = "ab0.[]=,{}\\-1 "


def held_aside(count: int = 150, seed: int = 20261204) -> list[list[tuple[str, str]]]:
    """Random short arguments over the grammar's own characters, one flag each."""
    rng = random.Random(seed)
    flags = ["--set", "--set", "--set-string", "--set-json", "--set-literal"]
    out = []
    for _ in range(count):
        text = "".join(rng.choice(_ALPHABET) for _ in range(rng.randint(1, 12)))
        out.append([(rng.choice(flags), text)])
    return out
