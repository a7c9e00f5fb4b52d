"""`csagent.yamlio`: the package's YAML read by libyaml's parser builds what `yaml.safe_load` does; the
JSON form the build writes is read only when it was made from the file's exact text."""

from __future__ import annotations

import datetime
import json
import logging
from pathlib import Path

import pytest
import yaml

from csagent import yamlio

PACKAGE = Path(yamlio.__file__).resolve().parent
#: The package's YAML files (not the build's JSON forms of them).
YAML_FILES = sorted(p for p in PACKAGE.rglob("*.yaml") if yamlio.COMPILED_DIR not in p.parents)


@pytest.mark.parametrize("path", YAML_FILES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_every_yaml_file_of_the_package_reads_the_same_with_the_c_parser(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    assert yamlio.safe_load(text) == yaml.safe_load(text)


def test_the_c_parser_is_used_and_stays_safe() -> None:
    # Given PyYAML built with libyaml (the wheels of the lock are)
    assert hasattr(yaml, "CSafeLoader")
    # Then an arbitrary Python object tag is refused, as by safe_load
    with pytest.raises(yaml.constructor.ConstructorError):
        yamlio.safe_load("!!python/object/apply:os.system ['true']")


@pytest.mark.parametrize("path", YAML_FILES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_every_yaml_file_of_the_package_loads_as_its_yaml_says(path: Path) -> None:
    # Given the package's file, with or without the JSON form `make vectors` writes
    # When it is loaded as the code loads it
    # Then the data are what the YAML says
    assert yamlio.load_file(path) == yaml.safe_load(path.read_text(encoding="utf-8"))


def _package(tmp_path: Path, text: str) -> tuple[Path, Path, Path]:
    package, compiled = tmp_path / "pkg", tmp_path / "pkg" / "compiled"
    source = package / "data" / "labels.yaml"
    source.parent.mkdir(parents=True)
    source.write_text(text, encoding="utf-8")
    return package, compiled, source


def test_the_json_form_is_used_when_it_was_made_from_this_text(tmp_path: Path) -> None:
    # Given a YAML file converted by the build, whose JSON form is then marked (to see it read)
    package, compiled, source = _package(tmp_path, "greeting: hello\nitems: [1, 2]\n")
    assert yamlio.build(package, compiled) == ["data/labels.yaml"]
    target = compiled / "data" / "labels.yaml.json"
    document = json.loads(target.read_text(encoding="utf-8"))
    document["data"]["greeting"] = "from the JSON form"
    target.write_text(json.dumps(document), encoding="utf-8")

    # When it is loaded
    data = yamlio.load_file(source, package_dir=package, compiled_dir=compiled)

    # Then the JSON form is what was read
    assert data == {"greeting": "from the JSON form", "items": [1, 2]}


def test_a_json_form_made_from_another_text_is_never_used(tmp_path: Path,
                                                          caplog: pytest.LogCaptureFixture) -> None:
    # Given a YAML file converted by the build, then edited
    package, compiled, source = _package(tmp_path, "greeting: hello\n")
    yamlio.build(package, compiled)
    source.write_text("greeting: good morning\n", encoding="utf-8")

    # When it is loaded
    with caplog.at_level(logging.WARNING, logger="csagent.yamlio"):
        data = yamlio.load_file(source, package_dir=package, compiled_dir=compiled)

    # Then the YAML as it is now is what was read, and the stale form is named
    assert data == {"greeting": "good morning"}
    assert "stale" in caplog.text


def test_a_file_without_a_json_form_is_parsed(tmp_path: Path) -> None:
    # Given a YAML file the build never converted
    package, compiled, source = _package(tmp_path, "greeting: hello\n")

    # When it is loaded, Then its YAML is parsed
    assert yamlio.load_file(source, package_dir=package, compiled_dir=compiled) == {"greeting": "hello"}


def test_data_that_json_cannot_hold_exactly_are_not_converted(tmp_path: Path) -> None:
    # Given YAML whose data JSON would change (a date, an integer key)
    package, compiled, source = _package(tmp_path, "since: 2024-07-01\n3: three\n")

    # When the build converts the package
    written = yamlio.build(package, compiled)

    # Then that file has no JSON form, and loads with its own types
    assert written == []
    assert yamlio.load_file(source, package_dir=package, compiled_dir=compiled) == {
        "since": datetime.date(2024, 7, 1), 3: "three"}
