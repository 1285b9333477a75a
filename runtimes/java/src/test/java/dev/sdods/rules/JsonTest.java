package dev.sdods.rules;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class JsonTest {
    @ParameterizedTest
    @ValueSource(strings = {"01", ".5", "1.", "+1", "0x10", "Infinity", "NaN", "[1,]", "{\"a\":1,}", "\"\t\"", "tru", "{} {}",
        "\"\\x\"", "[", "{\"a\" 1}", "-"})
    void refusesWhatRfc8259Refuses(String text) {
        assertThrows(Json.SyntaxException.class, () -> Json.parse(text));
    }

    @Test
    void keepsTheFirstDuplicateNameForTheReader() throws Exception {
        Json.JObject o = (Json.JObject) Json.parse("{\"a\":1,\"b\":2,\"a\":3}");
        assertEquals("a", o.duplicate());
    }

    @Test
    void numbersBeyondRangeAreMarkedNotInfinite() throws Exception {
        List<?> l = (List<?>) Json.parse("[1e309, 1.7976931348623158e308, -0, 1e-400, 0.1000000000000000055511151231257827]");
        assertInstanceOf(Json.OutOfRange.class, l.get(0));
        assertEquals(Double.MAX_VALUE, l.get(1));
        assertEquals("0.0", l.get(2).toString());
        assertEquals(0.0, l.get(3));
        assertEquals(0.1, l.get(4));
    }

    /** spec/v1/README.md, "Text": not well-formed UTF-8 is malformed JSON, never repaired into U+FFFD. */
    @ParameterizedTest
    @ValueSource(strings = {"FF", "ED A0 80", "ED B0 80", "C0 AF", "E0 80 AF", "E2 82", "F4 90 80 80", "80", "F8 88 80 80 80"})
    void refusesTextThatIsNotWellFormedUtf8(String hex) {
        String[] bs = hex.split(" ");
        byte[] text = new byte[bs.length + 2];
        text[0] = '"';
        for (int k = 0; k < bs.length; k++) {
            text[k + 1] = (byte) Integer.parseInt(bs[k], 16);
        }
        text[text.length - 1] = '"';
        assertThrows(Json.SyntaxException.class, () -> Json.parse(text));
    }

    /** A \\u escape of a lone surrogate, or a Java string holding one, is malformed too. */
    @ParameterizedTest
    @ValueSource(strings = {"\"\\ud800\"", "\"a\\udc00\"", "\"\\ud800\\u0041\"", "\"ab\\uD83D\"", "\"\\ud83d\\ud83d\\ude00\"",
        "\"\\ude00\\ud83d\"", "{\"\\udfff\":1}", "\"\ud800\"", "\"a\udc00b\"", "[\"\ude00\ud83d\"]"})
    void refusesLoneSurrogates(String text) {
        assertThrows(Json.SyntaxException.class, () -> Json.parse(text));
    }

    @Test
    void acceptsScalarValuesHoweverWritten() throws Exception {
        assertEquals("😀", Json.parse("\"\\ud83d\\ude00\""));
        assertEquals("😀", Json.parse("\"\\uD83D\\uDE00\""));
        assertEquals("\\ud800", Json.parse("\"\\\\ud800\""));
        assertEquals("\uFFFD\uFFFF\u0000", Json.parse("\"\\ufffd\\uffff\\u0000\""));
        assertEquals("a\uFFFDé😀", Json.parse("\"a\uFFFDé😀\"".getBytes(StandardCharsets.UTF_8)));
        assertEquals("\"é\\n\\u0001\"", Json.write("é\n\u0001"));
    }

    @Test
    void canonicalOrderIsUtf16() throws Exception {
        Map<?, ?> m = (Map<?, ?>) Json.parse("{\"\uE000\":1,\"😀\":2,\"b\":3,\"a\":[1.0,2.5]}");
        assertEquals("{\"a\":[1,2.5],\"b\":3,\"😀\":2,\"\uE000\":1}", Json.canonical(m));
        assertEquals(new String("{\"a\":1}".getBytes(StandardCharsets.UTF_8), StandardCharsets.UTF_8), Json.canonical(Json.parse("{\"a\":1.0}")));
    }
}
