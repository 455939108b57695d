"""What evaluations cost, from token usage and prices you supply.

There is no built-in price list: prices change and differ by account, so a list
shipped with the library would be wrong sooner or later. You state the prices of the
models you use, per million tokens and in the currency you bill in, and read costs
from :class:`TokenUsage`, from a ``PromptExecuted`` event, or from a whole session.

Token counts follow the OpenAI Responses convention that ``TokenUsage`` records:
``cached_input_tokens`` are part of ``input_tokens`` (charged at the cached price
instead of the input price) and ``reasoning_tokens`` are part of ``output_tokens``
(charged at the output price). Arithmetic is exact ``Decimal``; round for display
with ``quantize`` when you need to.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import Decimal

from weakincentives.errors import ConfigValidationError, WinkError
from weakincentives.runtime._events import PromptExecuted, TokenUsage
from weakincentives.runtime._fieldwise import FieldwiseSum
from weakincentives.runtime._session import SessionProtocol

__all__ = ["Cost", "ModelPrice", "Pricing", "PricingError"]

_MILLION = Decimal(1_000_000)
_ZERO = Decimal(0)

type Amount = Decimal | int | float | str
"""A price as written by hand: floats go through their shortest repr, so 2.5 is exactly 2.5."""


class PricingError(WinkError):
    """A cost cannot be computed: no price for the model, or an impossible usage record."""

    model: str | None
    evaluation_id: str | None

    def __init__(
        self, message: str, *, model: str | None = None, evaluation_id: str | None = None
    ) -> None:
        super().__init__(message)
        self.model = model
        self.evaluation_id = evaluation_id


def _decimal(name: str, value: object) -> Decimal:
    if isinstance(value, bool) or not isinstance(value, Decimal | int | float | str):
        raise ConfigValidationError(
            f"ModelPrice.{name} must be a number, got {type(value).__name__}",
            config_type=ModelPrice,
            field_name=name,
            value=value,
        )
    try:
        amount = Decimal(str(value)) if isinstance(value, float) else Decimal(value)
    except ArithmeticError:
        amount = Decimal("NaN")
    if not amount.is_finite() or amount < 0:
        raise ConfigValidationError(
            f"ModelPrice.{name} must be a finite amount >= 0 per million tokens, got {value!r}",
            config_type=ModelPrice,
            field_name=name,
            value=value,
        )
    return amount


@dataclass(frozen=True, slots=True, kw_only=True)
class Cost(FieldwiseSum):
    """What some usage cost, split by kind of token; amounts are in your prices' currency."""

    input: Decimal = _ZERO
    """Input tokens that were not served from the provider's cache."""
    cached_input: Decimal = _ZERO
    """Input tokens served from the cache."""
    cache_write: Decimal = _ZERO
    """Input tokens written to the cache."""
    output: Decimal = _ZERO
    """Output tokens, reasoning included."""

    @property
    def total(self) -> Decimal:
        """The sum of the parts."""
        return self.input + self.cached_input + self.cache_write + self.output


@dataclass(frozen=True, slots=True, kw_only=True)
class ModelPrice:
    """One model's prices per million tokens.

    Build it with :meth:`per_million`, which accepts ints, floats, strings and
    ``Decimal``; the fields always hold ``Decimal``.
    """

    input: Decimal
    """Price of a million input tokens."""
    output: Decimal
    """Price of a million output tokens (reasoning tokens are output tokens)."""
    cached_input: Decimal | None = None
    """Price of a million cached input tokens; None charges them at the input price."""
    cache_write: Decimal | None = None
    """Price of a million tokens written to the cache; None charges them at the input price."""

    def __post_init__(self) -> None:
        for name in ("input", "output", "cached_input", "cache_write"):
            value = getattr(self, name)
            if value is None and name in ("cached_input", "cache_write"):
                continue
            if not isinstance(value, Decimal):
                raise ConfigValidationError(
                    f"ModelPrice.{name} must be a Decimal, got {type(value).__name__}; "
                    "ModelPrice.per_million(...) accepts plain numbers",
                    config_type=ModelPrice,
                    field_name=name,
                    value=value,
                )
            _decimal(name, value)  # finite and not negative

    @classmethod
    def per_million(
        cls,
        *,
        input: Amount,
        output: Amount,
        cached_input: Amount | None = None,
        cache_write: Amount | None = None,
    ) -> ModelPrice:
        """Prices per million tokens from plain numbers (``2.5``, ``"0.625"``, ``10``)."""
        return cls(
            input=_decimal("input", input),
            output=_decimal("output", output),
            cached_input=None if cached_input is None else _decimal("cached_input", cached_input),
            cache_write=None if cache_write is None else _decimal("cache_write", cache_write),
        )

    def cost(self, usage: TokenUsage) -> Cost:
        """What ``usage`` costs at these prices."""
        for name in ("input_tokens", "output_tokens", "cached_input_tokens", "cache_write_tokens"):
            if getattr(usage, name) < 0:
                raise PricingError(f"usage has {name}={getattr(usage, name)}, which is negative")
        cache_tokens = usage.cached_input_tokens + usage.cache_write_tokens
        if cache_tokens > usage.input_tokens:
            raise PricingError(
                f"usage has cached_input_tokens={usage.cached_input_tokens} + "
                f"cache_write_tokens={usage.cache_write_tokens} > "
                f"input_tokens={usage.input_tokens}; cache reads and writes are counted within "
                "input tokens"
            )
        cached_price = self.input if self.cached_input is None else self.cached_input
        write_price = self.input if self.cache_write is None else self.cache_write
        uncached = usage.input_tokens - cache_tokens
        return Cost(
            input=Decimal(uncached) * self.input / _MILLION,
            cached_input=Decimal(usage.cached_input_tokens) * cached_price / _MILLION,
            cache_write=Decimal(usage.cache_write_tokens) * write_price / _MILLION,
            output=Decimal(usage.output_tokens) * self.output / _MILLION,
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class Pricing:
    """Your prices, by model name as the adapter records it on ``PromptExecuted.model``.

    Names match exactly. ``default`` prices any other model, and evaluations whose
    adapter records no model; without it those raise :class:`PricingError`.
    """

    models: Mapping[str, ModelPrice] = field(default_factory=dict)
    default: ModelPrice | None = None

    def __post_init__(self) -> None:
        for name, price in self.models.items():
            if not isinstance(name, str) or not name:
                raise ConfigValidationError(
                    f"Pricing.models keys must be model names, got {name!r}",
                    config_type=Pricing,
                    field_name="models",
                    value=name,
                )
            if not isinstance(price, ModelPrice):
                raise ConfigValidationError(
                    f"Pricing.models[{name!r}] must be a ModelPrice, got {type(price).__name__}",
                    config_type=Pricing,
                    field_name="models",
                    value=price,
                )

    def price_of(self, model: str | None) -> ModelPrice:
        """The price of ``model``: its own entry, else ``default``."""
        price = self.models.get(model) if model is not None else None
        if price is not None:
            return price
        if self.default is not None:
            return self.default
        priced = ", ".join(sorted(self.models)) or "none"
        if model is None:
            raise PricingError(
                "the evaluation recorded no model; give Pricing a default= price "
                "(or price the usage with usage_cost(usage, model=...))"
            )
        raise PricingError(
            f"no price for model {model!r} (priced: {priced}); add it to Pricing(models=...) "
            "or give a default= price",
            model=model,
        )

    def usage_cost(self, usage: TokenUsage, *, model: str | None) -> Cost:
        """What ``usage`` cost on ``model``."""
        return self.price_of(model).cost(usage)

    def evaluation_cost(self, event: PromptExecuted) -> Cost:
        """What one evaluation cost, from its ``PromptExecuted`` event."""
        try:
            return self.usage_cost(event.usage, model=event.model)
        except PricingError as error:
            raise PricingError(
                f"evaluation {event.evaluation_id!r} of prompt {event.prompt_name!r}: "
                f"{error.message}",
                model=event.model,
                evaluation_id=event.evaluation_id,
            ) from error

    def session_cost(self, session: SessionProtocol) -> Cost:
        """What every evaluation the session recorded cost, summed."""
        return sum(
            (self.evaluation_cost(event) for event in session.select(PromptExecuted)), Cost()
        )
