"""Async facade over Repo: every call runs on one dedicated database thread.

peewee keeps one connection per thread, so a single worker thread gives one connection, no lock fights, and
never a blocked UI thread (qt-desktop-notes §5).
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

from desktop.store.repo import Repo

T = TypeVar("T")


class Store:
    def __init__(self, repo: Repo, executor: ThreadPoolExecutor):
        self._repo = repo
        self._executor = executor
        self.path = repo.path

    @classmethod
    async def open(cls, path: Path) -> Store:
        executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="precis-db")
        loop = asyncio.get_running_loop()
        repo = await loop.run_in_executor(executor, Repo, Path(path))
        store = cls(repo, executor)
        await store.call(repo.sweep_streaming)
        return store

    @classmethod
    def open_sync(cls, path: Path) -> Store:
        """For synchronous callers (CLI commands without a loop, tests): the same thread discipline."""
        executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="precis-db")
        repo = executor.submit(Repo, Path(path)).result()
        store = cls(repo, executor)
        store.run(repo.sweep_streaming)
        return store

    async def call(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, functools.partial(fn, *args, **kwargs))

    def run(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """Blocking call on the database thread (never from the UI thread)."""
        return self._executor.submit(functools.partial(fn, *args, **kwargs)).result()

    def __getattr__(self, name: str) -> Callable[..., Any]:
        """``await store.add_message(...)`` runs ``Repo.add_message`` on the database thread."""
        fn = getattr(self._repo, name)
        if not callable(fn) or name.startswith("_"):
            raise AttributeError(name)

        async def bound(*args: Any, **kwargs: Any) -> Any:
            return await self.call(fn, *args, **kwargs)

        return bound

    @property
    def repo(self) -> Repo:
        """The synchronous repo, for code that is already on the database thread via run()/call()."""
        return self._repo

    async def close(self) -> None:
        await self.call(self._repo.close)
        self._executor.shutdown(wait=True)

    def close_sync(self) -> None:
        self.run(self._repo.close)
        self._executor.shutdown(wait=True)
