"""Apply the graph schema in `schema.cypher`: key constraints, fulltext and vector indexes.

Idempotent (every statement says IF NOT EXISTS), so the seed, the knowledge-base loader and
`make up` may all call it. The vector index size comes from the caller (settings:
`embedding_dimension`); an existing index of another size is reported, never silently kept.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from neo4j import Driver

SCHEMA_FILE = Path(__file__).resolve().parent / "schema.cypher"
DIMENSION_TOKEN = "{{EMBEDDING_DIMENSION}}"
VECTOR_INDEX = "chunk_embedding"
INDEX_WAIT_S = 120


class SchemaMismatchError(RuntimeError):
    """An index exists under the expected name but with a different configuration."""


def schema_statements(dimension: int, text: str | None = None) -> list[str]:
    """The schema's Cypher statements, comments dropped, with the vector dimension filled in."""
    if isinstance(dimension, bool) or not isinstance(dimension, int) or not 1 <= dimension <= 4096:
        raise ValueError(f"embedding dimension must be an integer in 1..4096, got {dimension!r}")
    source = SCHEMA_FILE.read_text(encoding="utf-8") if text is None else text
    code = "\n".join(line for line in source.splitlines() if not line.lstrip().startswith("//"))
    code = code.replace(DIMENSION_TOKEN, str(dimension))
    return [statement.strip() for statement in code.split(";") if statement.strip()]


def vector_index_dimension(driver: Driver, database: str = "neo4j") -> int | None:
    """The dimension of the `chunk_embedding` index, or None when it does not exist."""
    records, _, _ = driver.execute_query(
        "SHOW VECTOR INDEXES YIELD name, options WHERE name = $name RETURN options",
        parameters_={"name": VECTOR_INDEX}, database_=database, routing_="r",
    )
    if not records:
        return None
    config = (records[0]["options"] or {}).get("indexConfig") or {}
    value = config.get("vector.dimensions")
    return int(value) if value is not None else None


def apply_schema(driver: Driver, dimension: int, *, database: str = "neo4j") -> None:
    """Create every constraint and index that is missing, wait until they are online, and check
    that the vector index has `dimension` (raises `SchemaMismatchError` otherwise)."""
    with driver.session(database=database) as session:
        for statement in schema_statements(dimension):
            session.run(statement).consume()
        session.run(f"CALL db.awaitIndexes({INDEX_WAIT_S})").consume()
    existing = vector_index_dimension(driver, database)
    if existing is not None and existing != dimension:
        raise SchemaMismatchError(
            f"vector index {VECTOR_INDEX!r} has dimension {existing}, settings ask for {dimension}: "
            f"drop it (DROP INDEX {VECTOR_INDEX}) and re-embed the knowledge base"
        )
