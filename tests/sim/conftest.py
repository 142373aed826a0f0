"""Fixtures for the simulator tests: a real sim server in a subprocess on a free loopback port."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.helpers.sim import sim_server

SIM_MODEL = "meta-llama/Llama-3.1-8B-Instruct"


@pytest.fixture(scope="session")
def sim_url() -> Iterator[str]:
    with sim_server() as url:
        yield url


@pytest.fixture(scope="session")
def sim_pressure_url() -> Iterator[str]:
    """A simulator with a tiny KV cache (48 blocks of 16 tokens) and 16 sequences at most."""
    with sim_server("--num-gpu-blocks-override", "48", "--max-num-seqs", "16") as url:
        yield url
