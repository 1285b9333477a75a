"""The portable pattern subset of patterns.md: validator and a linear-time matcher.

The validator follows sections 2-4 (grammar, context rules, offsets). An accepted pattern is
compiled into a Thompson NFA and run as a lazily built DFA: each code point of the subject is one
cached transition, or one NFA step (at most proportional to the automaton's size) the first time a
state meets a code point. Matching time is therefore O(automaton size x subject length) whatever
the pattern (section 7); Python's backtracking `re` is never used.
"""

from __future__ import annotations

from bisect import bisect_right
from typing import Union

__all__ = ["PatternError", "Pattern", "compile_pattern", "MAX_SUBJECT"]

MAX_LEN = 1000
MAX_COUNT = 1000
MAX_SUBJECT = 10000
_MAXCP = 0x10FFFF

_SYNTAX = set("^$\\.*+?()[]{}|")
_HEX = set("0123456789abcdefABCDEF")
_CHARESC = {"n": "\n", "r": "\r", "t": "\t", "f": "\f"}
Ranges = tuple[tuple[int, int], ...]
_DIGIT: Ranges = ((0x30, 0x39),)
_WORD: Ranges = ((0x30, 0x39), (0x41, 0x5A), (0x5F, 0x5F), (0x61, 0x7A))
_ANY: Ranges = ((0, _MAXCP),)


class PatternError(ValueError):
    """A pattern outside the portable subset, refused at one offset (patterns.md §4)."""

    def __init__(self, offset: int, message: str) -> None:
        super().__init__(f"{message} at offset {offset}")
        self.offset = offset
        self.reason = message


def _complement(rs: Ranges) -> Ranges:
    out = []
    lo = 0
    for a, b in rs:
        if a > lo:
            out.append((lo, a - 1))
        lo = b + 1
    if lo <= _MAXCP:
        out.append((lo, _MAXCP))
    return tuple(out)


def _normalize(rs: list[tuple[int, int]]) -> Ranges:
    rs.sort()
    out: list[tuple[int, int]] = []
    for a, b in rs:
        if out and a <= out[-1][1] + 1:
            if b > out[-1][1]:
                out[-1] = (out[-1][0], b)
        else:
            out.append((a, b))
    return tuple(out)


# AST: ("set", Ranges) | ("bol",) | ("eol",) | ("cat", [nodes]) | ("alt", [nodes])
#      | ("rep", node, min, max_or_None) ; groups are their contents.
Node = tuple


class _Parser:
    def __init__(self, p: str) -> None:
        self.p = p
        self.n = len(p)

    def err(self, i: int, msg: str) -> PatternError:
        return PatternError(i, msg)

    def parse(self) -> tuple[Node, int]:
        """Returns (ast, expanded size)."""
        if self.n == 0:
            return ("cat", []), 0
        node, i, _, _, size = self.alternation(0, top=True)
        if i < self.n:  # only a ")" stops the top level
            raise self.err(i, "unescaped ) with no open group")
        return node, size

    # Each parse function returns (node, next index, has_unbounded, max running product, size).
    def alternation(self, i: int, top: bool) -> tuple[Node, int, bool, int, int]:
        branches = []
        unb = False
        prod = 1
        size = 0
        while True:
            if i >= self.n or self.p[i] in "|)":
                raise self.err(i, "empty branch")
            node, i, u, pr, sz = self.branch(i, top)
            branches.append(node)
            unb = unb or u
            prod = max(prod, pr)
            size += sz
            if i < self.n and self.p[i] == "|":
                i += 1
                continue
            break
        node = branches[0] if len(branches) == 1 else ("alt", branches)
        return node, i, unb, prod, size

    def branch(self, i: int, top: bool) -> tuple[Node, int, bool, int, int]:
        pieces = []
        unb = False
        prod = 1
        size = 0
        while i < self.n and self.p[i] not in "|)":
            node, i, u, pr, sz = self.piece(i)
            pieces.append(node)
            unb = unb or u
            prod = max(prod, pr)
            size += sz
        if top and i < self.n and self.p[i] == ")":
            raise self.err(i, "unescaped ) with no open group")
        node = pieces[0] if len(pieces) == 1 else ("cat", pieces)
        return node, i, unb, prod, size

    def piece(self, i: int) -> tuple[Node, int, bool, int, int]:
        p = self.p
        c = p[i]
        if c == "^" or c == "$":
            i += 1
            if i < self.n and p[i] in "*+?{":
                raise self.err(i, "quantifier after an anchor")
            return (("bol",) if c == "^" else ("eol",)), i, False, 1, 0
        if c in "*+?":
            raise self.err(i, "nothing to repeat")
        is_group = False
        unb = False
        prod = 1
        size = 1
        if c == "{":
            raise self.err(i, "nothing to repeat" if self._count_at(i) else "unescaped {")
        if c == "}" or c == "]":
            raise self.err(i, f"unescaped {c}")
        if c == ".":
            node: Node = ("set", _ANY)
            i += 1
        elif c == "\\":
            node, i = self.escape(i)
        elif c == "[":
            node, i = self.klass(i)
        elif c == "(":
            if i + 1 < self.n and p[i + 1] == "?":
                if i + 2 < self.n and p[i + 2] == ":":
                    j = i + 3
                else:
                    raise self.err(i, "group syntax outside the subset")
            else:
                j = i + 1
            node, j, unb, prod, size = self.alternation(j, top=False)
            if j >= self.n:
                raise self.err(self.n, "missing )")
            i = j + 1
            is_group = True
        else:
            node = ("set", ((ord(c), ord(c)),))
            i += 1
        if i < self.n and p[i] in "*+?{":
            q = i
            lo, hi, i = self.quantifier(i)
            repeating = hi is None or hi >= 2
            if is_group and repeating and unb:
                raise self.err(q, "repeating group with an unbounded quantifier inside")
            if hi is None:
                value = max(lo, 1)
            else:
                value = hi
            if value == 0:
                prod = 1
            else:
                prod = prod * value
                if prod > MAX_COUNT:
                    raise self.err(q, "nested counts above 1000")
            size = size * value
            if i < self.n and p[i] == "?":
                i += 1
            if i < self.n and p[i] in "*+?{":
                raise self.err(i, "quantifier after a quantifier")
            if hi is None:
                unb = True
            node = ("rep", node, lo, hi)
        return node, i, unb, prod, size

    def _count_at(self, i: int) -> bool:
        try:
            self.count(i)
            return True
        except PatternError:
            return False

    def count(self, i: int) -> tuple[int, int | None, int]:
        p = self.p
        j = i + 1

        def number(j: int) -> tuple[int, int]:
            if j >= self.n or not ("0" <= p[j] <= "9"):
                raise self.err(i, "malformed count")
            if p[j] == "0":
                if j + 1 < self.n and "0" <= p[j + 1] <= "9":
                    raise self.err(i, "leading zero in a count")
                return 0, j + 1
            k = j
            while k < self.n and "0" <= p[k] <= "9":
                k += 1
            return int(p[j:k]), k

        lo, j = number(j)
        hi: int | None = lo
        if j < self.n and p[j] == ",":
            j += 1
            if j < self.n and p[j] == "}":
                hi = None
            else:
                hi, j = number(j)
        if j >= self.n or p[j] != "}":
            raise self.err(i, "malformed count")
        if lo > MAX_COUNT or (hi is not None and hi > MAX_COUNT):
            raise self.err(i, "count above 1000")
        if hi is not None and lo > hi:
            raise self.err(i, "count out of order")
        return lo, hi, j + 1

    def quantifier(self, i: int) -> tuple[int, int | None, int]:
        c = self.p[i]
        if c == "*":
            return 0, None, i + 1
        if c == "+":
            return 1, None, i + 1
        if c == "?":
            return 0, 1, i + 1
        return self.count(i)

    def escape(self, i: int) -> tuple[Node, int]:
        p = self.p
        if i + 1 >= self.n:
            raise self.err(i, "lone \\ at the end")
        d = p[i + 1]
        if d in _SYNTAX or d == "/":
            return ("set", ((ord(d), ord(d)),)), i + 2
        if d in _CHARESC:
            o = ord(_CHARESC[d])
            return ("set", ((o, o),)), i + 2
        if d == "x":
            if i + 3 < self.n and p[i + 2] in _HEX and p[i + 3] in _HEX:
                o = int(p[i + 2 : i + 4], 16)
                return ("set", ((o, o),)), i + 4
            raise self.err(i, "\\x needs two hex digits")
        if d in "dDwW":
            rs = _DIGIT if d in "dD" else _WORD
            if d in "DW":
                rs = _complement(rs)
            return ("set", rs), i + 2
        raise self.err(i, f"escape \\{d} outside the subset")

    def class_atom(self, i: int) -> tuple[int, Ranges | None, int]:
        """One class item start at i: (code point, None, next) or (-1, ranges, next) for \\d etc."""
        p = self.p
        c = p[i]
        if c == "[":
            raise self.err(i, "unescaped [ inside a class")
        if c == "\\":
            if i + 1 >= self.n:
                raise self.err(i, "lone \\ at the end")
            d = p[i + 1]
            if d in _SYNTAX or d == "/" or d == "-":
                return ord(d), None, i + 2
            if d in _CHARESC:
                return ord(_CHARESC[d]), None, i + 2
            if d == "x":
                if i + 3 < self.n and p[i + 2] in _HEX and p[i + 3] in _HEX:
                    return int(p[i + 2 : i + 4], 16), None, i + 4
                raise self.err(i, "\\x needs two hex digits")
            if d in "dDwW":
                rs = _DIGIT if d in "dD" else _WORD
                if d in "DW":
                    rs = _complement(rs)
                return -1, rs, i + 2
            raise self.err(i, f"escape \\{d} outside the subset")
        if c in "&|~" and i + 1 < self.n and p[i + 1] == c:
            raise self.err(i + 1, f"{c}{c} in a class")
        return ord(c), None, i + 1

    def klass(self, i: int) -> tuple[Node, int]:
        p = self.p
        n = self.n
        i += 1
        negate = False
        if i < n and p[i] == "^":
            negate = True
            i += 1
        if i >= n:
            raise self.err(n, "missing ]")
        if p[i] == "]":
            raise self.err(i, "empty class")
        items: list[tuple[int, int]] = []
        first = True
        while True:
            if i >= n:
                raise self.err(n, "missing ]")
            c = p[i]
            if c == "]":
                i += 1
                break
            if c == "-":
                if first:
                    items.append((0x2D, 0x2D))
                    i += 1
                    if i < n and p[i] == "-":
                        raise self.err(i, "two adjacent -")
                    first = False
                    continue
                if i + 1 < n and p[i + 1] == "]":
                    items.append((0x2D, 0x2D))
                    i += 1
                    continue
                if i + 1 >= n:
                    raise self.err(n, "missing ]")
                raise self.err(i, "misplaced - in a class")
            start = i
            lo, rs, i = self.class_atom(i)
            first = False
            if i < n and p[i] == "-" and not (i + 1 < n and p[i + 1] == "]"):
                if rs is not None:
                    raise self.err(start, "class escape as a range end")
                if i + 1 >= n:
                    raise self.err(n, "missing ]")
                if p[i + 1] == "-":
                    raise self.err(i + 1, "two adjacent -")
                j = i + 1
                hi, rs2, i = self.class_atom(j)
                if rs2 is not None:
                    raise self.err(j, "class escape as a range end")
                if lo > hi:
                    raise self.err(start, "range out of order")
                items.append((lo, hi))
                continue
            if rs is not None:
                items.extend(rs)
            else:
                items.append((lo, lo))
        ranges = _normalize(items)
        if negate:
            ranges = _complement(ranges)
        return ("set", ranges), i


# ---- the automaton ------------------------------------------------------------------------------

_CHAR, _SPLIT, _JMP, _BOL, _EOL, _MATCH = range(6)
State = list  # [kind, arg, out1, out2]


class _Builder:
    def __init__(self) -> None:
        self.states: list[list[object]] = []

    def new(self, kind: int, arg: object = None, out1: int = -1, out2: int = -1) -> int:
        self.states.append([kind, arg, out1, out2])
        return len(self.states) - 1

    # Each fragment is (start, list of (state, slot) holes to patch).
    def frag(self, node: Node) -> tuple[int, list[tuple[int, int]]]:
        k = node[0]
        if k == "set":
            s = self.new(_CHAR, node[1])
            return s, [(s, 2)]
        if k == "bol" or k == "eol":
            s = self.new(_BOL if k == "bol" else _EOL)
            return s, [(s, 2)]
        if k == "cat":
            if not node[1]:
                s = self.new(_JMP)
                return s, [(s, 2)]
            start, holes = self.frag(node[1][0])
            for sub in node[1][1:]:
                s2, h2 = self.frag(sub)
                self.patch(holes, s2)
                holes = h2
            return start, holes
        if k == "alt":
            start, holes = self.frag(node[1][0])
            for sub in node[1][1:]:
                s2, h2 = self.frag(sub)
                sp = self.new(_SPLIT, None, start, s2)
                start = sp
                holes = holes + h2
            return start, holes
        # rep
        _, sub, lo, hi = node
        parts: list[tuple[int, list[tuple[int, int]]]] = []
        for _ in range(lo):
            parts.append(self.frag(sub))
        if hi is None:
            s, h = self.frag(sub)
            sp = self.new(_SPLIT, None, s, -1)
            self.patch(h, sp)
            parts.append((sp, [(sp, 3)]))
        else:
            for _ in range(hi - lo):
                s, h = self.frag(sub)
                sp = self.new(_SPLIT, None, s, -1)
                parts.append((sp, h + [(sp, 3)]))
        if not parts:
            s = self.new(_JMP)
            return s, [(s, 2)]
        start, holes = parts[0]
        for s2, h2 in parts[1:]:
            self.patch(holes, s2)
            holes = h2
        return start, holes

    def patch(self, holes: list[tuple[int, int]], target: int) -> None:
        for s, slot in holes:
            self.states[s][slot] = target


class Pattern:
    """An accepted pattern, compiled. match() is safe to call from one thread at a time."""

    __slots__ = ("source", "size", "_states", "_start", "_cache", "_start_set", "_init", "_ncache", "steps", "_finals", "_memo")

    def __init__(self, source: str, ast: Node, size: int) -> None:
        self.source = source
        self.size = size
        b = _Builder()
        start, holes = b.frag(ast)
        m = b.new(_MATCH)
        b.patch(holes, m)
        self._states = b.states
        self._start = start
        self._cache: dict[int, dict[int, int]] = {}
        self._ncache = 0
        self._finals: dict[tuple[int, bool], bool] = {}
        self._memo: dict[str, bool] = {}  # recent subjects: matching is a pure function
        self.steps = 0  # NFA states visited, for tests of the time bound
        self._start_set = self._closure([start], False, False)
        self._init = self._closure([start], True, False)

    def _closure(self, seeds: list[int], bol: bool, eol: bool) -> int:
        """Bitmask of the states reachable through empty moves: CHAR states, pending EOL
        (when eol is False: they are decided at the end) and MATCH."""
        states = self._states
        seen = 0
        out = 0
        stack = list(seeds)
        while stack:
            s = stack.pop()
            if s < 0:
                continue
            bit = 1 << s
            if seen & bit:
                continue
            seen |= bit
            self.steps += 1
            st = states[s]
            kind = st[0]
            if kind == _CHAR or kind == _MATCH:
                out |= bit
            elif kind == _SPLIT:
                stack.append(st[3])  # type: ignore[arg-type]
                stack.append(st[2])  # type: ignore[arg-type]
            elif kind == _JMP:
                stack.append(st[2])  # type: ignore[arg-type]
            elif kind == _BOL:
                if bol:
                    stack.append(st[2])  # type: ignore[arg-type]
            elif kind == _EOL:
                if eol:
                    stack.append(st[2])  # type: ignore[arg-type]
                else:
                    out |= bit
        return out

    def _step(self, cur: int, cp: int) -> int:
        states = self._states
        seeds = []
        x = cur
        while x:
            low = x & -x
            s = low.bit_length() - 1
            x ^= low
            st = states[s]
            self.steps += 1
            if st[0] == _CHAR:
                rs = st[1]
                if len(rs) == 1:  # type: ignore[arg-type]
                    a, b = rs[0]  # type: ignore[index]
                    if a <= cp <= b:
                        seeds.append(st[2])
                else:
                    k = bisect_right(rs, (cp, _MAXCP + 1)) - 1  # type: ignore[call-overload]
                    if k >= 0 and rs[k][0] <= cp <= rs[k][1]:  # type: ignore[index]
                        seeds.append(st[2])
        return self._closure(seeds, False, False) | self._start_set  # type: ignore[arg-type]

    def _final(self, cur: int, at_start: bool) -> bool:
        key = (cur, at_start)
        r = self._finals.get(key)
        if r is None:
            r = self._finals[key] = self._final_uncached(cur, at_start)
        return r

    def _final_uncached(self, cur: int, at_start: bool) -> bool:
        states = self._states
        seeds = []
        x = cur
        while x:
            low = x & -x
            s = low.bit_length() - 1
            x ^= low
            kind = states[s][0]
            if kind == _MATCH:
                return True
            if kind == _EOL:
                seeds.append(s)
        if not seeds:
            return False
        end = self._closure(seeds, at_start, True)
        return bool(end & self._match_bit())

    def _match_bit(self) -> int:
        return 1 << (len(self._states) - 1)

    def match(self, subject: str) -> bool:
        """Whether the pattern matches anywhere in subject (patterns.md §6)."""
        memo = self._memo
        r = memo.get(subject)
        if r is None:
            r = self._run(subject)
            if len(subject) <= 256:
                if len(memo) >= 512:
                    memo.clear()
                memo[subject] = r
        return r

    def _run(self, subject: str) -> bool:
        mb = self._match_bit()
        cur = self._init
        if cur & mb:
            return True
        cache = self._cache
        for ch in subject:
            cp = ord(ch)
            row = cache.get(cur)
            if row is None:
                if self._ncache > 20000:  # bound the memory of the lazy DFA
                    cache.clear()
                    self._finals.clear()
                    self._ncache = 0
                row = cache[cur] = {}
            nxt = row.get(cp)
            if nxt is None:
                nxt = self._step(cur, cp)
                row[cp] = nxt
                self._ncache += 1
            cur = nxt
            if cur & mb:
                return True
        return self._final(cur, len(subject) == 0)


def check(source: str) -> tuple[Node, int]:
    """Validate a pattern; raise PatternError at the offset of section 4."""
    if len(source) > MAX_LEN:
        raise PatternError(MAX_LEN, "pattern longer than 1000 code points")
    for i, ch in enumerate(source):
        if 0xD800 <= ord(ch) <= 0xDFFF:
            raise PatternError(i, "not a Unicode scalar value")
    ast, size = _Parser(source).parse()
    if size > MAX_COUNT:
        raise PatternError(0, "expanded size above 1000")
    return ast, size


_compiled: dict[str, Union[Pattern, PatternError]] = {}


def compile_pattern(source: str) -> Pattern:
    """Validate and compile, memoized (computed patterns are compiled once per text)."""
    p = _compiled.get(source)
    if p is None:
        try:
            ast, size = check(source)
            p = Pattern(source, ast, size)
        except PatternError as e:
            p = e
        if len(_compiled) > 2000:
            _compiled.clear()
        _compiled[source] = p
    if isinstance(p, PatternError):
        raise p
    return p
