package dev.sdods.rules;

import java.time.LocalDate;

/** Dates and date-times of spec/v1/dates.md, in UTC, years 0001 to 9999. */
final class Dates {
    private Dates() {}

    /** A parsed date (dateOnly) or date-time, in UTC. */
    static final class D {
        final boolean dateOnly;
        final long epochDay; // UTC day
        final long secondOfDay; // UTC
        final int nanos;
        final int year, month, day;

        D(boolean dateOnly, long epochDay, long secondOfDay, int nanos) {
            this.dateOnly = dateOnly;
            this.epochDay = epochDay;
            this.secondOfDay = secondOfDay;
            this.nanos = nanos;
            LocalDate ld = LocalDate.ofEpochDay(epochDay);
            year = ld.getYear();
            month = ld.getMonthValue();
            day = ld.getDayOfMonth();
        }

        long epochSecond() {
            return epochDay * 86400 + secondOfDay;
        }
    }

    static final long MIN_DAY = LocalDate.of(1, 1, 1).toEpochDay();
    static final long MAX_DAY = LocalDate.of(9999, 12, 31).toEpochDay();

    private static int digits(String s, int at, int n) {
        int v = 0;
        for (int k = at; k < at + n; k++) {
            char c = s.charAt(k);
            if (c < '0' || c > '9') {
                return -1;
            }
            v = v * 10 + (c - '0');
        }
        return v;
    }

    static boolean leap(int y) {
        return y % 4 == 0 && (y % 100 != 0 || y % 400 == 0);
    }

    static int monthDays(int y, int m) {
        switch (m) {
            case 2:
                return leap(y) ? 29 : 28;
            case 4: case 6: case 9: case 11:
                return 30;
            default:
                return 31;
        }
    }

    /** Parses s by the grammar of dates.md §1, or returns null. */
    static D parse(String s) {
        int n = s.length();
        if (n < 10 || s.charAt(4) != '-' || s.charAt(7) != '-') {
            return null;
        }
        int y = digits(s, 0, 4), mo = digits(s, 5, 2), d = digits(s, 8, 2);
        if (y < 0 || mo < 1 || mo > 12 || d < 1 || d > monthDays(y, mo)) {
            return null;
        }
        if (n == 10) {
            if (y < 1) {
                return null;
            }
            return new D(true, LocalDate.of(y, mo, d).toEpochDay(), 0, 0);
        }
        if (n < 20 || s.charAt(10) != 'T' || s.charAt(13) != ':' || s.charAt(16) != ':') {
            return null;
        }
        int h = digits(s, 11, 2), mi = digits(s, 14, 2), se = digits(s, 17, 2);
        if (h < 0 || h > 23 || mi < 0 || mi > 59 || se < 0 || se > 59) {
            return null;
        }
        int i = 19;
        int nanos = 0;
        if (s.charAt(i) == '.') {
            i++;
            int start = i;
            while (i < n && s.charAt(i) >= '0' && s.charAt(i) <= '9') {
                i++;
            }
            int len = i - start;
            if (len < 1 || len > 9) {
                return null;
            }
            nanos = digits(s, start, len);
            for (int k = len; k < 9; k++) {
                nanos *= 10;
            }
        }
        if (i >= n) {
            return null;
        }
        long offset;
        char c = s.charAt(i);
        if (c == 'Z') {
            if (i + 1 != n) {
                return null;
            }
            offset = 0;
        } else if (c == '+' || c == '-') {
            if (i + 6 != n || s.charAt(i + 3) != ':') {
                return null;
            }
            int oh = digits(s, i + 1, 2), om = digits(s, i + 4, 2);
            if (oh < 0 || oh > 23 || om < 0 || om > 59) {
                return null;
            }
            offset = (oh * 3600L + om * 60L) * (c == '-' ? -1 : 1);
        } else {
            return null;
        }
        long local = LocalDate.of(y, mo, d).toEpochDay() * 86400 + h * 3600L + mi * 60L + se;
        long utc = local - offset;
        long day = Math.floorDiv(utc, 86400);
        if (day < MIN_DAY || day > MAX_DAY) {
            return null;
        }
        return new D(false, day, Math.floorMod(utc, 86400), nanos);
    }

    /** Whole years from a to b (dates.md §4). */
    static long yearsBetween(D a, D b) {
        if (before(b, a)) {
            return -yearsBetween(b, a);
        }
        long y = b.year - a.year;
        if (lexBefore(b, a)) {
            y--;
        }
        return y;
    }

    private static boolean before(D x, D y) {
        if (x.epochSecond() != y.epochSecond()) {
            return x.epochSecond() < y.epochSecond();
        }
        return x.nanos < y.nanos;
    }

    /** (month, day, time of day) of x before that of y. */
    private static boolean lexBefore(D x, D y) {
        if (x.month != y.month) {
            return x.month < y.month;
        }
        if (x.day != y.day) {
            return x.day < y.day;
        }
        if (x.secondOfDay != y.secondOfDay) {
            return x.secondOfDay < y.secondOfDay;
        }
        return x.nanos < y.nanos;
    }

    /** Whole periods of 24 hours from a to b, truncated toward zero. */
    static long daysBetween(D a, D b) {
        if (before(b, a)) {
            return -daysBetween(b, a);
        }
        long sec = b.epochSecond() - a.epochSecond();
        if (b.nanos < a.nanos) {
            sec--; // the fraction borrows a second; whole days count whole seconds only
        }
        return sec / 86400;
    }

    /** d moved by n units, or null when the result leaves the years 0001 to 9999. */
    static String add(D d, long n, String unit) {
        long day;
        if (unit.equals("days")) {
            day = d.epochDay + n;
        } else {
            long months = unit.equals("years") ? n * 12 : n;
            long m0 = d.year * 12L + (d.month - 1) + months;
            long y = Math.floorDiv(m0, 12);
            int mo = Math.floorMod(m0, 12) + 1;
            if (y < 1 || y > 9999) {
                return null;
            }
            int dd = Math.min(d.day, monthDays((int) y, mo));
            day = LocalDate.of((int) y, mo, dd).toEpochDay();
        }
        if (day < MIN_DAY || day > MAX_DAY) {
            return null;
        }
        LocalDate ld = LocalDate.ofEpochDay(day);
        StringBuilder b = new StringBuilder(30);
        pad(b, ld.getYear(), 4).append('-');
        pad(b, ld.getMonthValue(), 2).append('-');
        pad(b, ld.getDayOfMonth(), 2);
        if (d.dateOnly) {
            return b.toString();
        }
        long s = d.secondOfDay;
        b.append('T');
        pad(b, (int) (s / 3600), 2).append(':');
        pad(b, (int) (s / 60 % 60), 2).append(':');
        pad(b, (int) (s % 60), 2);
        if (d.nanos != 0) {
            StringBuilder f = new StringBuilder();
            pad(f, d.nanos, 9);
            int end = f.length();
            while (f.charAt(end - 1) == '0') {
                end--;
            }
            b.append('.').append(f, 0, end);
        }
        return b.append('Z').toString();
    }

    private static StringBuilder pad(StringBuilder b, int v, int w) {
        String s = Integer.toString(v);
        for (int k = s.length(); k < w; k++) {
            b.append('0');
        }
        return b.append(s);
    }
}
