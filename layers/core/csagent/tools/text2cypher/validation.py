"""Validation of a generated Cypher query, before it may run.

Checks, in the order `QueryValidator.validate` runs them (each becomes a recorded step):

1. **keyword_scan** (static) - one statement, no `$parameters`, no writing clause (CREATE, MERGE,
   SET, DELETE, REMOVE, DETACH, DROP, FOREACH, LOAD CSV, CALL ... IN TRANSACTIONS, admin
   commands), no procedure but the allowed fulltext search, no namespaced function outside a
   small pure allowlist (APOC writes, `dbms.*`, `db.create*` ...). Runs on the query with string
   literals and comments masked, so `p.name = 'Dumbbell Set'` is not a SET. Hand-written because
   a query refused here is never sent to the database, not even to be planned.
2. **explain** - `EXPLAIN` on Neo4j: syntax and semantic errors (undefined variables, type
   errors), the query type and the plan. Skipped when the keyword scan refused a write, a
   `$parameter`, a second statement or an EXPLAIN/PROFILE prefix.
3. **read_only** - the query type of the EXPLAIN summary must be "r", and the plan must hold no
   write operator (`plan.WRITE_OPERATORS`: a `Create` under a `CALL { }` subquery, `LoadCSV`,
   which plans as "r", `Foreach` ...). Execution happens in a READ transaction as well.
4. **schema** - labels, relationship types AND directions, properties, against
   `schema.CATALOGUE_SCHEMA`; customer-side labels/types are refused as outside the schema; a
   node with neither a label nor a typed relationship is refused (it could match a customer).
   When the database planned the query, what the plan reads decides too (`plan_errors`: every
   label scanned or filtered on, every relationship type expanded and its direction between
   labelled variables, full node scans, untyped expansions, procedure calls), together with
   EXPLAIN's "unknown label/type/property" notifications. The static pattern check still runs:
   it is what `validate_statically` has with no database (the example bank, tests), it points
   at the pattern as written (the planner may turn `(v)-[:T]->(p)` into `(p)<-[:T]-(v)`), and
   it checks property keys per label, which the plan does not attribute. Errors it already
   reported are not repeated from the plan, so the plan only adds refusals.
5. **values** - a string literal compared with `=`, `IN`, `CONTAINS`, `STARTS WITH`, `ENDS WITH`
   against a property must occur in the graph (looked up case-insensitively); the hint lists
   close stored values. A literal that exists only in another letter case fails when the
   comparison is case-sensitive, because the query would silently return nothing. Read from the
   masked text: the planner replaces literals with `$autostring_n` parameters.

Every failure is a typed `Text2CypherError` subclass (`errors`), kept as data (instances are
collected, never raised across the tool boundary); its message and hint go back to the model
verbatim.

The static parser is deliberately a set of careful regular expressions over the masked query,
not a Cypher grammar: patterns it cannot read in a MATCH clause are refused, so gaps fail closed.
"""
from __future__ import annotations

import difflib
import logging
import re
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol

from csagent.caching import TTLCache
from csagent.tools.caches import HINT_VALUES_TTL_S
from csagent.tools.text2cypher.errors import (
    ExecutionFailed,
    ModelError,
    OutsideSchema,
    ParameterNotAllowed,
    QuestionOutOfScope,
    Refused,
    SchemaViolation,
    StoreUnavailable,
    SyntaxInvalid,
    Text2CypherError,
    Timeout,
    UnknownLabel,
    UnknownProperty,
    UnknownRelationship,
    UnknownValue,
    WriteAttempt,
    WrongDirection,
    classify_store_error,
)
from csagent.tools.text2cypher.plan import PlanFacts, read_plan
from csagent.tools.text2cypher.schema import CATALOGUE_SCHEMA, AllowedSchema, PropertySpec

if TYPE_CHECKING:  # pragma: no cover - typing only
    from csagent.ports import GraphStore

logger = logging.getLogger(__name__)

Verdict = Literal["pass", "fail", "skip"]

#: The typed errors, defined in `errors` and importable from here as before.
__all__ = ["ExecutionFailed", "ModelError", "OutsideSchema", "ParameterNotAllowed", "QueryValidator",
           "QuestionOutOfScope", "Refused", "SchemaViolation", "StoreUnavailable", "SyntaxInvalid",
           "Text2CypherError", "Timeout", "UnknownLabel", "UnknownProperty", "UnknownRelationship",
           "UnknownValue", "ValidationReport", "WriteAttempt", "WrongDirection", "classify_store_error",
           "mask_cypher", "plan_errors", "plan_write_errors", "scan_keywords", "validate_statically"]


# ---------------------------------------------------------------------------------------------
# Lexing: mask string literals and comments
# ---------------------------------------------------------------------------------------------
_LITERAL_TOKEN_RE = re.compile(r"§(\d+)§")
_IDENT_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f"}


@dataclass(frozen=True)
class MaskedCypher:
    """A query with each string literal replaced by `§n§` (its text in `strings[n]`), comments
    replaced by a space and simple `backtick` names unquoted; the checks read `code`."""

    source: str
    code: str
    strings: tuple[str, ...]

    def literal(self, token: str | int) -> str | None:
        index = int(token)
        return self.strings[index] if 0 <= index < len(self.strings) else None


def mask_cypher(text: str) -> MaskedCypher:
    """Lex `text` once: string literals, backtick names and comments cannot fool the checks."""
    out: list[str] = []
    strings: list[str] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch in "'\"":
            j, buf = i + 1, []
            while j < n and text[j] != ch:
                if text[j] == "\\" and j + 1 < n:
                    buf.append(_ESCAPES.get(text[j + 1], text[j + 1]))
                    j += 2
                    continue
                buf.append(text[j])
                j += 1
            strings.append("".join(buf))
            out.append(f"§{len(strings) - 1}§")
            i = j + 1
        elif ch == "`":
            j = text.find("`", i + 1)
            j = n if j < 0 else j
            name = text[i + 1:j]
            out.append(name if _IDENT_RE.fullmatch(name) else "_quoted_" + re.sub(r"\W", "_", name))
            i = j + 1
        elif text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
            out.append(" ")
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            i = n if j < 0 else j + 2
            out.append(" ")
        else:
            out.append(ch)
            i += 1
    return MaskedCypher(text, "".join(out), tuple(strings))


# ---------------------------------------------------------------------------------------------
# Keyword scan: read-only, one statement, no parameters, allowed procedures/functions only
# ---------------------------------------------------------------------------------------------
_WRITE_CLAUSE_RE = re.compile(
    r"\b(CREATE|MERGE|SET|DELETE|DETACH|REMOVE|DROP|FOREACH|LOAD\s+CSV|IN\s+TRANSACTIONS|GRANT|REVOKE|"
    r"DENY|ALTER|RENAME|TERMINATE|START\s+DATABASE|STOP\s+DATABASE|ENABLE\s+SERVER|DEALLOCATE|REALLOCATE)\b",
    re.IGNORECASE)
_ADMIN_RE = re.compile(r"^\s*(SHOW|USE)\b|\bUSE\s+[A-Za-z_]", re.IGNORECASE)
_PREFIX_RE = re.compile(r"^\s*(EXPLAIN|PROFILE|CYPHER\b[^\n]*?)\b", re.IGNORECASE)
_PARAM_RE = re.compile(r"\$\s*(?:[A-Za-z_]\w*|\{|\d)")
_PROCEDURE_RE = re.compile(r"\bCALL\s+([A-Za-z_][\w]*(?:\s*\.\s*[A-Za-z_]\w*)*)", re.IGNORECASE)
_FUNCTION_RE = re.compile(r"(?<![\w.])([A-Za-z_]\w*(?:\s*\.\s*[A-Za-z_]\w*)+)\s*\(")
#: Procedures a generated query may call (lower case). Fulltext search is useful and read-only;
#: the vector search needs an embedding the model cannot write, so it is not offered.
ALLOWED_PROCEDURES = frozenset({"db.index.fulltext.querynodes"})
#: Namespaced functions that only compute values (lower-case prefixes).
ALLOWED_FUNCTION_PREFIXES = ("date.", "datetime.", "localdatetime.", "time.", "localtime.", "duration.",
                             "point.", "vector.similarity.", "apoc.text.", "apoc.coll.", "apoc.map.",
                             "apoc.convert.fromjsonmap", "apoc.convert.fromjsonlist", "apoc.number.",
                             "apoc.math.", "apoc.util.md5", "apoc.util.sha")
_WRITE_PROCEDURE_RE = re.compile(
    r"create|merge|delete|remove|\.set|periodic|refactor|apoc\.do\.|apoc\.cypher\.|apoc\.load\.|import|"
    r"export|trigger|drop|clear|dbms\.|lock|atomic|schema\.assert|\.add|\.write|gds\.", re.IGNORECASE)


def scan_keywords(masked: MaskedCypher) -> list[Text2CypherError]:
    """Static refusals: writes, procedures, parameters, several statements, prefixes."""
    code = masked.code
    errors: list[Text2CypherError] = []
    if not code.strip():
        return [SyntaxInvalid("The query is empty.")]
    if (prefix := _PREFIX_RE.match(code)) is not None:
        errors.append(SyntaxInvalid(f"Do not prefix the query with {prefix.group(1).split()[0].upper()}.",
                                    hint="write only the query itself"))
    if ";" in code.strip().rstrip(";"):
        errors.append(SyntaxInvalid("Write exactly one statement (found ';').",
                                    hint="combine the parts with WITH, UNION or CALL { }"))
    seen: set[str] = set()
    for match in _WRITE_CLAUSE_RE.finditer(code):
        keyword = " ".join(match.group(1).upper().split())
        if keyword not in seen:
            seen.add(keyword)
            errors.append(WriteAttempt(f"{keyword} changes the database; only reading queries are allowed.",
                                       hint="answer with MATCH ... RETURN only"))
    if _ADMIN_RE.search(code):
        errors.append(OutsideSchema("Administration commands (SHOW, USE) are not allowed.",
                                    hint="query the store graph with MATCH ... RETURN"))
    if _PARAM_RE.search(code):
        errors.append(ParameterNotAllowed("The query uses $parameters, but none are supplied.",
                                          hint="write the values into the query as literals"))
    procedures: set[str] = set()
    for match in _PROCEDURE_RE.finditer(code):
        name = re.sub(r"\s+", "", match.group(1))
        procedures.add(name.lower())
        if name.lower() in ALLOWED_PROCEDURES:
            continue
        if _WRITE_PROCEDURE_RE.search(name):
            errors.append(WriteAttempt(f"The procedure {name} writes or administers the database.",
                                       hint="answer with MATCH ... RETURN only"))
        else:
            errors.append(OutsideSchema(f"The procedure {name} is not allowed.",
                                        hint="the only procedure available is db.index.fulltext.queryNodes"))
    for match in _FUNCTION_RE.finditer(code):
        name = re.sub(r"\s+", "", match.group(1))
        lowered = name.lower()
        if lowered in procedures or lowered.startswith(ALLOWED_FUNCTION_PREFIXES):
            continue
        if _WRITE_PROCEDURE_RE.search(name):
            errors.append(WriteAttempt(f"The function {name} can change the database.",
                                       hint="answer with MATCH ... RETURN only"))
        else:
            errors.append(OutsideSchema(f"The function {name} is not allowed.",
                                        hint="use Cypher's built-in functions"))
    return errors


# ---------------------------------------------------------------------------------------------
# Pattern parsing
# ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class NodePattern:
    """A node pattern `(var:Label {key: value})` found in the masked query."""

    start: int  # index of "("
    end: int  # index after ")"
    var: str | None
    labels: tuple[str, ...]
    label_ok: bool  # the label expression is a plain conjunction/disjunction of names
    label_unsafe: bool  # negation or wildcard (`!`, `%`): could match any label
    props: tuple[tuple[str, str], ...]  # (key, raw masked value)

    raw: str = ""  # the pattern as written (literals masked)

    @property
    def text(self) -> str:
        return " ".join(self.raw.split()) or f"({self.var or ''})"


@dataclass(frozen=True)
class RelPattern:
    """A relationship between two node patterns: `(a)-[r:TYPE]->(b)`."""

    start: int
    end: int
    var: str | None
    types: tuple[str, ...]
    type_ok: bool
    type_unsafe: bool
    direction: Literal["out", "in", "both"]  # out: left -> right
    var_length: bool
    raw: str
    left: NodePattern | None
    right: NodePattern | None


_NODE_HEAD_RE = re.compile(r"\s*(?P<var>[A-Za-z_]\w*)?\s*(?P<labels>:[^{}]*?)?\s*(?P<props>\{.*\})?\s*",
                           re.DOTALL)
_REL_RE = re.compile(r"(?P<left><)?-\s*\[(?P<body>[^\[\]]*)\]\s*-(?P<right>>)?|(?P<bl><)?--(?P<br>>)?")
_REL_BODY_RE = re.compile(r"\s*(?P<var>[A-Za-z_]\w*)?\s*(?::\s*(?P<types>[^*{]*?))?\s*(?P<len>\*[^{]*?)?"
                          r"\s*(?P<props>\{.*\})?\s*", re.DOTALL)
_WHERE_RE = re.compile(r"\bWHERE\b", re.IGNORECASE)
_MAP_KEY_RE = re.compile(r"([A-Za-z_]\w*)\s*:\s*")


def _matching_paren(code: str, start: int, open_ch: str = "(", close_ch: str = ")") -> int:
    """Index of the bracket closing the one at `start` (literals are masked), or -1."""
    depth = 0
    for i in range(start, len(code)):
        if code[i] == open_ch:
            depth += 1
        elif code[i] == close_ch:
            depth -= 1
            if depth == 0:
                return i
    return -1


def _label_terms(expr: str) -> tuple[tuple[str, ...], bool, bool]:
    """(names, well_formed, unsafe) of a label / type expression like ':A|B', ':A:B', ':!A'."""
    tokens = re.findall(r"[A-Za-z_]\w*|[|&!%:()]|\S", expr)
    names: list[str] = []
    previous_was_name = False
    well_formed = True
    for token in tokens:
        if _IDENT_RE.fullmatch(token):
            if previous_was_name:
                well_formed = False
            names.append(token)
            previous_was_name = True
        else:
            if token not in "|&!%:()":
                well_formed = False
            previous_was_name = False
    unsafe = "!" in expr or "%" in expr
    return tuple(names), well_formed and bool(names or unsafe), unsafe


def _split_map(body: str) -> tuple[tuple[str, str], ...]:
    """Top-level `key: value` pairs of a `{...}` map (values are masked text)."""
    inner = body.strip()[1:-1]
    parts: list[str] = []
    current: list[str] = []
    depth = 0
    for ch in inner:
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append("".join(current))
            current = []
        else:
            current.append(ch)
    parts.append("".join(current))
    pairs = []
    for part in parts:
        m = _MAP_KEY_RE.match(part.strip())
        if m:
            pairs.append((m.group(1), part.strip()[m.end():].strip()))
    return tuple(pairs)


def _parse_node(code: str, start: int) -> NodePattern | None:
    """The node pattern opening at `start`, or None when the parenthesis holds something else."""
    close = _matching_paren(code, start)
    if close < 0:
        return None
    content = code[start + 1:close]
    head = _WHERE_RE.split(content, maxsplit=1)[0]
    m = _NODE_HEAD_RE.fullmatch(head)
    if m is None:
        return None
    labels: tuple[str, ...] = ()
    label_ok, unsafe = True, False
    if m.group("labels"):
        labels, label_ok, unsafe = _label_terms(m.group("labels"))
        if not label_ok and not m.group("var"):
            return None
    props = _split_map(m.group("props")) if m.group("props") else ()
    return NodePattern(start, close + 1, m.group("var"), labels, label_ok, unsafe, props,
                       raw=code[start:close + 1])


@dataclass
class ParsedPatterns:
    """Every node and relationship pattern of a query, and the MATCH items that start nowhere."""

    nodes: list[NodePattern] = field(default_factory=list)
    rels: list[RelPattern] = field(default_factory=list)
    unreadable: list[str] = field(default_factory=list)  # MATCH items not starting with a node pattern


_CLAUSE_END_RE = re.compile(r"\b(WHERE|RETURN|WITH|MATCH|OPTIONAL|UNWIND|CALL|ORDER|UNION|LIMIT|SKIP|"
                            r"FINISH|YIELD)\b", re.IGNORECASE)
_MATCH_RE = re.compile(r"\bMATCH\b", re.IGNORECASE)
_PATH_PREFIX_RE = re.compile(r"^\s*(?:[A-Za-z_]\w*\s*=\s*)?(?:(?:ANY|ALL)\s+(?:SHORTEST\s+)?(?:PATHS?\s+)?|"
                             r"SHORTEST\s+\d+\s+(?:PATHS?\s+)?|shortestPath\s*|allShortestPaths\s*)?",
                             re.IGNORECASE)


def _is_word_char(ch: str) -> bool:
    return ch.isalnum() or ch == "_"


def _match_items(code: str) -> list[tuple[int, str]]:
    """(offset, text) of each comma-separated pattern of every MATCH clause."""
    items: list[tuple[int, str]] = []
    for match in _MATCH_RE.finditer(code):
        i, depth, item_start = match.end(), 0, match.end()
        while i < len(code):
            ch = code[i]
            if ch in "([{":
                depth += 1
            elif ch in ")]}":
                if depth == 0:
                    break
                depth -= 1
            elif depth == 0 and ch == ",":
                items.append((item_start, code[item_start:i]))
                item_start = i + 1
            elif depth == 0 and not _is_word_char(code[i - 1]) and _CLAUSE_END_RE.match(code, i):
                break
            i += 1
        items.append((item_start, code[item_start:i]))
    return items


def parse_patterns(masked: MaskedCypher) -> ParsedPatterns:
    """Node patterns, relationships with their two ends, and unreadable MATCH items."""
    code = masked.code
    candidates: dict[int, NodePattern] = {}
    for i, ch in enumerate(code):
        if ch == "(" and (node := _parse_node(code, i)) is not None:
            candidates[i] = node
    by_end = {node.end: node for node in candidates.values()}
    parsed = ParsedPatterns()
    in_pattern: set[int] = set()
    for m in _REL_RE.finditer(code):
        before = code[:m.start()].rstrip()
        after_offset = m.end() + (len(code[m.end():]) - len(code[m.end():].lstrip()))
        left = by_end.get(len(before)) if before.endswith(")") else None
        right = candidates.get(after_offset)
        if left is None and right is None:
            continue  # arithmetic such as `x - [1][0]` or `a--b`, not a pattern
        if m.group("body") is not None:
            body_head = _WHERE_RE.split(m.group("body"), maxsplit=1)[0]
            bm = _REL_BODY_RE.fullmatch(body_head)
            var = bm.group("var") if bm else None
            types_expr = (bm.group("types") or "") if bm else body_head
            var_length = bool(bm and bm.group("len"))
            is_left, is_right = bool(m.group("left")), bool(m.group("right"))
        else:
            var, types_expr, var_length = None, "", False
            is_left, is_right = bool(m.group("bl")), bool(m.group("br"))
        types, type_ok, unsafe = _label_terms(":" + types_expr) if types_expr.strip() else ((), True, False)
        direction: Literal["out", "in", "both"] = "out" if is_right and not is_left else (
            "in" if is_left and not is_right else "both")
        parsed.rels.append(RelPattern(m.start(), m.end(), var, types, type_ok, unsafe, direction, var_length,
                                      m.group(0), left, right))
        for node in (left, right):
            if node is not None:
                in_pattern.add(node.start)
    for offset, item in _match_items(code):
        stripped = item.lstrip()
        lead = len(item) - len(stripped)
        prefix = _PATH_PREFIX_RE.match(stripped)
        rest_offset = offset + lead + (prefix.end() if prefix else 0)
        rest = code[rest_offset:]
        rest_stripped = rest.lstrip()
        position = rest_offset + len(rest) - len(rest_stripped)
        if rest_stripped.startswith("(") and rest_stripped[1:].lstrip().startswith("("):
            position = position + 1 + len(rest_stripped[1:]) - len(rest_stripped[1:].lstrip())
        node = candidates.get(position)
        if node is None:
            parsed.unreadable.append(" ".join(item.split())[:80])
        else:
            in_pattern.add(node.start)
    for start, node in candidates.items():
        if start in in_pattern or node.labels or node.label_unsafe:
            parsed.nodes.append(node)
    parsed.nodes.sort(key=lambda n: n.start)
    return parsed


# ---------------------------------------------------------------------------------------------
# Schema check
# ---------------------------------------------------------------------------------------------
@dataclass
class Bindings:
    """What the query's variables stand for: labels of node variables, relationship variables."""

    nodes: dict[str, set[str]] = field(default_factory=dict)
    rels: set[str] = field(default_factory=set)

    def bind(self, var: str | None, labels: Iterable[str]) -> None:
        if var:
            self.nodes.setdefault(var, set()).update(labels)


_YIELD_RE = re.compile(r"\bCALL\s+db\s*\.\s*index\s*\.\s*fulltext\s*\.\s*queryNodes\s*\(\s*(?P<arg>[^,)]*)"
                       r"[^)]*\)\s*YIELD\s+(?P<yield>[^\n]*?)(?=\b(?:WHERE|RETURN|WITH|MATCH|OPTIONAL|"
                       r"UNWIND|ORDER|LIMIT|CALL)\b|$)", re.IGNORECASE | re.DOTALL)
_PROPERTY_RE = re.compile(r"(?<![\w.§$])([A-Za-z_]\w*)\s*\.\s*([A-Za-z_]\w*)(?!\w)(?!\s*[.(])")
_PROJECTION_RE = re.compile(r"(?<![\w.:])([A-Za-z_]\w*)\s*\{([^{}]*)\}")
#: `:Label` / `:TYPE` anywhere, and the GQL label test `n IS Label` (IS NULL / IS NOT are harmless).
_LABEL_MENTION_RE = re.compile(r"(?::|\bIS\s+)\s*([A-Za-z_]\w*)")


def _close(name: str, options: Iterable[str]) -> list[str]:
    """Options close to `name` (case-insensitive), for hints."""
    options = list(options)
    lowered = {o.lower(): o for o in options}
    hits = difflib.get_close_matches(name.lower(), list(lowered), n=3, cutoff=0.5)
    return [lowered[h] for h in hits]


def _suggest(name: str, options: Iterable[str], what: str) -> str:
    options = list(options)
    close = _close(name, options)
    if close:
        return "did you mean " + " or ".join(close) + "?"
    return f"the {what} are " + ", ".join(options)


class SchemaChecker:
    """Labels, relationship types and directions, and properties against an `AllowedSchema`."""

    def __init__(self, schema: AllowedSchema = CATALOGUE_SCHEMA) -> None:
        self.schema = schema

    def check(self, masked: MaskedCypher, parsed: ParsedPatterns | None = None
              ) -> tuple[list[Text2CypherError], Bindings]:
        parsed = parsed or parse_patterns(masked)
        errors: list[Text2CypherError] = []
        errors += self._forbidden_mentions(masked)
        errors += [OutsideSchema(f"Could not read the pattern '{item}' as a node pattern.",
                                 hint="start every MATCH pattern with a node like (p:Product)")
                   for item in parsed.unreadable]
        bindings = Bindings()
        errors += self._check_nodes(parsed, bindings)
        errors += self._check_rels(parsed, bindings)
        errors += self._check_fulltext(masked, bindings)
        errors += self._check_properties(masked, parsed, bindings)
        return _dedupe(errors), bindings

    # -- labels ----------------------------------------------------------------------------
    def _forbidden_mentions(self, masked: MaskedCypher) -> list[Text2CypherError]:
        found = {name for name in _LABEL_MENTION_RE.findall(masked.code)
                 if name in self.schema.forbidden_labels or name in self.schema.forbidden_relationships}
        return [_outside(name) for name in sorted(found)]

    def _check_nodes(self, parsed: ParsedPatterns, bindings: Bindings) -> list[Text2CypherError]:
        errors: list[Text2CypherError] = []
        allowed = self.schema.labels
        for node in parsed.nodes:
            if node.label_unsafe:
                errors.append(OutsideSchema(f"The label expression in {node.text} can match any label.",
                                            hint="name the labels, e.g. (n:Product)"))
                continue
            if not node.label_ok:
                errors.append(OutsideSchema(f"Could not read the labels of {node.text}.",
                                            hint="write labels as (n:Product) or (n:Product|Category)"))
                continue
            for label in node.labels:
                if self.schema.is_forbidden_label(label) or self.schema.is_forbidden_relationship(label):
                    errors.append(_outside(label))
                elif label not in allowed:
                    errors.append(UnknownLabel(f"There is no label {label}.",
                                               hint=_suggest(label, allowed, "labels")))
            bindings.bind(node.var, [label for label in node.labels if label in allowed])
        return errors

    # -- relationships ---------------------------------------------------------------------
    def _check_rels(self, parsed: ParsedPatterns, bindings: Bindings) -> list[Text2CypherError]:
        errors: list[Text2CypherError] = []
        typed_ends: set[int] = set()
        for rel in parsed.rels:
            if rel.var:
                bindings.rels.add(rel.var)
            if rel.type_unsafe or not rel.type_ok:
                errors.append(OutsideSchema(f"Could not read the relationship types in {rel.raw}.",
                                            hint="name one type, e.g. -[:HAS_VARIANT]->"))
                continue
            if not rel.types:
                errors.append(OutsideSchema(f"The relationship {rel.raw} has no type, so it could reach "
                                            "customer data.",
                                            hint="name the type, e.g. "
                                                 "(p:Product)-[:HAS_VARIANT]->(v:Variant)"))
                continue
            known = True
            for rel_type in rel.types:
                forbidden = self.schema.is_forbidden_relationship(rel_type) or \
                    self.schema.is_forbidden_label(rel_type)
                if forbidden:
                    errors.append(_outside(rel_type))
                    known = False
                elif rel_type not in self.schema.relationship_types:
                    errors.append(UnknownRelationship(
                        f"There is no relationship type {rel_type}.",
                        hint=_suggest(rel_type, self.schema.relationship_types, "relationship types")))
                    known = False
            if not known:
                continue
            for node in (rel.left, rel.right):
                if node is not None:
                    typed_ends.add(node.start)
            self._infer_ends(rel, bindings)
        for rel in parsed.rels:
            if rel.types and rel.type_ok and not rel.var_length and all(
                    t in self.schema.relationship_types for t in rel.types):
                errors += self._check_direction(rel, bindings)
        for node in parsed.nodes:
            if not node.labels and not node.label_unsafe and node.start not in typed_ends:
                errors.append(OutsideSchema(f"The node {node.text} has no label and no typed relationship, "
                                            "so it could match customer data.",
                                            hint="give every node a label, e.g. (p:Product)"))
        return errors

    def _ends(self, node: NodePattern | None, bindings: Bindings) -> set[str]:
        if node is None:
            return set()
        labels = {label for label in node.labels if label in self.schema.labels}
        if not labels and node.var:
            labels = set(bindings.nodes.get(node.var, set()))
        return labels

    def _infer_ends(self, rel: RelPattern, bindings: Bindings) -> None:
        """Bind unlabelled end variables to the labels the relationship type implies."""
        specs = [s for t in rel.types for s in self.schema.relationships_of(t)]
        for node, side in ((rel.left, "left"), (rel.right, "right")):
            if node is None or node.labels or not node.var:
                continue
            if rel.var_length or rel.direction == "both":
                implied = {s.start for s in specs} | {s.end for s in specs}
            elif (rel.direction == "out") == (side == "left"):
                implied = {s.start for s in specs}
            else:
                implied = {s.end for s in specs}
            if node.var not in bindings.nodes or not bindings.nodes[node.var]:
                bindings.bind(node.var, implied)

    def _check_direction(self, rel: RelPattern, bindings: Bindings) -> list[Text2CypherError]:
        left, right = self._ends(rel.left, bindings), self._ends(rel.right, bindings)
        errors: list[Text2CypherError] = []
        for rel_type in rel.types:
            specs = self.schema.relationships_of(rel_type)

            def fits(src: set[str], dst: set[str], specs: tuple[Any, ...] = specs) -> bool:
                return any((not src or s.start in src) and (not dst or s.end in dst) for s in specs)

            forward, backward = fits(left, right), fits(right, left)
            ok = {"out": forward, "in": backward, "both": forward or backward}[rel.direction]
            if ok:
                continue
            shown = " or ".join(s.pattern for s in specs)
            written = f"({_fmt(left)}){rel.raw}({_fmt(right)})"
            if (rel.direction == "out" and backward) or (rel.direction == "in" and forward):
                errors.append(WrongDirection(
                    f"{written} points the wrong way: {rel_type} is stored as {shown}.",
                    hint=f"write {shown}"))
            else:
                errors.append(UnknownRelationship(
                    f"{written} does not exist: {rel_type} connects only {shown}.", hint=f"use {shown}"))
        return errors

    # -- fulltext --------------------------------------------------------------------------
    def _check_fulltext(self, masked: MaskedCypher, bindings: Bindings) -> list[Text2CypherError]:
        errors: list[Text2CypherError] = []
        for m in _YIELD_RE.finditer(masked.code):
            token = _LITERAL_TOKEN_RE.fullmatch(m.group("arg").strip())
            index = masked.literal(token.group(1)) if token else None
            label = self.schema.fulltext_indexes.get(index or "")
            if label is None:
                errors.append(OutsideSchema(f"Fulltext search must name one of the indexes "
                                            f"{', '.join(repr(i) for i in self.schema.fulltext_indexes)}.",
                                            hint="e.g. CALL db.index.fulltext.queryNodes("
                                                 "'product_name', 'kettle')"))
                continue
            for item in m.group("yield").split(","):
                parts = item.split()
                if parts and parts[0] == "node":
                    alias = parts[2] if len(parts) == 3 and parts[1].upper() == "AS" else "node"
                    bindings.bind(alias, [label])
        return errors

    # -- properties ------------------------------------------------------------------------
    def _check_properties(self, masked: MaskedCypher, parsed: ParsedPatterns,
                          bindings: Bindings) -> list[Text2CypherError]:
        errors: list[Text2CypherError] = []
        accesses = [(m.group(1), m.group(2)) for m in _PROPERTY_RE.finditer(masked.code)]
        for m in _PROJECTION_RE.finditer(masked.code):
            keys = re.findall(r"(?:^|,)\s*\.\s*([A-Za-z_]\w*)", m.group(2))
            accesses += [(m.group(1), key) for key in keys]
        for node in parsed.nodes:
            labels = self._ends(node, bindings)
            for key, _ in node.props:
                errors += self._property_errors(labels, key, node.text)
        for var, prop in accesses:
            if var in bindings.rels and var not in bindings.nodes:
                errors.append(UnknownProperty(f"{var}.{prop}: relationships have no properties here."))
            elif var in bindings.nodes:
                errors += self._property_errors(bindings.nodes[var], prop, f"{var}.{prop}")
        return errors

    def _property_errors(self, labels: set[str], prop: str, where: str) -> list[Text2CypherError]:
        specs = [spec for label in sorted(labels) if (spec := self.schema.node(label)) is not None]
        if not specs or any(spec.find_property(prop) for spec in specs):
            return []
        names = sorted({name for spec in specs for name in spec.property_names})
        owner = "/".join(spec.label for spec in specs)
        return [UnknownProperty(f"{owner} has no property {prop} (in {where}).",
                                hint=_suggest(prop, names, f"properties of {owner}"))]


def _outside(name: str) -> OutsideSchema:
    return OutsideSchema(f"{name} is customer or internal data, outside what this tool may read.",
                         hint="only products, variants, categories, documents and chunks are available")


def _fmt(labels: set[str]) -> str:
    return ":" + "|".join(sorted(labels)) if labels else ""


def _dedupe(errors: Sequence[Text2CypherError]) -> list[Text2CypherError]:
    seen: set[tuple[str, str]] = set()
    out: list[Text2CypherError] = []
    for error in errors:
        key = (error.code, error.message)
        if key not in seen:
            seen.add(key)
            out.append(error)
    return out


# ---------------------------------------------------------------------------------------------
# EXPLAIN
# ---------------------------------------------------------------------------------------------
class CypherExplainer(Protocol):
    """EXPLAIN a query without running it: `{"query_type": "r"|"w"|"rw"|"s", "notifications":
    [{"code", "description", "classification"}], "plan": {...} | None}` (the plan is optional:
    without it only the static checks and the query type decide). Raises what the database raises."""

    def explain(self, cypher: str, *, timeout_s: float | None = None) -> Mapping[str, Any]:
        ...


def summary_to_dict(summary: Any) -> dict[str, Any]:
    """The parts of a neo4j `ResultSummary` the validator reads: the query type, the
    notifications and the plan (`ResultSummary.plan`, a dict tree; None when absent)."""
    notifications = [{"code": str(status.gql_status), "description": str(status.status_description),
                      "classification": str(getattr(status, "raw_classification", "") or "")}
                     for status in getattr(summary, "gql_status_objects", ()) if status.is_notification]
    return {"query_type": summary.query_type, "notifications": notifications,
            "plan": getattr(summary, "plan", None)}


class DriverExplainer:
    """EXPLAIN through the driver of a `Neo4jGraph`, in a READ transaction with a timeout.

    Interim: this belongs in `csagent.adapters.neo4j_graph.Neo4jGraph.explain` (see the report);
    `explainer_for` prefers the graph store's own `explain` as soon as it has one.
    """

    def __init__(self, driver: Any, database: str = "neo4j") -> None:
        self._driver = driver
        self._database = database

    def explain(self, cypher: str, *, timeout_s: float | None = None) -> Mapping[str, Any]:
        from neo4j import unit_of_work

        @unit_of_work(timeout=timeout_s)
        def work(tx: Any) -> Any:
            return tx.run("EXPLAIN " + cypher).consume()

        with self._driver.session(database=self._database) as session:
            return summary_to_dict(session.execute_read(work))


def explainer_for(graph: Any) -> CypherExplainer | None:
    """The graph store itself when it can EXPLAIN, else a driver-based explainer, else None."""
    if callable(getattr(graph, "explain", None)):
        return graph  # type: ignore[no-any-return]
    driver = getattr(graph, "driver", None)
    if driver is not None:
        return DriverExplainer(driver, str(getattr(graph, "_database", "neo4j")))
    return None


_NOTIFICATION_KINDS: tuple[tuple[tuple[str, ...], type[SchemaViolation], str], ...] = (
    (("01N50", "UnknownLabelWarning"), UnknownLabel, "label"),
    (("01N51", "UnknownRelationshipTypeWarning"), UnknownRelationship, "relationship type"),
    (("01N52", "UnknownPropertyKeyWarning"), UnknownProperty, "property"),
)


def notification_errors(notifications: Iterable[Mapping[str, Any]],
                        known: Sequence[Text2CypherError]) -> list[Text2CypherError]:
    """Unknown label / type / property warnings of EXPLAIN that the static check did not report."""
    errors: list[Text2CypherError] = []
    for note in notifications:
        code, description = str(note.get("code", "")), str(note.get("description", ""))
        for codes, kind, what in _NOTIFICATION_KINDS:
            if not any(c in code for c in codes):
                continue
            name_match = re.search(r"`([^`]+)`|name is: (\w+)", description)
            name = (name_match.group(1) or name_match.group(2)) if name_match else "?"
            if not any(name in e.message for e in known):
                errors.append(kind(f"Neo4j reports that the {what} {name} does not exist in the store."))
    return errors


def plan_errors(facts: PlanFacts, schema: AllowedSchema,
                known: Sequence[Text2CypherError]) -> list[Text2CypherError]:
    """What the EXPLAIN plan shows outside `schema` (see `plan`) that the static check did not
    already report: labels and relationship types the plan reads, directions of its expansions
    between labelled variables, nodes scanned with no label, untyped expansions, procedures."""

    def reported(kind: type[Text2CypherError], name: str) -> bool:
        return any(isinstance(e, kind) and name in e.message for e in known)

    errors: list[Text2CypherError] = []
    for label in sorted(facts.all_labels):
        if schema.is_forbidden_label(label) or schema.is_forbidden_relationship(label):
            if not reported(OutsideSchema, label):
                errors.append(_outside(label))
        elif label not in schema.labels and not reported(SchemaViolation, label):
            errors.append(UnknownLabel(f"There is no label {label}.",
                                       hint=_suggest(label, schema.labels, "labels")))
    for rel_type in sorted(facts.relationship_types):
        if schema.is_forbidden_relationship(rel_type) or schema.is_forbidden_label(rel_type):
            if not reported(OutsideSchema, rel_type):
                errors.append(_outside(rel_type))
        elif rel_type not in schema.relationship_types and not reported(SchemaViolation, rel_type):
            errors.append(UnknownRelationship(
                f"There is no relationship type {rel_type}.",
                hint=_suggest(rel_type, schema.relationship_types, "relationship types")))
    for step in facts.expansions:
        if not step.types and not reported(OutsideSchema, "has no type"):
            errors.append(OutsideSchema("The plan expands a relationship with no type, so it could reach "
                                        "customer data.", hint="name the type, e.g. -[:HAS_VARIANT]->"))
        if not step.directed or not step.types:
            continue
        start = facts.labels.get(step.start, set()) & set(schema.labels)
        end = facts.labels.get(step.end, set()) & set(schema.labels)
        for rel_type in step.types:
            specs = schema.relationships_of(rel_type)

            def fits(src: set[str], dst: set[str], specs: tuple[Any, ...] = specs) -> bool:
                return any((not src or s.start in src) and (not dst or s.end in dst) for s in specs)

            if not specs or not (start or end) or fits(start, end):
                continue
            if reported(WrongDirection, rel_type) or reported(UnknownRelationship, rel_type):
                continue
            shown = " or ".join(s.pattern for s in specs)
            written = f"({_fmt(start)})-[:{rel_type}]->({_fmt(end)})"
            if fits(end, start):
                errors.append(WrongDirection(f"Neo4j plans {written}, the wrong way: {rel_type} is stored "
                                             f"as {shown}.", hint=f"write {shown}"))
            else:
                errors.append(UnknownRelationship(f"Neo4j plans {written}, which does not exist: {rel_type} "
                                                  f"connects only {shown}.", hint=f"use {shown}"))
    if facts.unlabelled_scans and not reported(OutsideSchema, "no label"):
        errors.append(OutsideSchema(f"Neo4j scans every node for ({facts.unlabelled_scans[0]}): it has no "
                                    "label and no typed relationship, so it could match customer data.",
                                    hint="give every node a label, e.g. (p:Product)"))
    for name in facts.procedures:
        if name.lower() not in ALLOWED_PROCEDURES and not reported(Text2CypherError, name):
            errors.append(OutsideSchema(f"The procedure {name} is not allowed.",
                                        hint="the only procedure available is db.index.fulltext.queryNodes"))
    return _dedupe(errors)


def plan_write_errors(facts: PlanFacts) -> list[Text2CypherError]:
    """A write anywhere in the plan (a `CALL { }` subquery, a `FOREACH`, `LOAD CSV`) by its operator."""
    return [WriteAttempt(f"Neo4j plans a {name} operator: the query changes the database.",
                         hint="answer with MATCH ... RETURN only")
            for name in dict.fromkeys(facts.writes)]


# ---------------------------------------------------------------------------------------------
# Value check
# ---------------------------------------------------------------------------------------------
_CASE_FN = r"toLower|toUpper|lower|upper"
_PROP_EXPR = (rf"(?:(?P<fn>{_CASE_FN}|trim|ltrim|rtrim)\s*\(\s*(?P<var>[A-Za-z_]\w*)\s*\.\s*"
              r"(?P<prop>[A-Za-z_]\w*)\s*\)|(?<![\w.])(?P<var2>[A-Za-z_]\w*)\s*\.\s*(?P<prop2>[A-Za-z_]\w*))")
_LIT_EXPR = rf"(?:(?P<lfn>{_CASE_FN}|trim)\s*\(\s*)?§(?P<lit>\d+)§(?(lfn)\s*\))"
_OP = r"(?P<op>(?<![<>!=])=(?![~=])|\bCONTAINS\b|\bSTARTS\s+WITH\b|\bENDS\s+WITH\b)"
_FORWARD_RE = re.compile(_PROP_EXPR + r"\s*" + _OP + r"\s*" + _LIT_EXPR, re.IGNORECASE)
_REVERSE_RE = re.compile(_LIT_EXPR + r"\s*(?P<op>(?<![<>!=])=(?![~=]))\s*" + _PROP_EXPR, re.IGNORECASE)
_IN_LIST_RE = re.compile(_PROP_EXPR + r"\s+IN\s*\[(?P<items>[^\[\]]*)\]", re.IGNORECASE)
_LIT_IN_PROP_RE = re.compile(_LIT_EXPR + r"\s+IN\s+" + _PROP_EXPR, re.IGNORECASE)
_OP_WORDS = {"=": "equal to", "CONTAINS": "containing", "STARTS WITH": "starting with",
             "ENDS WITH": "ending with"}


@dataclass(frozen=True)
class Comparison:
    """`var.prop <op> 'value'` as written (value after any toLower/toUpper on the literal)."""

    var: str
    prop: str
    op: str  # "=", "CONTAINS", "STARTS WITH", "ENDS WITH"
    value: str
    case: Literal["exact", "lower", "upper", "any"]  # what the query does to the stored value
    text: str


def _case_of(fn: str | None) -> Literal["exact", "lower", "upper", "any"]:
    if not fn:
        return "exact"
    lowered = fn.lower()
    if lowered in ("tolower", "lower"):
        return "lower"
    if lowered in ("toupper", "upper"):
        return "upper"
    return "exact"  # trim keeps the case


def _literal_value(masked: MaskedCypher, token: str, fn: str | None) -> str | None:
    value = masked.literal(token)
    if value is None:
        return None
    case = _case_of(fn)
    return value.lower() if case == "lower" else value.upper() if case == "upper" else value


def find_comparisons(masked: MaskedCypher, parsed: ParsedPatterns | None = None) -> list[Comparison]:
    """Every string literal compared with a property, in the forms the value check understands."""
    code = masked.code
    found: list[Comparison] = []

    def prop_of(m: re.Match[str]) -> tuple[str, str, Literal["exact", "lower", "upper", "any"]]:
        if m.group("var"):
            return m.group("var"), m.group("prop"), _case_of(m.group("fn"))
        return m.group("var2"), m.group("prop2"), "exact"

    for m in _FORWARD_RE.finditer(code):
        var, prop, case = prop_of(m)
        value = _literal_value(masked, m.group("lit"), m.group("lfn"))
        if value is not None:
            op = " ".join(m.group("op").upper().split())
            found.append(Comparison(var, prop, op, value, case, _restore(masked, m.group(0))))
    for m in _REVERSE_RE.finditer(code):
        var, prop, case = prop_of(m)
        value = _literal_value(masked, m.group("lit"), m.group("lfn"))
        if value is not None:
            found.append(Comparison(var, prop, "=", value, case, _restore(masked, m.group(0))))
    for m in _IN_LIST_RE.finditer(code):
        var, prop, case = prop_of(m)
        for token in _LITERAL_TOKEN_RE.findall(m.group("items")):
            value = masked.literal(token)
            if value is not None:
                found.append(Comparison(var, prop, "=", value, case, _restore(masked, m.group(0))))
    for m in _LIT_IN_PROP_RE.finditer(code):
        var, prop, case = prop_of(m)
        value = _literal_value(masked, m.group("lit"), m.group("lfn"))
        if value is not None:
            found.append(Comparison(var, prop, "=", value, case, _restore(masked, m.group(0))))
    for node in (parsed.nodes if parsed else ()):
        for key, raw in node.props:
            token = _LITERAL_TOKEN_RE.fullmatch(raw.strip())
            if node.var and token and (value := masked.literal(token.group(1))) is not None:
                found.append(Comparison(node.var, key, "=", value, "exact",
                                        _restore(masked, f"({node.var} {{{key}: {raw}}})")))
    return found


def _restore(masked: MaskedCypher, fragment: str) -> str:
    """A masked fragment with its string literals put back, for messages."""
    return _LITERAL_TOKEN_RE.sub(lambda m: repr(masked.literal(m.group(1)) or ""), " ".join(fragment.split()))


def _holds(op: str, stored: str, value: str) -> bool:
    if op == "=":
        return stored == value
    if op == "CONTAINS":
        return value in stored
    if op == "STARTS WITH":
        return stored.startswith(value)
    return stored.endswith(value)


def close_values(value: str, candidates: Iterable[str], n: int = 5) -> list[str]:
    """Stored values that look like `value`: containment first, then spelling similarity."""
    options = {c.lower(): c for c in candidates if isinstance(c, str) and c}
    needle = value.lower().strip()
    if not needle:
        return []
    contained = sorted((k for k in options if len(needle) >= 3 and (needle in k or k in needle)),
                       key=lambda k: (abs(len(k) - len(needle)), k))
    similar = difflib.get_close_matches(needle, list(options), n=n, cutoff=0.6)
    ordered = list(dict.fromkeys([*contained, *similar]))[:n]
    return [options[k] for k in ordered]


class ValueChecker:
    """Looks up compared string literals in the graph (parameterised queries built only from the
    schema's own label and property names) and suggests close stored values.

    `hint_values` keeps the stored values offered as hints, by (label, property), for its TTL; it
    must belong to `graph` (`ToolCaches.hint_values` of the tool context). Without it the checker
    keeps them for its own life, at most `HINT_VALUES_TTL_S`."""

    def __init__(self, graph: GraphStore, schema: AllowedSchema = CATALOGUE_SCHEMA, *,
                 timeout_s: float = 2.0,
                 hint_values: TTLCache[tuple[str, str], tuple[str, ...]] | None = None) -> None:
        self.graph = graph
        self.schema = schema
        self.timeout_s = timeout_s
        self._hints = hint_values if hint_values is not None else TTLCache(HINT_VALUES_TTL_S)

    def check(self, comparisons: Sequence[Comparison], bindings: Bindings) -> list[Text2CypherError]:
        errors: list[Text2CypherError] = []
        for comparison in _unique(comparisons):
            labels = sorted(bindings.nodes.get(comparison.var, set()))
            specs = [(label, prop) for label in labels if (node := self.schema.node(label)) is not None
                     and (prop := node.find_property(comparison.prop)) is not None]
            if specs:
                errors += self._check_one(comparison, specs)
        return _dedupe(errors)

    def _check_one(self, comparison: Comparison,
                   specs: Sequence[tuple[str, PropertySpec]]) -> list[Text2CypherError]:
        text_specs = [(label, spec) for label, spec in specs if spec.is_text]
        if not text_specs:
            label, spec = specs[0]
            return [UnknownValue(f"{comparison.text}: {label}.{spec.name} is a {spec.type}, not text.",
                                 hint=f"compare {comparison.var}.{spec.name} with a "
                                      f"{'number' if spec.type != 'BOOLEAN' else 'true/false'}, no quotes")]
        value = comparison.value
        if comparison.case == "lower" and value != value.lower() or (
                comparison.case == "upper" and value != value.upper()):
            return [UnknownValue(f"{comparison.text} can never match: the property is case-converted but "
                                 f"'{value}' is not.", hint=f"write the value as '{value.lower()}'"
                                 if comparison.case == "lower" else f"write the value as '{value.upper()}'")]
        stored: list[str] = []
        for label, spec in text_specs:
            rows = self.graph.read(_lookup_query(label, spec, comparison.op), {"value": value},
                                   timeout_s=self.timeout_s, max_rows=5)
            stored += [str(r["value"]) for r in rows if r.get("value") is not None]
        if stored:
            if comparison.case != "exact" or any(_holds(comparison.op, s, value) for s in stored):
                return []
            shown = ", ".join(f"'{s}'" for s in stored[:5] if len(s) <= 80) or "a different letter case"
            return [UnknownValue(f"{comparison.text} matches nothing: the stored value is spelled {shown} "
                                 "and the comparison is case-sensitive.",
                                 hint=f"use the stored spelling, or compare toLower({comparison.var}."
                                      f"{comparison.prop}) with a lower-case value")]
        owner = "/".join(label for label, _ in text_specs)
        close = [c for label, spec in text_specs for c in close_values(value, self._hint_values(label, spec))]
        hint = ("close stored values: " + ", ".join(f"'{c}'" for c in dict.fromkeys(close))) if close else (
            "no similar value is stored; check the question's wording")
        op_words = _OP_WORDS.get(comparison.op, comparison.op)
        return [UnknownValue(f"No {owner} has {comparison.prop} {op_words} '{value}' ({comparison.text}).",
                             hint=hint)]

    def _hint_values(self, label: str, spec: PropertySpec) -> tuple[str, ...]:
        if spec.hints == "none":
            return ()
        try:
            return self._hints.get_or_load((label, spec.name), lambda: self._read_hint_values(label, spec))
        except Exception as exc:  # noqa: BLE001 - hints are best effort
            logger.warning("value hints for %s.%s unavailable (%s)", label, spec.name, type(exc).__name__)
            return ()

    def _read_hint_values(self, label: str, spec: PropertySpec) -> tuple[str, ...]:
        if spec.hints == "option_pairs":
            query = (f"MATCH (n:`{label}`) UNWIND split(n.`{spec.name}`, ', ') AS value "
                     "RETURN DISTINCT value LIMIT 2000")
        elif spec.type == "LIST<STRING>":
            query = f"MATCH (n:`{label}`) UNWIND n.`{spec.name}` AS value RETURN DISTINCT value LIMIT 1000"
        else:
            query = f"MATCH (n:`{label}`) RETURN DISTINCT n.`{spec.name}` AS value LIMIT 1000"
        rows = self.graph.read(query, {}, timeout_s=self.timeout_s, max_rows=2000)
        return tuple(str(r["value"]) for r in rows if r.get("value") is not None)


def _lookup_query(label: str, spec: PropertySpec, op: str) -> str:
    """Stored values of `label.prop` that satisfy `op` case-insensitively (names from the schema)."""
    if spec.type == "LIST<STRING>":
        return (f"MATCH (n:`{label}`) UNWIND n.`{spec.name}` AS value WITH DISTINCT value "
                f"WHERE toLower(value) {op} toLower($value) RETURN value LIMIT 5")
    return (f"MATCH (n:`{label}`) WHERE toLower(n.`{spec.name}`) {op} toLower($value) "
            f"RETURN DISTINCT n.`{spec.name}` AS value LIMIT 5")


def _unique(comparisons: Sequence[Comparison]) -> list[Comparison]:
    seen: set[tuple[str, str, str, str, str]] = set()
    out = []
    for c in comparisons:
        key = (c.var, c.prop, c.op, c.value, c.case)
        if key not in seen:
            seen.add(key)
            out.append(c)
    return out


# ---------------------------------------------------------------------------------------------
# The validator: all checks, recorded as steps
# ---------------------------------------------------------------------------------------------
@dataclass
class StepRecord:
    """One recorded check: its verdict, a readable detail, and the errors it found."""

    name: str
    verdict: Verdict
    detail: str
    elapsed_ms: float = 0.0
    errors: list[Text2CypherError] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "verdict": self.verdict, "detail": self.detail,
                "elapsed_ms": round(self.elapsed_ms, 3), "errors": [e.to_dict() for e in self.errors]}


@dataclass
class ValidationReport:
    """The steps run on one query and every error they found."""

    cypher: str
    steps: list[StepRecord] = field(default_factory=list)

    @property
    def errors(self) -> list[Text2CypherError]:
        return _dedupe([e for step in self.steps for e in step.errors])

    @property
    def ok(self) -> bool:
        return not self.errors

    @property
    def correctable(self) -> bool:
        """False when an error no correction can fix (an outage, a timeout) was found."""
        return all(e.correctable for e in self.errors)


def _step(name: str, errors: Sequence[Text2CypherError], started: float, ok_detail: str) -> StepRecord:
    elapsed = (time.perf_counter() - started) * 1000.0
    if errors:
        return StepRecord(name, "fail", "; ".join(e.message for e in errors), elapsed, list(errors))
    return StepRecord(name, "pass", ok_detail, elapsed)


class QueryValidator:
    """Runs every check on a generated query (see the module docstring for the order)."""

    def __init__(self, graph: GraphStore, explainer: CypherExplainer, *,
                 schema: AllowedSchema = CATALOGUE_SCHEMA, timeout_s: float = 2.0,
                 hint_values: TTLCache[tuple[str, str], tuple[str, ...]] | None = None) -> None:
        self.explainer = explainer
        self.schema_checker = SchemaChecker(schema)
        self.value_checker = ValueChecker(graph, schema, timeout_s=timeout_s, hint_values=hint_values)
        self.timeout_s = timeout_s

    def validate(self, cypher: str) -> ValidationReport:
        report = ValidationReport(cypher)
        masked = mask_cypher(cypher)

        started = time.perf_counter()
        scan = scan_keywords(masked)
        report.steps.append(_step("keyword_scan", scan, started, "one read-only statement"))
        never_send = any(isinstance(e, WriteAttempt | ParameterNotAllowed) or type(e) is SyntaxInvalid
                         for e in scan)

        summary, explain_step = self._explain(cypher, never_send)
        report.steps.append(explain_step)
        plan = summary.get("plan") if summary is not None else None
        facts = read_plan(plan) if isinstance(plan, Mapping) else None
        report.steps.append(self._read_only(summary, explain_step, facts))

        started = time.perf_counter()
        parsed = parse_patterns(masked)
        schema_errors, bindings = self.schema_checker.check(masked, parsed)
        if summary is not None:
            schema_errors += notification_errors(summary.get("notifications") or (), schema_errors)
        if facts is not None:
            schema_errors += plan_errors(facts, self.schema_checker.schema, schema_errors)
        report.steps.append(_step("schema", schema_errors, started,
                                  f"{len(parsed.nodes)} node and {len(parsed.rels)} relationship patterns "
                                  "within the catalogue schema"
                                  + (f"; the plan reads {', '.join(sorted(facts.all_labels)) or 'no label'}"
                                     if facts is not None else "")))

        started = time.perf_counter()
        if explain_step.verdict != "pass" or schema_errors:
            report.steps.append(StepRecord("values", "skip", "needs a query that passed EXPLAIN and the "
                                                             "schema check"))
            return report
        comparisons = find_comparisons(masked, parsed)
        try:
            value_errors = self.value_checker.check(comparisons, bindings)
        except Exception as exc:  # noqa: BLE001 - typed below
            value_errors = [classify_store_error(exc, during="value check")]
        report.steps.append(_step("values", value_errors, started,
                                  f"{len(comparisons)} compared value(s) found in the store"
                                  if comparisons else "no string literal compared with a property"))
        return report

    def _explain(self, cypher: str, never_send: bool) -> tuple[Mapping[str, Any] | None, StepRecord]:
        if never_send:
            return None, StepRecord("explain", "skip",
                                    "not sent to the database: refused by the keyword scan")
        started = time.perf_counter()
        try:
            summary = self.explainer.explain(cypher, timeout_s=self.timeout_s)
        except Exception as exc:  # noqa: BLE001 - typed below
            return None, _step("explain", [classify_store_error(exc, during="EXPLAIN")], started, "")
        notes = [str(n.get("description", "")) for n in summary.get("notifications") or ()]
        detail = "planned by Neo4j" + (f"; notes: {' | '.join(notes)[:300]}" if notes else "")
        return summary, _step("explain", [], started, detail)

    @staticmethod
    def _read_only(summary: Mapping[str, Any] | None, explain_step: StepRecord,
                   facts: PlanFacts | None) -> StepRecord:
        if summary is None:
            reason = "refused by the keyword scan" if explain_step.verdict == "skip" else "EXPLAIN failed"
            return StepRecord("read_only", "skip", f"no query type: {reason}")
        query_type = summary.get("query_type")
        errors = plan_write_errors(facts) if facts is not None else []
        if query_type != "r":
            errors.insert(0, WriteAttempt(
                f"Neo4j plans this query as type {query_type!r}, not read-only ('r').",
                hint="answer with MATCH ... RETURN only"))
        if not errors:
            return StepRecord("read_only", "pass", "query type 'r' (read only)"
                              + (", no write operator in the plan" if facts is not None else "")
                              + "; runs in a READ transaction")
        return StepRecord("read_only", "fail", "; ".join(e.message for e in errors), 0.0, errors)


def validate_statically(cypher: str, schema: AllowedSchema = CATALOGUE_SCHEMA) -> list[Text2CypherError]:
    """The checks that need no database (keyword scan and schema): for tests and example files."""
    masked = mask_cypher(cypher)
    schema_errors, _ = SchemaChecker(schema).check(masked)
    return _dedupe([*scan_keywords(masked), *schema_errors])

