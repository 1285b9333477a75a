package dev.sdods.rules;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** A compiled expression node (spec/v1/expressions.md, operators.md); immutable once built. */
abstract class Expr {
    final String ptr;

    Expr(String ptr) {
        this.ptr = ptr;
    }

    abstract Object eval(Ctx c) throws EvalError;

    /** The state of one evaluation: the environment, the current frame and the work budget. */
    static final class Ctx {
        final Map<String, ?> env;
        final Object[] roots; // the rule layer's roots by ROOTS index, instead of env
        final Map<String, CustomOperator> ops;
        Object[] frame;
        long left;

        Ctx(Map<String, ?> env, Object[] roots, Map<String, CustomOperator> ops, int frameSize, long budget) {
            this.env = env;
            this.roots = roots;
            this.ops = ops;
            this.frame = frameSize == 0 ? NO_FRAME : new Object[frameSize];
            this.left = budget;
        }

        void spend(long units, String ptr) throws EvalError {
            left -= units;
            if (left < 0) {
                throw new EvalError("EVALUATION_LIMIT", ptr, "the evaluation exceeded its work budget");
            }
        }
    }

    static final Object[] NO_FRAME = new Object[0];
    /** The roots of a rule run (evaluation.md §2), read by index rather than looked up by name. */
    static final List<String> ROOTS = List.of("data", "original", "actor", "ctx", "value", "field");
    static final long DEFAULT_BUDGET = 10_000_000L;

    // ---- nodes ----

    static final class Const extends Expr {
        final Object value;

        Const(Object value, String ptr) {
            super(ptr);
            this.value = value;
        }

        @Override
        Object eval(Ctx c) {
            return value;
        }
    }

    static final class ListNode extends Expr {
        final Expr[] items;

        ListNode(Expr[] items, String ptr) {
            super(ptr);
            this.items = items;
        }

        @Override
        Object eval(Ctx c) throws EvalError {
            c.spend(1 + items.length, ptr);
            List<Object> out = new ArrayList<>(items.length);
            for (Expr e : items) {
                out.add(e.eval(c));
            }
            return out;
        }
    }

    static final class Var extends Expr {
        final String root; // an environment root, when slot < 0
        final int slot; // a local binding of the current frame
        final String[] names;
        final int[] indexes; // the segment as a list index, or -1 when it is not a run of ASCII digits
        final int rootIndex; // the root's index in ROOTS, or -1

        Var(String root, int slot, String[] names, String ptr) {
            super(ptr);
            this.root = root;
            this.slot = slot;
            this.names = names;
            this.rootIndex = ROOTS.indexOf(root);
            this.indexes = new int[names.length];
            for (int k = 0; k < names.length; k++) {
                indexes[k] = index(names[k]);
            }
        }

        static int index(String s) {
            long v = 0;
            for (int k = 0; k < s.length(); k++) {
                char ch = s.charAt(k);
                if (ch < '0' || ch > '9') {
                    return -1;
                }
                v = Math.min(v * 10 + (ch - '0'), Integer.MAX_VALUE);
            }
            return (int) v;
        }

        @Override
        Object eval(Ctx c) {
            Object v;
            if (slot >= 0) {
                v = c.frame[slot];
            } else if (c.roots != null) {
                v = rootIndex >= 0 ? c.roots[rootIndex] : null;
            } else {
                v = c.env.get(root);
            }
            for (int k = 0; k < names.length && v != null; k++) {
                if (v instanceof Map) {
                    v = ((Map<?, ?>) v).get(names[k]);
                } else if (v instanceof List) {
                    int i = indexes[k];
                    List<?> l = (List<?>) v;
                    v = i >= 0 && i < l.size() ? l.get(i) : null;
                } else {
                    return null;
                }
            }
            return v;
        }
    }

    /** A function definition, compiled once; calls share it. */
    static final class Fn {
        final String name;
        final String ptr;
        final int arity;
        // a FUNCTION_INVALID definition: its name is defined, but calls to it are not checked
        // against an arity nor ever evaluated (expressions.md §5)
        final boolean malformed;
        Expr body;
        int frameSize;

        Fn(String name, String ptr, int arity, boolean malformed) {
            this.name = name;
            this.ptr = ptr;
            this.arity = arity;
            this.malformed = malformed;
        }
    }

    static final class Call extends Expr {
        final Fn fn;
        final Expr[] args;

        Call(Fn fn, Expr[] args, String ptr) {
            super(ptr);
            this.fn = fn;
            this.args = args;
        }

        @Override
        Object eval(Ctx c) throws EvalError {
            c.spend(1 + args.length, ptr);
            Object[] frame = new Object[Math.max(fn.frameSize, args.length)];
            for (int k = 0; k < args.length; k++) {
                frame[k] = args[k].eval(c);
            }
            Object[] saved = c.frame;
            c.frame = frame;
            try {
                return fn.body.eval(c);
            } finally {
                c.frame = saved;
            }
        }
    }

    static final class Custom extends Expr {
        final String name;
        final Expr[] args;

        Custom(String name, Expr[] args, String ptr) {
            super(ptr);
            this.name = name;
            this.args = args;
        }

        @Override
        Object eval(Ctx c) throws EvalError {
            List<Object> vals = new ArrayList<>(args.length);
            long units = 1;
            for (Expr a : args) {
                Object v = a.eval(c);
                units += Ops.size(v);
                vals.add(v);
            }
            c.spend(units, ptr);
            CustomOperator op = c.ops.get(name);
            if (op == null) {
                throw new EvalError("OPERATOR_UNAVAILABLE", ptr, "the custom operator " + name + " is not registered");
            }
            Object out;
            try {
                out = op.apply(Collections.unmodifiableList(vals));
            } catch (Exception | StackOverflowError e) {
                throw new EvalError("OPERATOR_FAILED", ptr, "the custom operator " + name + " failed: " + e.getMessage());
            }
            Object json;
            try {
                json = Ops.toJson(out, 0);
            } catch (IllegalArgumentException e) {
                throw new EvalError("OPERATOR_FAILED", ptr, "the custom operator " + name + " returned " + e.getMessage());
            }
            c.spend(Ops.size(json), ptr);
            return json;
        }
    }

    static final class Op extends Expr {
        final int code;
        final String name;
        final Expr[] args;
        final int slot; // the element binding of map, filter, some, all
        final Pattern pattern; // a constant pattern of matches
        final Object nullResult; // NullRule.result(name), looked up once

        Op(int code, String name, Expr[] args, int slot, Pattern pattern, String ptr) {
            super(ptr);
            this.nullResult = NullRule.result(name);
            this.code = code;
            this.name = name;
            this.args = args;
            this.slot = slot;
            this.pattern = pattern;
        }

        @Override
        Object eval(Ctx c) throws EvalError {
            c.spend(1, ptr);
            return Ops.apply(this, c);
        }
    }

    // ---- the compiler ----

    /** The 45 core operators: name, minimum and maximum argument count (-1: no maximum). */
    static final String[] NAMES = {"==", "!=", "<", "<=", ">", ">=", "between", "and", "or", "not", "if",
        "coalesce", "+", "-", "*", "/", "mod", "abs", "min", "max", "round", "sum", "upper", "lower", "trim",
        "concat", "substring", "text", "startsWith", "endsWith", "matches", "length", "contains", "in", "map",
        "filter", "some", "all", "typeOf", "isEmpty", "literal", "isDate", "yearsBetween", "daysBetween",
        "dateAdd"};
    static final int[][] ARITY = {{2, 2}, {2, 2}, {2, 2}, {2, 2}, {2, 2}, {2, 2}, {3, 3}, {1, -1}, {1, -1},
        {1, 1}, {3, -1}, {1, -1}, {2, -1}, {1, 2}, {2, -1}, {2, 2}, {2, 2}, {1, 1}, {1, -1}, {1, -1}, {1, 2},
        {1, 1}, {1, 1}, {1, 1}, {1, 1}, {1, -1}, {2, 3}, {1, 1}, {2, 2}, {2, 2}, {2, 2}, {1, 1}, {2, 2}, {2, 2},
        {2, 3}, {2, 3}, {2, 3}, {2, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, {2, 2}, {2, 2}, {3, 3}};
    static final Map<String, Integer> CODES = new HashMap<>();

    static {
        for (int k = 0; k < NAMES.length; k++) {
            CODES.put(NAMES[k], k);
        }
    }

    static final int EQ = 0, NE = 1, LT = 2, LE = 3, GT = 4, GE = 5, BETWEEN = 6, AND = 7, OR = 8, NOT = 9,
        IF = 10, COALESCE = 11, ADD = 12, SUB = 13, MUL = 14, DIV = 15, MOD = 16, ABS = 17, MIN = 18, MAX = 19,
        ROUND = 20, SUM = 21, UPPER = 22, LOWER = 23, TRIM = 24, CONCAT = 25, SUBSTRING = 26, TEXT = 27,
        STARTS = 28, ENDS = 29, MATCHES = 30, LENGTH = 31, CONTAINS = 32, IN = 33, MAP = 34, FILTER = 35,
        SOME = 36, ALL = 37, TYPEOF = 38, ISEMPTY = 39, LITERAL = 40, ISDATE = 41, YEARS = 42, DAYS = 43,
        DATEADD = 44;

    static final int MAX_DEPTH = 128;
    static final int MAX_CALL_CHAIN = 32;

    /** A name is a custom operator's when it is x- followed by at least one character. */
    static boolean customName(String name) {
        return name.length() > 2 && name.startsWith("x-");
    }

    /** Compiles expressions that share one set of functions and declared custom operators. */
    static final class Compiler {
        final List<Diagnostic> diags = new ArrayList<>();
        final java.util.Set<String> declared;
        final Map<String, Fn> fns = new LinkedHashMap<>();
        final Map<String, java.util.Set<String>> fnCalls = new HashMap<>();
        final Map<String, java.util.Set<String>> fnOps = new HashMap<>();
        private boolean tooDeep;

        // what the expression being compiled reaches directly
        private java.util.Set<String> calls;
        private java.util.Set<String> customs;
        private int nextSlot, maxSlot;

        private static final class Scope {
            final String name;
            final int slot;
            final Scope outer;

            Scope(String name, int slot, Scope outer) {
                this.name = name;
                this.slot = slot;
                this.outer = outer;
            }
        }

        Compiler(java.util.Set<String> declared) {
            this.declared = declared;
        }

        void report(String code, String ptr, String message) {
            diags.add(new Diagnostic(code, ptr, message));
        }

        /**
         * Loads function definitions (expressions.md §5) at base (e.g. "/functions"), checking
         * every body, recursion and the chain of nested calls. structureCode is the code of a
         * ruleset's or manifest's structural problems, where a definition may also have a string
         * description (ruleset.md §1); null for the engine protocol's functions, which have exactly
         * params and body.
         */
        void functions(Object defs, String base, String structureCode) {
            final String invalidCode = "FUNCTION_INVALID";
            if (defs == null) {
                return;
            }
            Map<?, ?> m = (Map<?, ?>) defs;
            if (m instanceof Json.JObject && ((Json.JObject) m).duplicate != null) {
                String d = ((Json.JObject) m).duplicate;
                report("FUNCTION_REDEFINED", Diagnostic.ptr(base, d), "the function " + d + " is defined twice");
            }
            Map<String, List<String>> params = new LinkedHashMap<>();
            Map<String, Object> bodies = new LinkedHashMap<>();
            for (Map.Entry<?, ?> e : m.entrySet()) {
                String name = (String) e.getKey();
                String p = Diagnostic.ptr(base, name);
                if (!(e.getValue() instanceof Map)) {
                    report(invalidCode, p, "a function definition is an object with params and body");
                    fns.put(name, new Fn(name, p, 0, true));
                    continue;
                }
                Map<?, ?> def = (Map<?, ?>) e.getValue();
                boolean ok = true;
                if (def instanceof Json.JObject && ((Json.JObject) def).duplicate != null) {
                    report(invalidCode, Diagnostic.ptr(p, ((Json.JObject) def).duplicate), "a member named twice");
                    ok = false;
                }
                for (Object k : def.keySet()) {
                    if (!k.equals("params") && !k.equals("body") && !(k.equals("description") && structureCode != null)) {
                        report(invalidCode, Diagnostic.ptr(p, (String) k), "unknown member " + k + " of a function definition");
                        ok = false;
                    }
                }
                if (structureCode != null && def.containsKey("description") && !(def.get("description") instanceof String)) {
                    // a structural problem of the document, not a malformed definition
                    report(structureCode, p + "/description", "description is a string");
                }
                Object ps = def.get("params");
                List<String> names = new ArrayList<>();
                if (!(ps instanceof List)) {
                    if (def.containsKey("params")) {
                        report(invalidCode, p + "/params", "params is an array of distinct names");
                    } else {
                        report(invalidCode, p, "a function definition needs params");
                    }
                    ok = false;
                } else {
                    List<?> pl = (List<?>) ps;
                    for (int k = 0; k < pl.size(); k++) {
                        Object n = pl.get(k);
                        if (!(n instanceof String) || ((String) n).isEmpty() || ((String) n).indexOf('.') >= 0
                            || names.contains(n)) {
                            report(invalidCode, Diagnostic.ptr(p + "/params", k), "params are distinct non-empty names without '.'");
                            ok = false;
                        } else {
                            names.add((String) n);
                        }
                    }
                }
                if (!def.containsKey("body")) {
                    report(invalidCode, p, "a function definition needs a body");
                    ok = false;
                }
                // a malformed definition still defines its name, so calls to it are neither
                // FUNCTION_UNKNOWN nor FUNCTION_ARITY, and its body is checked like any other
                fns.put(name, new Fn(name, p, names.size(), !ok));
                if (def.containsKey("body")) {
                    params.put(name, names);
                    bodies.put(name, def.get("body"));
                }
            }
            for (Map.Entry<String, Object> e : bodies.entrySet()) {
                Fn fn = fns.get(e.getKey());
                calls = new java.util.LinkedHashSet<>();
                customs = new java.util.TreeSet<>();
                List<String> ps = params.get(e.getKey());
                Scope sc = null;
                for (int k = 0; k < ps.size(); k++) {
                    sc = new Scope(ps.get(k), k, sc);
                }
                nextSlot = ps.size();
                maxSlot = nextSlot;
                tooDeep = false;
                fn.body = compile(e.getValue(), fn.ptr + "/body", sc, 1);
                fn.frameSize = maxSlot;
                fnCalls.put(fn.name, calls);
                fnOps.put(fn.name, customs);
            }
            recursion(base);
        }

        private void recursion(String base) {
            // functions on a cycle: those that reach themselves
            List<String> names = new ArrayList<>(fnCalls.keySet());
            for (String f : names) {
                if (reaches(f, f, new java.util.HashSet<>())) {
                    report("FUNCTION_RECURSIVE", fns.get(f).ptr, "the function " + f + " reaches itself through calls");
                }
            }
            boolean cyclic = false;
            for (Diagnostic d : diags) {
                cyclic |= d.code().equals("FUNCTION_RECURSIVE");
            }
            if (cyclic) {
                return;
            }
            Map<String, Integer> memo = new HashMap<>();
            for (String f : names) {
                if (chain(f, memo) > MAX_CALL_CHAIN) {
                    report("EXPRESSION_TOO_DEEP", fns.get(f).ptr, "a chain of nested calls longer than 32 functions starts at " + f);
                }
            }
        }

        private boolean reaches(String from, String target, java.util.Set<String> seen) {
            for (String g : fnCalls.getOrDefault(from, Collections.emptySet())) {
                if (g.equals(target)) {
                    return true;
                }
                if (seen.add(g) && reaches(g, target, seen)) {
                    return true;
                }
            }
            return false;
        }

        private int chain(String f, Map<String, Integer> memo) {
            Integer m = memo.get(f);
            if (m != null) {
                return m;
            }
            int best = 0;
            for (String g : fnCalls.getOrDefault(f, Collections.emptySet())) {
                best = Math.max(best, chain(g, memo));
            }
            memo.put(f, best + 1);
            return best + 1;
        }

        /** The custom operators an expression reaching these calls and operators needs. */
        java.util.Set<String> reachedOps(java.util.Set<String> directCalls, java.util.Set<String> directOps) {
            java.util.Set<String> out = new java.util.TreeSet<>(directOps);
            java.util.Set<String> seen = new java.util.HashSet<>();
            List<String> todo = new ArrayList<>(directCalls);
            while (!todo.isEmpty()) {
                String f = todo.remove(todo.size() - 1);
                if (!seen.add(f)) {
                    continue;
                }
                out.addAll(fnOps.getOrDefault(f, Collections.emptySet()));
                todo.addAll(fnCalls.getOrDefault(f, Collections.emptySet()));
            }
            return out;
        }

        /** A compiled top-level expression. */
        Program program(Object json, String ptr) {
            calls = new java.util.LinkedHashSet<>();
            customs = new java.util.TreeSet<>();
            nextSlot = 0;
            maxSlot = 0;
            tooDeep = false;
            Expr e = compile(json, ptr, null, 1);
            return new Program(e, maxSlot, reachedOps(calls, customs));
        }

        private Expr fail(String ptr) {
            return new Const(null, ptr);
        }

        private boolean deep(int depth, String ptr) {
            if (depth > MAX_DEPTH) {
                if (!tooDeep) {
                    tooDeep = true;
                    report("EXPRESSION_TOO_DEEP", ptr, "the expression is nested more than 128 deep");
                }
                return true;
            }
            return false;
        }

        Expr compile(Object j, String ptr, Scope sc, int depth) {
            if (deep(depth, ptr)) {
                return fail(ptr);
            }
            if (j == null || j instanceof Boolean || j instanceof String || j instanceof Double) {
                return new Const(j, ptr);
            }
            if (j instanceof Json.OutOfRange) {
                report("NUMBER_OUT_OF_RANGE", ptr, "the number " + j + " is beyond the range of a double");
                return fail(ptr);
            }
            if (j instanceof List) {
                List<?> l = (List<?>) j;
                Expr[] items = new Expr[l.size()];
                boolean constant = true;
                for (int k = 0; k < items.length; k++) {
                    items[k] = compile(l.get(k), Diagnostic.ptr(ptr, k), sc, depth + 1);
                    constant &= items[k] instanceof Const;
                }
                if (constant) {
                    List<Object> vals = new ArrayList<>(items.length);
                    for (Expr e : items) {
                        vals.add(((Const) e).value);
                    }
                    return new Const(Collections.unmodifiableList(vals), ptr);
                }
                return new ListNode(items, ptr);
            }
            Map<?, ?> o = (Map<?, ?>) j;
            if (o instanceof Json.JObject && ((Json.JObject) o).duplicate != null) {
                report("EXPRESSION_INVALID", ptr, "the member " + ((Json.JObject) o).duplicate + " is named twice");
                return fail(ptr);
            }
            if (o.size() == 1 && o.containsKey("var")) {
                return var(o.get("var"), ptr, sc);
            }
            if (o.size() == 2 && o.containsKey("args") && (o.containsKey("op") || o.containsKey("fn"))) {
                boolean isOp = o.containsKey("op");
                Object name = o.get(isOp ? "op" : "fn");
                Object args = o.get("args");
                if (!(name instanceof String)) {
                    report("EXPRESSION_INVALID", ptr + (isOp ? "/op" : "/fn"), (isOp ? "op" : "fn") + " is a string");
                    return fail(ptr);
                }
                if (!(args instanceof List)) {
                    report("EXPRESSION_INVALID", ptr + "/args", "args is an array");
                    return fail(ptr);
                }
                return isOp ? op((String) name, (List<?>) args, ptr, sc, depth) : call((String) name, (List<?>) args, ptr, sc, depth);
            }
            report("EXPRESSION_INVALID", ptr, "an object is an expression only as {var}, {op, args} or {fn, args}");
            return fail(ptr);
        }

        private Expr var(Object path, String ptr, Scope sc) {
            if (!(path instanceof String)) {
                report("EXPRESSION_INVALID", ptr + "/var", "var is a string");
                return fail(ptr);
            }
            String p = (String) path;
            List<String> segs = new ArrayList<>();
            int start = 0;
            while (true) {
                int dot = p.indexOf('.', start);
                String seg = dot < 0 ? p.substring(start) : p.substring(start, dot);
                if (seg.isEmpty()) {
                    report("VARIABLE_INVALID", ptr + "/var", "a variable path has an empty segment");
                    return fail(ptr);
                }
                segs.add(seg);
                if (dot < 0) {
                    break;
                }
                start = dot + 1;
            }
            String root = segs.get(0);
            int slot = -1;
            for (Scope s = sc; s != null; s = s.outer) {
                if (s.name.equals(root)) {
                    slot = s.slot;
                    break;
                }
            }
            return new Var(root, slot, segs.subList(1, segs.size()).toArray(new String[0]), ptr);
        }

        private Expr[] args(List<?> raw, String ptr, Scope sc, int depth) {
            Expr[] out = new Expr[raw.size()];
            for (int k = 0; k < out.length; k++) {
                out[k] = compile(raw.get(k), Diagnostic.ptr(ptr + "/args", k), sc, depth + 1);
            }
            return out;
        }

        private Expr call(String name, List<?> raw, String ptr, Scope sc, int depth) {
            Fn fn = fns.get(name);
            Expr[] args = args(raw, ptr, sc, depth);
            if (fn == null) {
                report("FUNCTION_UNKNOWN", ptr + "/fn", "no function is named " + name);
                return fail(ptr);
            }
            if (fn.malformed) {
                // still an edge of the call graph, for FUNCTION_RECURSIVE and the chain limit
                calls.add(name);
                return fail(ptr);
            }
            if (fn.arity != raw.size()) {
                report("FUNCTION_ARITY", ptr + "/args", "the function " + name + " takes " + fn.arity + " arguments, not " + raw.size());
                return fail(ptr);
            }
            calls.add(name);
            return new Call(fn, args, ptr);
        }

        /** A constant string pattern: a JSON string or literal(string). */
        private static String constantString(Object a) {
            if (a instanceof String) {
                return (String) a;
            }
            if (a instanceof Map) {
                Map<?, ?> m = (Map<?, ?>) a;
                if (m.size() == 2 && "literal".equals(m.get("op")) && m.get("args") instanceof List
                    && !(m instanceof Json.JObject && ((Json.JObject) m).duplicate != null)) {
                    List<?> l = (List<?>) m.get("args");
                    if (l.size() == 1 && l.get(0) instanceof String) {
                        return (String) l.get(0);
                    }
                }
            }
            return null;
        }

        private Expr op(String name, List<?> raw, String ptr, Scope sc, int depth) {
            if (customName(name)) {
                Expr[] args = args(raw, ptr, sc, depth);
                if (!declared.contains(name)) {
                    report("OPERATOR_UNDECLARED", ptr + "/op", "the custom operator " + name + " is not declared");
                    return fail(ptr);
                }
                customs.add(name);
                return new Custom(name, args, ptr);
            }
            Integer code = CODES.get(name);
            if (code == null) {
                report("OPERATOR_UNKNOWN", ptr + "/op", "no core operator is named " + name);
                args(raw, ptr, sc, depth);
                return fail(ptr);
            }
            int[] ar = ARITY[code];
            int n = raw.size();
            if (n < ar[0] || (ar[1] >= 0 && n > ar[1]) || (code == IF && n % 2 == 0)) {
                report("OPERATOR_ARITY", ptr + "/args", name + " does not take " + n + " arguments");
                args(raw, ptr, sc, depth);
                return fail(ptr);
            }
            switch (code) {
                case LITERAL:
                    Object v = literal(raw.get(0), ptr + "/args/0", depth + 1);
                    return v == FAILED ? fail(ptr) : new Const(v, ptr);
                case MAP: case FILTER: case SOME: case ALL: {
                    Expr arr = compile(raw.get(0), ptr + "/args/0", sc, depth + 1);
                    String elem = "it";
                    if (n == 3) {
                        Object nm = raw.get(1);
                        if (!(nm instanceof String) || ((String) nm).isEmpty() || ((String) nm).indexOf('.') >= 0) {
                            report("EXPRESSION_INVALID", ptr + "/args/1", "the element name is a string literal without '.'");
                            compile(raw.get(2), ptr + "/args/2", sc, depth + 1);
                            return fail(ptr);
                        }
                        elem = (String) nm;
                    }
                    int slot = nextSlot++;
                    maxSlot = Math.max(maxSlot, nextSlot);
                    Expr body = compile(raw.get(n - 1), ptr + "/args/" + (n - 1), new Scope(elem, slot, sc), depth + 1);
                    nextSlot--;
                    return new Op(code, name, new Expr[] {arr, body}, slot, null, ptr);
                }
                case MATCHES: {
                    Expr[] args = args(raw, ptr, sc, depth);
                    String constant = constantString(raw.get(1));
                    Pattern pat = null;
                    if (constant != null) {
                        try {
                            pat = Pattern.compile(constant);
                        } catch (Pattern.NotPortable e) {
                            report("PATTERN_NOT_PORTABLE", ptr + "/args/1", e.getMessage());
                            return fail(ptr);
                        }
                    }
                    return new Op(code, name, args, -1, pat, ptr);
                }
                default:
                    return new Op(code, name, args(raw, ptr, sc, depth), -1, null, ptr);
            }
        }

        static final Object FAILED = new Object();

        /** The argument of literal, as data; FAILED after reporting a problem. */
        Object literal(Object j, String ptr, int depth) {
            if (deep(depth, ptr)) {
                return FAILED;
            }
            if (j instanceof Json.OutOfRange) {
                report("NUMBER_OUT_OF_RANGE", ptr, "the number " + j + " is beyond the range of a double");
                return FAILED;
            }
            if (j instanceof List) {
                List<?> l = (List<?>) j;
                List<Object> out = new ArrayList<>(l.size());
                boolean ok = true;
                for (int k = 0; k < l.size(); k++) {
                    Object v = literal(l.get(k), Diagnostic.ptr(ptr, k), depth + 1);
                    ok &= v != FAILED;
                    out.add(v);
                }
                return ok ? Collections.unmodifiableList(out) : FAILED;
            }
            if (j instanceof Map) {
                Map<?, ?> m = (Map<?, ?>) j;
                boolean ok = true;
                if (m instanceof Json.JObject && ((Json.JObject) m).duplicate != null) {
                    report("EXPRESSION_INVALID", ptr, "the member " + ((Json.JObject) m).duplicate + " is named twice");
                    ok = false;
                }
                Map<String, Object> out = new LinkedHashMap<>();
                for (Map.Entry<?, ?> e : m.entrySet()) {
                    Object v = literal(e.getValue(), Diagnostic.ptr(ptr, (String) e.getKey()), depth + 1);
                    ok &= v != FAILED;
                    out.put((String) e.getKey(), v);
                }
                return ok ? Collections.unmodifiableMap(out) : FAILED;
            }
            return j;
        }
    }

    /** A loaded top-level expression: its tree, frame size and the custom operators it reaches. */
    static final class Program {
        final Expr root;
        final int frameSize;
        final java.util.Set<String> operators;

        Program(Expr root, int frameSize, java.util.Set<String> operators) {
            this.root = root;
            this.frameSize = frameSize;
            this.operators = operators;
        }

        Object eval(Map<String, ?> env, Map<String, CustomOperator> ops, long budget) throws EvalError {
            return run(new Ctx(env, null, ops, frameSize, budget));
        }

        /** Evaluates with the rule layer's roots (data, original, actor, ctx, value, field by ROOTS index). */
        Object evalRoots(Object[] roots, Map<String, CustomOperator> ops, long budget) throws EvalError {
            return run(new Ctx(null, roots, ops, frameSize, budget));
        }

        private Object run(Ctx c) throws EvalError {
            try {
                return root.eval(c);
            } catch (Num.RangeException e) {
                throw EvalError.of(root.ptr, e.getMessage());
            } catch (StackOverflowError e) {
                throw new EvalError("EVALUATION_LIMIT", root.ptr, "the evaluation nested too deep");
            }
        }
    }
}
