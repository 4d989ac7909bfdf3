"""A settings.json of the wrong shape never stops the app: each field is checked, fixed or defaulted, and reported."""

from __future__ import annotations

import dataclasses
import json
import math
import os
import subprocess
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from desktop.engine.config.catalog import ModelCatalog
from desktop.engine.config.settings import Paths, Settings

SETTINGS = settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
FIELDS = [f.name for f in dataclasses.fields(Settings) if f.name != "problems"]
DEFAULT = "claude-haiku-4-5"
OVERRIDE_KEYS = [
    "window",
    "max_output",
    "min_cache_tokens",
    "media_limit",
    "input_price",
    "output_price",
    "input",
    "output",
    "family",
]

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats()
    | st.text(max_size=20)
    | st.sampled_from([0, -1, 1e12, 10**30, 0.5, "8192", "x", "big", "true", "claude-opus-4-7"]),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=10), children, max_size=4)
    ),
    max_leaves=12,
)
overrides = st.dictionaries(
    st.sampled_from(["claude-sonnet-4-6", "claude-opus-4-7", DEFAULT]) | st.text(max_size=12),
    json_values
    | st.dictionaries(st.sampled_from(OVERRIDE_KEYS) | st.text(max_size=8), json_values, max_size=6),
    max_size=4,
)
known_key_dicts = st.fixed_dictionaries(
    {},
    optional={
        **{name: json_values for name in FIELDS},
        "model_overrides": overrides | json_values,
        "model": st.sampled_from([DEFAULT, "", " "]) | json_values,
    },
)


def paths_in(tmp_path) -> Paths:  # noqa: ANN001
    return Paths.resolve({"PRECIS_HOME": str(tmp_path / "home")}).ensure()


def write(paths: Paths, value) -> None:  # noqa: ANN001
    paths.settings_file.write_text(json.dumps(value), "utf-8")


def assert_well_typed(s: Settings) -> None:
    for name in ("base_url", "model", "small_model"):
        assert type(getattr(s, name)) is str, name
    assert s.model.strip()
    assert type(s.max_output_tokens) is int and 1 <= s.max_output_tokens <= 128_000
    assert type(s.max_retries) is int and 0 <= s.max_retries <= 10
    assert type(s.request_timeout) is float and math.isfinite(s.request_timeout) and s.request_timeout > 0
    for name in ("auto_compact_ratio", "prepare_ratio"):
        value = getattr(s, name)
        assert type(value) is float and 0 < value < 1, name
    for name in ("keep_tool_results", "pin_budget_tokens"):
        value = getattr(s, name)
        assert type(value) is int and value >= 0, name
    assert type(s.long_cache_ttl) is bool
    assert type(s.model_overrides) is dict
    for model, override in s.model_overrides.items():
        assert type(model) is str and type(override) is dict
        for key in ("window", "max_output", "min_cache_tokens", "media_limit"):
            if key in override:
                assert type(override[key]) is int and 0 < override[key] <= 10_000_000, (model, key)
        for key in ("input_price", "output_price", "input", "output"):
            if key in override:
                assert type(override[key]) is float and math.isfinite(override[key]) and override[key] >= 0
    assert type(s.problems) is list and all(isinstance(p, str) and "\n" not in p for p in s.problems)
    # What the settings dialog and the engine do with them must work too.
    int(s.model_overrides.get(s.model, {}).get("window", 0))
    {k: dict(v) for k, v in s.model_overrides.items()}  # noqa: B018
    info = ModelCatalog(s.model_overrides).info(s.model)
    assert info.window is None or (type(info.window) is int and info.window > 0)
    json.dumps(dataclasses.asdict(s), allow_nan=False)


@pytest.mark.parametrize("value", [[], None, "x", 3, 2.5, True, [{"model": "m"}]])
def test_valid_json_that_is_not_an_object_gives_defaults_and_a_warning(tmp_path, value):
    paths = paths_in(tmp_path)
    write(paths, value)
    s = Settings.load(paths, {})
    assert_well_typed(s)
    assert s.model == Settings().model and s.max_output_tokens == Settings().max_output_tokens
    assert len(s.problems) == 1 and "settings.json" in s.problems[0]


@pytest.mark.parametrize(
    ("data", "check"),
    [
        ({"model_overrides": []}, lambda s: s.model_overrides == {}),
        (
            {"model_overrides": {"claude-haiku-4-5": {"window": "big", "input_price": 2}}},
            lambda s: s.model_overrides == {"claude-haiku-4-5": {"input_price": 2.0}},
        ),
        ({"max_output_tokens": 1e12}, lambda s: s.max_output_tokens == 128_000),
        ({"max_output_tokens": "x"}, lambda s: s.max_output_tokens == Settings().max_output_tokens),
        ({"max_output_tokens": -5}, lambda s: s.max_output_tokens == 1),
        ({"max_retries": -3}, lambda s: s.max_retries == 0),
        ({"max_retries": 500}, lambda s: s.max_retries == 10),
        ({"max_retries": True}, lambda s: s.max_retries == Settings().max_retries),
        ({"request_timeout": "soon"}, lambda s: s.request_timeout == Settings().request_timeout),
        ({"model": ["claude"]}, lambda s: s.model == Settings().model),
        ({"long_cache_ttl": "no"}, lambda s: s.long_cache_ttl is Settings().long_cache_ttl),
        ({"auto_compact_ratio": 80}, lambda s: s.auto_compact_ratio < 1),
    ],
)
def test_wrong_fields_are_fixed_or_defaulted_and_reported(tmp_path, data, check):
    paths = paths_in(tmp_path)
    write(paths, {"model": "claude-haiku-4-5", **data})
    s = Settings.load(paths, {})
    assert_well_typed(s)
    assert check(s), s
    assert s.problems and all(len(p) < 200 for p in s.problems)


def test_good_values_load_without_problems_and_problems_are_never_saved(tmp_path):
    paths = paths_in(tmp_path)
    good = {
        "model": "claude-opus-4-7",
        "max_output_tokens": 4096.0,
        "max_retries": "3",
        "model_overrides": {"claude-opus-4-7": {"window": 500_000, "input": 4, "family": "v4.7"}},
    }
    write(paths, good)
    s = Settings.load(paths, {})
    assert s.problems == [] and (s.max_output_tokens, s.max_retries) == (4096, 3)
    write(paths, {"model_overrides": {"claude-haiku-4-5": 150000}})  # the catalog's {model: window} shorthand
    s = Settings.load(paths, {})
    assert s.problems == [] and s.model_overrides == {"claude-haiku-4-5": {"window": 150_000}}
    write(paths, {"max_retries": -1})
    s = Settings.load(paths, {})
    assert s.problems
    s.save(paths)
    saved = json.loads(paths.settings_file.read_text("utf-8"))
    assert "problems" not in saved and saved["max_retries"] == 0
    assert Settings.load(paths, {}).problems == []


def test_unreadable_or_absurd_files_fall_back_to_defaults(tmp_path):
    paths = paths_in(tmp_path)
    for raw in (
        "[" * 100_000,
        "{not json",
        "\xff\xfe",
        '{"max_output_tokens": NaN, "request_timeout": Infinity}',
        "1" * 5000,
    ):
        paths.settings_file.write_text(raw, "utf-8", errors="surrogateescape")
        s = Settings.load(paths, {})
        assert_well_typed(s)
    assert Settings.load(Paths.resolve({"PRECIS_HOME": str(tmp_path / "nowhere")}), {}).problems == []


@SETTINGS
@given(value=json_values)
def test_any_json_value_loads(tmp_path, value):
    paths = paths_in(tmp_path)
    paths.settings_file.write_text(json.dumps(value), "utf-8")
    assert_well_typed(Settings.load(paths, {}))


@SETTINGS
@given(data=known_key_dicts)
def test_any_values_for_the_known_keys_load(tmp_path, data):
    paths = paths_in(tmp_path)
    paths.settings_file.write_text(json.dumps(data), "utf-8")
    s = Settings.load(paths, {})
    assert_well_typed(s)
    s.save(paths)  # what was loaded can be saved and loads back clean
    again = Settings.load(paths, {})
    assert again.problems == [] and again == s


@settings(max_examples=200, deadline=None)
@given(
    over=overrides | json_values, learned=json_values, model=st.sampled_from(["claude-haiku-4-5", "x", ""])
)
def test_the_catalog_takes_any_override_values(over, learned, model):
    catalog = ModelCatalog(over, learned)  # type: ignore[arg-type]
    for odd in (0.5, math.inf, math.nan, -1, True, "big", [], {"window": 0.25, "max_output": math.inf}):
        ModelCatalog({model: odd}, {model: odd}).info(model)
    info = catalog.info(model)
    assert info.window is None or (type(info.window) is int and info.window > 0)
    assert type(info.max_output) is int and info.max_output > 0
    for price in (info.input_price, info.output_price):
        assert price is None or (math.isfinite(price) and price >= 0)


def test_commands_still_run_with_a_settings_file_of_the_wrong_shape(precis_home):
    paths = Paths.resolve({"PRECIS_HOME": str(precis_home)}).ensure()
    env = dict(os.environ, PRECIS_HOME=str(precis_home))
    for value in (
        [],
        {"model_overrides": [], "max_output_tokens": "x"},
        {"model_overrides": {"claude-sonnet-4-6": {"window": "big"}}},
    ):
        write(paths, value)
        res = subprocess.run(
            [sys.executable, "-m", "desktop", "sessions"], env=env, capture_output=True, text=True, timeout=60
        )
        assert res.returncode == 0, res.stderr


@pytest.mark.qt
def test_the_settings_form_opens_with_odd_overrides(tmp_path, qtbot):
    from desktop.engine.config.settings import DEFAULT_MODEL
    from desktop.ui.settings.settings_dialog import ProviderForm

    paths = paths_in(tmp_path)
    for value in (
        {"model_overrides": {DEFAULT_MODEL: 150000}},
        {"model_overrides": {DEFAULT_MODEL: {"window": "big"}}},
        {"model_overrides": {DEFAULT_MODEL: {"window": 10**15}}, "max_output_tokens": 1e12},
    ):
        write(paths, value)
        form = ProviderForm(Settings.load(paths, {}), None, "none")
        qtbot.addWidget(form)
        assert form.choice().settings.model == DEFAULT_MODEL
