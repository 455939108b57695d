"""Building frozen slotted dataclasses without their ``__init__``, for hot paths.

A frozen dataclass's generated ``__init__`` stores each field through
``object.__setattr__`` (the price of refusing assignment later), which makes a
14-field event cost about 2.5 times what a mutable one does. Where the library
builds a record from values it has already checked (every tool call builds an
invocation context, a tool context, a ``ToolInvoked`` event and an execution), a
direct constructor stores the fields through their slot descriptors instead: the
same object, built the same way the generated ``__init__`` would, for less.

Only classes whose ``__init__`` would do nothing else qualify: a dataclass-generated
``__init__``, no ``__post_init__``, no ``init=False`` field, slots, no custom
``__new__``. :func:`direct_constructor` refuses any other class.
"""

from __future__ import annotations

import dataclasses
import inspect
import linecache
from collections.abc import Callable
from types import MemberDescriptorType
from typing import Any, cast

from weakincentives._codegen import generated_function

__all__ = ["direct_constructor", "generated_init", "slot_setter"]

_MISSING = object()


def generated_init(cls: type[object]) -> bool:
    """Whether ``cls.__init__`` is the one ``dataclasses`` wrote, not a hand-written one.

    ``dataclasses`` generates its methods at run time, so they have no source file:
    ``inspect.getsourcelines`` documents an ``OSError`` when "the source code cannot
    be retrieved", which is exactly that case. Generated code shares its pseudo file
    name with other run-time code (``python -c``), whose text ``linecache`` may hold,
    so found source counts only when it defines this very function.
    """
    init = cls.__dict__.get("__init__")
    if not inspect.isfunction(init):
        return False
    try:
        lines, _ = inspect.getsourcelines(init)
    except OSError:
        return True
    filename = init.__code__.co_filename
    if filename in linecache.cache and not filename.endswith(".py"):
        return not any(line.lstrip().startswith("def __init__") for line in lines)
    return False


def slot_setter(cls: type[object], name: str) -> Callable[[object, object], None] | None:
    """The setter of the slot holding field ``name`` of ``cls``, or None if it has none."""
    descriptor = inspect.getattr_static(cls, name, None)
    if isinstance(descriptor, MemberDescriptorType):
        return cast(Callable[[object, object], None], descriptor.__set__)
    return None


def direct_constructor[T](cls: type[T]) -> Callable[..., T]:
    """A keyword-only constructor of ``cls`` that skips ``__init__`` and sets slots directly.

    It takes the same keywords with the same defaults (factories are called) and
    builds an object equal to ``cls(**keywords)``; it checks nothing the generated
    ``__init__`` would not. Raises ``TypeError`` for a class it cannot build exactly.
    """
    params = getattr(cls, "__dataclass_params__", None)
    problem = None
    if params is None or not params.init:
        problem = "it is not a dataclass with a generated __init__"
    elif not generated_init(cast(type[object], cls)):
        problem = "its __init__ is hand-written"
    elif hasattr(cls, "__post_init__"):
        problem = "it has __post_init__"
    elif cls.__new__ is not object.__new__:
        problem = "it has a custom __new__"
    if problem is not None:
        raise TypeError(f"no direct constructor for {cls.__qualname__}: {problem}")
    fields = dataclasses.fields(cast(Any, cls))
    namespace: dict[str, object] = {"_cls": cls, "_new": object.__new__, "_M": _MISSING}
    parameters: list[str] = []
    body: list[str] = ["o = _new(_cls)"]
    for index, field in enumerate(fields):
        setter = slot_setter(cast(type[object], cls), field.name)
        if not field.init or setter is None:
            reason = "an init=False field" if not field.init else "a field without a slot"
            raise TypeError(
                f"no direct constructor for {cls.__qualname__}: {reason} {field.name!r}"
            )
        namespace[f"_s{index}"] = setter
        if field.default is not dataclasses.MISSING:
            namespace[f"_d{index}"] = field.default
            parameters.append(f"{field.name}=_d{index}")
        elif field.default_factory is not dataclasses.MISSING:
            namespace[f"_f{index}"] = field.default_factory
            parameters.append(f"{field.name}=_M")
            body.append(f"if {field.name} is _M: {field.name} = _f{index}()")
        else:
            parameters.append(field.name)
        body.append(f"_s{index}(o, {field.name})")
    body.append("return o")
    name = f"make_{cls.__name__}"
    header = f"def {name}(*, {', '.join(parameters)}):" if parameters else f"def {name}():"
    source = "\n".join([header, *(f"    {line}" for line in body)]) + "\n"
    label = f"direct {cls.__module__}.{cls.__qualname__}"
    return cast(Callable[..., T], generated_function(source, name, namespace, label=label))
