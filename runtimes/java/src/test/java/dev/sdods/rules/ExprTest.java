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
            c.functions(Json.parse(functions), "/functions", "FUNCTION_INVALID");
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
}
