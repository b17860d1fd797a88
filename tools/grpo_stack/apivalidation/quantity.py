"""Resource quantities as k8s.io/apimachinery/pkg/api/resource.ParseQuantity reads them: a signed decimal number
and one suffix (binary Ki..Ei, decimal n u m k M G T P E, or an exponent e3/E-2)."""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation

_BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
_DECIMAL = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_QUANTITY = re.compile(r"([+-]?)([0-9]+(?:\.[0-9]*)?|\.[0-9]+)(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]|[eE][+-]?[0-9]+)?")
FORMAT = "'<number><suffix>' (e.g. 500m, 1.5Gi, 4, 2e3); suffixes Ki Mi Gi Ti Pi Ei, n u m k M G T P E"


def parse(value: object) -> Decimal | None:
    """The quantity's value, or None when the API server would refuse it. Integers and floats are accepted, as
    the API server's JSON decoder accepts them."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return Decimal(str(value))
    if not isinstance(value, str):
        return None
    m = _QUANTITY.fullmatch(value)
    if not m:
        return None
    sign, number, suffix = m.group(1), m.group(2), m.group(3) or ""
    try:
        amount = Decimal(number) * (-1 if sign == "-" else 1)
        if suffix in _BINARY:
            return amount * _BINARY[suffix]
        if suffix in _DECIMAL:
            return amount.scaleb(_DECIMAL[suffix])
        return amount.scaleb(int(suffix[1:]))
    except (InvalidOperation, ValueError, OverflowError):
        return None
