package dev.sdods.rules;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The example of runtimes/java/README.md, as written there. */
class ReadmeExampleTest {
    @Test
    void example() throws Exception {
        RuleSet rules = RuleSet.fromBundle(Files.readAllBytes(TestFiles.root().resolve("conformance/fixtures/checkout/checkout.bundle.json")));
        assertEquals(List.of("x-luhn"), rules.requiredOperators());
        rules = rules.withOperators(Map.of("x-luhn", args -> args.get(0) instanceof String
            && ((String) args.get(0)).startsWith("4")));
        assertEquals(List.of(), rules.requiredOperators());
        Request request = Request.of(Map.of("payment", Map.of("method", "card", "cardNumber", "5")))
            .withCtx(Map.of("today", "2025-06-15"));
        Result result = rules.evaluate(request, View.page("payment"), "fr-CA", null);
        assertTrue(result.findings().stream().anyMatch(f -> f.field() != null && f.field().equals("payment.cardNumber")
            && !f.code().equals("RULE_FAILED") && "payment".equals(f.location().page())), result::toString);
        assertTrue(result.findings().stream().allMatch(f -> f.location().page() == null || f.location().page().equals("payment")),
            result::toString);
    }
}
