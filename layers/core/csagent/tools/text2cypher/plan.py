"""What the database's EXPLAIN plan says a generated query touches, and what that breaks.

`EXPLAIN` returns the plan Neo4j would run (`ResultSummary.plan` in the Python driver: a dict
tree of `operatorType`, `args`, `identifiers`, `children`). The planner has already resolved
every subquery, `CALL { }`, `UNION` branch, `EXISTS { }`, label expression (`n:A|B`,
`WHERE n:A`) and pattern direction, so reading its operators is reading the query as the
database understands it, with no Cypher grammar of our own:

- **writes**: any operator that changes the store (`Create`, `Merge`, `SetProperty`, `Delete`,
  `Foreach`, `LoadCSV`, `TransactionForeach`, ...), wherever the planner put it - a write hidden
  in a `CALL { }` subquery plans as `SubqueryForeach` over a `Create`;
- **labels**, per variable: from the scans and seeks that start from a label
  (`NodeByLabelScan p:Product`, `NodeUniqueIndexSeek UNIQUE c:Customer(customer_id)`,
  `UnionNodeByLabelsScan n:Product|Customer`) and the label tests in `Filter`s (`v:Variant`);
- **relationship types and directions**, per expansion: `Expand(All)`'s
  `(p)<-[anon_0:HAS_VARIANT]-(v)` names both ends by variable, so with the variables' labels the
  direction is checked against the schema however the query spelled it;
- **unlabelled nodes**: an `AllNodesScan` of a variable that no filter labels and no typed
  expansion reaches, and an expansion with no relationship type, could reach customer data;
- **procedures**: `ProcedureCall` names the procedure the plan calls.

What the plan cannot tell, and so stays parsed by hand in `validation.py`:

- anything that must be refused *before* the query reaches the database (writes, `$parameters`,
  several statements, `EXPLAIN`/`PROFILE` prefixes, administration commands): the keyword scan
  over the masked text, because such a query is never sent, not even to be planned;
- the checks `validate_statically` runs with no database (the example bank's file, tests), and
  the precise, pattern-shaped hints the model is corrected with (the plan is rewritten by the
  planner: `(v:Variant)-[:HAS_VARIANT]->(p)` may come back as `(p)<-[...]-(v)`);
- property keys against the *allowed* schema (the plan projects expressions, not which label's
  key was meant; EXPLAIN's "unknown property" notification covers keys the store lacks);
- string literals compared with properties (the planner turns them into `$autostring_n`
  parameters, so the value check reads them from the masked query text).

Both run on every query the database plans; their errors are merged (an error the static check
already reported is not repeated), so the plan only ever adds refusals, never removes one.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

#: Plan operators that change the store (Neo4j 5 names, without the `@database` suffix).
WRITE_OPERATORS = frozenset({
    "Create", "Merge", "LockingMerge", "SetProperty", "SetProperties", "SetNodeProperty",
    "SetNodeProperties", "SetNodePropertiesFromMap", "SetRelationshipProperty",
    "SetRelationshipProperties", "SetRelationshipPropertiesFromMap", "SetPropertiesFromMap",
    "SetLabels", "RemoveLabels", "Delete", "DetachDelete", "Foreach", "LoadCSV",
    "TransactionForeach", "TransactionApply", "CreateIndex", "CreateConstraint", "DropIndex",
    "DropConstraint", "DoNothingIfExists",
})
_EXPANSIONS = ("Expand", "OptionalExpand", "VarLengthExpand", "ShortestPath", "StatefulShortestPath",
               "DirectedRelationship", "UndirectedRelationship", "BFSPruningVarExpand",
               "PruningVarExpand", "Repeat")
_BACKTICKED_RE = re.compile(r"`[^`]*`")
#: `p:Product`, `n:Product|Customer`, `c:Customer(customer_id)`: a variable's label test.
_LABEL_TEST_RE = re.compile(r"(?<![\w.$`])([A-Za-z_]\w*):([A-Za-z_]\w*(?:\s*[|&]\s*[A-Za-z_]\w*)*)")
#: `(p)<-[anon_0:HAS_VARIANT]-(v)`, `(a)-[r:A|B*1..3]->(b)`, `(a)-[anon_1]-(b)`.
_EXPAND_RE = re.compile(r"\((?P<left>[A-Za-z_]\w*)?\)\s*(?P<in><)?-\[(?P<var>[A-Za-z_]\w*)?\s*"
                        r"(?::(?P<types>[A-Za-z_]\w*(?:\|[A-Za-z_]\w*)*))?[^\]]*\]-(?P<out>>)?\s*"
                        r"\((?P<right>[A-Za-z_]\w*)?\)")
_PROCEDURE_RE = re.compile(r"^\s*([A-Za-z_][\w.]*)\s*\(")


@dataclass(frozen=True)
class PlannedExpansion:
    """One relationship step of the plan: `start -[types]-> end` in stored-direction terms
    (`directed` False for an undirected step)."""

    start: str
    end: str
    types: tuple[str, ...]
    directed: bool
    operator: str


@dataclass
class PlanFacts:
    """What one EXPLAIN plan touches."""

    operators: list[str] = field(default_factory=list)
    writes: list[str] = field(default_factory=list)
    labels: dict[str, set[str]] = field(default_factory=dict)
    expansions: list[PlannedExpansion] = field(default_factory=list)
    unlabelled_scans: list[str] = field(default_factory=list)
    procedures: list[str] = field(default_factory=list)

    @property
    def all_labels(self) -> set[str]:
        return {label for labels in self.labels.values() for label in labels}

    @property
    def relationship_types(self) -> set[str]:
        return {t for e in self.expansions for t in e.types}


def _operators(plan: Mapping[str, Any]) -> Iterator[tuple[str, str]]:
    """Every (operator name without `@db`, its Details text), depth first."""
    stack = [plan]
    while stack:
        node = stack.pop()
        name = str(node.get("operatorType", "")).split("@", 1)[0]
        args = node.get("args") or node.get("arguments") or {}
        yield name, str(args.get("Details", "") or "")
        stack.extend(reversed(list(node.get("children") or ())))


def read_plan(plan: Mapping[str, Any]) -> PlanFacts:
    """The facts of an EXPLAIN plan dict (`ResultSummary.plan`)."""
    facts = PlanFacts()
    scanned_all: list[str] = []
    for name, details in _operators(plan):
        facts.operators.append(name)
        if name in WRITE_OPERATORS:
            facts.writes.append(name)
        text = _BACKTICKED_RE.sub(" ", details)  # column aliases are names, not label tests
        if name == "AllNodesScan":
            scanned_all.append(text.strip())
        if name == "ProcedureCall" and (m := _PROCEDURE_RE.match(details)):
            facts.procedures.append(m.group(1))
        expansions = list(_EXPAND_RE.finditer(text)) if name.startswith(_EXPANSIONS) else []
        for m in expansions:
            left, right = m.group("left") or "", m.group("right") or ""
            types = tuple(m.group("types").split("|")) if m.group("types") else ()
            start, end = (right, left) if m.group("in") else (left, right)
            facts.expansions.append(PlannedExpansion(start, end, types, bool(m.group("in") or m.group("out")),
                                                     name))
        without_patterns = _EXPAND_RE.sub(" ", text)
        for var, labels in _LABEL_TEST_RE.findall(without_patterns):
            facts.labels.setdefault(var, set()).update(
                label.strip() for label in re.split(r"[|&]", labels) if label.strip())
    typed_ends = {v for e in facts.expansions if e.types for v in (e.start, e.end)}
    facts.unlabelled_scans = [var for var in scanned_all
                              if var and not facts.labels.get(var) and var not in typed_ends]
    return facts
