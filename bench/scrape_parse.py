"""What one scrape of a vLLM /metrics page costs the direct scraper (parse + figures), on pages captured
from the real 0.32 CPU engine (tests/telemetry/data): without and with --kv-cache-metrics, whose three
residency histograms add ~70 lines to read, and with ngram speculation; and what reading the request
phases and speculative decoding adds (docs/metrics.md, "Where the time went"): each page against itself
without those families, read by the same code in the same run.

    .venv/bin/python bench/scrape_parse.py [--scrapes 200] [--rounds 7]

Each round reads the page pair alternately `--scrapes` times into one `MetricsReader` (so every read
has a window to compute); the best round's mean CPU time (this process's) is printed. Prints figures,
asserts nothing.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from agentx_tui.telemetry import MetricsReader
from agentx_tui.telemetry._names import HISTOGRAM_SUMS

DATA = Path(__file__).resolve().parents[1] / "tests" / "telemetry" / "data"
PAGES = {
    "vLLM 0.32, tiny model": ("vllm-0.32.0-cpu-tiny.metrics.txt", "vllm-0.32.0-cpu-tiny.after-4-more.metrics.txt"),
    "vLLM 0.32, tiny model, --kv-cache-metrics": (
        "vllm-0.32.0-cpu-tiny.kv-cache-metrics.before.metrics.txt",
        "vllm-0.32.0-cpu-tiny.kv-cache-metrics.after.metrics.txt",
    ),
    "vLLM 0.32, tiny model, --kv-cache-metrics, ngram speculation": (
        "vllm-0.32.0-cpu-tiny.spec-ngram.before.metrics.txt",
        "vllm-0.32.0-cpu-tiny.spec-ngram.after.metrics.txt",
    ),
}
# The families the request phases and speculative decoding are read from (the request queue time's
# buckets were read before them: its percentiles).
_NEW = (*(name for names in HISTOGRAM_SUMS.values() for name in names), "vllm:spec_decode_")


def _named(line: str) -> str:
    """The metric a line is about: a sample's first word, a HELP or TYPE line's third."""
    words = line.split("{", 1)[0].split()
    return (words[2] if len(words) > 2 else "") if line.startswith("#") else (words[0] if words else "")


def _without_new(text: str) -> str:
    return "\n".join(line for line in text.splitlines() if not _named(line).startswith(_NEW))


def cpu_per_scrape(texts: list[str], scrapes: int, rounds: int) -> float:
    best = float("inf")
    for _ in range(rounds):
        reader = MetricsReader("http://bench")
        started = time.process_time()
        for i in range(scrapes):
            reader.read(texts[i % 2], float(i))
        best = min(best, (time.process_time() - started) / scrapes)
    return best


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--scrapes", type=int, default=200)
    p.add_argument("--rounds", type=int, default=7)
    args = p.parse_args()
    for name, files in PAGES.items():
        texts = [(DATA / f).read_text() for f in files]
        without = [_without_new(t) for t in texts]
        full = cpu_per_scrape(texts, args.scrapes, args.rounds)
        base = cpu_per_scrape(without, args.scrapes, args.rounds)
        lines = max(len(t.splitlines()) for t in texts)
        print(
            f"{name}: {full * 1e3:.2f} ms CPU per scrape ({lines} lines on the page); without the phases and "
            f"speculative decoding {base * 1e3:.2f} ms: ×{full / base:.2f}"
        )


if __name__ == "__main__":
    main()
