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
``prepare(name, device, tensors..., **attributes)`` checks and compiles an op once as a
``tpurt.Executable`` to ``run(device)`` or ``queue(stream)`` many times.
"""

from . import _tpurt

__all__ = ["prepare"]
_ops = {}


def _text(value):
    """An attribute value as the registry's text."""
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, float):
        return value.hex()  # exact
    if isinstance(value, _tpurt.DType):
        return value.name
    return str(value)


def _arguments(name, tensors, kwargs):
    """The operand list and attribute texts of a call of op `name`."""
    operands, attributes, signature = _ops[name]
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
            what = "given twice" if key in [o for o, _ in operands] else "unknown"
            raise TypeError(f"{name}: argument '{key}' {what}: {signature}")
        attrs[key] = _text(value)
    return values, attrs


def prepare(name, device, *tensors, **kwargs):
    """The op `name` checked and compiled once for these tensors, as a tpurt.Executable.

    Tensors and attributes as for the op's function; ``run(device)`` it or ``queue(stream)`` it
    as often as needed (the tensors' contents may change in between).
    """
    if name not in _ops:  # the runtime's error names the op
        return _tpurt.prepare_op(device, name, list(tensors), {})
    values, attrs = _arguments(name, tensors, kwargs)
    return _tpurt.prepare_op(device, name, values, attrs)


def _make(name, operands, attributes, signature):
    def op(target, *tensors, timeout=None, **kwargs):
        values, attrs = _arguments(name, tensors, kwargs)
        return _tpurt.run_op(target, name, values, attrs, timeout)

    op.__name__ = op.__qualname__ = name
    op.__doc__ = (f"{signature}\n\nThe runtime's op '{name}' on a Stream (queued, returns None) "
                  f"or a Device (run and waited for, returns Stats); tensors "
                  f"{', '.join(o for o, _ in operands)}"
                  + (f"; attributes {', '.join(attributes)}" if attributes else "") + ".")
    return op


for _name, _operands, _attributes, _signature in _tpurt.op_list():
    _ops[_name] = (_operands, _attributes, _signature)
    globals()[_name] = _make(_name, _operands, _attributes, _signature)
    __all__.append(_name)
