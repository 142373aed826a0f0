"""What one scrape of a vLLM /metrics page costs the direct scraper (parse + figures), on pages captured
from the real 0.32 CPU engine (tests/telemetry/data): without and with --kv-cache-metrics, whose three
residency histograms add ~70 lines to read.

    .venv/bin/python bench/scrape_parse.py [--scrapes 200] [--rounds 7]

Each round reads the page pair alternately `--scrapes` times into one `MetricsReader` (so every read
has a window to compute); the best round's mean is printed. Prints figures, asserts nothing.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from agentx_tui.telemetry import MetricsReader

DATA = Path(__file__).resolve().parents[1] / "tests" / "telemetry" / "data"
PAGES = {
    "vLLM 0.32, tiny model": ("vllm-0.32.0-cpu-tiny.metrics.txt", "vllm-0.32.0-cpu-tiny.after-4-more.metrics.txt"),
    "vLLM 0.32, tiny model, --kv-cache-metrics": (
        "vllm-0.32.0-cpu-tiny.kv-cache-metrics.before.metrics.txt",
        "vllm-0.32.0-cpu-tiny.kv-cache-metrics.after.metrics.txt",
    ),
}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--scrapes", type=int, default=200)
    p.add_argument("--rounds", type=int, default=7)
    args = p.parse_args()
    for name, files in PAGES.items():
        texts = [(DATA / f).read_text() for f in files]
        best = float("inf")
        for _ in range(args.rounds):
            reader = MetricsReader("http://bench")
            started = time.perf_counter()
            for i in range(args.scrapes):
                reader.read(texts[i % 2], float(i))
            best = min(best, (time.perf_counter() - started) / args.scrapes)
        lines = max(len(t.splitlines()) for t in texts)
        print(f"{name}: {best * 1e3:.2f} ms per scrape ({lines} lines on the page)")


if __name__ == "__main__":
    main()
