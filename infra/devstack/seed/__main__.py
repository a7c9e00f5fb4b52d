"""CLI: `python -m devstack.seed [--data DIR] [--neo4j-uri URI] [--database NAME]`.

Replaces the store graph with the dataset in DIR (default: the built-in demo store) and prints
one line per label and relationship count and the elapsed seconds. Exit codes: 0 done,
2 bad arguments or dataset directory, 1 Neo4j unreachable or a load error (one line, no trace).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m devstack.seed",
        description="Seed the store graph in Neo4j (deletes and reloads every store node).",
    )
    parser.add_argument("--data", type=Path, default=None,
                        help="directory with users.json, orders.json, products.json "
                             "(default: the built-in demo store)")
    parser.add_argument("--neo4j-uri", default=None, help="Bolt URI (default: settings NEO4J_URI)")
    parser.add_argument("--database", default=None, help="database name (default: settings NEO4J_DATABASE)")
    parser.add_argument("--no-knowledge", action="store_true",
                        help="skip (re-)ingesting the knowledge base and the Text2Cypher examples")
    return parser


def _dataset_error(data_dir: Path) -> str | None:
    """A precise message when `data_dir` cannot be seeded from, else None."""
    from devstack.seed.loader import missing_files

    if not data_dir.exists():
        return f"dataset directory {data_dir} does not exist"
    if not data_dir.is_dir():
        return f"dataset path {data_dir} is not a directory"
    absent = missing_files(data_dir)
    if absent:
        return f"dataset directory {data_dir} lacks {', '.join(absent)}"
    return None


def main(argv: Sequence[str] | None = None) -> int:
    """Parse arguments, seed, print the report; returns the process exit code."""
    args = _parser().parse_args(argv)
    if args.data is not None and (error := _dataset_error(args.data)):
        print(f"error: {error}", file=sys.stderr)
        return EXIT_USAGE

    from neo4j import GraphDatabase
    from neo4j.exceptions import Neo4jError, ServiceUnavailable

    from csagent.config import get_settings
    from devstack.seed.loader import seed_store

    settings = get_settings()
    uri = args.neo4j_uri or settings.neo4j_uri
    auth = (settings.neo4j_user, settings.neo4j_password) if settings.neo4j_password else None
    try:
        with GraphDatabase.driver(uri, auth=auth, connection_timeout=5.0) as driver:
            driver.verify_connectivity()  # fail fast instead of the driver's ~30 s of retries
            database = args.database or settings.neo4j_database
            report = seed_store(driver, args.data, database=database, dimension=settings.embedding_dimension)
            if not args.no_knowledge:
                from devstack.seed.knowledge import load_knowledge

                loaded = load_knowledge(driver, database=database)
    except ServiceUnavailable as exc:
        print(f"error: Neo4j at {uri} is unreachable ({exc})", file=sys.stderr)
        return EXIT_FAILED
    except (KeyError, TypeError) as exc:
        print(f"error: the dataset does not have the tau-retail shape (bad or missing key {exc})",
              file=sys.stderr)
        return EXIT_FAILED
    except (Neo4jError, ValueError, RuntimeError) as exc:
        print(f"error: seeding failed: {exc}", file=sys.stderr)
        return EXIT_FAILED

    print(f"seeded {report.data_dir} into {uri}")
    for label, count in report.nodes.items():
        print(f"  :{label} {count}")
    for rel, count in report.relationships.items():
        print(f"  [:{rel}] {count}")
    if report.mentions_restored:
        print(f"  knowledge MENTIONS restored {report.mentions_restored}")
    print(f"elapsed {report.elapsed_s:.2f} s")
    if not args.no_knowledge:
        knowledge = loaded.knowledge
        print(f"knowledge base: {knowledge.documents} documents, {knowledge.chunks} chunks, "
              f"{knowledge.product_mentions} product and {knowledge.category_mentions} category mentions "
              f"({knowledge.elapsed_ms / 1000:.2f} s)")
        print(f"text2cypher example bank: {loaded.examples}")
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
