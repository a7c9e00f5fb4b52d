"""Reading the package's YAML data files with libyaml's parser (PyYAML's C extension).

`yaml.safe_load` parses in pure Python: the Cypher catalogue alone took about 0.3-0.7 s of a
fresh process's first reply. `CSafeLoader` builds the same objects (the same safe constructors
and resolvers, only the scanner and parser are C) several times faster; without the extension
(a PyYAML built without libyaml) it is the pure-Python `SafeLoader`, as before.
"""

from __future__ import annotations

from typing import Any


def safe_load(text: str) -> Any:
    """`yaml.safe_load(text)`, parsed by libyaml when PyYAML has it."""
    import yaml

    return yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))  # noqa: S506 - a safe loader
