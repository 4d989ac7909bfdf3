"""Model catalog: windows, prefixes, overrides, learned windows, cost arithmetic."""

from __future__ import annotations

import json

import pytest

from desktop.engine.catalog import CATALOG, ENV_WINDOW, ModelCatalog
from desktop.engine.tokens import V3, V47, family_for_model
from desktop.engine.types import Usage


@pytest.fixture(autouse=True)
def _no_env_window(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ENV_WINDOW, raising=False)


@pytest.mark.parametrize(("model", "window", "max_output", "media"), [
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
])
def test_windows(model: str, window: int, max_output: int, media: int) -> None:
    info = ModelCatalog().info(model)
    assert (info.window, info.max_output, info.media_limit) == (window, max_output, media)
    assert info.window_source == "catalog"


@pytest.mark.parametrize(("model", "key"), [
    ("claude-sonnet-4-5-20250929", "claude-sonnet-4-5"),
    ("claude-haiku-4-5-20251001", "claude-haiku-4-5"),
    ("claude-opus-4-5-20251101", "claude-opus-4-5"),
    ("claude-sonnet-4-20250514", "claude-sonnet-4"),
    ("claude-opus-4-1-20250805", "claude-opus-4-1"),
    ("us.anthropic.claude-opus-4-7-v1:0", "claude-opus-4-7"),
    ("claude-opus-4-5@20251101", "claude-opus-4-5"),
    ("Claude-Opus-4-6", "claude-opus-4-6"),
])
def test_dated_and_provider_ids_resolve(model: str, key: str) -> None:
    catalog = ModelCatalog()
    assert catalog.info(model).window == catalog.info(key).window
    assert catalog.info(model).input_price == CATALOG[key]["input_price"]


@pytest.mark.parametrize("model", ["gpt-4o", "claude-opus-4-9", "claude-sonnet-4-7", "deepseek-chat", "",
                                   "claude-haiku-5-5", "claude-mythos-preview"])
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
    catalog = ModelCatalog(overrides={
        "claude-haiku-4-5": 100_000,
        "my-proxy-model": {"window": 64_000, "max_output": 8_000, "input_price": 0.5, "output_price": 1.5,
                           "family": "v4.7"},
    })
    assert catalog.info("claude-haiku-4-5-20251001").window == 100_000  # dated id matches the key
    assert catalog.info("claude-haiku-4-5").window_source == "override"
    proxy = catalog.info("my-proxy-model")
    assert (proxy.window, proxy.max_output, proxy.family) == (64_000, 8_000, "v4.7")
    assert catalog.cost("my-proxy-model", Usage(input_tokens=1_000_000, output_tokens=1_000_000)) == pytest.approx(2.0)
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
    usage = Usage(input_tokens=1_000, output_tokens=500, cache_creation_input_tokens=2_000,
                  cache_read_input_tokens=10_000)
    # Sonnet 4.5: $3 in, $15 out; write 1.25x = $3.75, read 0.1x = $0.30 per MTok.
    expected = (1_000 * 3 + 2_000 * 3.75 + 10_000 * 0.30 + 500 * 15) / 1e6
    assert catalog.cost("claude-sonnet-4-5-20250929", usage) == pytest.approx(expected)
    assert catalog.cost("claude-opus-4-7", usage) == pytest.approx((1_000 * 5 + 2_000 * 6.25 + 10_000 * 0.5
                                                                    + 500 * 25) / 1e6)
    assert catalog.cost("claude-haiku-4-5", Usage(input_tokens=1_000_000)) == pytest.approx(1.0)
    assert catalog.cost("claude-opus-4-7", None) == 0.0
    info = catalog.info("claude-fable-5")
    assert (info.input_price, info.output_price, info.cache_write_price, info.cache_read_price) == \
        pytest.approx((10, 50, 12.5, 1.0))


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
