"""Model catalog: windows, prefixes, overrides, learned windows, cost arithmetic."""

from __future__ import annotations

import json

import pytest

from desktop.engine.config.catalog import CATALOG, ENV_WINDOW, ModelCatalog
from desktop.engine.metering.tokens import V3, V47, family_for_model
from desktop.engine.types import Usage


@pytest.fixture(autouse=True)
def _no_env_window(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ENV_WINDOW, raising=False)


@pytest.mark.parametrize(
    ("model", "window", "max_output", "media"),
    [
        ("claude-opus-4-8", 1_000_000, 128_000, 600),
        ("claude-opus-4-7", 1_000_000, 128_000, 600),
        ("claude-opus-4-6", 1_000_000, 128_000, 600),
        ("claude-sonnet-4-6", 1_000_000, 128_000, 600),
        ("claude-sonnet-5", 1_000_000, 128_000, 600),
        ("claude-fable-5", 1_000_000, 128_000, 600),
        ("claude-haiku-4-5", 200_000, 64_000, 100),
        ("claude-opus-4-5", 200_000, 64_000, 100),
        ("claude-sonnet-4-5", 200_000, 64_000, 100),
        ("claude-sonnet-4", 200_000, 64_000, 100),
        ("claude-opus-4-1", 200_000, 32_000, 100),
        ("claude-opus-4", 200_000, 32_000, 100),
    ],
)
def test_windows(model: str, window: int, max_output: int, media: int) -> None:
    info = ModelCatalog().info(model)
    assert (info.window, info.max_output, info.media_limit) == (window, max_output, media)
    assert info.window_source == "catalog"


@pytest.mark.parametrize(
    ("model", "key"),
    [
        ("claude-sonnet-4-5-20250929", "claude-sonnet-4-5"),
        ("claude-haiku-4-5-20251001", "claude-haiku-4-5"),
        ("claude-opus-4-5-20251101", "claude-opus-4-5"),
        ("claude-sonnet-4-20250514", "claude-sonnet-4"),
        ("claude-opus-4-1-20250805", "claude-opus-4-1"),
        ("us.anthropic.claude-opus-4-7-v1:0", "claude-opus-4-7"),
        ("claude-opus-4-5@20251101", "claude-opus-4-5"),
        ("Claude-Opus-4-6", "claude-opus-4-6"),
    ],
)
def test_dated_and_provider_ids_resolve(model: str, key: str) -> None:
    catalog = ModelCatalog()
    assert catalog.info(model).window == catalog.info(key).window
    assert catalog.info(model).input_price == CATALOG[key]["input_price"]


@pytest.mark.parametrize(
    "model", ["gpt-4o", "claude-opus-4-9", "claude-sonnet-4-7", "deepseek-chat", "", "claude-mythos-preview"]
)
def test_unknown_capacity_is_none(model: str) -> None:
    info = ModelCatalog().info(model)
    assert info.window is None  # never a made-up 200K
    assert ModelCatalog().cost(model, Usage(input_tokens=1000)) is None


def test_prefix_does_not_fall_back_to_shorter_family() -> None:
    # claude-opus-4-9 must not inherit claude-opus-4's 200K.
    assert ModelCatalog().info("claude-opus-4-9").window is None
    assert ModelCatalog().info("claude-opus-4-20250514").window == 200_000


def test_families_and_cache_minimums() -> None:
    catalog = ModelCatalog()
    assert catalog.info("claude-opus-4-8").family == V47
    assert catalog.info("claude-sonnet-5").family == V47
    assert catalog.info("claude-opus-4-6").family == V3
    assert catalog.info("claude-haiku-4-5").min_cache_tokens == 4096
    assert catalog.info("claude-sonnet-4-6").min_cache_tokens == 2048
    assert catalog.info("claude-sonnet-4-5").min_cache_tokens == 1024
    for key, entry in CATALOG.items():  # the estimator's own mapping agrees with the catalog
        assert family_for_model(key) == entry["family"], key


def test_keeps_thinking() -> None:
    catalog = ModelCatalog()
    assert catalog.info("claude-opus-4-5").keeps_thinking
    assert catalog.info("claude-opus-4-6").keeps_thinking
    assert not catalog.info("claude-sonnet-4-5-20250929").keeps_thinking
    assert not catalog.info("claude-haiku-4-5").keeps_thinking


def test_env_override_applies_to_all_models(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV_WINDOW, "50000")
    catalog = ModelCatalog(overrides={"claude-opus-4-7": 300_000})
    for model in ("claude-opus-4-7", "claude-haiku-4-5", "some-local-model"):
        info = catalog.info(model)
        assert info.window == 50_000
        assert info.window_source == "env"


def test_env_override_ignores_garbage(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV_WINDOW, "lots")
    assert ModelCatalog().info("claude-haiku-4-5").window == 200_000
    monkeypatch.setenv(ENV_WINDOW, "128_000")
    assert ModelCatalog().info("claude-haiku-4-5").window == 128_000


def test_settings_overrides() -> None:
    catalog = ModelCatalog(
        overrides={
            "claude-haiku-4-5": 100_000,
            "my-proxy-model": {
                "window": 64_000,
                "max_output": 8_000,
                "input_price": 0.5,
                "output_price": 1.5,
                "family": "v4.7",
            },
        }
    )
    assert catalog.info("claude-haiku-4-5-20251001").window == 100_000  # dated id matches the key
    assert catalog.info("claude-haiku-4-5").window_source == "override"
    proxy = catalog.info("my-proxy-model")
    assert (proxy.window, proxy.max_output, proxy.family) == (64_000, 8_000, "v4.7")
    assert catalog.cost(
        "my-proxy-model", Usage(input_tokens=1_000_000, output_tokens=1_000_000)
    ) == pytest.approx(2.0)
    assert catalog.info("claude-opus-4-7").window == 1_000_000  # others untouched


def test_learned_window_is_a_ceiling_and_serialisable() -> None:
    catalog = ModelCatalog()
    assert catalog.learn_window("claude-opus-4-7", 800_000)
    assert not catalog.learn_window("claude-opus-4-7", 800_000)  # no change
    assert catalog.info("claude-opus-4-7").window == 800_000
    assert catalog.info("claude-opus-4-7").window_source == "learned"
    catalog.learn_window("mystery-model", 32_768)
    assert catalog.info("mystery-model").window == 32_768  # unknown capacity becomes known
    catalog.learn_window("claude-haiku-4-5", 500_000)  # larger than the catalog: catalog stays
    assert catalog.info("claude-haiku-4-5").window == 200_000

    restored = ModelCatalog(learned=json.loads(json.dumps(catalog.learned())))
    assert restored.info("claude-opus-4-7").window == 800_000
    assert restored.info("mystery-model").window == 32_768


def test_cost_arithmetic() -> None:
    catalog = ModelCatalog()
    usage = Usage(
        input_tokens=1_000,
        output_tokens=500,
        cache_creation_input_tokens=2_000,
        cache_read_input_tokens=10_000,
    )
    # Sonnet 4.5: $3 in, $15 out; write 1.25x = $3.75, read 0.1x = $0.30 per MTok.
    expected = (1_000 * 3 + 2_000 * 3.75 + 10_000 * 0.30 + 500 * 15) / 1e6
    assert catalog.cost("claude-sonnet-4-5-20250929", usage) == pytest.approx(expected)
    assert catalog.cost("claude-opus-4-7", usage) == pytest.approx(
        (1_000 * 5 + 2_000 * 6.25 + 10_000 * 0.5 + 500 * 25) / 1e6
    )
    assert catalog.cost("claude-haiku-4-5", Usage(input_tokens=1_000_000)) == pytest.approx(1.0)
    assert catalog.cost("claude-opus-4-7", None) == 0.0
    info = catalog.info("claude-fable-5")
    assert (
        info.input_price,
        info.output_price,
        info.cache_write_price,
        info.cache_read_price,
    ) == pytest.approx((10, 50, 12.5, 1.0))


def test_override_price_keys_as_documented_in_settings():
    # Settings.model_overrides documents {"window", "input", "output", "media_limit"} ($/MTok).
    cat = ModelCatalog({"my-proxy-model": {"window": 64_000, "input": 2, "output": 8}})
    info = cat.info("my-proxy-model")
    assert (info.input_price, info.output_price) == (2.0, 8.0)
    assert cat.cost("my-proxy-model", Usage(input_tokens=1_000_000)) == pytest.approx(2.0)


def test_override_ignores_non_positive_or_boolean_windows():
    # A 0 left by a cleared field (or a stray boolean) must not become a 0- or 1-token window.
    for bad in (0, -5, True, {"window": 0}, {"window": True}, {"max_output": False}):
        info = ModelCatalog({"claude-sonnet-4-5": bad}).info("claude-sonnet-4-5")
        assert (info.window, info.window_source, info.max_output) == (200_000, "catalog", 64_000), bad


# --- the current line-up (prices as published; see PRICES_DATE) -----------------------------------------------


@pytest.mark.parametrize(
    ("model", "prices", "read"),
    [
        ("claude-opus-5-5", (4, 20), 0.05),
        ("claude-sonnet-5-5", (2, 10), 0.05),
        ("claude-haiku-5-5", (0.1, 0.5), 0.1),
        ("claude-fable-5-1", (10, 50), 0.025),
        ("claude-fable-5-2", (8, 40), 0.025),
        ("claude-opus-5", (5, 25), 0.1),
        ("claude-sonnet-5", (2, 10), 0.1),
        ("claude-fable-5", (10, 50), 0.1),
        ("claude-sonnet-4-6", (3, 15), 0.1),
    ],
)
def test_current_models_have_their_own_prices_windows_and_cache_multipliers(model, prices, read) -> None:
    info = ModelCatalog().info(model)
    assert (info.window, info.max_output) == (1_000_000, 128_000)
    assert (info.input_price, info.output_price) == pytest.approx(prices)
    assert info.cache_read_price == pytest.approx(prices[0] * read)
    assert info.cache_write_price == pytest.approx(prices[0] * 1.25)
    assert info.cache_write_1h_price == pytest.approx(prices[0] * 2)


def test_an_opus_5_5_turn_is_priced_to_the_cent() -> None:
    catalog = ModelCatalog()
    usage = Usage(
        input_tokens=3_000,
        output_tokens=2_000,
        cache_creation_input_tokens=20_000,
        cache_read_input_tokens=150_000,
    )
    # $4 in, $20 out, 5-minute writes $5, reads $0.20 per million: 0.012 + 0.04 + 0.1 + 0.03.
    assert catalog.cost("claude-opus-5-5", usage) == pytest.approx(0.182)
    assert catalog.cost("claude-opus-5-5-20260922", usage) == pytest.approx(0.182)  # dated ids too
    # One-hour writes are $8 per million.
    assert catalog.info("claude-opus-5-5").cost(usage, "1h") == pytest.approx(0.242)


def test_a_haiku_5_5_prompt_over_100k_pays_five_times_on_every_token() -> None:
    info = ModelCatalog().info("claude-haiku-5-5")
    under = Usage(input_tokens=60_000, output_tokens=4_000, cache_read_input_tokens=40_000)  # exactly 100K
    assert info.cost(under) == pytest.approx((60_000 * 0.1 + 40_000 * 0.01 + 4_000 * 0.5) / 1e6)
    over = Usage(input_tokens=60_001, output_tokens=4_000, cache_read_input_tokens=40_000)
    assert info.cost(over) == pytest.approx((60_001 * 0.5 + 40_000 * 0.05 + 4_000 * 2.5) / 1e6)
    writes = Usage(input_tokens=1_000, cache_creation_input_tokens=120_000, output_tokens=1_000)
    assert info.cost(writes) == pytest.approx((1_000 * 0.5 + 120_000 * 0.625 + 1_000 * 2.5) / 1e6)
    assert info.price_cliff == 100_000
    assert ModelCatalog().info("claude-opus-5-5").price_cliff is None


def test_the_newest_models_carry_their_request_rules() -> None:
    catalog = ModelCatalog()
    for model in ("claude-opus-5-5", "claude-sonnet-5-5", "claude-fable-5-1", "claude-fable-5-2"):
        info = catalog.info(model)
        assert (
            not info.forced_tool_choice
            and info.model_bound_thinking
            and info.thinking_display == "summarized"
        )
    for model in ("claude-sonnet-4-6", "claude-opus-4-7", "claude-haiku-4-5"):
        info = catalog.info(model)
        assert info.forced_tool_choice and not info.model_bound_thinking and info.thinking_display is None


def test_the_default_model_is_the_current_recommendation() -> None:
    from desktop.engine.config.profiles import ANTHROPIC, PRESETS
    from desktop.engine.config.settings import Settings

    assert Settings().model == "claude-opus-5-5"
    assert next(p for p in PRESETS if p.name == ANTHROPIC).model == "claude-opus-5-5"


def test_a_users_prices_json_goes_over_the_built_in_prices_and_says_its_date(tmp_path) -> None:
    from desktop.engine.config import prices
    from desktop.engine.config.catalog import PRICES_DATE

    assert ModelCatalog().prices_date == PRICES_DATE
    (tmp_path / "prices.json").write_text(
        json.dumps(
            {
                "date": "2027-01-15",
                "models": {
                    "claude-opus-5-5": {"input": 3, "output": 15, "cache_read": 0.3, "cache_write_1h": 9},
                    "claude-haiku-5-5": {"tiers": [{"above": 200000, "multiplier": 3}]},
                    "claude-sonnet-5-5": {"input": "cheap"},
                },
            }
        )
    )
    table = prices.load(tmp_path)
    catalog = ModelCatalog(prices=table)
    assert catalog.prices_date == "2027-01-15"
    opus = catalog.info("claude-opus-5-5-20260922")
    assert (
        opus.input_price,
        opus.output_price,
        opus.cache_read_price,
        opus.cache_write_1h_price,
    ) == pytest.approx((3, 15, 0.3, 9))
    assert opus.cache_write_price == pytest.approx(3.75)  # not in the row: follows the input price
    assert catalog.info("claude-haiku-5-5").price_cliff == 200_000
    assert catalog.info("claude-sonnet-5-5").input_price == 2  # a bad value keeps the built-in one...
    assert any("sonnet-5-5" in p and "input" in p for p in table.problems)  # ...and says so
    # Settings overrides still win over the table.
    assert (
        ModelCatalog({"claude-opus-5-5": {"input": 7}}, prices=table).info("claude-opus-5-5").input_price == 7
    )


@pytest.mark.parametrize("text", ["not json", "[1, 2]", json.dumps({"models": []})])
def test_a_broken_prices_json_keeps_the_built_in_prices_with_one_sentence(tmp_path, text) -> None:
    from desktop.engine.config import prices

    (tmp_path / "prices.json").write_text(text)
    table = prices.load(tmp_path)
    assert table.problems
    assert ModelCatalog(prices=table).info("claude-opus-5-5").input_price == 4


async def test_a_caller_that_comes_while_the_learned_facts_load_waits_for_them(engine) -> None:
    # At start-up the gauge's first measure and a first send both ask for the learned facts; the second caller
    # went on at once with the catalog as it was before the store was read (the first had marked them loaded).
    import asyncio

    await engine.store.set_kv("provider_windows", {"": {"claude-opus-5-5": 123_456}})
    seen: list[int | None] = []

    async def second() -> None:
        await asyncio.sleep(0)  # the first caller is reading the store
        await engine.load()
        seen.append(engine.catalog.info("claude-opus-5-5").window)

    await asyncio.gather(engine.load(), second())
    assert seen == [123_456]
