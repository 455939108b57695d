"""Behaviour of SessionStorage, standalone and inside a session."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass

import pytest

from tests.runtime._concurrency import run_threads
from weakincentives.errors import SessionError
from weakincentives.runtime import Session, SessionStorageError
from weakincentives.runtime._storage import SessionStorage


@dataclass(frozen=True, slots=True)
class Cursor:
    page: int


@pytest.fixture
def storage() -> SessionStorage:
    return Session().storage


def test_set_then_get_returns_the_value(storage: SessionStorage) -> None:
    """A stored value is read back when the expected type matches."""
    storage.set("search_cursor", Cursor(2))
    assert storage.get("search_cursor", Cursor) == Cursor(2)


def test_get_of_a_missing_key_is_none(storage: SessionStorage) -> None:
    """Reading a key that was never set gives None."""
    assert storage.get("missing", Cursor) is None


def test_set_replaces_the_previous_value(storage: SessionStorage) -> None:
    """Setting an existing key overwrites it."""
    storage.set("count", 1)
    storage.set("count", 2)
    assert storage.get("count", int) == 2


def test_get_accepts_subclasses_of_the_expected_type(storage: SessionStorage) -> None:
    """Type checks use isinstance, so a bool satisfies int and anything satisfies object."""
    storage.set("flag", True)
    assert storage.get("flag", int) is True
    assert storage.get("flag", object) is True


def test_get_with_the_wrong_type_is_an_error(storage: SessionStorage) -> None:
    """A stored value of another type raises instead of being cast."""
    storage.set("search_cursor", Cursor(2))
    with pytest.raises(
        SessionStorageError, match=r"key 'search_cursor' holds Cursor, not str"
    ) as info:
        storage.get("search_cursor", str)
    assert info.value.key == "search_cursor"
    assert isinstance(info.value, SessionError)


def test_get_with_a_parametrized_type_is_an_error(storage: SessionStorage) -> None:
    """Parametrized aliases cannot be checked at runtime, so they are refused clearly."""
    storage.set("ids", (1, 2))
    with pytest.raises(SessionStorageError, match=r"pass a plain class such as list"):
        storage.get("ids", tuple[int, ...])


def test_storing_none_is_refused(storage: SessionStorage) -> None:
    """None would be indistinguishable from a missing key, so delete is required instead."""
    with pytest.raises(SessionStorageError, match=r"cannot store None .* use delete\('cursor'\)"):
        storage.set("cursor", None)
    assert storage.keys() == ()


def test_delete_reports_whether_something_was_removed(storage: SessionStorage) -> None:
    """delete returns True once for a stored key and False afterwards."""
    storage.set("cursor", Cursor(1))
    assert storage.delete("cursor") is True
    assert storage.delete("cursor") is False
    assert storage.get("cursor", Cursor) is None


def test_keys_are_sorted(storage: SessionStorage) -> None:
    """keys lists the stored keys in sorted order."""
    for key in ("zeta", "alpha", "mid_2"):
        storage.set(key, 1)
    assert storage.keys() == ("alpha", "mid_2", "zeta")
    assert repr(storage) == "SessionStorage(keys=('alpha', 'mid_2', 'zeta'))"


_OPERATIONS: dict[str, Callable[[SessionStorage, str], object]] = {
    "get": lambda storage, key: storage.get(key, int),
    "set": lambda storage, key: storage.set(key, 1),
    "delete": lambda storage, key: storage.delete(key),
}


@pytest.mark.parametrize("key", ["", "Cursor", "2fast", "has-dash", "has space", "café", "_x"])
@pytest.mark.parametrize("operation", sorted(_OPERATIONS))
def test_keys_must_be_snake_case_ascii(storage: SessionStorage, key: str, operation: str) -> None:
    """Every operation rejects keys that are not snake_case ASCII, naming the key."""
    call = _OPERATIONS[operation]
    with pytest.raises(SessionStorageError, match="is not snake_case ASCII") as info:
        call(storage, key)
    assert info.value.key == key


def test_standalone_storage_works_without_a_session() -> None:
    """SessionStorage can be created directly, for example in a fake session."""
    storage = SessionStorage()
    storage.set("cursor", 1)
    assert storage.get("cursor", int) == 1
    assert storage.delete("cursor") is True


def test_concurrent_writes_are_all_kept() -> None:
    """Writes from many threads to distinct keys are all present afterwards."""
    storage = Session().storage
    workers, per_worker = 8, 100
    barrier = threading.Barrier(workers)

    def write(index: int) -> None:
        barrier.wait()
        for number in range(per_worker):
            storage.set(f"k_{index}_{number}", number)

    run_threads(write, workers)
    assert len(storage.keys()) == workers * per_worker
    assert storage.get("k_7_99", int) == 99
