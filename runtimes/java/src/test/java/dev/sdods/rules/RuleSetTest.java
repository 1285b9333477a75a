package dev.sdods.rules;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

class RuleSetTest {
    static final String[] FIXTURES = {"addressbook", "checkout", "insurance", "loan", "signup"};

    static String bundleText(String fixture) throws Exception {
        return TestFiles.read("conformance/fixtures/" + fixture + "/" + fixture + ".bundle.json");
    }

    /** The golden cases of a fixture through the library API: every result equal, as a JSON value. */
    @ParameterizedTest
    @ValueSource(strings = {"addressbook", "checkout", "insurance", "loan", "signup"})
    void goldenEvaluations(String fixture) throws Exception {
        Map<?, ?> file = (Map<?, ?>) Json.parse(TestFiles.read("conformance/golden/" + fixture + ".json"));
        Map<?, ?> setup = (Map<?, ?>) ((List<?>) file.get("setup")).get(0);
        RuleSet rs = RuleSet.fromBundle(bundleText(fixture));
        Map<String, CustomOperator> ops = new java.util.HashMap<>();
        for (Object name : (List<?>) setup.get("registered")) {
            ops.put((String) name, SuiteOperators.all().get(name));
        }
        rs = rs.withOperators(ops);
        int n = 0;
        for (Object o : (List<?>) file.get("cases")) {
            Map<?, ?> c = (Map<?, ?>) o;
            Map<?, ?> in = (Map<?, ?>) c.get("input");
            Map<?, ?> want = (Map<?, ?>) c.get("expected");
            Request req = Request.fromJson(in.get("request"));
            Result got = rs.evaluate(req, req.view, req.locale, (String) in.get("channel"));
            Object parsed = Json.parse(Json.write(got.toJson()));
            assertTrue(Json.equal(want.get("result"), parsed), () -> c.get("id") + ":\nwant " + Json.write(want.get("result")) + "\ngot  " + got);
            n++;
        }
        assertTrue(n > 5);
    }

    /** Compiling the fixture's source gives its bundle byte for byte (ruleset.md §9). */
    @ParameterizedTest
    @ValueSource(strings = {"addressbook", "checkout", "insurance", "loan", "signup"})
    void compileGivesTheReferenceBundle(String fixture) throws Exception {
        Map<?, ?> file = (Map<?, ?>) Json.parse(TestFiles.read("conformance/compiler/" + fixture + ".json"));
        Map<?, ?> first = (Map<?, ?>) ((List<?>) file.get("cases")).get(0);
        Object source = ((Map<?, ?>) first.get("input")).get("source");
        RuleSet rs = RuleSet.fromSource(Json.write(source));
        assertEquals(bundleText(fixture), rs.bundle());
        assertEquals(rs.checksum(), RuleSet.fromBundle(rs.bundle()).checksum());
    }

    @Test
    void checksumIgnoresSpellingButNotContent() throws Exception {
        String a = "{\"ruleset\":{\"id\":\"t\",\"version\":\"1\",\"defaultLocale\":\"en\",\"locales\":{\"en\":{\"m\":\"x\"}},"
            + "\"rules\":[{\"id\":\"r\",\"code\":\"C\",\"when\":{\"op\":\">\",\"args\":[{\"var\":\"data.n\"},1.0]},\"message\":\"m\"}]}}";
        String b = a.replace("1.0]", "1]").replace("\"message\":\"m\"", "\"message\":{\"key\":\"m\"},\"severity\":\"error\"");
        String c = a.replace("1.0]", "2]");
        assertEquals(RuleSet.fromSource(a).checksum(), RuleSet.fromSource(b).checksum());
        assertNotEquals(RuleSet.fromSource(a).checksum(), RuleSet.fromSource(c).checksum());
    }

    @Test
    void customOperatorsFailClosed() throws Exception {
        RuleSet rs = RuleSet.fromBundle(bundleText("checkout"));
        assertEquals(List.of("x-luhn"), rs.requiredOperators());
        Request req = Request.of(Map.of("payment", Map.of("method", "card", "cardNumber", "4111111111111112")));
        Result missing = rs.evaluate(req);
        assertTrue(missing.findings().stream().anyMatch(f -> f.code().equals("RULE_FAILED") && f.message().contains("OPERATOR_UNAVAILABLE")),
            missing::toString);
        RuleSet throwing = rs.withOperators(Map.of("x-luhn", args -> {
            throw new IllegalStateException("down");
        }));
        assertEquals(List.of(), throwing.requiredOperators());
        assertTrue(throwing.evaluate(req).findings().stream().anyMatch(f -> f.message().contains("OPERATOR_FAILED")));
        RuleSet nan = rs.withOperators(Map.of("x-luhn", args -> Double.NaN));
        assertTrue(nan.evaluate(req).findings().stream().anyMatch(f -> f.message().contains("OPERATOR_FAILED")));
        RuleSet lone = rs.withOperators(Map.of("x-luhn", args -> List.of("\ud800")));
        assertTrue(lone.evaluate(req).findings().stream().anyMatch(f -> f.message().contains("OPERATOR_FAILED")));
        RuleSet real = rs.withOperators(SuiteOperators.all());
        assertTrue(real.evaluate(req).findings().stream().noneMatch(f -> f.code().equals("RULE_FAILED")));
        assertEquals(List.of("x-luhn"), rs.requiredOperators(), "withOperators returns a new instance");
    }

    @Test
    void manifestHasOneChannel() throws Exception {
        RuleSet rs = RuleSet.fromManifest(TestFiles.read("conformance/examples/signup.client.manifest.json"));
        assertEquals(List.of("client"), rs.channels());
        EngineException e = assertThrows(EngineException.class, () -> rs.evaluate(Request.of(Map.of()), null, null, "server"));
        assertEquals("CHANNEL_UNAVAILABLE", e.code());
        assertThrows(IllegalStateException.class, rs::bundle);
    }

    @Test
    void viewsAndLocales() throws Exception {
        RuleSet rs = RuleSet.fromBundle(bundleText("signup"));
        Request req = Request.of(Map.of("account", Map.of("email", ""))).withCtx(Map.of("today", "2025-06-15"));
        Result all = rs.evaluate(req);
        Result fr = rs.evaluate(req, null, "fr-CA", null);
        Result elsewhere = rs.evaluate(req, View.page("nowhere"), null, null);
        assertTrue(all.findings().size() > elsewhere.findings().size(), all + "\n" + elsewhere);
        Result.Finding f = all.findings().get(0);
        Result.Finding g = fr.findings().get(0);
        assertEquals(f.code(), g.code());
        assertNotEquals(f.message(), g.message());
        assertEquals("signup", f.location().page());
    }

    @Test
    void loadErrorsListEveryDiagnosticSorted() throws Exception {
        String src = "{\"ruleset\":{\"id\":\"t\",\"version\":\"1\",\"defaultLocale\":\"en\",\"locales\":{\"en\":{\"m\":\"x\"}},\"rules\":["
            + "{\"id\":\"a\",\"code\":\"C\",\"when\":{\"op\":\"nope\",\"args\":[]},\"message\":\"m\"},"
            + "{\"id\":\"b\",\"code\":\"C\",\"when\":{\"op\":\"matches\",\"args\":[\"x\",\"(a+)+\"]},\"message\":\"m\"}]}}";
        EngineException e = assertThrows(EngineException.class, () -> RuleSet.fromSource(src));
        assertEquals(2, e.diagnostics().size());
        assertEquals("/ruleset/rules/0/when/op", e.diagnostics().get(0).pointer());
        assertEquals("PATTERN_NOT_PORTABLE", e.diagnostics().get(1).code());
        assertEquals("/ruleset/rules/1/when/args/1", e.diagnostics().get(1).pointer());
    }

    /** A built ruleset is shared by threads: concurrent evaluations give the sequential results. */
    @Test
    void threadSafeOnceBuilt() throws Exception {
        RuleSet rs = RuleSet.fromBundle(bundleText("loan")).withOperators(SuiteOperators.all());
        Map<?, ?> file = (Map<?, ?>) Json.parse(TestFiles.read("conformance/corpus/loan.json"));
        List<Request> reqs = new ArrayList<>();
        List<String> want = new ArrayList<>();
        for (Object o : (List<?>) file.get("cases")) {
            Map<?, ?> in = (Map<?, ?>) ((Map<?, ?>) o).get("input");
            try {
                Request r = Request.fromJson(in.get("request"));
                reqs.add(r);
                want.add(rs.evaluate(r).toString());
            } catch (EngineException e) {
                // shape-check refusals are not evaluations
            }
        }
        ExecutorService pool = Executors.newFixedThreadPool(4);
        try {
            List<Future<Boolean>> fs = new ArrayList<>();
            for (int t = 0; t < 8; t++) {
                fs.add(pool.submit(() -> {
                    for (int k = 0; k < reqs.size(); k++) {
                        if (!rs.evaluate(reqs.get(k)).toString().equals(want.get(k))) {
                            return false;
                        }
                    }
                    return true;
                }));
            }
            for (Future<Boolean> f : fs) {
                assertTrue(f.get());
            }
        } finally {
            pool.shutdown();
        }
    }

    /**
     * spec/v1/README.md, "Text": a host's string that is not a sequence of Unicode scalar values is
     * BAD_REQUEST at its pointer; text that is not well-formed UTF-8 is malformed JSON at "".
     */
    @Test
    void textHoldsScalarValuesOnly() throws Exception {
        EngineException e = assertThrows(EngineException.class,
            () -> Request.of(Map.of("account", Map.of("tags", List.of("ok", "a\udc00")))));
        assertEquals("BAD_REQUEST", e.code());
        assertEquals("/data/account/tags/1", e.pointer());
        e = assertThrows(EngineException.class, () -> Request.of(Map.of("a", "x")).withCtx(Map.of("\ud800k", 1)));
        assertEquals("/ctx/\ud800k", e.pointer());
        e = assertThrows(EngineException.class, () -> Request.fromJson(Map.of("data", Map.of("a", "\ud83d"))));
        assertEquals("/data/a", e.pointer());
        assertEquals("😀", Request.of(Map.of("a", "😀")).data.get("a"));
        RuleSet rs = RuleSet.fromBundle(bundleText("signup"));
        Request ok = Request.of(Map.of());
        e = assertThrows(EngineException.class, () -> rs.evaluate(ok, View.page("sign\ud800"), null, null));
        assertEquals("/view/page", e.pointer());
        e = assertThrows(EngineException.class, () -> rs.evaluate(ok, null, "fr\udfff", null));
        assertEquals("/locale", e.pointer());
        byte[] bundle = bundleText("signup").replace("Signup form", "Signup f\u00f6rm").getBytes(java.nio.charset.StandardCharsets.UTF_8);
        assertEquals("signup", RuleSet.fromBundle(bundle).id());
        int at = new String(bundle, java.nio.charset.StandardCharsets.ISO_8859_1).indexOf("f\u00c3\u00b6rm");
        bundle[at + 1] = (byte) 0xff;
        e = assertThrows(EngineException.class, () -> RuleSet.fromBundle(bundle));
        assertEquals("BUNDLE_INVALID", e.diagnostics().get(0).code());
        assertEquals("", e.diagnostics().get(0).pointer());
        e = assertThrows(EngineException.class, () -> RuleSet.fromManifest(bundleText("signup").replace("Signup form", "Signup \\ud800")));
        assertEquals("BUNDLE_INVALID", e.diagnostics().get(0).code());
    }

    /** spec/v1/README.md: no member named twice at any level; the bundle's code, at the second occurrence. */
    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "\"fieldTypes\": {|\"fieldTypes\": {\"account.email\": \"Email\", |/fieldTypes/account.email",
        "\"ruleset\": {|\"ruleset\": {\"id\": \"signup\", |/ruleset/id",
        "\"channel\": \"client\",|\"channel\": \"client\", \"channel\": \"client\",|/channel"})
    void membersNamedTwiceInAManifest(String find, String replace, String pointer) throws Exception {
        Map<?, ?> bundle = (Map<?, ?>) Json.parse(bundleText("signup"));
        String manifest = Json.write(bundle.get("client")).replace(find.replace(" ", ""), replace.replace(", ", ",").replace(": ", ":"));
        EngineException e = assertThrows(EngineException.class, () -> RuleSet.fromManifest(manifest));
        assertEquals("BUNDLE_INVALID", e.code());
        assertEquals(pointer, e.pointer(), manifest.substring(0, 80));
    }
}
