"""Every request of a chat goes to the chat's own provider profile: saving or switching the active profile
changes new chats only. Two loopback servers stand for two providers; the engine is the app's own wiring."""

from __future__ import annotations

import pytest

from desktop.engine.config.profiles import Profile
from tests.conftest import _open_engine
from tests.fakeapi import FakeAnthropic
from tests.fakeapi.counting import TokenCounter
from tests.test_compaction_engine import converse, prose, summary_requests

MODEL = "claude-test"  # not in the catalog: its window comes from the provider (models.retrieve)


def _paths(srv: FakeAnthropic) -> list[str]:
    return [f"{r.method} {r.path}" for r in srv.requests]


@pytest.mark.parametrize("key", [None, "test-key"], ids=["keyless", "keyed"])
async def test_a_chat_on_profile_a_sends_nothing_to_b_after_b_became_active(key, monkeypatch):
    offered = (MODEL, "local-other", "claude-sonnet-4-6")
    auth = "none" if key is None else "x-api-key"
    if key is not None:
        monkeypatch.setenv("ANTHROPIC_API_KEY", key)  # both servers take it
    with (
        FakeAnthropic(8_000, api_key=key, models=offered) as a_srv,
        FakeAnthropic(200_000, api_key=key, models=offered) as b_srv,
    ):
        a = Profile("Local A", a_srv.base_url, auth, MODEL, MODEL)
        b = Profile("Local B", b_srv.base_url, auth, MODEL, MODEL)
        async with _open_engine(
            {
                "profiles": [a, b],
                "profile": a.name,
                "base_url": a.base_url,
                "model": MODEL,
                "max_output_tokens": 1024,
            },
            credentials=False,
        ) as engine:
            sid = await engine.new_session()  # a chat on A
            assert (await engine.measure(sid)).window == 8_000  # asked of A while A is active
            other = (await engine.store.create_session("other", "local-other", a.name)).id  # not measured yet
            counted = (await engine.store.create_session("count", "claude-sonnet-4-6", a.name)).id
            # The user saves profile B: it becomes the active one.
            await engine.reconfigure(engine.settings.with_profile(b))
            assert engine.settings.profile == b.name
            await converse(engine, a_srv, sid, 6)  # turns
            outcome = await engine.compact(sid, "manual")  # Compact now
            assert outcome.ok, outcome.message
            await converse(engine, a_srv, sid, 12, start=6)  # in A's 8K window: automatic summaries
            auto = [c for c in await engine.store.compactions(sid) if c.trigger in ("auto", "background")]
            assert auto, "the scenario must compact automatically"
            assert summary_requests(b_srv) == []  # the chat's transcript went to A's summariser only
            assert (await engine.measure(other)).window == 8_000  # a window look-up, of A
            # A token count: the estimate lands 1 % under the threshold, so the turn asks for the exact count
            # first (B is saved again with that threshold).
            await engine.store.add_message(counted, "user", [{"type": "text", "text": "word " * 2000}])
            snap = await engine.measure(counted)
            settings = engine.settings.with_profile(b)
            settings.auto_compact_ratio *= snap.used * 1.01 / snap.compact_at_tokens
            await engine.reconfigure(settings)
            a_srv.queue_text("fine")
            await engine.retry(counted)
            assert [r.path for r in a_srv.requests].count("/v1/messages/count_tokens") == 1
            assert summary_requests(a_srv)
            assert {"GET /v1/models/local-other", "GET /v1/models/claude-sonnet-4-6"} <= set(_paths(a_srv))
            # Nothing of these chats reached B: no turn, summary, token count or window look-up.
            assert _paths(b_srv) == []
            # A new chat follows the active profile.
            new = await engine.new_session()
            b_srv.queue_text("to B")
            await engine.send(new, "hello B")
            assert [r.body["messages"][-1]["content"][0]["text"] for r in b_srv.message_requests()] == [
                "hello B"
            ]


async def test_b_s_window_override_does_not_change_a_s_chat():
    with FakeAnthropic(1_000_000, api_key=None) as a_srv, FakeAnthropic(200_000, api_key=None) as b_srv:
        a = Profile("Local A", a_srv.base_url, "none", "claude-sonnet-4-6")
        b = Profile(
            "Local B",
            b_srv.base_url,
            "none",
            "claude-sonnet-4-6",
            model_overrides={"claude-sonnet-4-6": {"window": 8_000, "input_price": 99.0}},
        )
        async with _open_engine(
            {"profiles": [a, b], "profile": a.name, "base_url": a.base_url, "model": a.model},
            credentials=False,
        ) as engine:
            sid = await engine.new_session()
            assert (await engine.measure(sid)).window == 1_000_000
            await engine.reconfigure(engine.settings.with_profile(b))
            mine = await engine.measure(sid)
            assert (mine.window, mine.window_source) == (1_000_000, "api")
            theirs = await engine.new_session()
            snap = await engine.measure(theirs)
            assert (snap.window, snap.window_source) == (8_000, "override")  # B's override is B's
            # Saved and loaded again, B's override stays B's (it never becomes a global one).
            engine.settings.save(engine.paths)
            from desktop.engine.config.settings import Settings

            loaded = Settings.load(engine.paths)
            assert "claude-sonnet-4-6" not in (loaded.with_profile(a).model_overrides or {})
        assert _paths(b_srv) == []  # B's chat has the user's window: nobody asked B


async def test_the_window_comes_from_override_then_provider_then_overflow_then_catalog():
    offered = ("claude-sonnet-4-6", "claude-haiku-4-5")  # claude-opus-4-8 is not: 404, the catalog answers
    with FakeAnthropic(200_000, api_key=None, models=offered) as srv:
        a = Profile(
            "Local A",
            srv.base_url,
            "none",
            "claude-sonnet-4-6",
            model_overrides={"claude-haiku-4-5": {"window": 150_000}},
        )
        async with _open_engine(
            {
                "profiles": [a],
                "profile": a.name,
                "base_url": a.base_url,
                "model": a.model,
                "model_overrides": a.model_overrides,
            },
            credentials=False,
        ) as engine:

            async def window_of(model: str) -> tuple[int | None, str]:
                sid = (await engine.store.create_session(model, model, a.name)).id
                snap = await engine.measure(sid)
                return snap.window, snap.window_source

            # The catalog says 1M; the provider says 200K for this model: the provider wins.
            assert await window_of("claude-sonnet-4-6") == (200_000, "api")
            # The user's override wins over what the provider reports.
            assert await window_of("claude-haiku-4-5") == (150_000, "override")
            # Not offered by the provider: the catalog.
            assert await window_of("claude-opus-4-8") == (1_000_000, "catalog")
            # A prompt-too-long taught a smaller window: it beats the catalog.
            engine.catalog.learn_window("claude-opus-4-8", 300_000)
            assert await window_of("claude-opus-4-8") == (300_000, "learned")
            # ... and does not raise what the provider reports.
            engine.catalog.learn_window("claude-sonnet-4-6", 500_000)
            assert await window_of("claude-sonnet-4-6") == (200_000, "api")


async def test_a_window_learned_on_profile_a_does_not_change_b_s_window_for_the_same_model():
    """A prompt-too-long from A's server teaches A's window for the model; B serves the same model name with
    its own window (the catalog's here), now and after a restart."""
    model = "claude-opus-4-8"  # 1M in the catalog; neither server reports a window for it (404)
    with (
        FakeAnthropic(6_000, api_key=None, models=()) as a_srv,
        FakeAnthropic(200_000, api_key=None, models=()) as b_srv,
    ):
        a = Profile("Local A", a_srv.base_url, "none", model)
        b = Profile("Local B", b_srv.base_url, "none", model)
        settings = {"profiles": [a, b], "profile": a.name, "base_url": a.base_url, "model": model}
        async with _open_engine(settings, credentials=False) as engine:
            on_a = await engine.new_session()
            await engine.reconfigure(engine.settings.with_profile(b))
            on_b = await engine.new_session()
            assert (await engine.measure(on_a)).window == (await engine.measure(on_b)).window == 1_000_000
            await engine.send(on_a, "Read this. " + "alpha beta gamma delta " * 2_000)  # > 6,000 tokens
            assert any(r.status == 400 for r in a_srv.message_requests())  # "prompt is too long"
            mine, theirs = await engine.measure(on_a), await engine.measure(on_b)
            assert (mine.window, mine.window_source) == (6_000, "learned")
            assert (theirs.window, theirs.window_source) == (1_000_000, "catalog")
        async with _open_engine(
            {**settings, "profile": b.name, "base_url": b.base_url}, credentials=False
        ) as again:  # the same home: what was learned is read back
            assert (await again.measure(on_b)).window == 1_000_000
            assert (await again.measure(on_a)).window == 6_000
        assert not [r for r in b_srv.message_requests()]


async def _estimate_of(engine, sid: int) -> int:  # noqa: ANN001
    snap = await engine.measure(sid)
    assert snap.source == "estimate"  # no reply yet: the calibrated estimate of the whole request
    return snap.used


async def test_what_profile_a_s_usage_taught_the_estimator_does_not_correct_b_s_chats():
    """The same model id served by two servers that count differently: what A's real usage taught (a factor
    of about 1.5 here) corrects A's estimates only; B's chats measure with factor 1.0, now, after the active
    profile changed and after a restart on the same store."""
    model = "local-model"
    heavy = TokenCounter(text_ratio=TokenCounter.text_ratio / 1.5)  # A counts 1.5x what B counts
    with (
        FakeAnthropic(200_000, api_key=None, models=(model,), counter=heavy) as a_srv,
        FakeAnthropic(200_000, api_key=None, models=(model,)) as b_srv,
    ):
        a = Profile("Local A", a_srv.base_url, "none", model)
        b = Profile("Local B", b_srv.base_url, "none", model)
        settings = {"profiles": [a, b], "profile": a.name, "base_url": a.base_url, "model": model}
        text = "Read this. " + prose(1_500, 7)
        async with _open_engine(settings, credentials=False) as engine:
            on_a = await engine.new_session()  # a chat on A
            on_b = (await engine.store.create_session("on B", model, b.name)).id
            await engine.store.add_message(on_b, "user", [{"type": "text", "text": text}])
            before = await _estimate_of(engine, on_b)
            for i in range(3):
                a_srv.queue_text(f"ok {i}")
                await engine.send(on_a, f"{i} " + text)
            learned = engine.calibration.factor(model)  # A is active
            assert learned > 1.2
            route_a, route_b = await engine.route_of(on_a), await engine.route_of(on_b)
            assert route_a.shared.calibration.factor(model) == pytest.approx(learned)
            assert route_b.shared.calibration.factor(model) == 1.0
            assert await _estimate_of(engine, on_b) == before  # A's correction is not B's
            # The user makes B the active profile: each chat keeps its profile's correction.
            await engine.reconfigure(engine.settings.with_profile(b))
            assert engine.calibration.factor(model) == 1.0  # B's, for new chats
            assert (await engine.route_of(on_a)).shared.calibration.factor(model) == pytest.approx(learned)
            assert await _estimate_of(engine, on_b) == before
        async with _open_engine(
            {**settings, "profile": b.name, "base_url": b.base_url}, credentials=False
        ) as again:  # a restart on the same store, B active
            assert await _estimate_of(again, on_b) == before
            assert (await again.route_of(on_b)).shared.calibration.factor(model) == 1.0
            assert (await again.route_of(on_a)).shared.calibration.factor(model) == pytest.approx(learned)
            assert again.calibration.factor(model) == 1.0
        async with _open_engine(settings, credentials=False) as third:  # and with A active
            assert await _estimate_of(third, on_b) == before
            assert third.calibration.factor(model) == pytest.approx(learned)
            assert (await third.route_of(on_b)).shared.calibration.factor(model) == 1.0
        assert not b_srv.message_requests()


async def test_a_calibration_stored_before_profiles_had_their_own_is_the_active_profile_s():
    """A stored correction keyed by model alone (older versions kept one for every profile) is read as the
    active profile's, like the windows learned before they were kept per profile (LearnedWindows.read)."""
    model = "local-model"
    old = {
        "version": 2,
        "models": {
            model: {"actual": 15_000.0, "estimated": 10_000.0, "samples": 4, "bias": 12.0, "bias_samples": 3}
        },
    }
    with (
        FakeAnthropic(200_000, api_key=None, models=(model,)) as a_srv,
        FakeAnthropic(200_000, api_key=None, models=(model,)) as b_srv,
    ):
        a = Profile("Local A", a_srv.base_url, "none", model)
        b = Profile("Local B", b_srv.base_url, "none", model)
        settings = {"profiles": [a, b], "profile": b.name, "base_url": b.base_url, "model": model}
        async with _open_engine(settings, credentials=False) as engine:
            await engine.store.set_kv("calibration", old)
        async with _open_engine(settings, credentials=False) as engine:  # B active when it is read
            on_a = (await engine.store.create_session("on A", model, a.name)).id
            await engine.load()
            assert engine.calibration.factor(model) == pytest.approx(1.5)
            assert engine.calibration.bias(model) == 12
            assert (await engine.route_of(on_a)).shared.calibration.factor(model) == 1.0


async def test_a_chat_reopened_while_another_profile_is_active_shows_the_window_its_server_reported():
    """Issue 36: on reopen the gauge showed the catalog's 1M window ("from the catalog") for a chat whose server had
    reported 200K, until its next request: the chat's route was made before the stored reports were read (on
    73f1efb this test fails with (1000000, 'catalog'))."""
    with (
        FakeAnthropic(200_000, api_key=None, models=["claude-opus-4-7"]) as a_srv,
        FakeAnthropic(200_000, api_key=None) as b_srv,
    ):
        a = Profile("Local A", a_srv.base_url, "none", "claude-opus-4-7")
        b = Profile("Local B", b_srv.base_url, "none", "claude-sonnet-4-6")
        changes = {"profiles": [a, b], "profile": a.name, "base_url": a.base_url, "model": a.model}
        async with _open_engine(changes, credentials=False) as engine:
            sid = await engine.new_session()
            a_srv.queue_text("hi")
            await engine.send(sid, "hello")
            assert (await engine.publish_context(sid)).window == 200_000  # the server reported it
            engine.settings.profile = b.name
            engine.settings.save(engine.paths)
        changes = {"profiles": [a, b], "profile": b.name, "base_url": b.base_url, "model": b.model}
        async with _open_engine(changes, credentials=False) as engine:
            snap = await engine.publish_context(sid, ask_window=False)
        assert (snap.window, snap.window_source) == (200_000, "api")
