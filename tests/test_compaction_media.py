import base64
import io
import random

import pytest
from PIL import Image

from desktop.engine.compaction.media import MediaError, cap_media, omission_note, prepare_attachment


def png(w: int, h: int, color=(200, 30, 30)) -> str:
    buf = io.BytesIO()
    Image.new("RGB", (w, h), color).save(buf, "PNG")
    return base64.b64encode(buf.getvalue()).decode()


def image(data: str, media_type: str = "image/png") -> dict:
    return {"type": "image", "source": {"type": "base64", "media_type": media_type, "data": data}}


def size_of(block: dict) -> tuple[int, int]:
    return Image.open(io.BytesIO(base64.b64decode(block["source"]["data"]))).size


def test_keeps_newest_and_notes_per_message():
    small = png(4, 4)
    msgs = [
        {"role": "user", "content": [{"type": "text", "text": f"m{i}"}, image(small), image(small)]}
        for i in range(3)
    ]
    msgs.append(
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "t",
                    "content": [
                        image(small),
                        {
                            "type": "document",
                            "source": {"type": "base64", "media_type": "application/pdf", "data": "JVBERi0="},
                        },
                    ],
                }
            ],
        }
    )
    out, report = cap_media(msgs, limit=3)
    assert (report.count_before, report.omitted, report.downscaled) == (8, 5, 0)
    assert out[0]["content"] == [
        {"type": "text", "text": "m0"},
        {"type": "text", "text": omission_note(2, 0)},
    ]
    assert out[1]["content"][1]["text"] == omission_note(2, 0)
    assert [b["type"] for b in out[2]["content"]] == ["text", "text", "image"]
    assert (
        out[2]["content"][1]["text"] == "[image omitted: 1 older image and 0 documents were removed to stay "
        "within the media limit]"
    )
    assert out[3] is msgs[3]  # the newest media are untouched
    assert len(msgs[0]["content"]) == 3  # input untouched


def test_nested_media_emptied_tool_result_gets_placeholder():
    small = png(4, 4)
    msgs = [
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": [image(small)]}]},
        {"role": "user", "content": [image(small)]},
    ]
    out, report = cap_media(msgs, limit=1)
    assert report.omitted == 1
    result = out[0]["content"][0]
    assert result["content"] == [{"type": "text", "text": "[media omitted to stay within the media limit]"}]
    assert out[0]["content"][1]["text"] == omission_note(1, 0)  # note after the tool_result


def test_batch_omits_in_steps():
    small = png(2, 2)
    msgs = [{"role": "user", "content": [image(small)]} for _ in range(13)]
    assert cap_media(msgs, limit=10, batch=5)[1].omitted == 5
    assert cap_media(msgs[:11], limit=10, batch=5)[1].omitted == 5
    assert cap_media(msgs[:10], limit=10, batch=5)[1].omitted == 0


def test_downscale_over_8000_and_deterministic():
    big = png(8_200, 10)
    msgs = [{"role": "user", "content": [image(big)]}]
    out1, report = cap_media(msgs, limit=100)
    out2, _ = cap_media(msgs, limit=100)
    assert report.downscaled == 1
    assert size_of(out1[0]["content"][0]) == (8_000, 9)
    assert out1 == out2
    assert out1[0]["content"][0]["source"]["media_type"] == "image/png"


def test_many_images_limit_2000():
    msgs = [{"role": "user", "content": [image(png(2_100, 50)) for _ in range(21)]}]
    out, report = cap_media(msgs, limit=100)
    assert report.downscaled == 21
    assert all(max(size_of(b)) <= 2_000 for b in out[0]["content"])
    out, report = cap_media(msgs, limit=100, many_images_threshold=30)
    assert report.downscaled == 0


def test_jpeg_keeps_format():
    buf = io.BytesIO()
    Image.new("RGB", (8_100, 20), (1, 2, 3)).save(buf, "JPEG")
    data = base64.b64encode(buf.getvalue()).decode()
    out, _ = cap_media([{"role": "user", "content": [image(data, "image/jpeg")]}], limit=100)
    block = out[0]["content"][0]
    assert block["source"]["media_type"] == "image/jpeg"
    assert Image.open(io.BytesIO(base64.b64decode(block["source"]["data"]))).format == "JPEG"


def test_oversized_bytes_raise_or_omit():
    rng = random.Random(7)
    noise = Image.frombytes(
        "RGB", (1_400, 1_400), rng.randbytes(1_400 * 1_400 * 3)
    )  # ~5.9 MB, incompressible
    buf = io.BytesIO()
    noise.save(buf, "PNG", compress_level=0)
    data = base64.b64encode(buf.getvalue()).decode()
    msgs = [{"role": "user", "content": [{"type": "text", "text": "look"}, image(data)]}]
    with pytest.raises(MediaError, match="message 1, block 2.*5 MB"):
        cap_media(msgs, limit=100)
    out, _ = cap_media(msgs, limit=100, on_error="omit")
    assert out[0]["content"][1]["type"] == "text" and "image removed" in out[0]["content"][1]["text"]


def test_corrupt_image_is_named():
    msgs = [{"role": "user", "content": [image(base64.b64encode(b"not an image").decode())]}]
    with pytest.raises(MediaError, match="cannot be read"):
        cap_media(msgs, limit=100)


def test_prepare_attachment(tmp_path):
    p = tmp_path / "shot.dat"  # typed by bytes, not extension
    Image.new("RGB", (9_000, 30)).save(p, "PNG")
    block = prepare_attachment(p)
    assert block["type"] == "image" and block["source"]["media_type"] == "image/png"
    assert size_of(block) == (8_000, 26)
    pdf = tmp_path / "doc.pdf"
    pdf.write_bytes(b"%PDF-1.4\n%%EOF\n")
    doc = prepare_attachment(pdf)
    assert doc["type"] == "document" and doc["title"] == "doc.pdf"
    assert doc["source"]["media_type"] == "application/pdf"
    txt = tmp_path / "notes.txt"
    txt.write_text("hello")
    with pytest.raises(MediaError, match="notes.txt: unsupported file type"):
        prepare_attachment(txt)
    with pytest.raises(MediaError, match="cannot read missing.png"):
        prepare_attachment(tmp_path / "missing.png")
    broken = tmp_path / "broken.png"
    broken.write_bytes(b"\x89PNG\r\n\x1a\n" + b"\0" * 20)
    with pytest.raises(MediaError, match="not a readable image"):
        prepare_attachment(broken)


def test_five_mb_limit_is_on_the_base64_text(tmp_path):
    # The API measures image.source.base64 (the base64 string): 4.2 MB of bytes is 5.6 MB of base64 and a 400.
    rng = random.Random(3)
    noise = Image.frombytes("RGB", (1_180, 1_180), rng.randbytes(1_180 * 1_180 * 3))
    buf = io.BytesIO()
    noise.save(buf, "PNG", compress_level=0)
    raw = buf.getvalue()
    assert 3.9e6 < len(raw) < 5 * 1024 * 1024 < len(base64.b64encode(raw))
    msgs = [{"role": "user", "content": [image(base64.b64encode(raw).decode())]}]
    with pytest.raises(MediaError, match="5 MB"):
        cap_media(msgs, limit=100)
    path = tmp_path / "photo.png"
    path.write_bytes(raw)
    with pytest.raises(MediaError, match="5 MB"):
        prepare_attachment(path)
