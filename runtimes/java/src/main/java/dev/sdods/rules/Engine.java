package dev.sdods.rules;

import java.io.BufferedOutputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The engine protocol (spec/v1/protocol.md): JSON Lines requests on standard input, one response
 * line each on standard output. An Engine keeps the rulesets it loaded; it is meant for one
 * session (one line after another), not for concurrent use.
 */
public final class Engine {
    /** The name this runtime reports to version. */
    public static final String NAME = "sdods-java";
    /** The protocol version spoken. */
    public static final int PROTOCOL = 1;

    private final Map<String, CustomOperator> ops;
    private final Map<String, RuleSet> rulesets = new HashMap<>();

    /** An engine that can register these custom operators. */
    public Engine(Map<String, CustomOperator> ops) {
        this.ops = new TreeMap<>(ops);
    }

    /** An engine with the conformance suite's three custom operators. */
    public Engine() {
        this(SuiteOperators.all());
    }

    /** Runs the protocol with the suite's operators on standard input and output. */
    public static void main(String[] args) throws Exception {
        if (args.length > 0 && (args[0].equals("version") || args[0].equals("--version"))) {
            System.out.println(NAME + " " + RuleSet.VERSION);
            return;
        }
        if (args.length > 0 && !args[0].equals("engine")) {
            System.err.println("usage: java -jar sdods-rules.jar [engine|version]");
            System.exit(2);
        }
        Throwable[] failure = new Throwable[1];
        // a thread with a large stack: expressions nest 128 deep and calls 32 deep, and JSON
        // documents nest far deeper before they are refused
        Thread t = new Thread(null, () -> {
            try {
                new Engine().serve(System.in, System.out);
            } catch (Throwable e) {
                failure[0] = e;
            }
        }, "engine", 512L << 20);
        t.start();
        t.join();
        if (failure[0] != null) {
            System.err.println("engine: " + failure[0]);
            System.exit(1);
        }
    }

    /** Answers every request line of in on out until in ends. Blank lines are not answered. */
    public void serve(InputStream in, OutputStream out) throws IOException {
        OutputStream w = new BufferedOutputStream(out, 1 << 16);
        byte[] buf = new byte[1 << 16];
        ByteArrayOutputStream line = new ByteArrayOutputStream();
        int n;
        while ((n = in.read(buf)) > 0) {
            int start = 0;
            for (int k = 0; k < n; k++) {
                if (buf[k] == '\n') {
                    line.write(buf, start, k - start);
                    answer(line.toByteArray(), w);
                    line.reset();
                    start = k + 1;
                }
            }
            line.write(buf, start, n - start);
            if (in.available() == 0) {
                w.flush();
            }
        }
        if (line.size() > 0) {
            answer(line.toByteArray(), w);
        }
        w.flush();
    }

    private void answer(byte[] raw, OutputStream w) throws IOException {
        String s;
        try {
            s = Json.utf8(raw);
        } catch (Json.SyntaxException e) {
            // malformed anywhere, even inside a payload: the whole line, with id null (protocol.md §2)
            s = null;
        }
        if (s != null && s.isBlank()) {
            return;
        }
        String resp = s == null
            ? error(null, "PROTOCOL_INVALID", "the line is not one JSON object: the text is not well-formed UTF-8", null, null)
            : handle(s);
        w.write(resp.getBytes(StandardCharsets.UTF_8));
        w.write('\n');
    }

    /** Answers one request line with one response line (without the line feed). */
    public String handle(String line) {
        Object id = null;
        try {
            Object req;
            try {
                req = Json.parse(line);
            } catch (Json.SyntaxException e) {
                return error(null, "PROTOCOL_INVALID", "the line is not one JSON object: " + e.getMessage(), null, null);
            }
            if (!(req instanceof Map)) {
                return error(null, "PROTOCOL_INVALID", "a request is a JSON object", null, null);
            }
            Map<?, ?> m = (Map<?, ?>) req;
            String dup = m instanceof Json.JObject ? ((Json.JObject) m).duplicate() : null;
            Object rawId = m.get("id");
            if ((rawId instanceof String || rawId instanceof Double) && !"id".equals(dup)) {
                id = rawId;
            }
            if (dup != null) {
                return error(id, "PROTOCOL_INVALID", "the member " + dup + " is named twice", null, null);
            }
            if (id == null) {
                return error(null, "PROTOCOL_INVALID", "a request has an id, a string or a number", null, null);
            }
            Object cmd = m.get("cmd");
            if (!(cmd instanceof String)) {
                return error(id, "PROTOCOL_INVALID", "a request has a cmd, a string", null, null);
            }
            Spec spec = SPECS.get(cmd);
            if (spec == null) {
                return error(id, "COMMAND_UNKNOWN", "no command is named " + cmd, null, null);
            }
            String problem = spec.check(m);
            if (problem != null) {
                return error(id, "PROTOCOL_INVALID", problem, null, null);
            }
            Object result = run((String) cmd, m);
            Map<String, Object> resp = new LinkedHashMap<>();
            resp.put("id", id);
            resp.put("result", result);
            return Json.write(resp);
        } catch (EngineException e) {
            return error(id, e.code(), e.getMessage(), e.pointer(), e.diagnostics());
        } catch (EvalError e) {
            return error(id, e.code, e.getMessage(), e.pointer, null);
        } catch (RuntimeException | StackOverflowError e) {
            return error(id, "INTERNAL", "a defect of the engine: " + e, null, null);
        }
    }

    private static String error(Object id, String code, String message, String pointer, List<Diagnostic> diags) {
        Map<String, Object> err = new LinkedHashMap<>();
        err.put("code", code);
        err.put("message", message == null ? code : message);
        if (pointer != null) {
            err.put("pointer", pointer);
        }
        if (diags != null && !diags.isEmpty()) {
            List<Object> ds = new ArrayList<>();
            for (Diagnostic d : diags) {
                Map<String, Object> dm = new LinkedHashMap<>();
                dm.put("code", d.code());
                dm.put("pointer", d.pointer());
                dm.put("message", d.message());
                ds.add(dm);
            }
            err.put("diagnostics", ds);
        }
        Map<String, Object> resp = new LinkedHashMap<>();
        resp.put("id", id);
        resp.put("error", err);
        return Json.write(resp);
    }

    // ---- member checks (protocol.md §2 step 3) ----

    private enum Kind { ANY, OBJECT, STRING, CHANNEL, NAMES }

    private static final class Spec {
        final Map<String, Kind> members = new TreeMap<>((a, b) -> Diagnostic.compareCodePoints(a, b));
        final List<String> required;

        Spec(List<String> required, Object... kv) {
            this.required = required;
            for (int k = 0; k < kv.length; k += 2) {
                members.put((String) kv[k], (Kind) kv[k + 1]);
            }
        }

        String check(Map<?, ?> m) {
            List<String> names = new ArrayList<>();
            for (Object k : m.keySet()) {
                if (!k.equals("id") && !k.equals("cmd")) {
                    names.add((String) k);
                }
            }
            names.sort(Diagnostic::compareCodePoints);
            for (String k : names) {
                Kind kind = members.get(k);
                if (kind == null) {
                    return "the command does not accept the member " + k;
                }
                Object v = m.get(k);
                boolean ok;
                switch (kind) {
                    case OBJECT: ok = v instanceof Map; break;
                    case STRING: ok = v instanceof String; break;
                    case CHANNEL: ok = "server".equals(v) || "client".equals(v); break;
                    case NAMES:
                        ok = v instanceof List;
                        if (ok) {
                            for (Object e : (List<?>) v) {
                                ok &= e instanceof String;
                            }
                        }
                        break;
                    default: ok = true;
                }
                if (!ok) {
                    return "the member " + k + " has the wrong type or value";
                }
            }
            for (String r : required) {
                if (!m.containsKey(r)) {
                    return "the command needs the member " + r;
                }
            }
            if (members.containsKey("bundle") && m.containsKey("bundle") == m.containsKey("manifest")) {
                return "load takes exactly one of bundle and manifest";
            }
            return null;
        }
    }

    private static final Map<String, Spec> SPECS = new HashMap<>();

    static {
        SPECS.put("version", new Spec(List.of()));
        SPECS.put("load", new Spec(List.of(), "bundle", Kind.OBJECT, "manifest", Kind.OBJECT, "channel", Kind.CHANNEL,
            "registered", Kind.NAMES));
        SPECS.put("manifest", new Spec(List.of("ruleset", "channel"), "ruleset", Kind.STRING, "channel", Kind.CHANNEL));
        SPECS.put("evaluate", new Spec(List.of("ruleset", "request"), "ruleset", Kind.STRING, "request", Kind.OBJECT,
            "channel", Kind.CHANNEL));
        SPECS.put("expression", new Spec(List.of("expression"), "expression", Kind.ANY, "env", Kind.OBJECT,
            "functions", Kind.OBJECT, "operators", Kind.NAMES, "registered", Kind.NAMES));
        SPECS.put("compile", new Spec(List.of("source"), "source", Kind.OBJECT));
    }

    // ---- commands ----

    private Map<String, CustomOperator> registered(Map<?, ?> m) {
        if (!m.containsKey("registered")) {
            return ops;
        }
        Map<String, CustomOperator> out = new TreeMap<>();
        for (Object n : (List<?>) m.get("registered")) {
            CustomOperator op = ops.get(n);
            if (op != null) {
                out.put((String) n, op);
            }
        }
        return out;
    }

    private static Map<String, Object> ref(RuleSet rs) {
        Map<String, Object> r = new LinkedHashMap<>();
        r.put("id", rs.id());
        r.put("version", rs.version());
        r.put("checksum", rs.checksum());
        return r;
    }

    private Object run(String cmd, Map<?, ?> m) throws EngineException, EvalError {
        switch (cmd) {
            case "version": {
                Map<String, Object> r = new LinkedHashMap<>();
                r.put("name", NAME);
                r.put("version", RuleSet.VERSION);
                r.put("spec", "1.0");
                r.put("protocol", (double) PROTOCOL);
                r.put("levels", Arrays.asList("evaluator", "compiler"));
                r.put("operators", new ArrayList<>(ops.keySet()));
                return r;
            }
            case "load": {
                RuleSet rs = m.containsKey("bundle") ? RuleSet.fromBundleJson(m.get("bundle")) : RuleSet.fromManifestJson(m.get("manifest"));
                if (m.containsKey("channel")) {
                    rs.channel((String) m.get("channel"));
                }
                rs = rs.withOperators(registered(m));
                rulesets.put(rs.id(), rs);
                Map<String, Object> r = new LinkedHashMap<>();
                r.put("ruleset", ref(rs));
                r.put("channels", rs.channels());
                r.put("requiredOperators", rs.declaredOperators());
                r.put("missingOperators", rs.requiredOperators());
                return r;
            }
            case "manifest":
                return lookup((String) m.get("ruleset")).manifestJson((String) m.get("channel"));
            case "evaluate": {
                Request req = Request.fromJson(m.get("request"));
                String name = (String) m.get("ruleset");
                if (req.ruleset != null && !req.ruleset.equals(name)) {
                    throw Request.bad("/ruleset", "the request names the ruleset " + req.ruleset + ", not " + name);
                }
                RuleSet rs = lookup(name);
                return rs.evaluate(req, req.view, req.locale, (String) m.get("channel")).toJson();
            }
            case "expression":
                return expression(m);
            default: { // compile
                Map<String, Object> bundle = RuleSet.compile(m.get("source"));
                Map<String, Object> r = new LinkedHashMap<>();
                r.put("ruleset", bundle.get("ruleset"));
                r.put("bundle", bundle);
                return r;
            }
        }
    }

    private RuleSet lookup(String id) throws EngineException {
        RuleSet rs = rulesets.get(id);
        if (rs == null) {
            // a protocol code: no pointer (protocol.md §3 gives one to evaluation errors, BAD_REQUEST and loads)
            throw new EngineException("RULESET_NOT_LOADED", null, "no ruleset " + id + " is loaded");
        }
        return rs;
    }

    @SuppressWarnings("unchecked")
    private Object expression(Map<?, ?> m) throws EngineException, EvalError {
        Map<String, Object> env = m.containsKey("env") ? (Map<String, Object>) m.get("env") : Map.of();
        checkEnv(env);
        java.util.Set<String> declared = new java.util.TreeSet<>();
        if (m.containsKey("operators")) {
            for (Object o : (List<?>) m.get("operators")) {
                declared.add((String) o);
            }
        }
        Expr.Compiler c = new Expr.Compiler(declared);
        if (m.containsKey("functions")) {
            c.functions(m.get("functions"), "/functions", null);
        }
        Expr.Program p = c.program(m.get("expression"), "");
        if (!c.diags.isEmpty()) {
            Diagnostic.sort(c.diags);
            throw new EngineException(c.diags);
        }
        Object v = p.eval(env, registered(m), Expr.DEFAULT_BUDGET);
        if (!Evaluation.canLeave(v)) {
            throw EvalError.of("", "a number is beyond the range of a double on the way out");
        }
        Map<String, Object> r = new LinkedHashMap<>();
        r.put("value", v);
        return r;
    }

    /** Checks an environment (expressions.md §2): every root at most 64 deep, numbers in range. */
    static void checkEnv(Map<String, Object> env) throws EngineException {
        if (env instanceof Json.JObject && ((Json.JObject) env).duplicate() != null) {
            throw Request.bad(Diagnostic.ptr("", ((Json.JObject) env).duplicate()), "a root is named twice");
        }
        List<String> names = new ArrayList<>(env.keySet());
        names.sort(Diagnostic::compareCodePoints);
        for (String k : names) {
            if (Json.depth(env.get(k)) > Request.MAX_DEPTH) {
                throw Request.bad(Diagnostic.ptr("", k), "the root " + k + " is nested more than 64 deep");
            }
        }
        for (String k : names) {
            Request.checkValue(env.get(k), Diagnostic.ptr("", k), k);
        }
    }
}
