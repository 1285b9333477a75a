package dev.sdods.rules;

import java.math.BigDecimal;
import java.math.MathContext;
import java.math.RoundingMode;

/**
 * The number model of spec/v1/numbers.md: canonical decimals (15 significant digits, ties to even),
 * decimal arithmetic rounded once, the canonical text and RFC 8785's shortest text.
 */
final class Num {
    private Num() {}

    static final MathContext MC15 = new MathContext(15, RoundingMode.HALF_EVEN);
    private static final double TWO53 = 9007199254740992.0;
    private static final double E15 = 1e15;

    /** A number that cannot be a value or leave the engine: beyond double range. */
    static final class RangeException extends RuntimeException {
        private static final long serialVersionUID = 1L;

        RangeException(String m) {
            super(m, null, false, false);
        }
    }

    private static final double[] POW10 = new double[23];
    private static final long[] LPOW10 = new long[19];

    static {
        double d = 1;
        for (int k = 0; k < POW10.length; k++) {
            POW10[k] = d;
            d *= 10;
        }
        long l = 1;
        for (int k = 0; k < LPOW10.length; k++) {
            LPOW10[k] = l;
            l *= 10;
        }
    }

    /**
     * The fast path of most numbers: the scale p (0 to 15) such that x is the double nearest to
     * m × 10^-p for an integer |m| < 10^15, or -1. Such a decimal has at most 15 significant
     * digits, so it is x's canonical decimal (numbers.md §3: canonical numbers are exact).
     * m / 10^p is one correctly rounded division (both exact doubles), so the test is exact.
     */
    static int scale(double x) {
        for (int p = 0; p <= 15; p++) {
            double m = Math.rint(x * POW10[p]);
            if (Math.abs(m) >= E15) {
                return -1;
            }
            if (m / POW10[p] == x) {
                return p;
            }
        }
        return -1;
    }

    /** m of scale(x) = p. */
    private static long unscaled(double x, int p) {
        return (long) Math.rint(x * POW10[p]);
    }

    /** The canonical decimal of x: its exact value rounded to 15 significant digits, ties to even. */
    static BigDecimal canonical(double x) {
        if (x == Math.rint(x) && Math.abs(x) < E15) {
            return BigDecimal.valueOf((long) x);
        }
        int p = scale(x);
        if (p >= 0) {
            return BigDecimal.valueOf(unscaled(x, p), p);
        }
        return new BigDecimal(x).round(MC15);
    }

    /** The double nearest to d; beyond double range is an evaluation error. */
    static double toDouble(BigDecimal d) {
        double r = d.doubleValue();
        if (Double.isInfinite(r)) {
            throw new RangeException("the result is beyond the range of a double");
        }
        return r + 0.0; // never negative zero
    }

    /** The result of exact decimal arithmetic, rounded once to 15 digits. */
    static double result(BigDecimal exact) {
        return toDouble(exact.round(MC15));
    }

    static boolean smallInt(double x) {
        return x == Math.rint(x) && Math.abs(x) < TWO53;
    }

    static double add(double a, double b) {
        if (smallInt(a) && smallInt(b)) {
            double r = a + b; // exact: both below 2^53 so the sum is below 2^54 and even there exact
            if (Math.abs(r) < E15) {
                return r + 0.0;
            }
        }
        int pa = scale(a), pb = scale(b);
        if (pa >= 0 && pb >= 0) {
            int sc = Math.max(pa, pb);
            if (sc - pa <= 3 && sc - pb <= 3) {
                long sum = unscaled(a, pa) * LPOW10[sc - pa] + unscaled(b, pb) * LPOW10[sc - pb]; // below 2e18: exact
                if (Math.abs(sum) < 1_000_000_000_000_000L) {
                    return sum / POW10[sc] + 0.0; // the exact sum has at most 15 digits: one rounding
                }
            }
        }
        return result(canonical(a).add(canonical(b)));
    }

    static double sub(double a, double b) {
        return add(a, -b);
    }

    static double mul(double a, double b) {
        if (smallInt(a) && smallInt(b)) {
            double r = a * b;
            if (Math.abs(r) < E15) {
                return r + 0.0; // exact: an integer below 2^53
            }
        }
        int pa = scale(a), pb = scale(b);
        if (pa >= 0 && pb >= 0 && pa + pb <= 22) {
            long x = unscaled(a, pa), y = unscaled(b, pb);
            if (Math.abs(x) < 1_000_000_000L && Math.abs(y) < 1_000_000_000L) {
                long prod = x * y; // below 1e18: exact
                if (Math.abs(prod) < 1_000_000_000_000_000L) {
                    return prod / POW10[pa + pb] + 0.0;
                }
            }
        }
        return result(canonical(a).multiply(canonical(b)));
    }

    /** a / b, or null for division by zero. */
    static Double div(double a, double b) {
        if (b == 0) {
            return null;
        }
        return toDouble(canonical(a).divide(canonical(b), MC15));
    }

    /** Truncated remainder, or null for modulo zero. */
    static Double mod(double a, double b) {
        if (b == 0) {
            return null;
        }
        if (smallInt(a) && smallInt(b)) {
            double r = a % b; // exact
            if (Math.abs(r) < E15) {
                return r + 0.0;
            }
        }
        return result(canonical(a).remainder(canonical(b)));
    }

    /** Rounds the canonical decimal of x to places decimals, ties away from zero. */
    static double round(double x, int places) {
        return toDouble(canonical(x).setScale(places, RoundingMode.HALF_UP));
    }

    /** The canonical text of x (numbers.md §4). */
    static String text(double x) {
        if (x == Math.rint(x) && Math.abs(x) < E15) {
            return Long.toString((long) x);
        }
        if (Double.isNaN(x) || Double.isInfinite(x)) {
            throw new RangeException("not a finite number");
        }
        int p = scale(x);
        if (p >= 0) {
            long m = unscaled(x, p);
            StringBuilder b = new StringBuilder(24);
            if (m < 0) {
                b.append('-');
                m = -m;
            }
            while (p > 0 && m % 10 == 0) {
                m /= 10;
                p--;
            }
            String digits = Long.toString(m);
            layout(b, digits, digits.length(), digits.length() - p);
            return b.toString();
        }
        BigDecimal c = new BigDecimal(x).round(MC15);
        if (Double.isInfinite(c.doubleValue())) {
            throw new RangeException("a number is beyond the range of a double on the way out");
        }
        return layout(c);
    }

    /** Whether x can leave the engine (its canonical decimal is within double range). */
    static boolean fitsOut(double x) {
        if (Math.abs(x) < 1.7e308) {
            return true;
        }
        return !Double.isInfinite(new BigDecimal(x).round(MC15).doubleValue());
    }

    /** ECMAScript Number.prototype.toString's layout of a decimal. */
    static String layout(BigDecimal c) {
        if (c.signum() == 0) {
            return "0";
        }
        c = c.stripTrailingZeros();
        StringBuilder b = new StringBuilder(24);
        if (c.signum() < 0) {
            b.append('-');
            c = c.negate();
        }
        String digits = c.unscaledValue().toString();
        int k = digits.length();
        int n = k - c.scale();
        layout(b, digits, k, n);
        return b.toString();
    }

    private static void layout(StringBuilder b, String digits, int k, int n) {
        if (k <= n && n <= 21) {
            b.append(digits);
            for (int z = 0; z < n - k; z++) {
                b.append('0');
            }
        } else if (0 < n && n <= 21) {
            b.append(digits, 0, n).append('.').append(digits, n, k);
        } else if (-6 < n && n <= 0) {
            b.append("0.");
            for (int z = 0; z < -n; z++) {
                b.append('0');
            }
            b.append(digits);
        } else {
            b.append(digits.charAt(0));
            if (k > 1) {
                b.append('.').append(digits, 1, k);
            }
            b.append('e').append(n - 1 >= 0 ? '+' : '-').append(Math.abs(n - 1));
        }
    }

    /**
     * RFC 8785's number text: the shortest decimal that reads back as x (the closest to x among
     * them), laid out as ECMAScript does. Written here because JDK 17's Double.toString is not
     * always the shortest.
     */
    static String shortest(double x) {
        if (x == 0) {
            return "0";
        }
        if (x == Math.rint(x) && Math.abs(x) < E15) {
            return Long.toString((long) x);
        }
        BigDecimal exact = new BigDecimal(x);
        for (int p = 1; p <= 17; p++) {
            BigDecimal best = null;
            BigDecimal near = exact.round(new MathContext(p, RoundingMode.HALF_EVEN));
            if (near.doubleValue() == x) {
                best = near;
            } else {
                // at a power of two the interval is lopsided: the other neighbour may read back
                BigDecimal other = exact.round(new MathContext(p, near.compareTo(exact) < 0 ? RoundingMode.UP : RoundingMode.DOWN));
                if (other.doubleValue() == x) {
                    best = other;
                }
            }
            if (best != null) {
                return layout(best);
            }
        }
        return layout(exact.round(new MathContext(17, RoundingMode.HALF_EVEN)));
    }
}
