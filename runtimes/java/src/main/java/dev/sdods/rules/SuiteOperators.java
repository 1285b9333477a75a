package dev.sdods.rules;

import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The three custom operators of the conformance suite (spec/v1/expressions.md §6), which every
 * engine under certification registers: {@code x-test-reverse}, {@code x-test-sum}, {@code x-luhn}.
 */
public final class SuiteOperators {
    private SuiteOperators() {}

    /** The three operators by name. */
    public static Map<String, CustomOperator> all() {
        Map<String, CustomOperator> m = new TreeMap<>();
        m.put("x-luhn", SuiteOperators::luhn);
        m.put("x-test-reverse", SuiteOperators::reverse);
        m.put("x-test-sum", SuiteOperators::sum);
        return Collections.unmodifiableMap(m);
    }

    static Object reverse(List<Object> args) {
        Object v = args.isEmpty() ? null : args.get(0);
        if (args.size() != 1) {
            throw new IllegalArgumentException("x-test-reverse takes one argument");
        }
        if (v == null) {
            return null;
        }
        if (v instanceof String) {
            int[] cps = ((String) v).codePoints().toArray();
            StringBuilder b = new StringBuilder();
            for (int k = cps.length - 1; k >= 0; k--) {
                b.appendCodePoint(cps[k]);
            }
            return b.toString();
        }
        if (v instanceof List) {
            List<Object> out = new ArrayList<>((List<?>) v);
            Collections.reverse(out);
            return out;
        }
        throw new IllegalArgumentException("x-test-reverse reverses a string or an array");
    }

    static Object sum(List<Object> args) {
        BigDecimal s = BigDecimal.ZERO;
        for (Object a : args) {
            if (!(a instanceof Double)) {
                throw new IllegalArgumentException("x-test-sum adds numbers");
            }
            s = s.add(Num.canonical((Double) a));
        }
        return Num.result(s);
    }

    static Object luhn(List<Object> args) {
        if (args.size() != 1) {
            throw new IllegalArgumentException("x-luhn takes one argument");
        }
        Object v = args.get(0);
        if (v == null) {
            return false;
        }
        if (!(v instanceof String)) {
            throw new IllegalArgumentException("x-luhn checks a string");
        }
        String s = (String) v;
        if (s.length() < 2) {
            return false;
        }
        int total = 0;
        for (int k = 0; k < s.length(); k++) {
            char c = s.charAt(s.length() - 1 - k);
            if (c < '0' || c > '9') {
                return false;
            }
            int d = c - '0';
            if (k % 2 == 1) {
                d *= 2;
                if (d > 9) {
                    d -= 9;
                }
            }
            total += d;
        }
        return total % 10 == 0;
    }
}
