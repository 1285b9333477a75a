package dev.sdods.rules;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class PatternTest {
    /** The shared cases of spec/v1/patterns.md (engine/pattern/testdata/cases.json). */
    @Test
    void sharedCases() throws Exception {
        Map<?, ?> cases = (Map<?, ?>) Json.parse(TestFiles.read("engine/pattern/testdata/cases.json"));
        int n = 0;
        for (Object o : (List<?>) cases.get("accept")) {
            Map<?, ?> c = (Map<?, ?>) o;
            String p = (String) c.get("pattern");
            Pattern pat = Pattern.compile(p);
            for (Object s : (List<?>) c.get("match")) {
                assertTrue(pat.matches((String) s), () -> p + " must match " + s);
                n++;
            }
            for (Object s : (List<?>) c.get("noMatch")) {
                assertFalse(pat.matches((String) s), () -> p + " must not match " + s);
                n++;
            }
        }
        for (Object o : (List<?>) cases.get("refuse")) {
            Map<?, ?> c = (Map<?, ?>) o;
            String p = (String) c.get("pattern");
            Pattern.NotPortable e = assertThrows(Pattern.NotPortable.class, () -> Pattern.compile(p), p);
            assertEquals(((Double) c.get("offset")).intValue(), e.offset, () -> "offset of " + p + ": " + e.getMessage());
            n++;
        }
        assertTrue(n > 300, "cases read: " + n);
    }

    @ParameterizedTest
    @CsvSource(delimiter = '#', value = {
        "(a+)+*#4", "[\\d-\\q]#1", "[z-\\q]#3", "(a{10}){200}#7", "a{600}b{600}#0", "[a-b-c]#4", "[--]#2",
        "a**#2", "(?=a)#0", "a{01}#1", "[]#1", "[a&&b]#3", "(a|)#3", "a|*#2", "[a-#3", "[-#2"})
    void refusalOffsets(String pattern, int offset) {
        Pattern.NotPortable e = assertThrows(Pattern.NotPortable.class, () -> Pattern.compile(pattern));
        assertEquals(offset, e.offset, e.getMessage());
    }

    private static long steps(String pattern, String subject) throws Exception {
        Pattern p = Pattern.compile(pattern);
        Pattern.countSteps = true;
        p.matches(subject);
        return Pattern.STEPS.get()[0];
    }

    /**
     * patterns.md §7: matching takes time proportional to the automaton's size times the subject's
     * length. A backtracking engine takes 2^n steps on ^(?:a|a)*b against n a's; the automaton
     * takes steps linear in n: doubling the subject at most doubles the steps (plus slack).
     */
    @Test
    void linearTimeOnPathologicalSubjects() throws Exception {
        String[][] cases = {{"^(?:a|a)*b", "a"}, {"^(?:a?){30}a{30}$", "a"}, {"(?:a|aa|.){249}c", "a"}, {".{0,999}c", "a"}};
        for (String[] c : cases) {
            long s1 = steps(c[0], c[1].repeat(4000));
            long s2 = steps(c[0], c[1].repeat(8000));
            long s4 = steps(c[0], c[1].repeat(16000));
            assertTrue(s2 <= 2.2 * s1 + 10_000 && s4 <= 2.2 * s2 + 10_000, c[0] + ": steps " + s1 + ", " + s2 + ", " + s4);
            // bounded by the automaton's size times the subject (here at most ~2 instructions per position)
            assertTrue(s4 <= 4L * 2100 * 16_001, c[0] + ": " + s4 + " steps");
        }
        // 26 a's: a backtracking engine explores about 2^26 paths; the automaton a few hundred steps
        long s = steps("^(?:a|a)*b", "a".repeat(26));
        assertTrue(s < 1_000, "steps on 26 a's: " + s);
        assertFalse(Pattern.compile("^(?:a|a)*b").matches("a".repeat(10_000)));
        assertTrue(Pattern.compile("^(?:a?){30}a{30}$").matches("a".repeat(30)));
    }

    @Test
    void codePointsNotUtf16Units() throws Exception {
        assertTrue(Pattern.compile("^.$").matches("😀"));
        assertFalse(Pattern.compile("^.$").matches("e\u0301"));
        assertTrue(Pattern.compile("^[😀-😂]+$").matches("😁😀"));
        assertTrue(Pattern.compile("^[^a]$").matches("\n"));
        assertFalse(Pattern.compile("ab$").matches("ab\n"));
        assertTrue(Pattern.compile("^a.b$").matches("a\nb"));
    }
}
