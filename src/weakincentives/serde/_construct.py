"""How a generated parse function builds the object once every field is checked.

The class's own ``__init__`` is the reference. When it is the one ``dataclasses``
wrote and nothing custom runs (no ``__post_init__``, no ``init=False`` field, no
custom ``__new__``), the object can be built without the call, which saves the
keyword-argument handling, and for frozen classes one ``object.__setattr__`` per
field. The result is the same object the call builds, by the cheapest route that
stores the same values in the same places:

- mutable classes: plain attribute stores, exactly the generated ``__init__``'s;
- frozen classes whose instances keep a ``__dict__`` (and whose fields are not
  backed by data descriptors): the dict is set in one go;
- frozen slotted classes derived from ``object`` alone, without ``__del__``: the
  fields are stored on a *twin*, a plain class with the same ``__slots__`` (so the
  same layout), whose stores the interpreter runs without a call, and the object
  then takes its real class by ``__class__`` assignment, which CPython allows only
  between classes of the same layout (checked once, on a probe object);
- other frozen classes: each field through its slot's setter, else
  ``object.__setattr__`` (what the generated ``__init__`` calls).
"""

from __future__ import annotations

import dataclasses
import inspect
from types import GetSetDescriptorType, MemberDescriptorType
from typing import cast

from weakincentives._direct import generated_init, slot_setter
from weakincentives.serde._nodes import Model

__all__ = ["construction"]


def construction(cls: type[object], model: Model, namespace: dict[str, object]) -> list[str]:
    """Lines that build ``cls`` from the locals ``f0..fN`` and return it.

    Constants the lines need go into ``namespace``: ``_cls`` and ``_new`` are
    expected there already, and ``_built`` (which turns an error of ``__init__``
    into a conversion error).
    """
    if not _direct_build(cls, model):
        return _through_init(cls, model)
    names = [field.name for field in model.fields]
    params = getattr(cls, "__dataclass_params__", None)
    if params is not None and not params.frozen:
        return ["o = _new(_cls)", *(f"o.{name} = f{i}" for i, name in enumerate(names)), "return o"]
    set_dict = _dict_setter(cls, names)
    if set_dict is not None:
        namespace["_setdict"] = set_dict
        items = ", ".join(f"{name!r}: f{index}" for index, name in enumerate(names))
        return ["o = _new(_cls)", f"_setdict(o, {{{items}}})", "return o"]
    twin = _twin(cls, names)
    if twin is not None:
        namespace["_twin"] = twin
        stores = [f"o.{name} = f{index}" for index, name in enumerate(names)]
        return ["o = _twin()", *stores, "o.__class__ = _cls", "return o"]
    return ["o = _new(_cls)", *_field_stores(cls, names, namespace), "return o"]


def _direct_build(cls: type[object], model: Model) -> bool:
    """Whether setting the fields directly does exactly what ``__init__`` would."""
    params = getattr(cls, "__dataclass_params__", None)
    return (
        params is not None
        and params.init
        and generated_init(cls)
        and not hasattr(cls, "__post_init__")
        and cls.__new__ is object.__new__
        and (params.frozen or cls.__setattr__ is object.__setattr__)
        and len(dataclasses.fields(cast(type, cls))) == len(model.fields)
    )


def _through_init(cls: type[object], model: Model) -> list[str]:
    keyword_only = {field.name for field in dataclasses.fields(cast(type, cls)) if field.kw_only}
    positional = [
        f"f{index}" for index, field in enumerate(model.fields) if field.name not in keyword_only
    ]
    keywords = [
        f"{field.name}=f{index}"
        for index, field in enumerate(model.fields)
        if field.name in keyword_only
    ]
    return [
        "try:",
        f"    return _cls({', '.join(positional + keywords)})",
        "except (TypeError, ValueError) as e:",
        "    raise _built(e) from None",
    ]


def _dict_setter(cls: type[object], names: list[str]) -> object | None:
    """The setter of the instances' ``__dict__``, when every field lives in it."""
    descriptor = next(
        (
            klass.__dict__["__dict__"]
            for klass in cls.__mro__
            if isinstance(klass.__dict__.get("__dict__"), GetSetDescriptorType)
        ),
        None,
    )
    if descriptor is None:
        return None
    for name in names:
        attribute = inspect.getattr_static(cls, name, None)
        if hasattr(type(attribute), "__set__") or hasattr(type(attribute), "__delete__"):
            return None  # a slot or a data descriptor: __init__ would store through it
    return cast(GetSetDescriptorType, descriptor).__set__


def _twin(cls: type[object], names: list[str]) -> type[object] | None:
    """A plain class with ``cls``'s layout, or None when the swap would not be exact."""
    slots = cls.__dict__.get("__slots__")
    if cls.__bases__ != (object,) or not isinstance(slots, tuple):
        return None
    if hasattr(cls, "__del__"):
        return None  # the probe below would be finalized with its fields unset
    if not all(isinstance(cls.__dict__.get(name), MemberDescriptorType) for name in names):
        return None
    twin = type(f"{cls.__name__}Twin", (object,), {"__slots__": slots, "__module__": __name__})
    probe: object = object.__new__(twin)
    try:
        probe.__class__ = cls
    except TypeError:  # a layout CPython will not swap: store through the setters
        return None
    return twin


def _field_stores(cls: type[object], names: list[str], namespace: dict[str, object]) -> list[str]:
    """Lines storing each field: through its slot's setter (cheapest), else ``__setattr__``."""
    lines: list[str] = []
    for index, name in enumerate(names):
        setter = slot_setter(cls, name)
        if setter is None:
            lines.append(f"_set(o, {name!r}, f{index})")
        else:
            namespace[f"_w{index}"] = setter
            lines.append(f"_w{index}(o, f{index})")
    return lines
