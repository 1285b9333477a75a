package dev.sdods.rules;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The portable pattern subset of spec/v1/patterns.md: the validator of sections 2–4 (one refusal
 * with one code-point offset) and a matcher that follows the semantics of section 6 directly with a
 * Thompson NFA simulated breadth-first (no backtracking), so that matching takes time proportional
 * to the automaton's size times the subject's length (section 7). java.util.regex is not used: it
 * backtracks.
 */
public final class Pattern {
    /** The longest pattern, the largest count, nested product and expanded size. */
    static final int LIMIT = 1000;
    /** The longest subject, in code points. */
    public static final int MAX_SUBJECT = 10_000;

    /** A pattern outside the portable subset, refused at a code-point offset. */
    public static final class NotPortable extends Exception {
        private static final long serialVersionUID = 1L;
        public final int offset;

        NotPortable(int offset, String message) {
            super(message + " (at offset " + offset + ")", null, false, false);
            this.offset = offset;
        }
    }

    // ---- syntax tree ----

    private abstract static class Node {
        boolean unbounded; // contains an unbounded quantifier at any depth
        int product = 1; // largest running product of nested quantifier values over its atoms
        int size; // expanded size (rule 10)
    }

    private static final class Anchor extends Node {
        final boolean begin;

        Anchor(boolean begin) {
            this.begin = begin;
        }
    }

    /** A set of code points: sorted inclusive ranges, possibly negated. */
    private static final class Set extends Node {
        final int[] ranges;
        final boolean negated;

        Set(int[] ranges, boolean negated) {
            this.ranges = ranges;
            this.negated = negated;
            size = 1;
        }

        boolean has(int c) {
            boolean in = false;
            for (int k = 0; k < ranges.length; k += 2) {
                if (c < ranges[k]) {
                    break;
                }
                if (c <= ranges[k + 1]) {
                    in = true;
                    break;
                }
            }
            return in != negated;
        }
    }

    private static final class Group extends Node {
        final Node body;

        Group(Node body) {
            this.body = body;
            unbounded = body.unbounded;
            product = body.product;
            size = body.size;
        }
    }

    private static final class Seq extends Node {
        final List<Node> items;

        Seq(List<Node> items) {
            this.items = items;
            for (Node n : items) {
                unbounded |= n.unbounded;
                product = Math.max(product, n.product);
                size += n.size;
            }
        }
    }

    private static final class Alt extends Node {
        final List<Node> branches;

        Alt(List<Node> branches) {
            this.branches = branches;
            for (Node n : branches) {
                unbounded |= n.unbounded;
                product = Math.max(product, n.product);
                size += n.size;
            }
        }
    }

    private static final class Repeat extends Node {
        final Node atom;
        final int min, max; // max -1: unbounded

        Repeat(Node atom, int min, int max) {
            this.atom = atom;
            this.min = min;
            this.max = max;
        }
    }

    static final int[] DIGIT = {'0', '9'};
    static final int[] WORD = {'0', '9', 'A', 'Z', '_', '_', 'a', 'z'};

    // ---- the validator ----

    private static final class Parser {
        final int[] p;
        int i;

        Parser(int[] p) {
            this.p = p;
        }

        boolean end() {
            return i >= p.length;
        }

        int peek() {
            return p[i];
        }

        Node alternation(int depth) throws NotPortable {
            List<Node> branches = new ArrayList<>();
            while (true) {
                if (end() || peek() == '|' || peek() == ')') {
                    if (!end() && peek() == ')' && depth == 0) {
                        throw new NotPortable(i, "unescaped ')' with no open group");
                    }
                    throw new NotPortable(i, "empty branch");
                }
                branches.add(branch(depth));
                if (!end() && peek() == '|') {
                    i++;
                    continue;
                }
                break;
            }
            return branches.size() == 1 ? branches.get(0) : new Alt(branches);
        }

        Node branch(int depth) throws NotPortable {
            List<Node> items = new ArrayList<>();
            while (!end()) {
                int c = peek();
                if (c == '|') {
                    break;
                }
                if (c == ')') {
                    if (depth == 0) {
                        throw new NotPortable(i, "unescaped ')' with no open group");
                    }
                    break;
                }
                items.add(piece(depth));
            }
            return items.size() == 1 ? items.get(0) : new Seq(items);
        }

        static boolean quantifierStart(int c) {
            return c == '*' || c == '+' || c == '?' || c == '{';
        }

        Node piece(int depth) throws NotPortable {
            int c = peek();
            if (c == '^' || c == '$') {
                i++;
                if (!end() && quantifierStart(peek())) {
                    throw new NotPortable(i, "nothing to repeat after an anchor");
                }
                return new Anchor(c == '^');
            }
            if (quantifierStart(c)) {
                throw new NotPortable(i, "nothing to repeat");
            }
            if (c == ']' || c == '}') {
                throw new NotPortable(i, "unescaped '" + (char) c + "' must be written with a backslash");
            }
            Node atom = atom(depth);
            if (end() || !quantifierStart(peek())) {
                return atom;
            }
            int q = i;
            int min, max;
            c = peek();
            if (c == '*') {
                min = 0;
                max = -1;
                i++;
            } else if (c == '+') {
                min = 1;
                max = -1;
                i++;
            } else if (c == '?') {
                min = 0;
                max = 1;
                i++;
            } else {
                i++;
                min = number(q);
                if (end()) {
                    throw new NotPortable(q, "'{' does not begin a well-formed count");
                }
                if (peek() == '}') {
                    max = min;
                } else if (peek() == ',') {
                    i++;
                    if (end()) {
                        throw new NotPortable(q, "'{' does not begin a well-formed count");
                    }
                    if (peek() == '}') {
                        max = -1;
                    } else {
                        max = number(q);
                    }
                } else {
                    throw new NotPortable(q, "'{' does not begin a well-formed count");
                }
                if (end() || peek() != '}') {
                    throw new NotPortable(q, "'{' does not begin a well-formed count");
                }
                i++;
                if (min > LIMIT || max > LIMIT) {
                    throw new NotPortable(q, "a count above 1000");
                }
                if (max >= 0 && min > max) {
                    throw new NotPortable(q, "a count {n,m} with n > m");
                }
            }
            if (!end() && peek() == '?') {
                i++; // lazy: the same set of matches
            }
            boolean repeating = max < 0 || max >= 2;
            if (atom instanceof Group && repeating && atom.unbounded) {
                throw new NotPortable(q, "a repeating group contains an unbounded quantifier");
            }
            int value = max >= 0 ? max : Math.max(min, 1);
            if (c == '*' || c == '+' || c == '?') {
                value = 1;
            }
            Repeat r = new Repeat(atom, min, max);
            r.unbounded = atom.unbounded || max < 0;
            r.product = value == 0 ? 1 : atom.product * value;
            if (r.product > LIMIT) {
                throw new NotPortable(q, "nested counts multiply to more than 1000");
            }
            r.size = atom.size * value;
            if (!end() && quantifierStart(peek())) {
                throw new NotPortable(i, "a quantifier after a quantifier");
            }
            return r;
        }

        /** A count number: "0" or a non-zero digit then digits, at most 1000 (checked by the caller). */
        int number(int q) throws NotPortable {
            if (end() || peek() < '0' || peek() > '9') {
                throw new NotPortable(q, "'{' does not begin a well-formed count");
            }
            if (peek() == '0') {
                i++;
                if (!end() && peek() >= '0' && peek() <= '9') {
                    throw new NotPortable(q, "a count with a leading zero");
                }
                return 0;
            }
            long v = 0;
            while (!end() && peek() >= '0' && peek() <= '9') {
                v = Math.min(v * 10 + (peek() - '0'), 1_000_000);
                i++;
            }
            return (int) v;
        }

        Node atom(int depth) throws NotPortable {
            int c = peek();
            switch (c) {
                case '.':
                    i++;
                    return new Set(new int[0], true);
                case '\\':
                    return escape();
                case '[':
                    return cls();
                case '(':
                    return group(depth);
                default:
                    i++;
                    return new Set(new int[] {c, c}, false);
            }
        }

        Node group(int depth) throws NotPortable {
            int open = i;
            i++;
            if (!end() && peek() == '?') {
                if (i + 1 < p.length && p[i + 1] == ':') {
                    i += 2;
                } else {
                    throw new NotPortable(open, "only ( and (?: groups are portable");
                }
            }
            Node body = alternation(depth + 1);
            if (end()) {
                throw new NotPortable(p.length, "missing ')'");
            }
            i++; // ')'
            return new Group(body);
        }

        static boolean syntaxChar(int c) {
            return "^$\\.*+?()[]{}|".indexOf(c) >= 0;
        }

        static int hex(int c) {
            if (c >= '0' && c <= '9') {
                return c - '0';
            }
            if (c >= 'a' && c <= 'f') {
                return c - 'a' + 10;
            }
            if (c >= 'A' && c <= 'F') {
                return c - 'A' + 10;
            }
            return -1;
        }

        /** A character escape (n r t f xHH) at i (after the backslash), or -1. */
        int charEscape() {
            int c = peek();
            switch (c) {
                case 'n': i++; return '\n';
                case 'r': i++; return '\r';
                case 't': i++; return '\t';
                case 'f': i++; return '\f';
                case 'x':
                    if (i + 2 < p.length && hex(p[i + 1]) >= 0 && hex(p[i + 2]) >= 0) {
                        int v = hex(p[i + 1]) * 16 + hex(p[i + 2]);
                        i += 3;
                        return v;
                    }
                    return -1;
                default:
                    return -1;
            }
        }

        static Set classEscape(int c) {
            switch (c) {
                case 'd': return new Set(DIGIT, false);
                case 'D': return new Set(DIGIT, true);
                case 'w': return new Set(WORD, false);
                case 'W': return new Set(WORD, true);
                default: return null;
            }
        }

        Node escape() throws NotPortable {
            int bs = i;
            i++;
            if (end()) {
                throw new NotPortable(bs, "a lone backslash at the end");
            }
            int c = peek();
            if (syntaxChar(c) || c == '/') {
                i++;
                return new Set(new int[] {c, c}, false);
            }
            Set ce = classEscape(c);
            if (ce != null) {
                i++;
                return ce;
            }
            int v = charEscape();
            if (v >= 0) {
                return new Set(new int[] {v, v}, false);
            }
            throw new NotPortable(bs, "an escape outside the portable subset");
        }

        /** One class atom: a code point (>= 0) or, through set[0], a class escape. */
        int classAtom(Set[] set) throws NotPortable {
            int c = peek();
            if (c != '\\') {
                i++;
                return c;
            }
            int bs = i;
            i++;
            if (end()) {
                throw new NotPortable(bs, "a lone backslash at the end");
            }
            c = peek();
            if (syntaxChar(c) || c == '/' || c == '-') {
                i++;
                return c;
            }
            Set ce = classEscape(c);
            if (ce != null) {
                i++;
                set[0] = ce;
                return -1;
            }
            int v = charEscape();
            if (v >= 0) {
                return v;
            }
            throw new NotPortable(bs, "an escape outside the portable subset");
        }

        Node cls() throws NotPortable {
            i++;
            boolean negated = false;
            if (!end() && peek() == '^') {
                negated = true;
                i++;
            }
            if (end()) {
                throw new NotPortable(p.length, "missing ']'");
            }
            if (peek() == ']') {
                throw new NotPortable(i, "an empty class");
            }
            List<int[]> ranges = new ArrayList<>();
            boolean first = true;
            boolean prevDash = false;
            while (true) {
                if (end()) {
                    throw new NotPortable(p.length, "missing ']'");
                }
                int c = peek();
                if (c == ']') {
                    i++;
                    break;
                }
                if (c == '-') {
                    if (prevDash) {
                        throw new NotPortable(i, "two adjacent '-' in a class");
                    }
                    if (i + 1 >= p.length) {
                        throw new NotPortable(p.length, "missing ']'");
                    }
                    if (first || (i + 1 < p.length && p[i + 1] == ']')) {
                        ranges.add(new int[] {'-', '-'});
                        i++;
                        first = false;
                        prevDash = true;
                        continue;
                    }
                    throw new NotPortable(i, "a '-' in a class that is neither first, last nor in a range");
                }
                prevDash = false;
                first = false;
                if (c == '[') {
                    throw new NotPortable(i, "an unescaped '[' inside a class");
                }
                if ((c == '&' || c == '|' || c == '~') && i + 1 < p.length && p[i + 1] == c) {
                    throw new NotPortable(i + 1, "'" + (char) c + (char) c + "' in a class");
                }
                int start = i;
                Set[] esc = new Set[1];
                int lo = classAtom(esc);
                boolean range = !end() && peek() == '-' && i + 1 < p.length && p[i + 1] != ']';
                if (!range) {
                    if (esc[0] != null) {
                        addSet(ranges, esc[0]);
                    } else {
                        ranges.add(new int[] {lo, lo});
                    }
                    continue;
                }
                if (esc[0] != null) {
                    throw new NotPortable(start, "a class escape cannot end a range");
                }
                i++; // '-'
                int c2 = peek();
                if (c2 == '-') {
                    throw new NotPortable(i, "two adjacent '-' in a class");
                }
                if (c2 == '[') {
                    throw new NotPortable(i, "an unescaped '[' inside a class");
                }
                int end2 = i;
                Set[] esc2 = new Set[1];
                int hi = classAtom(esc2);
                if (esc2[0] != null) {
                    throw new NotPortable(end2, "a class escape cannot end a range");
                }
                if (lo > hi) {
                    throw new NotPortable(start, "a range out of order");
                }
                ranges.add(new int[] {lo, hi});
            }
            return new Set(normalize(ranges), negated);
        }

        static void addSet(List<int[]> ranges, Set s) {
            if (!s.negated) {
                for (int k = 0; k < s.ranges.length; k += 2) {
                    ranges.add(new int[] {s.ranges[k], s.ranges[k + 1]});
                }
                return;
            }
            int next = 0;
            for (int k = 0; k < s.ranges.length; k += 2) {
                if (s.ranges[k] > next) {
                    ranges.add(new int[] {next, s.ranges[k] - 1});
                }
                next = s.ranges[k + 1] + 1;
            }
            ranges.add(new int[] {next, 0x10FFFF});
        }

        static int[] normalize(List<int[]> ranges) {
            ranges.sort((a, b) -> Integer.compare(a[0], b[0]));
            List<int[]> out = new ArrayList<>();
            for (int[] r : ranges) {
                if (!out.isEmpty() && r[0] <= out.get(out.size() - 1)[1] + 1) {
                    int[] last = out.get(out.size() - 1);
                    last[1] = Math.max(last[1], r[1]);
                } else {
                    out.add(new int[] {r[0], r[1]});
                }
            }
            int[] flat = new int[out.size() * 2];
            for (int k = 0; k < out.size(); k++) {
                flat[2 * k] = out.get(k)[0];
                flat[2 * k + 1] = out.get(k)[1];
            }
            return flat;
        }
    }

    /** Code points of s, each lone surrogate replaced with U+FFFD (patterns.md §1). */
    static int[] codePoints(String s) {
        int[] cps = s.codePoints().toArray();
        for (int k = 0; k < cps.length; k++) {
            if (cps[k] >= 0xD800 && cps[k] <= 0xDFFF) {
                cps[k] = 0xFFFD;
            }
        }
        return cps;
    }

    // ---- the automaton ----

    private static final int CHAR = 0, SPLIT = 1, JUMP = 2, BEGIN = 3, END = 4, MATCH = 5;

    private final String source;
    private int[] op, x, y; // instruction kind; CHAR: set index; SPLIT: two targets; JUMP: target x
    private Set[] sets;
    private int n;
    private int start;

    private Pattern(String source) {
        this.source = source;
    }

    /** The pattern's text. */
    public String source() {
        return source;
    }

    /** Checks and compiles a pattern; refuses one outside the portable subset. */
    public static Pattern compile(String pattern) throws NotPortable {
        int[] cps = codePoints(pattern);
        if (cps.length > LIMIT) {
            throw new NotPortable(LIMIT, "a pattern longer than 1000 code points");
        }
        Pattern pat = new Pattern(pattern);
        List<Set> sets = new ArrayList<>();
        Node tree;
        if (cps.length == 0) {
            tree = new Seq(new ArrayList<>());
        } else {
            Parser ps = new Parser(cps);
            tree = ps.alternation(0);
            if (tree.size > LIMIT) {
                throw new NotPortable(0, "the expanded pattern is larger than 1000");
            }
        }
        pat.build(tree, sets);
        return pat;
    }

    private void grow() {
        if (n == op.length) {
            op = Arrays.copyOf(op, n * 2);
            x = Arrays.copyOf(x, n * 2);
            y = Arrays.copyOf(y, n * 2);
        }
    }

    private int emit(int kind, int a, int b) {
        grow();
        op[n] = kind;
        x[n] = a;
        y[n] = b;
        return n++;
    }

    private void build(Node tree, List<Set> setList) {
        op = new int[64];
        x = new int[64];
        y = new int[64];
        n = 0;
        int entry = gen(tree, setList);
        int m = emit(MATCH, 0, 0);
        patch(entry, m);
        start = entry >= 0 ? entry : m;
        sets = setList.toArray(new Set[0]);
        if (n <= 64) {
            closures();
        }
    }

    // ---- the small-automaton path: state sets as one 64-bit word ----

    // closure[f][pc]: the CHAR and MATCH instructions reachable from pc through JUMP, SPLIT and the
    // anchors that pass where the position is (f bit 1: at the start, bit 2: at the end)
    private long[][] closure;

    // ascii[c]: the CHAR instructions whose set holds the ASCII code point c
    private long[] ascii;
    private long matchBit;

    private void closures() {
        for (int pc = 0; pc < n; pc++) {
            if (op[pc] == MATCH) {
                matchBit |= 1L << pc;
            }
        }
        ascii = new long[128];
        for (int pc = 0; pc < n; pc++) {
            if (op[pc] == CHAR) {
                for (int c = 0; c < 128; c++) {
                    if (sets[x[pc]].has(c)) {
                        ascii[c] |= 1L << pc;
                    }
                }
            }
        }
        closure = new long[4][n];
        for (int f = 0; f < 4; f++) {
            for (int pc = 0; pc < n; pc++) {
                closure[f][pc] = reach(pc, f);
            }
        }
    }

    private long reach(int from, int f) {
        long seen = 0, out = 0;
        int[] stack = new int[2 * n + 2];
        int sp = 0;
        stack[sp++] = from;
        while (sp > 0) {
            int pc = stack[--sp];
            if (pc < 0 || (seen & (1L << pc)) != 0) {
                continue;
            }
            seen |= 1L << pc;
            switch (op[pc]) {
                case JUMP:
                    stack[sp++] = x[pc];
                    break;
                case SPLIT:
                    stack[sp++] = y[pc];
                    stack[sp++] = x[pc];
                    break;
                case BEGIN:
                    if ((f & 1) != 0) {
                        stack[sp++] = x[pc];
                    }
                    break;
                case END:
                    if ((f & 2) != 0) {
                        stack[sp++] = x[pc];
                    }
                    break;
                default: // CHAR, MATCH
                    out |= 1L << pc;
            }
        }
        return out;
    }

    /** The small-automaton simulation: the same sets of states as matches below, one word each. */
    private boolean matchesSmall(String s, int len) {
        long steps = 0;
        long cur = closure[(len == 0 ? 2 : 0) | 1][start];
        int ci = 0;
        for (int pos = 0;; pos++) {
            if ((cur & matchBit) != 0) {
                if (countSteps) {
                    STEPS.get()[0] = steps;
                }
                return true;
            }
            if (pos == len) {
                break;
            }
            int c = codePointAt(s, ci);
            ci += c >= 0x10000 ? 2 : 1;
            int f = pos + 1 == len ? 2 : 0;
            long[] cl = closure[f];
            long next = cl[start]; // an unanchored search starts again at every position
            if (c < 128) {
                steps += Long.bitCount(cur);
                for (long b = cur & ascii[c]; b != 0; b &= b - 1) {
                    next |= cl[y[Long.numberOfTrailingZeros(b)]];
                }
            } else {
                for (long b = cur; b != 0; b &= b - 1) {
                    int pc = Long.numberOfTrailingZeros(b);
                    steps++;
                    if (op[pc] == CHAR && sets[x[pc]].has(c)) {
                        next |= cl[y[pc]];
                    }
                }
            }
            cur = next;
        }
        if (countSteps) {
            STEPS.get()[0] = steps;
        }
        return false;
    }

    // gen emits the fragment for a node and returns its entry; its dangling exits are the
    // instructions whose target is -1, kept on a list and patched by the caller.
    private int firstOf;
    private final List<int[]> holes = new ArrayList<>(); // {instruction, which (0 x, 1 y)}

    private void patch(int unused, int target) {
        for (int[] h : holes) {
            if (h[1] == 0) {
                x[h[0]] = target;
            } else {
                y[h[0]] = target;
            }
        }
        holes.clear();
    }

    /**
     * Emits node; returns its entry instruction (or -1 for an empty fragment), leaving its exits in
     * holes. firstOf mirrors the return value for the build's convenience.
     */
    private int gen(Node node, List<Set> setList) {
        int e = genNode(node, setList);
        firstOf = e;
        return e;
    }

    private int genNode(Node node, List<Set> setList) {
        if (node instanceof Set) {
            setList.add((Set) node);
            int pc = emit(CHAR, setList.size() - 1, -1);
            holes.add(new int[] {pc, 1});
            return pc;
        }
        if (node instanceof Anchor) {
            int pc = emit(((Anchor) node).begin ? BEGIN : END, -1, 0);
            holes.add(new int[] {pc, 0});
            return pc;
        }
        if (node instanceof Group) {
            return genNode(((Group) node).body, setList);
        }
        if (node instanceof Seq) {
            int entry = -1;
            List<int[]> pending = new ArrayList<>();
            for (Node item : ((Seq) node).items) {
                List<int[]> saved = new ArrayList<>(holes);
                holes.clear();
                int e = genNode(item, setList);
                List<int[]> exits = new ArrayList<>(holes);
                holes.clear();
                holes.addAll(saved);
                if (e < 0) {
                    continue;
                }
                for (int[] h : pending) {
                    set(h, e);
                }
                if (entry < 0) {
                    entry = e;
                }
                pending = exits;
            }
            holes.addAll(pending);
            if (entry < 0) {
                int pc = emit(JUMP, -1, 0);
                holes.add(new int[] {pc, 0});
                return pc;
            }
            return entry;
        }
        if (node instanceof Alt) {
            List<Node> bs = ((Alt) node).branches;
            List<int[]> exits = new ArrayList<>();
            int entry = -1;
            int[] prevSplit = null;
            for (int k = 0; k < bs.size(); k++) {
                List<int[]> saved = new ArrayList<>(holes);
                holes.clear();
                int e = genNode(bs.get(k), setList);
                exits.addAll(holes);
                holes.clear();
                holes.addAll(saved);
                int target = e;
                if (k < bs.size() - 1) {
                    int sp = emit(SPLIT, e, -1);
                    target = sp;
                    if (prevSplit != null) {
                        set(prevSplit, sp);
                    }
                    prevSplit = new int[] {sp, 1};
                } else if (prevSplit != null) {
                    set(prevSplit, e);
                }
                if (entry < 0) {
                    entry = target;
                }
            }
            holes.addAll(exits);
            return entry;
        }
        Repeat r = (Repeat) node;
        // r{min,max}: min copies, then (max-min) nested optionals or a star
        int entry = -1;
        List<int[]> pending = new ArrayList<>();
        List<int[]> saved = new ArrayList<>(holes);
        holes.clear();
        for (int k = 0; k < r.min; k++) {
            int e = genNode(r.atom, setList);
            List<int[]> exits = new ArrayList<>(holes);
            holes.clear();
            for (int[] h : pending) {
                set(h, e);
            }
            if (entry < 0) {
                entry = e;
            }
            pending = exits;
        }
        if (r.max < 0) {
            int sp = emit(SPLIT, -1, -1);
            int e = genNode(r.atom, setList);
            List<int[]> exits = new ArrayList<>(holes);
            holes.clear();
            x[sp] = e;
            for (int[] h : exits) {
                set(h, sp);
            }
            for (int[] h : pending) {
                set(h, sp);
            }
            if (entry < 0) {
                entry = sp;
            }
            pending = new ArrayList<>();
            pending.add(new int[] {sp, 1});
        } else {
            List<int[]> skips = new ArrayList<>();
            for (int k = r.min; k < r.max; k++) {
                int sp = emit(SPLIT, -1, -1);
                int e = genNode(r.atom, setList);
                List<int[]> exits = new ArrayList<>(holes);
                holes.clear();
                x[sp] = e;
                skips.add(new int[] {sp, 1});
                for (int[] h : pending) {
                    set(h, sp);
                }
                if (entry < 0) {
                    entry = sp;
                }
                pending = exits;
            }
            pending.addAll(skips);
        }
        holes.addAll(saved);
        if (entry < 0) { // {0} or {0,0}: matches the empty string
            int pc = emit(JUMP, -1, 0);
            holes.add(new int[] {pc, 0});
            return pc;
        }
        holes.addAll(pending);
        return entry;
    }

    private void set(int[] h, int target) {
        if (h[1] == 0) {
            x[h[0]] = target;
        } else {
            y[h[0]] = target;
        }
    }

    /** Steps taken by the last match on this thread: instructions visited (for the linear-time test). */
    static final ThreadLocal<long[]> STEPS = ThreadLocal.withInitial(() -> new long[1]);
    /** Whether matches records STEPS (the tests switch it on). */
    static volatile boolean countSteps;

    /** Whether the pattern matches anywhere in subject (patterns.md §6). */
    public boolean matches(String subject) {
        return matches(subject, subject.codePointCount(0, subject.length()));
    }

    /** The subject's next code point at char index ci, a lone surrogate read as U+FFFD (§1). */
    private static int codePointAt(String s, int ci) {
        int c = s.codePointAt(ci);
        return c >= 0xD800 && c <= 0xDFFF ? 0xFFFD : c;
    }

    boolean matches(String s, int len) {
        if (closure != null) {
            return matchesSmall(s, len);
        }
        int ci = 0; // char index of the code point at pos
        int[] cur = new int[n], next = new int[n];
        int[] mark = new int[n]; // generation stamps: an instruction is on a list once per step
        int gen = 0;
        long steps = 0;
        int nc = 0;
        int[] stack = new int[2 * n + 2];
        for (int pos = 0; pos <= len; pos++) {
            gen++;
            // add the start state at every position: an unanchored search
            int nn = 0;
            int[] lists = next;
            // the states carried from the previous step are in cur[0..nc), already closed under
            // epsilon at this position; add the closure of the start state
            for (int k = 0; k < nc; k++) {
                mark[cur[k]] = gen;
            }
            nn = nc;
            System.arraycopy(cur, 0, lists, 0, nc);
            int sp = 0;
            stack[sp++] = start;
            while (sp > 0) {
                int pc = stack[--sp];
                if (pc < 0 || mark[pc] == gen) {
                    continue;
                }
                mark[pc] = gen;
                steps++;
                switch (op[pc]) {
                    case MATCH:
                        if (countSteps) {
                            if (countSteps) {
                                STEPS.get()[0] = steps;
                            }
                        }
                        return true;
                    case JUMP:
                        stack[sp++] = x[pc];
                        break;
                    case SPLIT:
                        stack[sp++] = y[pc];
                        stack[sp++] = x[pc];
                        break;
                    case BEGIN:
                        if (pos == 0) {
                            stack[sp++] = x[pc];
                        }
                        break;
                    case END:
                        if (pos == len) {
                            stack[sp++] = x[pc];
                        }
                        break;
                    default:
                        lists[nn++] = pc;
                }
            }
            if (pos == len) {
                break;
            }
            // step over s[pos]: CHAR states that accept it lead to their targets, closed at pos+1
            int c = codePointAt(s, ci);
            ci += c >= 0x10000 ? 2 : 1;
            gen++;
            int mc = 0;
            int[] out = cur;
            for (int k = 0; k < nn; k++) {
                int pc = lists[k];
                if (op[pc] != CHAR) {
                    continue;
                }
                steps++;
                if (!sets[x[pc]].has(c)) {
                    continue;
                }
                stack[sp++] = y[pc];
                while (sp > 0) {
                    int q = stack[--sp];
                    if (q < 0 || mark[q] == gen) {
                        continue;
                    }
                    mark[q] = gen;
                    steps++;
                    switch (op[q]) {
                        case MATCH:
                            if (countSteps) {
                            if (countSteps) {
                                STEPS.get()[0] = steps;
                            }
                        }
                            return true;
                        case JUMP:
                            stack[sp++] = x[q];
                            break;
                        case SPLIT:
                            stack[sp++] = y[q];
                            stack[sp++] = x[q];
                            break;
                        case BEGIN:
                            break; // pos+1 > 0
                        case END:
                            if (pos + 1 == len) {
                                stack[sp++] = x[q];
                            }
                            break;
                        default:
                            out[mc++] = q;
                    }
                }
            }
            nc = mc;
            cur = out;
            next = lists;
            gen++;
        }
        if (countSteps) {
            STEPS.get()[0] = steps;
        }
        return false;
    }
}
