"""Exporting the store (`devstack.export`, `make export`) against the real Neo4j: seeding a
dataset and exporting it gives users.json, orders.json and products.json back equal by value,
for tau-retail and for the built-in demo store, and the CLI writes the three files."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from devstack.export import export_store, main
from devstack.seed.loader import DEMO_DIR, seed_store

pytestmark = pytest.mark.integration

FILES = ("users", "orders", "products")


def dataset(data_dir: Path) -> dict[str, Any]:
    return {name: json.loads((data_dir / f"{name}.json").read_text()) for name in FILES}


@pytest.fixture
def demo_store(neo4j_driver: Any, reseed_tau: None) -> Iterator[None]:
    """The demo store seeded for one test (tau-retail and its knowledge links restored after)."""
    seed_store(neo4j_driver, DEMO_DIR)
    yield


def test_seeding_tau_retail_and_exporting_gives_the_dataset_back(neo4j_driver: Any, tau_data: Path,
                                                                  reseed_tau: None) -> None:
    # Given tau-retail freshly seeded
    seed_store(neo4j_driver, tau_data)

    # When the store is exported
    exported = export_store(neo4j_driver)

    # Then each file equals the dataset's, record for record
    for name, records in dataset(tau_data).items():
        assert exported[name].keys() == records.keys()
        assert [key for key in records if exported[name][key] != records[key]] == [], name


def test_seeding_the_demo_store_and_exporting_gives_it_back(neo4j_driver: Any, demo_store: None) -> None:
    # When the demo store is exported
    exported = export_store(neo4j_driver)

    # Then
    assert exported == dataset(DEMO_DIR)


def test_the_cli_writes_the_three_files(neo4j_driver: Any, tau_store: Any, tmp_path: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    # When
    code = main(["--out", str(tmp_path / "export")])

    # Then three JSON files, one line each on stdout
    assert code == 0
    assert sorted(p.name for p in (tmp_path / "export").iterdir()) == ["orders.json", "products.json",
                                                                      "users.json"]
    assert len(json.loads((tmp_path / "export" / "users.json").read_text())) == 500
    assert capsys.readouterr().out.count(" records") == 3


def test_the_cli_refuses_a_file_as_the_output_directory(tmp_path: Path) -> None:
    # Given
    target = tmp_path / "a-file"
    target.write_text("x")

    # When / Then
    assert main(["--out", str(target)]) == 2
