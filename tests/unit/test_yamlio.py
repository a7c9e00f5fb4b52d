"""`csagent.yamlio`: the package's YAML read by libyaml's parser builds what `yaml.safe_load` does."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from csagent import yamlio

PACKAGE = Path(yamlio.__file__).resolve().parent


@pytest.mark.parametrize("path", sorted(PACKAGE.rglob("*.yaml")), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_every_yaml_file_of_the_package_reads_the_same_with_the_c_parser(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    assert yamlio.safe_load(text) == yaml.safe_load(text)


def test_the_c_parser_is_used_and_stays_safe() -> None:
    # Given PyYAML built with libyaml (the wheels of the lock are)
    assert hasattr(yaml, "CSafeLoader")
    # Then an arbitrary Python object tag is refused, as by safe_load
    with pytest.raises(yaml.constructor.ConstructorError):
        yamlio.safe_load("!!python/object/apply:os.system ['true']")
