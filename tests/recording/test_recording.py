"""Recording round trip, secrets kept out, a recording of the last release, damaged and foreign files."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentx_tui import __version__
from agentx_tui.errors import RecordingError
from agentx_tui.recording import RECORDING_FORMAT, Recorder, ReplayPlayer, read_recording
from agentx_tui.redaction import redact
from tests.recording._header import a_header
from tests.report._snaps import SECRET, snap, stream

HEADER = a_header()
LAST_RELEASE = Path(__file__).parent / "data" / "stop31.jsonl"  # written by the code of 318b9b7


def record(path: Path, n: int = 5) -> list[object]:
    snaps = stream(n)
    with Recorder(path, HEADER, secrets=[SECRET]) as rec:
        for s in snaps:
            rec.publish(s)
    return list(snaps)


def test_record_then_read_back_equals_the_originals(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    snaps = record(path)
    rec = read_recording(path)
    assert rec.snapshots == snaps
    assert rec.notice is None
    assert rec.header == HEADER
    assert (rec.header.agentx_recording, rec.header.version) == (RECORDING_FORMAT, __version__)
    assert len(path.read_text().splitlines()) == 6


def test_the_api_key_never_reaches_the_file(tmp_path: Path) -> None:
    # The header has no field for a key (test_header.py); one can still hide in what the user typed.
    path = tmp_path / "run.jsonl"
    header = a_header(attach=(f"http://user:{SECRET}@10.0.0.1:8000",), vllm_args=(f"--api-key={SECRET}",))
    with Recorder(path, header, secrets=[SECRET]) as rec:
        rec.publish(snap(0, events=(f"18:00:00 request failed: key {SECRET} rejected",)))
    assert SECRET not in path.read_text()
    read = read_recording(path)
    assert read.header.settings.attach == ("http://user:********@10.0.0.1:8000",)
    assert read.header.settings.vllm_args == ("--api-key=********",)
    (only,) = read.snapshots
    assert only.events == ("18:00:00 request failed: key ******** rejected",)


async def test_a_recording_of_the_last_release_reads_and_replays() -> None:
    rec = read_recording(LAST_RELEASE)
    assert rec.notice is None
    header = rec.header
    assert (header.agentx_recording, header.version, header.schema_version) == (1, "0.1.0", 1)
    assert (header.target, header.simulated, header.workload) == ("simulated h200/llama-3.1-8b", True, "chat")
    assert [e.model for e in header.endpoints] == ["meta-llama/Llama-3.1-8B-Instruct"]
    settings = header.settings
    assert (settings.target, settings.sim_profile, settings.users, settings.seed) == ("sim", "h200/llama-3.1-8b", 8, 7)
    assert (settings.duration_s, settings.precision, settings.frontier_axis) == (25.0, 0.5, "e2e_interactivity")
    assert [s.seq for s in rec.snapshots] == [1, 2, 12]
    assert rec.snapshots[1].aggregate is not None and rec.snapshots[1].aggregate.running == 8
    player = ReplayPlayer(rec, speed=64, hold_at_end=False)
    assert [s async for s in player.snapshots()] == rec.snapshots


def test_each_line_is_on_disk_as_soon_as_it_is_written(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    rec = Recorder(path, HEADER)
    rec.publish(snap(0))
    rec.publish(snap(1))
    # No close: what a kill -9 at this point would leave behind.
    assert [s.seq for s in read_recording(path).snapshots] == [1, 2]
    rec.close()
    rec.publish(snap(2))  # after close: ignored, not an exception in the run's sink loop
    assert len(read_recording(path).snapshots) == 2


def test_a_recording_cut_mid_line_reads_with_a_notice(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    snaps = record(path)
    data = path.read_bytes()
    path.write_bytes(data[: len(data) - 200])  # cut inside the last snapshot
    rec = read_recording(path)
    assert rec.snapshots == snaps[:-1]
    assert rec.notice is not None and "truncated last line" in rec.notice


def test_a_complete_last_line_without_newline_is_kept(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    snaps = record(path)
    path.write_bytes(path.read_bytes().rstrip(b"\n"))
    rec = read_recording(path)
    assert rec.snapshots == snaps and rec.notice is None


def test_redact_masks_raw_and_json_escaped_forms_but_not_short_strings() -> None:
    assert redact(f"key={SECRET}!", [SECRET]) == "key=********!"
    assert redact('"a\\"b-secret-long"', ['a"b-secret-long']) == '"********"'
    assert redact("a b c", ["b"]) == "a b c"


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"", "is empty"),
        (b"\n\n  \n", "is empty"),
        (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "binary file"),
        (b"\xff\xfe\xfa not utf8\n", "not UTF-8"),
        (b"hello world\nsecond line\n", "first line is not JSON"),
        (b'{"seq": 1, "time": 0}\n', "not a recording header"),
        (b"[1, 2, 3]\n", "not a recording header"),
        (b'{"agentx_recording": "one"}\n', "no format number"),
        (b'{"agentx_recording": 99}\n', "format 99, newer"),
        (b'{"agentx_recording": 1}\n', "header this agentx-tui cannot read: version: Field required"),
        pytest.param(HEADER.model_dump_json().encode() + b"\n", "holds no snapshots", id="a header alone"),
    ],
)
def test_files_that_are_not_recordings_give_a_clear_error(tmp_path: Path, content: bytes, message: str) -> None:
    path = tmp_path / "x.jsonl"
    path.write_bytes(content)
    with pytest.raises(RecordingError, match=message) as err:
        read_recording(path)
    assert err.value.exit_code == 2
    assert str(path) in str(err.value)


def test_a_damaged_middle_line_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    record(path)
    lines = path.read_text().splitlines()
    lines[2] = lines[2][:50]
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(RecordingError, match="line 3 is not a valid snapshot"):
        read_recording(path)


def test_missing_file_and_directory(tmp_path: Path) -> None:
    with pytest.raises(RecordingError, match="cannot be read"):
        read_recording(tmp_path / "nope.jsonl")
    with pytest.raises(RecordingError, match="is a directory"):
        read_recording(tmp_path)
    with pytest.raises(RecordingError, match="cannot be written"):
        Recorder(tmp_path / "missing" / "r.jsonl", HEADER)


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
def test_a_full_disk_stops_the_recording_without_stopping_the_run() -> None:
    rec = Recorder(Path("/dev/full"), HEADER)
    rec.publish(snap(0))  # must not raise: the recorder is one sink of a live run
    assert rec.error is not None and "No space left" in rec.error
    rec.close()
