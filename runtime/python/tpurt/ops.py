# SPDX-License-Identifier: MIT
"""Every op of the runtime's registry as a Python function, made from the registry at import.

Each op takes a target first, a ``tpurt.Stream`` (the op is queued and returns ``None`` at
once) or a ``tpurt.Device`` (it runs, waits and returns the card's ``tpurt.Stats``), then its
tensors (positional in the registry's order, or by name; an optional one may be left out) and
its attributes by name::

    tpurt.ops.matmul(stream, a, b, c)
    tpurt.ops.dense(device, x, w, h, bias=b, activation="relu")
    tpurt.ops.elementwise(stream, a, b, out, op="add")

Attribute values are text, numbers or DTypes. ``help(tpurt.ops.<name>)`` shows an op's
signature; bad operands or attributes raise ``tpurt.Error`` with the runtime's message.
"""

from . import _tpurt

__all__ = []


def _text(value):
    """An attribute value as the registry's text."""
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, float):
        return value.hex()  # exact
    if isinstance(value, _tpurt.DType):
        return value.name
    return str(value)


def _make(name, operands, attributes, signature):
    names = [o for o, _ in operands]

    def op(target, *tensors, timeout=None, **kwargs):
        if len(tensors) > len(operands):
            raise TypeError(f"{name} takes {len(operands)} tensors: {signature}")
        values = list(tensors)
        for operand, optional in operands[len(values):]:
            if operand in kwargs:
                values.append(kwargs.pop(operand))
            elif optional:
                values.append(None)
            else:
                raise TypeError(f"{name}: tensor '{operand}' missing: {signature}")
        attrs = {}
        for key, value in kwargs.items():
            if key not in attributes:
                what = "given twice" if key in names else "unknown"
                raise TypeError(f"{name}: argument '{key}' {what}: {signature}")
            attrs[key] = _text(value)
        return _tpurt.run_op(target, name, values, attrs, timeout)

    op.__name__ = op.__qualname__ = name
    op.__doc__ = (f"{signature}\n\nThe runtime's op '{name}' on a Stream (queued, returns None) "
                  f"or a Device (run and waited for, returns Stats); tensors {', '.join(names)}"
                  + (f"; attributes {', '.join(attributes)}" if attributes else "") + ".")
    return op


for _name, _operands, _attributes, _signature in _tpurt.op_list():
    globals()[_name] = _make(_name, _operands, _attributes, _signature)
    __all__.append(_name)
