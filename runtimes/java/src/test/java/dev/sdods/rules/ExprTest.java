package dev.sdods.rules;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

class ExprTest {
    static Expr.Program load(String src, String functions) throws Exception {
        Expr.Compiler c = new Expr.Compiler(Set.of());
        if (functions != null) {
            c.functions(Json.parse(functions), "/functions", null);
        }
        Expr.Program p = c.program(Json.parse(src), "");
        assertEquals(0, c.diags.size(), () -> c.diags.toString());
        return p;
    }

    /** expressions.md §8: an evaluation that would run unbounded is refused with EVALUATION_LIMIT. */
    @Test
    void workBudget() throws Exception {
        // each function doubles the list it gets: 2^32 elements at the end of the chain
        StringBuilder fns = new StringBuilder("{\"f0\":{\"params\":[\"x\"],\"body\":{\"op\":\"concat\",\"args\":[{\"var\":\"x\"},{\"var\":\"x\"}]}}");
        for (int k = 1; k < 32; k++) {
            fns.append(",\"f").append(k).append("\":{\"params\":[\"x\"],\"body\":{\"fn\":\"f").append(k - 1)
                .append("\",\"args\":[{\"fn\":\"f").append(k - 1).append("\",\"args\":[{\"var\":\"x\"}]}]}}");
        }
        Expr.Program p = load("{\"fn\":\"f31\",\"args\":[[1]]}", fns.append("}").toString());
        EvalError e = assertThrows(EvalError.class, () -> p.eval(Map.of(), Map.of(), Expr.DEFAULT_BUDGET));
        assertEquals("EVALUATION_LIMIT", e.code);
        Expr.Program small = load("{\"op\":\"map\",\"args\":[{\"var\":\"l\"},{\"op\":\"+\",\"args\":[{\"var\":\"it\"},1]}]}", null);
        java.util.List<Object> l = new java.util.ArrayList<>();
        for (int k = 0; k < 1000; k++) {
            l.add((double) k);
        }
        assertEquals(1000, ((java.util.List<?>) small.eval(Map.of("l", l), Map.of(), Expr.DEFAULT_BUDGET)).size());
        assertEquals("EVALUATION_LIMIT", assertThrows(EvalError.class, () -> small.eval(Map.of("l", l), Map.of(), 500)).code);
    }

    /** Every diagnostic of compiling expr beside functions, sorted, as "CODE pointer". */
    static java.util.List<String> diagnostics(String expr, String functions, String structureCode) throws Exception {
        Expr.Compiler c = new Expr.Compiler(Set.of());
        c.functions(Json.parse(functions), "/functions", structureCode);
        c.program(Json.parse(expr), "");
        Diagnostic.sort(c.diags);
        java.util.List<String> out = new java.util.ArrayList<>();
        for (Diagnostic d : c.diags) {
            out.add(d.code() + " " + d.pointer());
        }
        return out;
    }

    /**
     * expressions.md §5: a malformed definition still defines its name; its body is checked and its
     * calls are edges; calls to it are neither FUNCTION_UNKNOWN nor FUNCTION_ARITY.
     */
    @Test
    void malformedFunctions() throws Exception {
        // a chain of 34 functions, f0 calls f1 … calls f33, with f20 malformed: still too deep
        StringBuilder chain = new StringBuilder("{");
        for (int k = 0; k < 34; k++) {
            chain.append(k == 0 ? "" : ",").append("\"f").append(k).append("\":{\"params\":[],\"body\":")
                .append(k == 33 ? "1" : "{\"fn\":\"f" + (k + 1) + "\",\"args\":[]}").append(k == 20 ? ",\"x\":1}" : "}");
        }
        String[][] cases = {
            // expression, functions, the diagnostics in the order of their pointers; the engine
            // protocol's definitions have exactly params and body, a ruleset's also a description
            {"{\"fn\":\"f\",\"args\":[1]}", "{\"f\":{\"params\":[],\"body\":1,\"description\":\"d\"}}", "FUNCTION_INVALID /functions/f/description"},
            {"{\"fn\":\"f\",\"args\":[]}", "{\"f\":{\"body\":1}}", "FUNCTION_INVALID /functions/f"},
            {"{\"fn\":\"f\",\"args\":[1]}", "{\"f\":{\"params\":[],\"body\":1,\"body\":2}}", "FUNCTION_INVALID /functions/f/body"},
            {"{\"fn\":\"f\",\"args\":[1]}", "{\"f\":{\"params\":[],\"params\":[\"a\"],\"body\":1}}", "FUNCTION_INVALID /functions/f/params"},
            {"{\"fn\":\"f\",\"args\":[1,2]}", "{\"f\":null}", "FUNCTION_INVALID /functions/f"},
            {"{\"fn\":\"f\",\"args\":[]}", "{\"f\":{\"params\":[\"a\",\"a\"],\"body\":{\"op\":\"nope\",\"args\":[{\"var\":\"a\"}]}}}",
                "OPERATOR_UNKNOWN /functions/f/body/op|FUNCTION_INVALID /functions/f/params/1"},
            {"1", "{\"f\":{\"params\":[],\"body\":{\"fn\":\"g\",\"args\":[]}},\"g\":{\"params\":[1],\"body\":{\"fn\":\"f\",\"args\":[]}}}",
                "FUNCTION_RECURSIVE /functions/f|FUNCTION_RECURSIVE /functions/g|FUNCTION_INVALID /functions/g/params/0"},
            {"{\"fn\":\"f0\",\"args\":[]}", chain.append("}").toString(),
                "EXPRESSION_TOO_DEEP /functions/f0|EXPRESSION_TOO_DEEP /functions/f1|FUNCTION_INVALID /functions/f20/x"},
        };
        for (String[] c : cases) {
            assertEquals(java.util.List.of(c[2].split("\\|")), diagnostics(c[0], c[1], null), c[1]);
        }
        String[][] inRuleset = {
            {"{\"fn\":\"f\",\"args\":[]}", "{\"f\":{\"params\":[],\"body\":1,\"description\":\"d\"}}", ""},
            // a description of the wrong type is a structural problem: the definition is well-formed
            {"{\"fn\":\"f\",\"args\":[1]}", "{\"f\":{\"params\":[],\"body\":1,\"description\":1}}",
                "FUNCTION_ARITY /args|RULESET_INVALID /functions/f/description"},
        };
        for (String[] c : inRuleset) {
            assertEquals(c[2].isEmpty() ? java.util.List.of() : java.util.List.of(c[2].split("\\|")),
                diagnostics(c[0], c[1], "RULESET_INVALID"), c[1]);
        }
    }
}
