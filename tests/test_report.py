"""`zant report`: the per-node figures, the page (self-contained), and the page rendered in headless
Chromium (Debian's `chromium`; .ci/run installs it) with its DOM and a screenshot checked."""

from __future__ import annotations

import os
import re
import shutil
import struct
import subprocess
import tempfile
import zlib
from pathlib import Path

import pytest

from zant.tools.cli import main
from zant.tools.report import build_report, render_html

ROOT = Path(__file__).resolve().parent.parent
DIGITS = ROOT / "examples" / "digits" / "digits_cnn.onnx"
DIGITS_GROUPS = [
    "conv1, relu1", "pool1, conv2", "conv2", "conv2, relu2", "pool2", "fc1, relu3", "fc2", "softmax",
]


@pytest.fixture(scope="module")
def host_report():
    return build_report(DIGITS)


@pytest.fixture(scope="module")
def m4_report():
    from zant.backend.firmware import qemu_missing
    from zant.backend.boards import board_for

    missing = qemu_missing(board_for("cortex-m4", None))
    if missing:
        pytest.skip(missing)
    return build_report(DIGITS, "cortex-m4")


def _distinct_constants(plan: dict) -> int:
    return sum({t["offset"]: t["size"] for t in plan["tensors"] if t["role"] == "constant"}.values())


def test_host_report_rows_and_bytes(host_report):
    report = host_report
    assert [r.label for r in report.nodes] == DIGITS_GROUPS
    assert report.nodes[0].op_types == "Conv, Relu" and report.nodes[5].op_types == "Gemm, Relu"
    assert all(r.cycles is None and r.code_bytes is None for r in report.nodes)  # no timing model on the host
    plan = report.plan
    # every weight is read by some node, each counted once; every scratch buffer created once
    assert sum(r.weight_bytes for r in report.nodes) == _distinct_constants(plan) > 0
    assert dict(report.nodes[0].weights.values()) == {"conv1_weight": 288, "conv1_bias": 32}
    scratch = sum(t["size"] for t in plan["tensors"] if t["role"] == "scratch")
    assert sum(r.created_bytes for r in report.nodes) == scratch
    # what is live while a node runs fits the planned arena, and the widest moment fills it
    assert max(r.live_bytes for r in report.nodes) == plan["summary"]["scratch_bytes"] == 8320  # conv2 in Winograd (4fa6a1e): 3,200 B direct


def test_the_page_is_self_contained(host_report):
    page = render_html(host_report)
    assert page.count('<tr class="node">') == len(DIGITS_GROUPS)
    assert re.search(r'<figure id="plan-chart"><svg ', page)
    assert "Host target: no board to fit" in page and "no timing model" in page
    # nothing fetched: no external scripts, styles, fonts or images (the SVG namespace is a name)
    assert not re.search(r"<link|<img|\bsrc=|@import|url\(|https?://(?!www\.w3\.org/2000/svg)", page)


def test_mcu_report_has_each_nodes_cycles_and_code(m4_report):
    report = m4_report
    profile = report.profile
    assert report.board is not None and report.board.name == "mps2-an386"
    # the module's node groups are the profile's (the M4 pipeline pads conv1's input apart)
    assert [r.label for r in report.nodes] == [g.label for g in profile.nodes]
    assert [r.label for r in report.nodes][:3] == ["conv1", "conv1, relu1", "pool1"]
    assert all(r.cycles > 0 and r.instructions > 0 and r.code_bytes > 0 for r in report.nodes)
    # the rows and what ran outside the kernels add up to the inference: its instructions exactly,
    # its cycles up to the rounding of the library code's share (a cycle per row at most)
    assert sum(r.instructions for r in report.nodes) + sum(r.instructions for r in profile.outside) == profile.total
    cycles = sum(r.cycles for r in report.nodes) + sum(r.cycles for r in profile.outside)
    assert abs(cycles - profile.total_cycles) <= len(report.nodes)
    assert sum(r.code_bytes for r in report.nodes) == sum(k.code_bytes for k in profile.kernels)
    assert report.stack_bytes and report.image_sizes["flash"] > report.weight_bytes
    page = render_html(report)
    assert f"{profile.total_cycles:,}" in page and '<table id="kernel-table">' in page
    assert "RAM of mps2-an386" in page and '<span class="ok">fits</span>' in page


def test_zant_report_command(tmp_path, capsys):
    out = tmp_path / "digits.html"
    assert main(["report", str(DIGITS), "-o", str(out), "--quiet"]) == 0
    assert f"wrote {out}: 8 node rows" in capsys.readouterr().out
    assert out.read_text(encoding="utf-8").count('<tr class="node">') == 8
    with pytest.raises(SystemExit):
        main(["report", "--help"])
    helped = capsys.readouterr().out
    assert "--board" in helped and "-o FILE.html, --output FILE.html" in helped and "default: host" in helped


# -- in a browser -------------------------------------------------------------------------------------


def chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


def _chromium(*args: str) -> subprocess.CompletedProcess:
    with tempfile.TemporaryDirectory(prefix="zant-chromium-") as profile:
        return subprocess.run(
            [chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
             "--disable-background-networking", "--disable-component-update", "--disable-sync",
             f"--user-data-dir={profile}", *args],
            capture_output=True, text=True, timeout=180,
        )


def png_pixels(data: bytes) -> tuple[int, int, list[bytes]]:
    """Width, height and the rows of an 8-bit RGB or RGBA PNG, unfiltered (zlib only)."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    position, chunks, idat = 8, {}, b""
    while position < len(data):
        length, kind = struct.unpack(">I4s", data[position : position + 8])
        body = data[position + 8 : position + 8 + length]
        if kind == b"IDAT":
            idat += body
        chunks.setdefault(kind, body)
        position += 12 + length
    width, height, depth, colour = struct.unpack(">IIBB", chunks[b"IHDR"][:10])
    assert depth == 8 and colour in (2, 6), (depth, colour)
    pixel = 3 if colour == 2 else 4
    raw, stride, rows, previous = zlib.decompress(idat), width * pixel, [], bytes(width * pixel)
    for y in range(height):
        start = y * (stride + 1)
        kind, line = raw[start], bytearray(raw[start + 1 : start + 1 + stride])
        for i in range(stride):
            left = line[i - pixel] if i >= pixel else 0
            up, corner = previous[i], previous[i - pixel] if i >= pixel else 0
            if kind == 1:
                line[i] = (line[i] + left) & 0xFF
            elif kind == 2:
                line[i] = (line[i] + up) & 0xFF
            elif kind == 3:
                line[i] = (line[i] + (left + up) // 2) & 0xFF
            elif kind == 4:
                p = left + up - corner
                guess = min((abs(p - left), 0, left), (abs(p - up), 1, up), (abs(p - corner), 2, corner))[2]
                line[i] = (line[i] + guess) & 0xFF
        rows.append(bytes(line))
        previous = line
    return width, height, [bytes(r[i : i + 3]) for r in rows for i in range(0, stride, pixel)]


@pytest.mark.skipif(chromium() is None, reason="no chromium here (apt-get install chromium; .ci/run installs it)")
def test_the_page_renders_in_headless_chromium(m4_report, tmp_path):
    page = tmp_path / "report.html"
    page.write_text(render_html(m4_report), encoding="utf-8")
    dom = _chromium("--dump-dom", page.as_uri())
    assert dom.returncode == 0, dom.stderr[-2000:]
    # the DOM after the scripts ran: the script counts the node rows into <body data-ready>
    rows = len(m4_report.nodes)
    assert f'data-ready="{rows}"' in dom.stdout, dom.stdout[:500]
    assert len(re.findall(r'<tr class="node">', dom.stdout)) == rows
    assert re.search(r'<figure id="plan-chart"><svg [^>]*>.*?<rect ', dom.stdout, re.S)
    assert "conv1, relu1" in dom.stdout
    shot = tmp_path / "report.png"
    taken = _chromium(f"--screenshot={shot}", "--window-size=1400,2000", "--hide-scrollbars", page.as_uri())
    assert taken.returncode == 0 and shot.is_file(), taken.stderr[-2000:]
    assert shot.stat().st_size > 20_000
    width, height, pixels = png_pixels(shot.read_bytes())
    assert (width, height) == (1400, 2000)
    colours = set(pixels)
    inked = sum(1 for p in pixels if p != b"\xff\xff\xff") / len(pixels)
    assert len(colours) > 100 and inked > 0.03, (len(colours), inked)  # text, bars and the chart's colours


def test_a_board_without_qemu_fits_without_cycles(tmp_path):
    board = tmp_path / "tiny.toml"
    board.write_text(
        'core = "cortex-m4"\nflash = { origin = 0x0800_0000, size = "40 KB" }\n'
        'ram = { origin = 0x2000_0000, size = "8 KB" }\n'
    )
    report = build_report(DIGITS, board=board)
    assert report.target == "cortex-m4" and report.profile is None and report.stack_bytes is None
    assert "names no QEMU machine" in report.unmeasured
    assert all(r.cycles is None for r in report.nodes) and report.nodes[0].weight_bytes == 0
    page = render_html(report)
    assert "Cycles and instructions are not measured: board &#x27;tiny&#x27; names no QEMU machine" in page
    flash = report.image_sizes["flash"]
    assert f'Flash of tiny ({board})</h3><p><span class="ok">fits</span>: {flash:,} of 40,960 B' in page
    assert re.search(r"RAM of tiny .*</h3>\s*<p><span class=\"ok\">fits</span>: [0-9,]+ of 8,192 B", page)
    assert "stack (minimum" in page
