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

    @Test
    void loneSurrogatesAndInvalidUtf8BecomeReplacementCharacters() throws Exception {
        assertEquals("\uFFFDx", Json.parse("\"\\ud800x\""));
        assertEquals("😀", Json.parse("\"\\ud83d\\ude00\""));
        byte[] bad = {'"', 'a', (byte) 0xff, '"'};
        assertEquals("a\uFFFD", Json.parse(bad));
        assertEquals("\"é\\n\\u0001\"", Json.write("é\n\u0001"));
    }

    @Test
    void canonicalOrderIsUtf16() throws Exception {
        Map<?, ?> m = (Map<?, ?>) Json.parse("{\"\uE000\":1,\"😀\":2,\"b\":3,\"a\":[1.0,2.5]}");
        assertEquals("{\"a\":[1,2.5],\"b\":3,\"😀\":2,\"\uE000\":1}", Json.canonical(m));
        assertEquals(new String("{\"a\":1}".getBytes(StandardCharsets.UTF_8), StandardCharsets.UTF_8), Json.canonical(Json.parse("{\"a\":1.0}")));
    }
}
