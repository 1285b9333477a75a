package dev.sdods.rules;

import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import static dev.sdods.rules.Expr.*;

/** The 45 core operators of spec/v1/operators.md. */
final class Ops {
    private Ops() {}

    static EvalError mismatch(Op op, Object v) {
        return EvalError.of(op.ptr, op.name + ": a type mismatch (" + typeOf(v) + ")");
    }

    static String typeOf(Object v) {
        if (v == null) {
            return "null";
        }
        if (v instanceof Boolean) {
            return "boolean";
        }
        if (v instanceof Double) {
            return "number";
        }
        if (v instanceof String) {
            return "string";
        }
        if (v instanceof List) {
            return "array";
        }
        return "object";
    }

    /** A condition: true, false or null (false); anything else is a type mismatch. */
    static boolean cond(Op op, Object v) throws EvalError {
        if (v == Boolean.TRUE || (v instanceof Boolean && (Boolean) v)) {
            return true;
        }
        if (v == null || v instanceof Boolean) {
            return false;
        }
        throw EvalError.of(op.ptr, op.name + ": a condition is true, false or null, not " + typeOf(v));
    }

    static boolean container(Object v) {
        return v instanceof List || v instanceof Map;
    }

    /** Work units of a value, tree-counted, one per 64 characters of strings. */
    static long size(Object v) {
        if (v instanceof String) {
            return 1 + ((String) v).length() / 64;
        }
        if (v instanceof List) {
            long n = 1;
            for (Object e : (List<?>) v) {
                n += size(e);
            }
            return n;
        }
        if (v instanceof Map) {
            long n = 1;
            for (Map.Entry<?, ?> e : ((Map<?, ?>) v).entrySet()) {
                n += 1 + size(e.getValue());
            }
            return n;
        }
        return 1;
    }

    /**
     * A host value that is not a JSON value of the engine, and where it is: the JSON pointer
     * relative to the value handed over, built as the refusal unwinds.
     */
    static final class Refused extends IllegalArgumentException {
        private static final long serialVersionUID = 1L;
        private final StringBuilder where = new StringBuilder();

        Refused(String what) {
            super(what);
        }

        Refused at(String segment) {
            where.insert(0, Diagnostic.ptr("", segment));
            return this;
        }

        /** The pointer of the refused value under ptr. */
        String pointer(String ptr) {
            return ptr + where;
        }
    }

    /** Whether s is a sequence of Unicode scalar values: no lone surrogate (spec/v1/README.md, "Text"). */
    static boolean scalarValues(String s) {
        for (int k = 0, n = s.length(); k < n; k++) {
            char ch = s.charAt(k);
            if (Character.isSurrogate(ch)) {
                if (!Character.isHighSurrogate(ch) || k + 1 == n || !Character.isLowSurrogate(s.charAt(k + 1))) {
                    return false;
                }
                k++;
            }
        }
        return true;
    }

    /** A host value as a JSON value of the engine; {@link Refused} names what is not, and where. */
    static Object toJson(Object v, int depth) {
        if (depth > 10_000) {
            throw new Refused("a value nested too deep");
        }
        if (v == null || v instanceof Boolean) {
            return v;
        }
        if (v instanceof String) {
            if (!scalarValues((String) v)) {
                throw new Refused("a string that is not a sequence of Unicode scalar values (a lone surrogate)");
            }
            return v;
        }
        if (v instanceof Double || v instanceof Float || v instanceof Integer || v instanceof Long
            || v instanceof Short || v instanceof Byte || v instanceof BigDecimal || v instanceof java.math.BigInteger) {
            double d = ((Number) v).doubleValue();
            if (Double.isNaN(d) || Double.isInfinite(d)) {
                throw new Refused("a number that is not finite");
            }
            return d + 0.0;
        }
        if (v instanceof List) {
            List<Object> out = new ArrayList<>(((List<?>) v).size());
            int k = 0;
            for (Object e : (List<?>) v) {
                try {
                    out.add(toJson(e, depth + 1));
                } catch (Refused r) {
                    throw r.at(Integer.toString(k));
                }
                k++;
            }
            return out;
        }
        if (v instanceof Map) {
            Map<String, Object> out = new LinkedHashMap<>();
            for (Map.Entry<?, ?> e : ((Map<?, ?>) v).entrySet()) {
                if (!(e.getKey() instanceof String)) {
                    throw new Refused("an object with a member name that is not a string");
                }
                String k = (String) e.getKey();
                if (!scalarValues(k)) {
                    throw new Refused("a member name that is not a sequence of Unicode scalar values (a lone surrogate)").at(k);
                }
                try {
                    out.put(k, toJson(e.getValue(), depth + 1));
                } catch (Refused r) {
                    throw r.at(k);
                }
            }
            return out;
        }
        throw new Refused("a value of class " + v.getClass().getName() + ", not JSON");
    }

    static double num(Op op, Object v) throws EvalError {
        if (v instanceof Double) {
            return (Double) v;
        }
        throw mismatch(op, v);
    }

    static String str(Op op, Object v) throws EvalError {
        if (v instanceof String) {
            return (String) v;
        }
        throw mismatch(op, v);
    }

    static boolean integer(double d) {
        return d == Math.rint(d) && !Double.isInfinite(d);
    }

    static Object[] evalAll(Op op, Ctx c) throws EvalError {
        Expr[] a = op.args;
        Object[] v = new Object[a.length];
        for (int k = 0; k < a.length; k++) {
            v[k] = a[k].eval(c);
        }
        return v;
    }

    static int compare(Op op, Object a, Object b) throws EvalError {
        if (a instanceof Double && b instanceof Double) {
            return Double.compare((Double) a, (Double) b);
        }
        if (a instanceof String && b instanceof String) {
            return Diagnostic.compareCodePoints((String) a, (String) b);
        }
        throw mismatch(op, !(a instanceof Double || a instanceof String) ? a : b);
    }

    static Object apply(Op op, Ctx c) throws EvalError {
        try {
            return dispatch(op, c);
        } catch (Num.RangeException e) {
            throw EvalError.of(op.ptr, op.name + ": " + e.getMessage());
        }
    }

    private static Object dispatch(Op op, Ctx c) throws EvalError {
        Expr[] a = op.args;
        switch (op.code) {
            case EQ: case NE: {
                Object x = a[0].eval(c), y = a[1].eval(c);
                if (container(x) || container(y)) {
                    c.spend(size(x) + size(y), op.ptr); // the comparison may visit every value of both
                }
                boolean eq = Json.equal(x, y);
                return op.code == EQ ? eq : !eq;
            }
            case AND:
                for (Expr e : a) {
                    if (!cond(op, e.eval(c))) {
                        return false;
                    }
                }
                return true;
            case OR:
                for (Expr e : a) {
                    if (cond(op, e.eval(c))) {
                        return true;
                    }
                }
                return false;
            case NOT:
                return !cond(op, a[0].eval(c));
            case IF:
                for (int k = 0; k + 1 < a.length; k += 2) {
                    if (cond(op, a[k].eval(c))) {
                        return a[k + 1].eval(c);
                    }
                }
                return a[a.length - 1].eval(c);
            case COALESCE:
                for (Expr e : a) {
                    Object v = e.eval(c);
                    if (v != null) {
                        return v;
                    }
                }
                return null;
            case LITERAL:
                return null; // compiled to a constant
            case MAP: case FILTER: case SOME: case ALL:
                return iterate(op, c);
            case TYPEOF:
                return typeOf(a[0].eval(c));
            case ISEMPTY: {
                Object v = a[0].eval(c);
                return v == null || "".equals(v) || (v instanceof List && ((List<?>) v).isEmpty())
                    || (v instanceof Map && ((Map<?, ?>) v).isEmpty());
            }
            case ISDATE: {
                Object v = a[0].eval(c);
                return v instanceof String && Dates.parse((String) v) != null;
            }
            case CONTAINS: case IN: {
                Object x = a[0].eval(c), y = a[1].eval(c);
                return contains(op, c, op.code == CONTAINS ? x : y, op.code == CONTAINS ? y : x);
            }
            case MIN: case MAX:
                return minMax(op, evalAll(op, c));
            case SUM:
                return sum(op, a[0].eval(c));
            case MATCHES:
                return matches(op, c, a[0].eval(c), a[1].eval(c));
            default:
                break;
        }
        Object[] v = evalAll(op, c);
        if (op.nullResult != NullRule.NONE && NullRule.anyNull(v)) {
            return op.nullResult; // null decides: the other operands are not checked
        }
        switch (op.code) {
            case LT:
                return compare(op, v[0], v[1]) < 0;
            case LE:
                return compare(op, v[0], v[1]) <= 0;
            case GT:
                return compare(op, v[0], v[1]) > 0;
            case GE:
                return compare(op, v[0], v[1]) >= 0;
            case BETWEEN: {
                Object x = v[0], lo = v[1], hi = v[2];
                boolean nums = x instanceof Double && lo instanceof Double && hi instanceof Double;
                boolean strs = x instanceof String && lo instanceof String && hi instanceof String;
                if (!nums && !strs) {
                    throw EvalError.of(op.ptr, "between: a type mismatch (" + typeOf(x) + ", " + typeOf(lo) + ", " + typeOf(hi) + ")");
                }
                return compare(op, lo, x) <= 0 && compare(op, x, hi) <= 0;
            }
            case ADD:
                return add(op, v);
            case SUB:
                if (v.length == 1) {
                    return Num.result(Num.canonical(num(op, v[0])).negate()); // decimal too: -(1.7976931348623157e308) is beyond range
                }
                return Num.sub(num(op, v[0]), num(op, v[1]));
            case MUL:
                return mul(op, v);
            case DIV: {
                double x = num(op, v[0]), y = num(op, v[1]);
                return Num.div(x, y);
            }
            case MOD: {
                double x = num(op, v[0]), y = num(op, v[1]);
                return Num.mod(x, y);
            }
            case ABS:
                return Math.abs(num(op, v[0])) + 0.0;
            case ROUND: {
                double x = num(op, v[0]);
                int places = 0;
                if (v.length == 2) {
                    double p = num(op, v[1]);
                    if (!integer(p) || p < -15 || p > 15) {
                        throw EvalError.of(op.ptr, "round: places is an integer from -15 to 15");
                    }
                    places = (int) p;
                }
                return Num.round(x, places);
            }
            case UPPER: case LOWER: {
                String s = str(op, v[0]);
                c.spend(s.length() / 64, op.ptr);
                return ascii(s, op.code == UPPER);
            }
            case TRIM: {
                String s = str(op, v[0]);
                int i = 0, j = s.length();
                while (i < j && asciiSpace(s.charAt(i))) {
                    i++;
                }
                while (j > i && asciiSpace(s.charAt(j - 1))) {
                    j--;
                }
                return s.substring(i, j);
            }
            case CONCAT:
                return concat(op, c, v);
            case SUBSTRING:
                return substring(op, v);
            case TEXT: {
                Object x = v[0];
                if (x instanceof String) {
                    return x;
                }
                if (x instanceof Double) {
                    return Num.text((Double) x);
                }
                if (x instanceof Boolean) {
                    return x.toString();
                }
                throw mismatch(op, x);
            }
            case STARTS: case ENDS: {
                String s = str(op, v[0]), p = str(op, v[1]);
                return op.code == STARTS ? s.startsWith(p) : s.endsWith(p);
            }
            case LENGTH: {
                Object x = v[0];
                if (x instanceof String) {
                    String s = (String) x;
                    return (double) s.codePointCount(0, s.length());
                }
                if (x instanceof List) {
                    return (double) ((List<?>) x).size();
                }
                if (x instanceof Map) {
                    return (double) ((Map<?, ?>) x).size();
                }
                throw mismatch(op, x);
            }
            case YEARS: case DAYS: {
                Dates.D x = date(op, v[0]), y = date(op, v[1]);
                return (double) (op.code == YEARS ? Dates.yearsBetween(x, y) : Dates.daysBetween(x, y));
            }
            case DATEADD: {
                Dates.D d = date(op, v[0]);
                double n = num(op, v[1]);
                String unit = str(op, v[2]);
                if (!integer(n) || Math.abs(n) > 10_000_000) {
                    throw EvalError.of(op.ptr, "dateAdd: the amount is an integer from -10000000 to 10000000");
                }
                if (!unit.equals("days") && !unit.equals("months") && !unit.equals("years")) {
                    throw EvalError.of(op.ptr, "dateAdd: the unit is days, months or years");
                }
                String out = Dates.add(d, (long) n, unit);
                if (out == null) {
                    throw EvalError.of(op.ptr, "dateAdd: the result is outside the years 0001 to 9999");
                }
                return out;
            }
            default:
                throw new IllegalStateException("operator " + op.name);
        }
    }

    static Dates.D date(Op op, Object v) throws EvalError {
        Dates.D d = Dates.parse(str(op, v));
        if (d == null) {
            throw EvalError.of(op.ptr, op.name + ": " + Json.write(v) + " is not a date or date-time");
        }
        return d;
    }

    static boolean asciiSpace(char ch) {
        return ch == ' ' || (ch >= '\t' && ch <= '\r');
    }

    static String ascii(String s, boolean upper) {
        char lo = upper ? 'a' : 'A', hi = upper ? 'z' : 'Z';
        int k = 0;
        while (k < s.length() && (s.charAt(k) < lo || s.charAt(k) > hi)) {
            k++;
        }
        if (k == s.length()) {
            return s;
        }
        char[] cs = s.toCharArray();
        for (; k < cs.length; k++) {
            if (cs[k] >= lo && cs[k] <= hi) {
                cs[k] = (char) (cs[k] ^ 0x20);
            }
        }
        return new String(cs);
    }

    static Object add(Op op, Object[] v) throws EvalError {
        double acc = num(op, v[0]);
        if (v.length == 2) {
            return Num.add(acc, num(op, v[1]));
        }
        for (int k = 1; k < v.length; k++) {
            num(op, v[k]);
        }
        BigDecimal s = Num.canonical(acc);
        for (int k = 1; k < v.length; k++) {
            s = s.add(Num.canonical((Double) v[k]));
        }
        return Num.result(s);
    }

    static Object mul(Op op, Object[] v) throws EvalError {
        double first = num(op, v[0]);
        if (v.length == 2) {
            return Num.mul(first, num(op, v[1]));
        }
        for (int k = 1; k < v.length; k++) {
            num(op, v[k]);
        }
        BigDecimal p = Num.canonical(first);
        for (int k = 1; k < v.length; k++) {
            p = p.multiply(Num.canonical((Double) v[k]));
        }
        return Num.result(p);
    }

    static Object minMax(Op op, Object[] v) throws EvalError {
        // one array: its elements are the operands (operators.md, "Null arguments")
        List<?> operands = v.length == 1 && v[0] instanceof List ? (List<?>) v[0] : java.util.Arrays.asList(v);
        if (NullRule.anyNull(operands)) {
            return op.nullResult;
        }
        if (operands.isEmpty()) {
            return null;
        }
        double best = 0;
        boolean first = true;
        for (Object o : operands) {
            double d = num(op, o);
            if (first || (op.code == MIN ? d < best : d > best)) {
                best = d;
            }
            first = false;
        }
        return best;
    }

    static Object sum(Op op, Object x) throws EvalError {
        if (x == null) {
            return op.nullResult;
        }
        if (!(x instanceof List)) {
            throw mismatch(op, x);
        }
        List<?> l = (List<?>) x;
        if (NullRule.anyNull(l)) {
            return op.nullResult; // the elements are the operands: a null one decides
        }
        boolean ints = true;
        double acc = 0;
        for (Object o : l) {
            double d = num(op, o);
            ints &= Num.smallInt(d);
            acc += d;
            ints &= Math.abs(acc) < 9007199254740992.0; // every partial sum exact
        }
        if (ints && Math.abs(acc) < 1e15) {
            return acc + 0.0;
        }
        BigDecimal s = BigDecimal.ZERO;
        for (Object o : l) {
            s = s.add(Num.canonical((Double) o));
        }
        return Num.result(s);
    }

    static Object concat(Op op, Ctx c, Object[] v) throws EvalError {
        if (v[0] instanceof String) {
            StringBuilder b = new StringBuilder();
            for (Object o : v) {
                b.append(str(op, o));
            }
            c.spend(b.length() / 64, op.ptr);
            return b.toString();
        }
        if (v[0] instanceof List) {
            int n = 0;
            for (Object o : v) {
                if (!(o instanceof List)) {
                    throw mismatch(op, o);
                }
                n += ((List<?>) o).size();
            }
            c.spend(n, op.ptr);
            List<Object> out = new ArrayList<>(n);
            for (Object o : v) {
                out.addAll((List<?>) o);
            }
            return out;
        }
        throw mismatch(op, v[0]);
    }

    static Object substring(Op op, Object[] v) throws EvalError {
        String s = str(op, v[0]);
        // start within ±10^15 and length within 0–10^15 (operators.md, substring)
        double start = num(op, v[1]);
        if (!integer(start) || Math.abs(start) > 1e15) {
            throw EvalError.of(op.ptr, "substring: start is an integer from -1000000000000000 to 1000000000000000");
        }
        double length = -1;
        if (v.length == 3) {
            length = num(op, v[2]);
            if (!integer(length) || length < 0 || length > 1e15) {
                throw EvalError.of(op.ptr, "substring: length is an integer from 0 to 1000000000000000");
            }
        }
        int n = s.codePointCount(0, s.length());
        double from = start < 0 ? Math.max(0, n + start) : start;
        if (from >= n) {
            return "";
        }
        int f = (int) from;
        int to = v.length == 3 ? (int) Math.min(n, from + length) : n;
        int i = s.offsetByCodePoints(0, f);
        int j = s.offsetByCodePoints(i, to - f);
        return s.substring(i, j);
    }

    /**
     * matches is strict: a null subject or pattern is false before anything is checked; then the
     * pattern (type, portability; a constant one was checked at load), the subject (type, length).
     */
    static Object matches(Op op, Ctx c, Object subject, Object pattern) throws EvalError {
        if (subject == null || pattern == null) {
            return op.nullResult;
        }
        Pattern pat = op.pattern;
        if (pat == null) {
            String p = str(op, pattern);
            try {
                pat = Pattern.compile(p);
            } catch (Pattern.NotPortable e) {
                throw EvalError.of(op.ptr, "matches: the pattern is outside the portable subset: " + e.getMessage());
            }
        }
        String s = str(op, subject);
        int n = s.codePointCount(0, s.length());
        if (n > Pattern.MAX_SUBJECT) {
            throw EvalError.of(op.ptr, "matches: the subject is longer than 10000 code points");
        }
        c.spend(1 + n / 64, op.ptr);
        return pat.matches(s, n);
    }

    /**
     * contains(container, item), in(item, container) (operators.md, "Null arguments" (c)):
     * container null is false; an array holds item when an element equals it (null included);
     * otherwise item null is false; otherwise both are strings.
     */
    static Object contains(Op op, Ctx c, Object container, Object item) throws EvalError {
        if (container == null) {
            return false;
        }
        if (container instanceof List) {
            List<?> l = (List<?>) container;
            c.spend(container(item) ? size(container) + size(item) : 1 + l.size(), op.ptr);
            for (Object e : l) {
                if (Json.equal(e, item)) {
                    return true;
                }
            }
            return false;
        }
        if (item == null) {
            return false;
        }
        if (!(container instanceof String)) {
            throw mismatch(op, container);
        }
        if (!(item instanceof String)) {
            throw mismatch(op, item);
        }
        return ((String) container).contains((String) item);
    }

    static Object iterate(Op op, Ctx c) throws EvalError {
        Object arr = op.args[0].eval(c);
        if (arr == null) {
            // not strict: the body never runs; map and filter give null, some and all false
            return op.code == MAP || op.code == FILTER ? null : Boolean.FALSE;
        }
        if (!(arr instanceof List)) {
            throw mismatch(op, arr);
        }
        List<?> l = (List<?>) arr;
        Expr body = op.args[1];
        Object[] frame = c.frame;
        int slot = op.slot;
        switch (op.code) {
            case MAP: {
                List<Object> out = new ArrayList<>(l.size());
                for (Object e : l) {
                    c.spend(1, op.ptr);
                    frame[slot] = e;
                    out.add(body.eval(c));
                }
                return out;
            }
            case FILTER: {
                List<Object> out = new ArrayList<>();
                for (Object e : l) {
                    c.spend(1, op.ptr);
                    frame[slot] = e;
                    if (cond(op, body.eval(c))) {
                        out.add(e);
                    }
                }
                return out;
            }
            case SOME:
                for (Object e : l) {
                    c.spend(1, op.ptr);
                    frame[slot] = e;
                    if (cond(op, body.eval(c))) {
                        return true;
                    }
                }
                return false;
            default: // ALL
                for (Object e : l) {
                    c.spend(1, op.ptr);
                    frame[slot] = e;
                    if (!cond(op, body.eval(c))) {
                        return false;
                    }
                }
                return true;
        }
    }
}
