package dev.sdods.rules;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/** One problem: a stable code, an RFC 6901 pointer and a message for people (spec/v1/errors.md). */
public final class Diagnostic {
    private final String code;
    private final String pointer;
    private final String message;

    public Diagnostic(String code, String pointer, String message) {
        this.code = code;
        this.pointer = pointer;
        this.message = message;
    }

    public String code() {
        return code;
    }

    public String pointer() {
        return pointer;
    }

    public String message() {
        return message;
    }

    @Override
    public String toString() {
        return code + " at \"" + pointer + "\": " + message;
    }

    /** Appends a member name to a pointer, escaped by RFC 6901. */
    static String ptr(String base, String token) {
        return base + "/" + token.replace("~", "~0").replace("/", "~1");
    }

    static String ptr(String base, int index) {
        return base + "/" + index;
    }

    private static List<String> tokens(String p) {
        List<String> out = new ArrayList<>();
        if (p.isEmpty()) {
            return out;
        }
        int k = 1;
        while (true) {
            int next = p.indexOf('/', k);
            if (next < 0) {
                out.add(p.substring(k));
                return out;
            }
            out.add(p.substring(k, next));
            k = next + 1;
        }
    }

    private static boolean index(String t) {
        if (t.isEmpty()) {
            return false;
        }
        for (int k = 0; k < t.length(); k++) {
            if (t.charAt(k) < '0' || t.charAt(k) > '9') {
                return false;
            }
        }
        return true;
    }

    /** Code point order of two strings (not UTF-16 order). */
    static int compareCodePoints(String a, String b) {
        int n = Math.min(a.length(), b.length());
        for (int k = 0; k < n; k++) {
            char x = a.charAt(k), y = b.charAt(k);
            if (x != y) {
                if (x >= 0xD800 && y >= 0xD800) {
                    // surrogates (astral code points) sort after U+E000–U+FFFF in code point order
                    x = (char) (Character.isSurrogate(x) ? x + 0x2000 : x - 0x800);
                    y = (char) (Character.isSurrogate(y) ? y + 0x2000 : y - 0x800);
                }
                return x - y;
            }
        }
        return a.length() - b.length();
    }

    /** Pointer order of errors.md: tokens compared as numbers when both are indexes, else by code points. */
    static final Comparator<String> POINTER_ORDER = (a, b) -> {
        List<String> x = tokens(a), y = tokens(b);
        for (int k = 0; k < Math.min(x.size(), y.size()); k++) {
            String s = x.get(k), t = y.get(k);
            if (s.equals(t)) {
                continue;
            }
            if (index(s) && index(t)) {
                int c = new java.math.BigInteger(s).compareTo(new java.math.BigInteger(t));
                if (c != 0) {
                    return c;
                }
                continue;
            }
            return compareCodePoints(s, t);
        }
        return Integer.compare(x.size(), y.size());
    };

    /** Sorts diagnostics by pointer, stable for diagnostics at the same pointer. */
    static void sort(List<Diagnostic> ds) {
        ds.sort((d, e) -> POINTER_ORDER.compare(d.pointer, e.pointer));
    }
}
