"""A stdio transport for MCP servers in which every message is bounded.

The SDK's own stdio client keeps a line in memory until its newline comes, so a server that writes one endless
line grows Précis without bound. This transport starts and stops the server the way the SDK does (its own spawn,
process group and tree kill) and yields the same pair of streams ``ClientSession`` expects, but reads bytes and
keeps at most ``MESSAGE_LIMIT`` of one line: a longer line is dropped as it arrives and a ``MessageTooLarge`` goes
to the session in its place (the host then stops the server with that sentence). When the server closes its output
(it exited: a missing command, a crash, a refusal to start), its exit code is kept (``Exit``) before the session
hears the connection close, so the host can say why instead of "Connection closed".
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, TextIO

if TYPE_CHECKING:
    from mcp.client._transport import TransportStreams
    from mcp.client.stdio import StdioServerParameters

# A message's bytes: a tool answer is cut at 1M characters anyway (mcp_host.RESULT_CHARS), which JSON may spell in
# up to a few times as many bytes; an image the API accepts (5 MB) fits in base64.
MESSAGE_LIMIT = 8_000_000
READ_SIZE = 65_536
EXIT_WAIT = 1.0  # seconds the server's exit is awaited once it closed its output (it is usually at once)


class Exit:
    """How a server's process ended, as far as the transport saw: ``code`` is None while it runs (or when it
    kept running after closing its output), negative for a signal (POSIX)."""

    def __init__(self) -> None:
        self.code: int | None = None


class MessageTooLarge(Exception):  # noqa: N818 - named for what happened, like the SDK's own faults
    """A line from the server ran past the limit; ``str()`` says so in words."""

    def __init__(self, limit: int):
        super().__init__(f"it sent a message larger than {limit // 1_000_000} MB")
        self.limit = limit


class Lines:
    """Splits a byte stream into lines of at most ``limit`` bytes. A longer line is reported once (``None`` in
    its place) and the rest of it is skipped up to its newline, so no more than ``limit`` bytes are ever held."""

    def __init__(self, limit: int = MESSAGE_LIMIT):
        self._limit = limit
        self._held = bytearray()
        self._skipping = False

    def feed(self, chunk: bytes) -> list[bytes | None]:
        out: list[bytes | None] = []
        start = 0
        while True:
            end = chunk.find(b"\n", start)
            piece = memoryview(chunk)[start:] if end < 0 else memoryview(chunk)[start:end]
            if not self._skipping:
                if len(self._held) + len(piece) > self._limit:
                    out.append(None)
                    self._skipping = True
                    self._held = bytearray()
                else:
                    self._held += piece
            if end < 0:
                return out
            if not self._skipping and self._held and not self._held.isspace():
                out.append(bytes(self._held))
            self._held.clear()
            self._skipping = False
            start = end + 1


@asynccontextmanager
async def bounded_stdio_client(
    server: StdioServerParameters, errlog: TextIO, limit: int = MESSAGE_LIMIT, ended: Exit | None = None
) -> AsyncIterator[TransportStreams]:
    """Starts ``server`` and yields (read stream, write stream) for ``ClientSession``; a drop-in for the SDK's
    ``stdio_client`` whose lines are bounded by ``limit`` bytes. ``ended`` gets the exit code of a server that
    closed its output."""
    import anyio
    import anyio.lowlevel
    import mcp_types
    from mcp.client.stdio import (
        _WRITER_FLUSH_TIMEOUT,
        _aclose_all,
        _create_platform_compatible_process,
        _drain_stdout,
        _get_executable_command,
        _stop_server_process,
        get_default_environment,
    )
    from mcp.shared.message import SessionMessage

    command = await _get_executable_command(server.command)
    process = await _create_platform_compatible_process(
        command=command,
        args=server.args,
        env=get_default_environment() | (server.env or {}),
        errlog=errlog,
        cwd=server.cwd,
    )
    # No awaits between the spawn and the task group: a cancellation there would leak the live process.
    read_stream_writer, read_stream = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    write_stream, write_stream_reader = anyio.create_memory_object_stream[SessionMessage](0)
    writer_done = anyio.Event()

    def parse(line: bytes | None) -> SessionMessage | Exception:
        if line is None:
            return MessageTooLarge(limit)
        try:
            return SessionMessage(mcp_types.jsonrpc_message_adapter.validate_json(line, by_name=False))
        except ValueError as exc:  # not JSON-RPC (or not UTF-8): the host counts these
            return exc

    async def stdout_reader() -> None:
        assert process.stdout is not None
        lines = Lines(limit)
        try:
            async with read_stream_writer:
                try:
                    while True:
                        chunk = await process.stdout.receive(READ_SIZE)
                        for line in lines.feed(chunk):
                            await read_stream_writer.send(parse(line))
                except anyio.EndOfStream:  # the server closed its output: it has exited, or is about to
                    if ended is not None:
                        with anyio.move_on_after(EXIT_WAIT):
                            await process.wait()
                        ended.code = process.returncode
                    return
                except (anyio.ClosedResourceError, anyio.BrokenResourceError, ConnectionError):
                    return  # the session is gone
                finally:
                    await _drain_stdout(process)
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, ConnectionError):
            pass  # our own shutdown closed the stream under the read

    async def stdin_writer() -> None:
        assert process.stdin is not None
        try:
            async with write_stream_reader:
                async for message in write_stream_reader:
                    data = message.message.model_dump_json(by_alias=True, exclude_unset=True) + "\n"
                    await process.stdin.send(data.encode())
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            await read_stream_writer.aclose()  # the session sees the connection end, not a request hanging
        finally:
            writer_done.set()

    async def shutdown() -> None:
        read_stream.close()  # the reader goes to its drain, so a server blocked on its output can exit
        write_stream.close()
        with anyio.move_on_after(_WRITER_FLUSH_TIMEOUT):
            await writer_done.wait()
        await _stop_server_process(process)
        await _aclose_all(read_stream, write_stream, read_stream_writer, write_stream_reader)
        await anyio.lowlevel.checkpoint()

    async with anyio.create_task_group() as group:
        group.start_soon(stdout_reader)
        group.start_soon(stdin_writer)
        try:
            yield read_stream, write_stream
        finally:
            with anyio.CancelScope(
                shield=True
            ):  # every wait inside is bounded; the server must not outlive us
                await shutdown()
            group.cancel_scope.cancel()
    await anyio.lowlevel.cancel_shielded_checkpoint()
