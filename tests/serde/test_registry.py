"""Type names: registered names, default module:qualname names, and resolving them."""

from __future__ import annotations

import itertools
import sys
import types
from dataclasses import dataclass, make_dataclass
from enum import Enum

import pytest

from tests.serde.typed_models import Box, Inner, assert_identical
from weakincentives.errors import SchemaError, UnknownTypeError
from weakincentives.serde import _registry, dump_typed, parse_typed, register_type

_names = itertools.count()


def _fresh_name(stem: str) -> str:
    """A registry name no other test uses (the registry is process-wide)."""
    return f"tests.registry.{stem}{next(_names)}"


def _fresh_class(stem: str = "Made") -> type:
    """A new dataclass, made at run time (its default name would not resolve)."""
    return make_dataclass(f"{stem}{next(_names)}", [("x", int)], frozen=True)


class TestRegisterType:
    """register_type gives a class the name its values are written under."""

    def test_function_form_returns_the_class_and_names_its_values(self) -> None:
        """The registered name replaces module:qualname in what is written."""
        cls = _fresh_class()
        name = _fresh_name("Fn")
        assert register_type(name, cls) is cls
        written = dump_typed(cls(x=1))
        assert written == {"$type": name, "x": 1}
        assert_identical(parse_typed(object, written), cls(x=1))

    def test_decorator_form(self) -> None:
        """@register_type(name) registers and returns the class unchanged."""
        name = _fresh_name("Deco")

        @register_type(name)
        @dataclass(frozen=True)
        class Decorated:
            y: str

        assert dump_typed(Decorated(y="a")) == {"$type": name, "y": "a"}
        assert parse_typed(object, {"$type": name, "y": "a"}) == Decorated(y="a")

    def test_enum_can_be_registered(self) -> None:
        """Enums are stored by name too."""
        name = _fresh_name("Enum")

        @register_type(name)
        class Color(Enum):
            RED = "red"

        assert dump_typed(Color.RED) == {"$type": name, "value": "red"}
        assert parse_typed(object, {"$type": name, "value": "red"}) is Color.RED

    def test_alias_loads_documents_written_under_an_old_name(self) -> None:
        """A class that moved loads old documents through an alias; new ones use the name."""
        old = "old.module:Invoice"
        cls = _fresh_class("Invoice")
        name = _fresh_name("Invoice")
        register_type(name, cls, aliases=(old,))
        assert parse_typed(object, {"$type": old, "x": 2}) == cls(x=2)
        assert dump_typed(cls(x=2)) == {"$type": name, "x": 2}

    def test_registering_again_is_harmless_and_adds_aliases(self) -> None:
        """The same class under the same name may be registered twice, with more aliases."""
        cls = _fresh_class()
        name = _fresh_name("Again")
        register_type(name, cls)
        register_type(name, cls, aliases=("again.old:Name",))
        assert parse_typed(object, {"$type": "again.old:Name", "x": 3}) == cls(x=3)

    def test_a_redefined_class_takes_its_names_over(self) -> None:
        """A class defined again (a reloaded module) may register the same name."""
        name = _fresh_name("Redefined")
        first = register_type(name, make_dataclass("Again", [("x", int)], frozen=True))
        second = register_type(name, make_dataclass("Again", [("x", int)], frozen=True))
        assert first is not second
        assert type(parse_typed(object, {"$type": name, "x": 1})) is second

    def test_a_class_has_one_name(self) -> None:
        """Another name for a registered class is refused, pointing at aliases."""
        cls = _fresh_class()
        first, second = _fresh_name("One"), _fresh_name("Two")
        register_type(first, cls)
        with pytest.raises(
            SchemaError, match=rf"is already registered as '{first}'; pass '{second}' in aliases"
        ) as caught:
            register_type(second, cls)
        assert caught.value.dataclass_type is cls

    @pytest.mark.parametrize("taken_as", ["name", "alias"])
    def test_a_name_belongs_to_one_class(self, taken_as: str) -> None:
        """A name (or alias) held by one class cannot be given to another."""
        holder, other = _fresh_class("Holder"), _fresh_class("Other")
        name = _fresh_name("Held")
        if taken_as == "name":
            register_type(name, holder)
        else:
            register_type(_fresh_name("Main"), holder, aliases=(name,))
        with pytest.raises(
            SchemaError,
            match=(
                rf"type name '{name}' is already registered for .*Holder\d+; "
                r"cannot give it to .*Other\d+"
            ),
        ):
            register_type(name, other)

    @pytest.mark.parametrize("name", ["tuple", "exception", "type", "datetime", "pure_posix_path"])
    def test_reserved_names(self, name: str) -> None:
        """serde's own short names cannot be taken."""
        with pytest.raises(
            SchemaError, match=rf"type name '{name}' is reserved for serde's built-in values"
        ):
            register_type(name, _fresh_class())

    @pytest.mark.parametrize("name", ["", "   "])
    def test_empty_names(self, name: str) -> None:
        """A name must have some text."""
        with pytest.raises(SchemaError, match="type names must be non-empty strings"):
            register_type(name, _fresh_class())

    def test_only_dataclasses_and_enums(self) -> None:
        """A plain class has no stored form."""

        class Plain:
            pass

        with pytest.raises(SchemaError, match=r"only dataclasses and enums are stored by name"):
            register_type(_fresh_name("Plain"), Plain)

    def test_not_a_parametrised_alias(self) -> None:
        """Generic classes are registered themselves, not their aliases."""
        with pytest.raises(
            SchemaError, match=r"register the class itself \(Box\), not a parametrised alias"
        ):
            register_type(_fresh_name("Box"), Box[int])

    def test_a_failed_registration_changes_nothing(self) -> None:
        """When an alias is refused, the name is not registered either."""
        cls = _fresh_class()
        name = _fresh_name("Atomic")
        with pytest.raises(SchemaError, match="reserved"):
            register_type(name, cls, aliases=("tuple",))
        with pytest.raises(UnknownTypeError):
            parse_typed(object, {"$type": name, "x": 1})


class TestDefaultNames:
    """Unregistered classes are written as module:qualname, checked to lead back to them."""

    def test_module_level_class(self) -> None:
        """A module-level dataclass is found again by importing its module."""
        assert dump_typed(Inner(a=1)) == {
            "$type": "tests.serde.typed_models:Inner",
            "a": 1,
            "tags": [],
        }

    def test_nested_class_qualname_is_walked(self) -> None:
        """A class nested in a class is found by walking its qualified name."""
        module = types.ModuleType("tests_registry_nested")

        @dataclass(frozen=True)
        class Inside:
            z: int

        holder = type("Holder", (), {"Inside": Inside})
        Inside.__module__ = module.__name__
        Inside.__qualname__ = "Holder.Inside"
        module.Holder = holder  # type: ignore[attr-defined]
        sys.modules[module.__name__] = module
        try:
            written = dump_typed(Inside(z=1))
            assert written == {"$type": "tests_registry_nested:Holder.Inside", "z": 1}
            assert parse_typed(object, written) == Inside(z=1)
        finally:
            del sys.modules[module.__name__]

    def test_a_class_defined_again_is_found_as_it_is_now(self) -> None:
        """After a module's class is defined again (a reload, a notebook cell run twice),
        its name loads the new class, and the new class can be written."""
        module = types.ModuleType("tests_registry_redefined")
        sys.modules[module.__name__] = module
        try:
            for _ in range(2):
                cls = make_dataclass("Again", [("x", int)], frozen=True, module=module.__name__)
                module.Again = cls  # type: ignore[attr-defined]
                written = dump_typed(cls(x=1))
                assert written == {"$type": "tests_registry_redefined:Again", "x": 1}
                assert type(parse_typed(object, written)) is cls
        finally:
            del sys.modules[module.__name__]

    def test_shadowed_class_is_refused(self) -> None:
        """A class whose module attribute now holds something else cannot be written."""
        cls = _fresh_class("Shadowed")
        cls.__module__ = __name__
        with pytest.raises(
            SchemaError,
            match=(
                rf"its name 'tests.serde.test_registry:{cls.__qualname__}' does not lead back "
                rf"to it \(tests.serde.test_registry has no attribute '{cls.__qualname__}'"
            ),
        ):
            dump_typed(cls(x=1))

    def test_replaced_class_is_refused(self) -> None:
        """A module attribute that is another class of the same name is not this class."""
        original = _fresh_class("Twin")
        twin = make_dataclass(original.__name__, [("x", int)], frozen=True)
        module = sys.modules[__name__]
        setattr(module, original.__name__, twin)
        original.__module__ = twin.__module__ = __name__
        try:
            with pytest.raises(
                SchemaError,
                match=rf"'tests.serde.test_registry:{original.__name__}' leads to another object",
            ):
                dump_typed(original(x=1))
        finally:
            delattr(module, original.__name__)


class TestResolution:
    """Names that do not lead to a loadable class are UnknownTypeErrors saying why."""

    @pytest.mark.parametrize(
        ("name", "reason"),
        [
            ("nosuchname", r"it is neither a registered name nor of the form module:qualname"),
            ("..x:Y", r"it is neither a registered name nor of the form module:qualname"),
            (
                "os:path.<locals>",
                r"it is neither a registered name nor of the form module:qualname",
            ),
            (
                "no_such_pkg_qq:Thing",
                r"module no_such_pkg_qq cannot be imported \(No module named 'no_such_pkg_qq'\)",
            ),
            (
                "tests.serde.typed_models:Gone",
                r"tests.serde.typed_models has no attribute 'Gone'; if the class moved or was "
                r"renamed, register it with aliases=\('tests.serde.typed_models:Gone',\)",
            ),
            (
                "os:getcwd",
                r"os.getcwd is a builtin_function_or_method, not a dataclass, enum or value type "
                r"serde can load",
            ),
            (
                "subprocess:Popen",
                r"subprocess.Popen is the class Popen, not a dataclass, enum or value type serde "
                r"can load",
            ),
            ("os:sep", r"os.sep is a str, not a dataclass"),
        ],
    )
    def test_refused_names(self, name: str, reason: str) -> None:
        """Each refusal names the type and the reason."""
        with pytest.raises(UnknownTypeError, match=reason) as caught:
            parse_typed(object, {"$type": name, "value": 1})
        assert (caught.value.type_name, caught.value.path) == (name, "$")

    def test_the_parse_cache_is_bounded(self, monkeypatch: pytest.MonkeyPatch) -> None:
        """Names come from stored data, so only so many parsed names are kept."""
        name = "tests.serde.typed_models:Inner"
        monkeypatch.delitem(_registry._SPLIT, name, raising=False)
        monkeypatch.setattr(_registry, "_SPLIT_LIMIT", len(_registry._SPLIT))
        assert parse_typed(type, name) is Inner
        assert name not in _registry._SPLIT

    def test_full_names_of_value_types_load(self) -> None:
        """A built-in value type named by module:qualname reads like its short name."""
        assert parse_typed(object, {"$type": "builtins:tuple", "value": [1]}) == (1,)
        assert parse_typed(object, {"$type": "builtins:frozenset", "value": [1]}) == frozenset({1})

    def test_type_values_resolve_through_the_registry(self) -> None:
        """``type[X]`` positions store class names and load the classes."""
        assert parse_typed(type, "tests.serde.typed_models:Inner") is Inner
        with pytest.raises(UnknownTypeError, match=r"unknown type 'nope' at \$\[0\]"):
            parse_typed(list[type], ["nope"])
