package dev.sdods.rules;

import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The runtime's own JSON (RFC 8259): a strict parser and the writers the engine needs. Values are
 * {@code null}, {@link Boolean}, {@link Double}, {@link String}, {@link List} and {@link Map}
 * (insertion-ordered). The parser never silently picks one of two members of the same name: the
 * object remembers the first repeated name ({@link JObject#duplicate()}), and each reader refuses it
 * with its own code. A number beyond double range is kept as an {@link OutOfRange} marker for the
 * same reason (NUMBER_OUT_OF_RANGE in an expression, BAD_REQUEST in a request).
 */
public final class Json {
    private Json() {}

    /** Deepest nesting the parser accepts; far above every limit of the specification. */
    static final int MAX_PARSE_DEPTH = 10_000;

    /** A JSON object as parsed: members in document order, and the first name given twice. */
    public static final class JObject extends LinkedHashMap<String, Object> {
        private static final long serialVersionUID = 1L;
        String duplicate;

        public JObject() {}

        public JObject(int n) {
            super(Math.max(4, n * 2));
        }

        /** The first member name that appeared more than once in the text, or null. */
        public String duplicate() {
            return duplicate;
        }
    }

    /** A number literal whose nearest double is infinite. */
    public static final class OutOfRange {
        final String text;

        OutOfRange(String text) {
            this.text = text;
        }

        @Override
        public String toString() {
            return text;
        }
    }

    /** Malformed JSON text. */
    public static final class SyntaxException extends Exception {
        private static final long serialVersionUID = 1L;

        SyntaxException(String message) {
            super(message);
        }
    }

    /**
     * Decodes well-formed UTF-8 (RFC 3629). Text that is not — an invalid or truncated sequence,
     * an overlong form, an encoded surrogate, beyond U+10FFFF — is malformed JSON, never repaired
     * into U+FFFD (spec/v1/README.md, "Text").
     */
    public static String utf8(byte[] b) throws SyntaxException {
        String s = new String(b, StandardCharsets.UTF_8); // the fast decoder replaces; U+FFFD is rare
        if (s.indexOf('\uFFFD') < 0) {
            return s;
        }
        try {
            return StandardCharsets.UTF_8.newDecoder()
                .onMalformedInput(CodingErrorAction.REPORT)
                .onUnmappableCharacter(CodingErrorAction.REPORT)
                .decode(ByteBuffer.wrap(b)).toString();
        } catch (CharacterCodingException e) {
            throw new SyntaxException("the text is not well-formed UTF-8");
        }
    }

    public static Object parse(byte[] text) throws SyntaxException {
        return parse(utf8(text));
    }

    public static Object parse(String text) throws SyntaxException {
        Parser p = new Parser(text);
        p.ws();
        Object v;
        try {
            v = p.value(0);
        } catch (StackOverflowError e) {
            // a thread with a small stack: refused like any text nested too deep
            throw new SyntaxException("nested too deep for this thread's stack");
        }
        p.ws();
        if (p.i != text.length()) {
            throw new SyntaxException("unexpected data after the JSON value at offset " + p.i);
        }
        return v;
    }

    private static final class Parser {
        final String s;
        int i;
        final StringBuilder sb = new StringBuilder();

        Parser(String s) {
            this.s = s;
        }

        void ws() {
            while (i < s.length()) {
                char c = s.charAt(i);
                if (c != ' ' && c != '\t' && c != '\n' && c != '\r') {
                    return;
                }
                i++;
            }
        }

        SyntaxException err(String what) {
            return new SyntaxException(what + " at offset " + i);
        }

        Object value(int depth) throws SyntaxException {
            if (i >= s.length()) {
                throw err("unexpected end of JSON text");
            }
            char c = s.charAt(i);
            switch (c) {
                case '{':
                    return object(depth + 1);
                case '[':
                    return array(depth + 1);
                case '"':
                    return string();
                case 't':
                    return word("true", Boolean.TRUE);
                case 'f':
                    return word("false", Boolean.FALSE);
                case 'n':
                    return word("null", null);
                default:
                    if (c == '-' || (c >= '0' && c <= '9')) {
                        return number();
                    }
                    throw err("unexpected character " + describe(c));
            }
        }

        static String describe(char c) {
            return c < 0x20 ? String.format("U+%04X", (int) c) : "'" + c + "'";
        }

        Object word(String w, Object v) throws SyntaxException {
            if (!s.startsWith(w, i)) {
                throw err("invalid literal");
            }
            i += w.length();
            return v;
        }

        Object object(int depth) throws SyntaxException {
            if (depth > MAX_PARSE_DEPTH) {
                throw err("nested too deep");
            }
            i++;
            JObject o = new JObject();
            ws();
            if (i < s.length() && s.charAt(i) == '}') {
                i++;
                return o;
            }
            while (true) {
                ws();
                if (i >= s.length() || s.charAt(i) != '"') {
                    throw err("expected a member name");
                }
                String k = string();
                ws();
                if (i >= s.length() || s.charAt(i) != ':') {
                    throw err("expected ':'");
                }
                i++;
                ws();
                Object v = value(depth);
                if (o.containsKey(k)) {
                    if (o.duplicate == null) {
                        o.duplicate = k;
                    }
                } else {
                    o.put(k, v);
                }
                ws();
                if (i >= s.length()) {
                    throw err("unexpected end of JSON text");
                }
                char c = s.charAt(i++);
                if (c == '}') {
                    return o;
                }
                if (c != ',') {
                    i--;
                    throw err("expected ',' or '}'");
                }
            }
        }

        Object array(int depth) throws SyntaxException {
            if (depth > MAX_PARSE_DEPTH) {
                throw err("nested too deep");
            }
            i++;
            List<Object> a = new ArrayList<>();
            ws();
            if (i < s.length() && s.charAt(i) == ']') {
                i++;
                return a;
            }
            while (true) {
                ws();
                a.add(value(depth));
                ws();
                if (i >= s.length()) {
                    throw err("unexpected end of JSON text");
                }
                char c = s.charAt(i++);
                if (c == ']') {
                    return a;
                }
                if (c != ',') {
                    i--;
                    throw err("expected ',' or ']'");
                }
            }
        }

        String string() throws SyntaxException {
            int start = ++i;
            // fast path: no escapes, no surrogates to pair
            while (i < s.length()) {
                char c = s.charAt(i);
                if (c == '"') {
                    return s.substring(start, i++);
                }
                if (c == '\\' || c < 0x20 || Character.isSurrogate(c)) {
                    break;
                }
                i++;
            }
            sb.setLength(0);
            sb.append(s, start, i);
            while (true) {
                if (i >= s.length()) {
                    throw err("unterminated string");
                }
                char c = s.charAt(i);
                if (c == '"') {
                    i++;
                    return sb.toString();
                }
                if (c < 0x20) {
                    throw err("control character in a string");
                }
                if (c == '\\') {
                    i++;
                    if (i >= s.length()) {
                        throw err("unterminated string");
                    }
                    char e = s.charAt(i++);
                    switch (e) {
                        case '"': sb.append('"'); break;
                        case '\\': sb.append('\\'); break;
                        case '/': sb.append('/'); break;
                        case 'b': sb.append('\b'); break;
                        case 'f': sb.append('\f'); break;
                        case 'n': sb.append('\n'); break;
                        case 'r': sb.append('\r'); break;
                        case 't': sb.append('\t'); break;
                        case 'u': {
                            // a lone surrogate escape makes the text malformed (README.md, "Text")
                            char u = hex4();
                            if (Character.isHighSurrogate(u)) {
                                if (!s.startsWith("\\u", i)) {
                                    throw err("a lone surrogate escape");
                                }
                                i += 2;
                                char lo = hex4();
                                if (!Character.isLowSurrogate(lo)) {
                                    throw err("a lone surrogate escape");
                                }
                                sb.append(u).append(lo);
                            } else if (Character.isLowSurrogate(u)) {
                                throw err("a lone surrogate escape");
                            } else {
                                sb.append(u);
                            }
                            break;
                        }
                        default:
                            i--;
                            throw err("invalid escape");
                    }
                    continue;
                }
                if (Character.isHighSurrogate(c) && i + 1 < s.length() && Character.isLowSurrogate(s.charAt(i + 1))) {
                    sb.append(c).append(s.charAt(i + 1));
                    i += 2;
                    continue;
                }
                if (Character.isSurrogate(c)) {
                    // a text given as a Java string holding a lone surrogate is no UTF-8 text
                    throw err("a lone surrogate");
                }
                sb.append(c);
                i++;
            }
        }

        char hex4() throws SyntaxException {
            if (i + 4 > s.length()) {
                throw err("invalid \\u escape");
            }
            int v = 0;
            for (int k = 0; k < 4; k++) {
                int d = Character.digit(s.charAt(i + k), 16);
                if (d < 0 || s.charAt(i + k) > 'f') {
                    throw err("invalid \\u escape");
                }
                v = v * 16 + d;
            }
            i += 4;
            return (char) v;
        }

        Object number() throws SyntaxException {
            int start = i;
            if (s.charAt(i) == '-') {
                i++;
            }
            if (i >= s.length()) {
                throw err("invalid number");
            }
            char c = s.charAt(i);
            boolean simple = true;
            if (c == '0') {
                i++;
            } else if (c >= '1' && c <= '9') {
                while (i < s.length() && isDigit(s.charAt(i))) {
                    i++;
                }
            } else {
                throw err("invalid number");
            }
            if (i < s.length() && s.charAt(i) == '.') {
                simple = false;
                i++;
                int d = i;
                while (i < s.length() && isDigit(s.charAt(i))) {
                    i++;
                }
                if (i == d) {
                    throw err("invalid number");
                }
            }
            if (i < s.length() && (s.charAt(i) == 'e' || s.charAt(i) == 'E')) {
                simple = false;
                i++;
                if (i < s.length() && (s.charAt(i) == '+' || s.charAt(i) == '-')) {
                    i++;
                }
                int d = i;
                while (i < s.length() && isDigit(s.charAt(i))) {
                    i++;
                }
                if (i == d) {
                    throw err("invalid number");
                }
            }
            if (simple && i - start <= 15) {
                long v = Long.parseLong(s, start, i, 10);
                return v == 0 ? 0.0 : (double) v;
            }
            String t = s.substring(start, i);
            double d = Double.parseDouble(t); // correctly rounded, ties to even
            if (Double.isInfinite(d)) {
                return new OutOfRange(t);
            }
            return d == 0 ? 0.0 : d;
        }

        static boolean isDigit(char c) {
            return c >= '0' && c <= '9';
        }
    }

    // ---- writing ----

    /** Writes v compactly, members in their order, numbers in canonical form (numbers.md §4). */
    public static String write(Object v) {
        StringBuilder b = new StringBuilder();
        write(b, v, false);
        return b.toString();
    }

    /** Writes v by RFC 8785 (sorted members, shortest round-trip numbers), compact. */
    public static String canonical(Object v) {
        StringBuilder b = new StringBuilder();
        jcs(b, v, null, 0);
        return b.toString();
    }

    /** Writes v by RFC 8785 order and numbers, indented by two spaces, with a final newline. */
    public static String indented(Object v) {
        StringBuilder b = new StringBuilder();
        jcs(b, v, "  ", 0);
        return b.append('\n').toString();
    }

    static void write(StringBuilder b, Object v, boolean sorted) {
        if (v == null) {
            b.append("null");
        } else if (v instanceof Boolean) {
            b.append(((Boolean) v) ? "true" : "false");
        } else if (v instanceof Double) {
            b.append(Num.text((Double) v));
        } else if (v instanceof String) {
            string(b, (String) v);
        } else if (v instanceof List) {
            b.append('[');
            boolean first = true;
            for (Object e : (List<?>) v) {
                if (!first) {
                    b.append(',');
                }
                first = false;
                write(b, e, sorted);
            }
            b.append(']');
        } else if (v instanceof Map) {
            b.append('{');
            boolean first = true;
            Map<?, ?> m = (Map<?, ?>) v;
            Iterable<?> keys = m.keySet();
            if (sorted) {
                String[] ks = m.keySet().toArray(new String[0]);
                Arrays.sort(ks);
                keys = Arrays.asList(ks);
            }
            for (Object k : keys) {
                if (!first) {
                    b.append(',');
                }
                first = false;
                string(b, (String) k);
                b.append(':');
                write(b, m.get(k), sorted);
            }
            b.append('}');
        } else if (v instanceof OutOfRange) {
            b.append(((OutOfRange) v).text);
        } else {
            throw new IllegalArgumentException("not a JSON value: " + v.getClass().getName());
        }
    }

    private static void newline(StringBuilder b, String indent, int depth) {
        if (indent == null) {
            return;
        }
        b.append('\n');
        for (int k = 0; k < depth; k++) {
            b.append(indent);
        }
    }

    static void jcs(StringBuilder b, Object v, String indent, int depth) {
        if (v instanceof Double) {
            b.append(Num.shortest((Double) v));
        } else if (v instanceof List) {
            List<?> l = (List<?>) v;
            if (l.isEmpty()) {
                b.append("[]");
                return;
            }
            b.append('[');
            for (int k = 0; k < l.size(); k++) {
                if (k > 0) {
                    b.append(',');
                }
                newline(b, indent, depth + 1);
                jcs(b, l.get(k), indent, depth + 1);
            }
            newline(b, indent, depth);
            b.append(']');
        } else if (v instanceof Map) {
            Map<?, ?> m = (Map<?, ?>) v;
            if (m.isEmpty()) {
                b.append("{}");
                return;
            }
            String[] ks = m.keySet().toArray(new String[0]);
            Arrays.sort(ks); // String order is UTF-16 code unit order, as RFC 8785 sorts
            b.append('{');
            for (int k = 0; k < ks.length; k++) {
                if (k > 0) {
                    b.append(',');
                }
                newline(b, indent, depth + 1);
                string(b, ks[k]);
                b.append(indent == null ? ":" : ": ");
                jcs(b, m.get(ks[k]), indent, depth + 1);
            }
            newline(b, indent, depth);
            b.append('}');
        } else {
            write(b, v, true);
        }
    }

    private static final char[] HEX = "0123456789abcdef".toCharArray();

    static void string(StringBuilder b, String s) {
        b.append('"');
        int start = 0;
        for (int k = 0; k < s.length(); k++) {
            char c = s.charAt(k);
            if (c >= 0x20 && c != '"' && c != '\\') {
                continue;
            }
            b.append(s, start, k);
            start = k + 1;
            switch (c) {
                case '"': b.append("\\\""); break;
                case '\\': b.append("\\\\"); break;
                case '\b': b.append("\\b"); break;
                case '\t': b.append("\\t"); break;
                case '\n': b.append("\\n"); break;
                case '\f': b.append("\\f"); break;
                case '\r': b.append("\\r"); break;
                default: b.append("\\u00").append(HEX[c >> 4]).append(HEX[c & 0xf]);
            }
        }
        b.append(s, start, s.length());
        b.append('"');
    }

    /** Nesting depth: a scalar 0, [] and {} 1, {"a":[1]} 2. */
    static int depth(Object v) {
        if (v instanceof List) {
            int d = 0;
            for (Object e : (List<?>) v) {
                d = Math.max(d, depth(e));
            }
            return d + 1;
        }
        if (v instanceof Map) {
            int d = 0;
            for (Object e : ((Map<?, ?>) v).values()) {
                d = Math.max(d, depth(e));
            }
            return d + 1;
        }
        return 0;
    }

    /** Deep JSON equality: numbers by their doubles, objects regardless of order. */
    static boolean equal(Object a, Object b) {
        if (a == null || b == null) {
            return a == b;
        }
        if (a instanceof Double) {
            return b instanceof Double && ((Double) a).doubleValue() == ((Double) b).doubleValue();
        }
        if (a instanceof String || a instanceof Boolean) {
            return a.equals(b);
        }
        if (a instanceof List) {
            if (!(b instanceof List)) {
                return false;
            }
            List<?> x = (List<?>) a, y = (List<?>) b;
            if (x.size() != y.size()) {
                return false;
            }
            for (int k = 0; k < x.size(); k++) {
                if (!equal(x.get(k), y.get(k))) {
                    return false;
                }
            }
            return true;
        }
        if (a instanceof Map) {
            if (!(b instanceof Map)) {
                return false;
            }
            Map<?, ?> x = (Map<?, ?>) a, y = (Map<?, ?>) b;
            if (x.size() != y.size()) {
                return false;
            }
            for (Map.Entry<?, ?> e : x.entrySet()) {
                if (!y.containsKey(e.getKey()) || !equal(e.getValue(), y.get(e.getKey()))) {
                    return false;
                }
            }
            return true;
        }
        return false;
    }
}
