package dev.sdods.rules;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.api.Test;

class EngineTest {
    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "{\"id\":1,\"cmd\":\"expression\",\"expression\":{\"op\":\"+\",\"args\":[0.1,0.2]}}|{\"id\":1,\"result\":{\"value\":0.3}}",
        "{\"id\":\"s\",\"cmd\":\"expression\",\"expression\":{\"op\":\"substring\",\"args\":[\"a😀bc\",1,2]}}|{\"id\":\"s\",\"result\":{\"value\":\"😀b\"}}",
        "{\"id\":2,\"cmd\":\"expression\",\"expression\":{\"op\":\"dateAdd\",\"args\":[\"2024-01-01T23:30:00.250+01:00\",1,\"days\"]}}|{\"id\":2,\"result\":{\"value\":\"2024-01-02T22:30:00.25Z\"}}",
        "{\"id\":3,\"cmd\":\"expression\",\"expression\":{\"op\":\"/\",\"args\":[1,0]}}|{\"id\":3,\"result\":{\"value\":null}}",
        "{\"id\":4,\"cmd\":\"expression\",\"expression\":{\"op\":\"abs\",\"args\":[{\"var\":\"x\"}]},\"env\":{\"x\":-0.30000000000000004}}|{\"id\":4,\"result\":{\"value\":0.3}}",
        "{\"id\":5,\"cmd\":\"nope\"}|{\"id\":5,\"error\":{\"code\":\"COMMAND_UNKNOWN\",\"message\":\"no command is named nope\"}}",
        "{\"id\":6,\"cmd\":\"expression\",\"expression\":{\"op\":\"*\",\"args\":[1e308,10]}}|{\"id\":6,\"error\":{\"code\":\"EVALUATION_ERROR\",\"message\":\"*: the result is beyond the range of a double\",\"pointer\":\"\"}}"})
    void answersLines(String line, String want) {
        assertEquals(want, new Engine().handle(line));
    }

    @Test
    void oneLinePerRequestBlankLinesIgnored() throws Exception {
        String in = "{\"id\":1,\"cmd\":\"version\"}\n\n   \nnot json\n{\"id\":2,\"cmd\":\"expression\",\"expression\":[1,{\"var\":\"a\"}],\"env\":{\"a\":\"x\"}}";
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        new Engine().serve(new ByteArrayInputStream(in.getBytes(StandardCharsets.UTF_8)), out);
        String[] lines = out.toString(StandardCharsets.UTF_8).split("\n");
        assertEquals(3, lines.length);
        assertTrue(lines[0].contains("\"version\":\"1.0.0-alpha.2\""));
        assertTrue(lines[1].startsWith("{\"id\":null,\"error\":{\"code\":\"PROTOCOL_INVALID\""));
        assertEquals("{\"id\":2,\"result\":{\"value\":[1,\"x\"]}}", lines[2]);
    }

    @Test
    void loadThenEvaluate() throws Exception {
        Engine e = new Engine();
        String bundle = TestFiles.read("conformance/fixtures/signup/signup.bundle.json");
        String load = e.handle("{\"id\":1,\"cmd\":\"load\",\"bundle\":" + bundle + "}");
        assertTrue(load.contains("\"channels\":[\"client\",\"server\"]"), load);
        Map<?, ?> r = (Map<?, ?>) Json.parse(e.handle("{\"id\":2,\"cmd\":\"evaluate\",\"ruleset\":\"signup\",\"request\":{\"data\":{}}}"));
        assertTrue(((Map<?, ?>) r.get("result")).get("findings") instanceof java.util.List, r.toString());
        assertEquals("{\"id\":3,\"error\":{\"code\":\"RULESET_NOT_LOADED\",\"message\":\"no ruleset x is loaded\"}}",
            e.handle("{\"id\":3,\"cmd\":\"evaluate\",\"ruleset\":\"x\",\"request\":{\"data\":{}}}"));
    }

    /** A line that is not well-formed UTF-8, even inside a payload, is PROTOCOL_INVALID with id null. */
    @Test
    void malformedTextIsAnsweredWithIdNull() throws Exception {
        ByteArrayOutputStream in = new ByteArrayOutputStream();
        in.write("{\"id\":1,\"cmd\":\"expression\",\"expression\":\"a".getBytes(StandardCharsets.UTF_8));
        in.write(new byte[] {(byte) 0xed, (byte) 0xa0, (byte) 0x80});
        in.write("\"}\n{\"id\":2,\"cmd\":\"expression\",\"expression\":\"\\ud800\"}\n".getBytes(StandardCharsets.UTF_8));
        in.write("{\"id\":3,\"cmd\":\"expression\",\"expression\":\"\u00e9\\ud83d\\ude00\"}\n".getBytes(StandardCharsets.UTF_8));
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        new Engine().serve(new ByteArrayInputStream(in.toByteArray()), out);
        String[] lines = out.toString(StandardCharsets.UTF_8).split("\n");
        assertEquals(3, lines.length);
        assertTrue(lines[0].startsWith("{\"id\":null,\"error\":{\"code\":\"PROTOCOL_INVALID\""), lines[0]);
        assertTrue(lines[1].startsWith("{\"id\":null,\"error\":{\"code\":\"PROTOCOL_INVALID\""), lines[1]);
        assertEquals("{\"id\":3,\"result\":{\"value\":\"\u00e9😀\"}}", lines[2]);
    }
}
