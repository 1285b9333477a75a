package dev.sdods.rules;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The null rule as spec/v1/operators.md writes it ("Null arguments"): its tables are read from the
 * text, so the runtime follows the document, not a copy of it.
 */
class NullRuleTest {
    /** Operator name to its argument count as the operator table writes it ("2", "1 or more", ...). */
    static Map<String, String> arities(String md) {
        Map<String, String> out = new LinkedHashMap<>();
        Matcher m = java.util.regex.Pattern.compile("(?m)^\\| \\d+ \\| `([^`]+)` \\| ([^|]+) \\|").matcher(md);
        while (m.find()) {
            out.put(m.group(1), m.group(2).trim());
        }
        return out;
    }

    /** The backquoted operators of the table row that starts with first. */
    static List<String> row(String md, String first) {
        int i = md.indexOf("\n| " + first + " |");
        assertTrue(i >= 0, first);
        String line = md.substring(i + 1, md.indexOf('\n', i + 1));
        List<String> out = new ArrayList<>();
        Matcher m = java.util.regex.Pattern.compile("`([^`]+)`").matcher(line.substring(line.indexOf('|', 2)));
        while (m.find()) {
            out.add(m.group(1));
        }
        return out;
    }

    static String section(String md) {
        return md.substring(md.indexOf("## Null arguments"), md.indexOf("\n## ", md.indexOf("## Null arguments") + 3));
    }

    @Test
    void theTablesCoverEveryOperatorOnceAndAgreeWithTheRuntime() throws Exception {
        String md = TestFiles.read("spec/v1/operators.md");
        Map<String, String> all = arities(md);
        assertEquals(45, all.size());
        String nulls = section(md);
        List<String> toNull = row(nulls, "null"), toFalse = row(nulls, "false");
        List<String> notStrict = new ArrayList<>();
        for (String kind : new String[] {"(a) null is a value", "(b) evaluated lazily", "(c) a container"}) {
            notStrict.addAll(row(nulls, kind));
        }
        assertEquals(28, toNull.size() + toFalse.size());
        assertEquals(17, notStrict.size());
        for (String op : all.keySet()) {
            Object want = toNull.contains(op) ? null : toFalse.contains(op) ? Boolean.FALSE : NullRule.NONE;
            assertEquals(1, (toNull.contains(op) ? 1 : 0) + (toFalse.contains(op) ? 1 : 0) + (notStrict.contains(op) ? 1 : 0), op);
            assertEquals(want, NullRule.result(op), op);
        }
    }

    /**
     * Every strict operator, with null at each position beside arguments of the wrong type, gives
     * its null result (the others are not checked); without the null the same application fails.
     */
    @Test
    void nullDecidesBeforeTypesForEveryStrictOperator() throws Exception {
        String md = TestFiles.read("spec/v1/operators.md");
        Map<String, String> all = arities(md);
        String nulls = section(md);
        Engine e = new Engine();
        int n = 0;
        for (String first : new String[] {"null", "false"}) {
            for (String op : row(nulls, first)) {
                String arity = all.get(op);
                // the most arguments the table allows, two for "or more": null at each position
                int count = arity.endsWith("or more") ? 2 : Integer.parseInt(arity.substring(arity.length() - 1));
                for (int at = 0; at < count; at++) {
                    List<String> args = new ArrayList<>();
                    for (int k = 0; k < count; k++) {
                        // an object is the wrong type for every strict operator given two or more arguments
                        args.add(k == at ? "null" : "{\"op\":\"literal\",\"args\":[{\"a\":[1]}]}");
                    }
                    String expr = "{\"op\":\"" + op + "\",\"args\":[" + String.join(",", args) + "]}";
                    assertEquals("{\"id\":1,\"result\":{\"value\":" + first + "}}",
                        e.handle("{\"id\":1,\"cmd\":\"expression\",\"expression\":" + expr + "}"), expr);
                    n++;
                }
                if (count > 1) {
                    String wrong = "{\"op\":\"literal\",\"args\":[{\"a\":[1]}]}";
                    String expr = "{\"op\":\"" + op + "\",\"args\":[" + String.join(",", java.util.Collections.nCopies(count, wrong)) + "]}";
                    String got = e.handle("{\"id\":1,\"cmd\":\"expression\",\"expression\":" + expr + "}");
                    assertTrue(got.contains("\"code\":\"EVALUATION_ERROR\""), expr + " -> " + got);
                }
            }
        }
        assertTrue(n > 45, "applications tried: " + n);
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "{\"op\":\"sum\",\"args\":[[null,\"a\"]]}|null",
        "{\"op\":\"min\",\"args\":[[\"a\",null]]}|null",
        "{\"op\":\"max\",\"args\":[[true,null]]}|null",
        "{\"op\":\"matches\",\"args\":[null,{\"op\":\"concat\",\"args\":[\"(a+)\",\"+\"]}]}|false",
        "{\"op\":\"contains\",\"args\":[1,null]}|false",
        "{\"op\":\"in\",\"args\":[null,1]}|false",
        "{\"op\":\"contains\",\"args\":[[null],null]}|true",
        "{\"op\":\"contains\",\"args\":[null,1]}|false",
        "{\"op\":\"some\",\"args\":[null,\"x\",{\"op\":\"<\",\"args\":[1,\"a\"]}]}|false",
        "{\"op\":\"map\",\"args\":[null,\"x\",{\"op\":\"<\",\"args\":[1,\"a\"]}]}|null",
        "{\"op\":\"daysBetween\",\"args\":[\"x\",null]}|null",
        "{\"op\":\"dateAdd\",\"args\":[null,1,\"weeks\"]}|null"})
    void operandsAndContainers(String expr, String want) {
        assertEquals("{\"id\":1,\"result\":{\"value\":" + want + "}}",
            new Engine().handle("{\"id\":1,\"cmd\":\"expression\",\"expression\":" + expr + "}"));
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "{\"op\":\"sum\",\"args\":[\"a\"]}",
        "{\"op\":\"contains\",\"args\":[1,\"a\"]}",
        "{\"op\":\"+\",\"args\":[{\"op\":\"<\",\"args\":[1,\"a\"]},null]}"})
    void stillErrors(String expr) {
        assertTrue(new Engine().handle("{\"id\":1,\"cmd\":\"expression\",\"expression\":" + expr + "}").contains("EVALUATION_ERROR"));
    }
}
