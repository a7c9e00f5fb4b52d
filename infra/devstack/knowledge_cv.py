"""Choose how knowledge answers use the asked questions (`csagent.knowledge.asked`) by 5-fold
cross-validation over the development messages answered from the documents, and print it.

    python -m devstack.knowledge_cv            # needs the local stack with the store seeded

The messages: every English first turn of the development conversations
(`infra/eval/understanding/dev/`) about a policy, a product or a warranty whose expectation is an
answer with given words and no order ("do returns cost anything" → "prepaid" or "free" …). Each is
searched once per value of the search's own setting (`SEARCH_GRID`: how close an asked question
must be for its sentence's chunk to be a candidate; `KnowledgeSearch.search`, as the tool does
without products); then, for every setting of the grid, `KnowledgeSearch.answer` is right when the
quoted answer holds the expected words. A setting is chosen on four folds and scored on the fifth;
the figure is the share right over the five held-out folds, beside the share right without the
asked questions (at the first candidates' bar). The setting printed last is the one chosen on all
messages (the module's constants). The held-out questions
of `python -m csagent.knowledge.evaluate` (written by someone who read only the documents) are
never used here: they report the choice.
"""

from __future__ import annotations

import argparse
import glob
import itertools
import json
import random
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from csagent.knowledge import search as knowledge

ROOT = Path(__file__).resolve().parents[2]
DEV = ROOT / "infra" / "eval" / "understanding" / "dev"
CATEGORIES = {"policy_question", "product_info", "warranty"}
#: The search's own setting: each value searches every message again (`SEARCH_GRID`).
SEARCH_GRID = {"ASKED_CANDIDATE_MIN": (0.8, 0.7, 0.6)}
GRID = {
    "ASKED_ANSWER_MIN": (0.65, 0.7, 0.75, 0.8, 0.85, 2.0),  # 2.0: no hit is ever chosen by them
    "ASKED_MARGIN": (0.0, 0.05, 0.1),
    "ASKED_WEIGHT": (0.0, 0.5, 1.0, 2.0, 3.0),
    "ASKED_FLOOR": (0.4, 0.5, 0.6),
}

Row = tuple[str, list[list[str]], list[str]]  # text, any-of groups, all-of words


def messages(directory: Path = DEV) -> list[Row]:
    rows: list[Row] = []
    for path in sorted(glob.glob(str(directory / "*.jsonl"))):
        for line in Path(path).read_text(encoding="utf-8").splitlines():
            if not line.strip():
                continue
            conversation = json.loads(line)
            categories = set(conversation.get("categories") or [])
            if conversation.get("lang") != "en" or not CATEGORIES & categories:
                continue
            turn = conversation["turns"][0]
            expect = turn.get("expect")
            if expect is None:
                continue  # a first turn left unjudged (FORMAT.md allows it)
            no_answer = expect.get("outcome") != "answer" or not expect.get("reply_contains_any")
            if expect.get("orders") or no_answer:
                continue
            rows.append((turn["text"], expect["reply_contains_any"], expect.get("reply_contains") or []))
    return rows


def right(answer: str, groups: Sequence[Sequence[str]], alls: Sequence[str]) -> bool:
    text = answer.lower()
    return (all(any(p.lower() in text for p in group) for group in groups)
            and all(p.lower() in text for p in alls))


@contextmanager
def setting(values: dict[str, float]) -> Iterator[None]:
    saved = {name: getattr(knowledge, name) for name in values}
    try:
        for name, value in values.items():
            setattr(knowledge, name, value)
        yield
    finally:
        for name, value in saved.items():
            setattr(knowledge, name, value)


class _Memo:
    """The embedder with its sentence vectors remembered (the grid answers each message ~200 times)."""

    def __init__(self, embedder: Any) -> None:
        self._embedder, self._seen = embedder, {}
        self.dimension = embedder.dimension

    def embed(self, texts: Sequence[str]) -> list[Any]:
        missing = [t for t in dict.fromkeys(texts) if t not in self._seen]
        if missing:
            self._seen.update(zip(missing, self._embedder.embed(missing), strict=True))
        return [self._seen[t] for t in texts]


def _restraint(values: dict[str, float]) -> tuple[float, ...]:
    """Between settings right as often, the one that changes the answers least: the highest bar for
    a candidate of the search and for another hit, then the smallest weight, margin and floor last."""
    return (values["ASKED_CANDIDATE_MIN"], values["ASKED_ANSWER_MIN"], -values["ASKED_WEIGHT"],
            values["ASKED_MARGIN"], values["ASKED_FLOOR"])


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m devstack.knowledge_cv",
                                     description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args(argv)

    from csagent.knowledge.asked import shipped
    from csagent.knowledge.evaluate import _connect

    graph, embedder = _connect()
    memo = _Memo(embedder)
    searcher = knowledge.KnowledgeSearch(graph, memo, asked=shipped(embedder))
    rows = messages()
    names = list(SEARCH_GRID) + list(GRID)
    settings: list[dict[str, float]] = []
    table = []  # per setting: per message right (bool)
    first: list[Any] = []  # the search at the first setting's candidates, for the figure without questions
    for searched in itertools.product(*SEARCH_GRID.values()):
        search_values = dict(zip(SEARCH_GRID, searched, strict=True))
        with setting(search_values):
            results = [searcher.search(text, k=5) for text, _, _ in rows]
        first = first or results
        for values in itertools.product(*GRID.values()):
            answer_values = dict(zip(GRID, values, strict=True))
            settings.append({**search_values, **answer_values})
            with setting(answer_values):
                table.append([right(searcher.answer(text, result), groups, alls)
                              for (text, groups, alls), result in zip(rows, results, strict=True)])
    without = knowledge.KnowledgeSearch(graph, memo, asked=None)
    base = [right(without.answer(text, result), groups, alls)
            for (text, groups, alls), result in zip(rows, first, strict=True)]

    order = list(range(len(rows)))
    random.Random(args.seed).shuffle(order)
    fold_of = {index: position % args.folds for position, index in enumerate(order)}
    held_out_right = 0
    for fold in range(args.folds):
        train = [i for i in range(len(rows)) if fold_of[i] != fold]
        test = [i for i in range(len(rows)) if fold_of[i] == fold]
        best = max(range(len(settings)),
                   key=lambda s: (sum(table[s][i] for i in train), *_restraint(settings[s])))
        held_out_right += sum(table[best][i] for i in test)
        print(f"fold {fold}: chose {settings[best]} → {sum(table[best][i] for i in test)}/{len(test)} "
              f"(without asked questions {sum(base[i] for i in test)}/{len(test)})")
    chosen = max(range(len(settings)), key=lambda s: (sum(table[s]), *_restraint(settings[s])))
    print(f"{len(rows)} messages; held out over {args.folds} folds: {held_out_right} right "
          f"({held_out_right / len(rows):.3f}); without the asked questions {sum(base)} "
          f"({sum(base) / len(rows):.3f})")
    print(f"chosen on all: {settings[chosen]} ({sum(table[chosen])} right)")
    current = {name: getattr(knowledge, name) for name in names}
    now = next((i for i, values in enumerate(settings) if values == current), None)
    if now is not None:
        print(f"the module's setting: {current} ({sum(table[now])} right)")
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
