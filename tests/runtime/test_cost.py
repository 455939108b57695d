"""Cost from token usage and user-supplied prices: exact arithmetic, clear errors."""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal

import pytest

from weakincentives.adapters import OfflineAdapter, ScriptedTurn
from weakincentives.errors import ConfigValidationError
from weakincentives.prompt import MarkdownSection, Prompt
from weakincentives.runtime import (
    Cost,
    InProcessEventBus,
    ModelPrice,
    Pricing,
    PricingError,
    PromptExecuted,
    Session,
    TokenUsage,
)

_AT = datetime(2026, 1, 1, tzinfo=UTC)

GPT = ModelPrice.per_million(input=2.5, cached_input="0.625", output=10)
MINI = ModelPrice.per_million(input="0.4", cached_input=0.1, output=Decimal("1.6"))


def executed(evaluation_id: str, usage: TokenUsage, model: str | None) -> PromptExecuted:
    return PromptExecuted(
        evaluation_id=evaluation_id,
        prompt_name="triage",
        adapter="openai",
        session_id=None,
        text="",
        output=None,
        tool_call_count=0,
        rounds=1,
        halted=False,
        usage=usage,
        started_at=_AT,
        finished_at=_AT,
        model=model,
    )


class TestModelPrice:
    def test_per_million_keeps_written_amounts_exact(self) -> None:
        """Floats go through their shortest repr, strings and ints convert exactly."""
        assert (GPT.input, GPT.cached_input, GPT.output) == (
            Decimal("2.5"),
            Decimal("0.625"),
            Decimal(10),
        )
        assert ModelPrice.per_million(input=0.1, output=0.2).input == Decimal("0.1")

    def test_cost_splits_by_token_kind(self) -> None:
        """Uncached input, cached input and output are each priced per million tokens."""
        usage = TokenUsage(
            input_tokens=1_234_567,
            cached_input_tokens=200_000,
            output_tokens=89_012,
            reasoning_tokens=50_000,
        )
        cost = GPT.cost(usage)
        assert cost == Cost(
            input=Decimal("2.5864175"),
            cached_input=Decimal("0.125"),
            output=Decimal("0.89012"),
        )
        assert cost.total == Decimal("3.6015375")
        assert float(cost.total) == 3.6015375

    def test_decimal_avoids_float_drift(self) -> None:
        """0.1 per million for three million tokens is exactly 0.3, not 0.30000000000000004."""
        cost = ModelPrice.per_million(input=0.1, output=0).cost(TokenUsage(input_tokens=3_000_000))
        assert cost.input == Decimal("0.3")
        assert float(cost.total) == 0.3

    def test_cached_tokens_default_to_the_input_price(self) -> None:
        """Without a cached price, cached input tokens cost what input tokens cost."""
        price = ModelPrice.per_million(input=3, output=15)
        cost = price.cost(TokenUsage(input_tokens=1000, cached_input_tokens=400, output_tokens=10))
        assert cost == Cost(
            input=Decimal("0.0018"), cached_input=Decimal("0.0012"), output=Decimal("0.00015")
        )

    def test_cache_writes_have_their_own_price(self) -> None:
        """Tokens written to the cache (Anthropic) cost the cache-write price, else input's."""
        usage = TokenUsage(
            input_tokens=1_000_000, cached_input_tokens=200_000, cache_write_tokens=300_000
        )
        priced = ModelPrice.per_million(input=3, output=15, cached_input=0.3, cache_write=3.75)
        assert priced.cost(usage) == Cost(
            input=Decimal("1.5"), cached_input=Decimal("0.06"), cache_write=Decimal("1.125")
        )
        plain = ModelPrice.per_million(input=3, output=15)
        assert plain.cost(usage).cache_write == Decimal("0.9")

    @pytest.mark.parametrize(
        ("arguments", "field_name", "message"),
        [
            ({"input": -1, "output": 1}, "input", "ModelPrice.input must be a finite amount >= 0"),
            ({"input": 1, "output": "NaN"}, "output", "got 'NaN'"),
            ({"input": "two", "output": 1}, "input", "got 'two'"),
            ({"input": float("inf"), "output": 1}, "input", "got inf"),
            ({"input": True, "output": 1}, "input", "must be a number, got bool"),
            ({"input": 1, "output": 1, "cached_input": [1]}, "cached_input", "got list"),
        ],
    )
    def test_bad_prices_are_refused(
        self, arguments: dict[str, object], field_name: str, message: str
    ) -> None:
        """Every price is a finite, non-negative number; the error names the field."""
        with pytest.raises(ConfigValidationError, match=message) as caught:
            ModelPrice.per_million(**arguments)  # type: ignore[arg-type]
        assert caught.value.field_name == field_name

    def test_direct_construction_needs_decimals(self) -> None:
        """The fields hold Decimal; plain numbers go through per_million."""
        with pytest.raises(ConfigValidationError) as caught:
            ModelPrice(input=2.5, output=Decimal(1))  # type: ignore[arg-type]
        assert caught.value.message == (
            "ModelPrice.input must be a Decimal, got float; "
            "ModelPrice.per_million(...) accepts plain numbers"
        )
        with pytest.raises(ConfigValidationError, match="cached_input must be a finite"):
            ModelPrice(input=Decimal(1), output=Decimal(1), cached_input=Decimal(-1))

    @pytest.mark.parametrize(
        ("usage", "message"),
        [
            (
                TokenUsage(input_tokens=10, cached_input_tokens=11),
                "cached_input_tokens=11 \\+ cache_write_tokens=0 > input_tokens=10; cache reads "
                "and writes are counted within input tokens",
            ),
            (
                TokenUsage(input_tokens=10, cached_input_tokens=6, cache_write_tokens=5),
                "cached_input_tokens=6 \\+ cache_write_tokens=5 > input_tokens=10",
            ),
            (TokenUsage(output_tokens=-1), "output_tokens=-1, which is negative"),
        ],
    )
    def test_impossible_usage_is_refused(self, usage: TokenUsage, message: str) -> None:
        """A provider's inconsistent counts raise instead of yielding a negative cost."""
        with pytest.raises(PricingError, match=message):
            GPT.cost(usage)


class TestCost:
    def test_costs_add_up_by_part(self) -> None:
        """Adding costs adds each part; the total follows."""
        total = Cost(input=Decimal("0.1"), output=Decimal("0.2")) + Cost(
            cached_input=Decimal("0.05"), output=Decimal("0.3")
        )
        assert total == Cost(
            input=Decimal("0.1"), cached_input=Decimal("0.05"), output=Decimal("0.5")
        )
        assert total.total == Decimal("0.65")
        assert Cost().total == Decimal(0)

    def test_token_usages_add_up_by_field(self) -> None:
        """Adding usages adds every count, the cache and reasoning ones included."""
        total = TokenUsage(
            input_tokens=100, output_tokens=20, cached_input_tokens=40, reasoning_tokens=5
        ) + TokenUsage(input_tokens=7, output_tokens=3, cache_write_tokens=2)
        assert total == TokenUsage(
            input_tokens=107,
            output_tokens=23,
            cached_input_tokens=40,
            reasoning_tokens=5,
            cache_write_tokens=2,
        )
        assert total.total_tokens == 130


class TestPricing:
    pricing = Pricing(models={"gpt-4.1": GPT, "gpt-4.1-mini": MINI})

    def test_models_are_looked_up_by_exact_name(self) -> None:
        """Each model gets its own price."""
        assert self.pricing.price_of("gpt-4.1-mini") is MINI
        assert self.pricing.usage_cost(TokenUsage(input_tokens=1_000_000), model="gpt-4.1") == Cost(
            input=Decimal("2.5")
        )

    def test_unknown_model_without_default_names_the_fix(self) -> None:
        """No guessing: an unpriced model is an error listing what is priced."""
        with pytest.raises(PricingError) as caught:
            self.pricing.price_of("gpt-4.1-2025-04-14")
        assert caught.value.message == (
            "no price for model 'gpt-4.1-2025-04-14' (priced: gpt-4.1, gpt-4.1-mini); "
            "add it to Pricing(models=...) or give a default= price"
        )
        assert caught.value.model == "gpt-4.1-2025-04-14"

    def test_default_prices_unknown_and_unrecorded_models(self) -> None:
        """`default` covers models not listed and evaluations that recorded none."""
        pricing = Pricing(models={"gpt-4.1": GPT}, default=MINI)
        assert pricing.price_of("other") is MINI
        assert pricing.price_of(None) is MINI

    def test_evaluation_cost_uses_the_recorded_model(self) -> None:
        """A PromptExecuted event carries usage and model: all its cost needs."""
        event = executed("e1", TokenUsage(input_tokens=500_000, output_tokens=100_000), "gpt-4.1")
        assert self.pricing.evaluation_cost(event) == Cost(
            input=Decimal("1.25"), output=Decimal("1")
        )

    def test_evaluation_without_model_says_which_evaluation(self) -> None:
        """The error names the evaluation and prompt whose model is unknown."""
        with pytest.raises(PricingError) as caught:
            self.pricing.evaluation_cost(executed("e9", TokenUsage(), None))
        assert caught.value.message == (
            "evaluation 'e9' of prompt 'triage': the evaluation recorded no model; give "
            "Pricing a default= price (or price the usage with usage_cost(usage, model=...))"
        )
        assert caught.value.evaluation_id == "e9"

    def test_session_cost_sums_every_evaluation(self) -> None:
        """Evaluations on different models are priced each on its own and summed."""
        bus = InProcessEventBus()
        session = Session(bus=bus)
        bus.publish(executed("e1", TokenUsage(input_tokens=1_000_000), "gpt-4.1"))
        bus.publish(
            executed(
                "e2",
                TokenUsage(
                    input_tokens=2_000_000, cached_input_tokens=1_000_000, output_tokens=500_000
                ),
                "gpt-4.1-mini",
            )
        )
        assert self.pricing.session_cost(session) == Cost(
            input=Decimal("2.9"), cached_input=Decimal("0.1"), output=Decimal("0.8")
        )
        assert self.pricing.session_cost(session).total == Decimal("3.8")

    def test_session_cost_of_an_offline_evaluation(self) -> None:
        """The offline adapter records no model, so its evaluations need a default price."""
        bus = InProcessEventBus()
        session = Session(bus=bus)
        prompt = Prompt(
            ns="cost", key="hello", sections=[MarkdownSection(title="T", template="Hi.")]
        )
        OfflineAdapter(
            [ScriptedTurn(text="Hello.", usage=TokenUsage(input_tokens=40, output_tokens=2))]
        ).evaluate(prompt, bus=bus, session=session)
        priced = Pricing(default=ModelPrice.per_million(input=1, output=2))
        assert priced.session_cost(session) == Cost(
            input=Decimal("0.00004"), output=Decimal("0.000004")
        )
        with pytest.raises(PricingError, match="recorded no model"):
            Pricing().session_cost(session)

    @pytest.mark.parametrize(
        ("models", "message"),
        [
            ({"": GPT}, "Pricing.models keys must be model names, got ''"),
            ({"gpt": 2.5}, "Pricing.models\\['gpt'\\] must be a ModelPrice, got float"),
        ],
    )
    def test_bad_price_tables_are_refused(self, models: dict[str, object], message: str) -> None:
        """Keys are model names and values ModelPrice."""
        with pytest.raises(ConfigValidationError, match=message):
            Pricing(models=models)  # type: ignore[arg-type]
