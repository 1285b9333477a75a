package dev.sdods.rules;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * A loaded ruleset (spec/v1/ruleset.md, evaluation.md): from a bundle (both channels), a single
 * manifest (one channel) or a source ruleset (compiled here, the compiler level). Immutable and
 * safe for concurrent evaluations once built; {@link #withOperators} returns a new instance.
 */
public final class RuleSet {
    /** The engine release line this runtime implements. */
    public static final String VERSION = "1.0.0-alpha.2";

    private final String id, version, checksum;
    private final Map<String, Channel> channels; // by name, sorted
    private final Map<String, Object> bundle; // null when loaded from a manifest
    private final Map<String, CustomOperator> operators;
    private final long budget;

    private RuleSet(String id, String version, String checksum, Map<String, Channel> channels, Map<String, Object> bundle,
                    Map<String, CustomOperator> operators, long budget) {
        this.id = id;
        this.version = version;
        this.checksum = checksum;
        this.channels = channels;
        this.bundle = bundle;
        this.operators = operators;
        this.budget = budget;
    }

    // ---- loading ----

    /** Loads a bundle given as JSON text (UTF-8 bytes). */
    public static RuleSet fromBundle(byte[] json) throws EngineException {
        return fromBundle(text(json, "BUNDLE_INVALID"));
    }

    /** Loads a bundle given as JSON text. */
    public static RuleSet fromBundle(String json) throws EngineException {
        return fromBundleJson(parse(json, "BUNDLE_INVALID"));
    }

    /** Loads a manifest (one channel) given as JSON text (UTF-8 bytes). */
    public static RuleSet fromManifest(byte[] json) throws EngineException {
        return fromManifest(text(json, "BUNDLE_INVALID"));
    }

    /** Loads a manifest (one channel) given as JSON text. */
    public static RuleSet fromManifest(String json) throws EngineException {
        return fromManifestJson(parse(json, "BUNDLE_INVALID"));
    }

    /** Compiles a source ruleset given as JSON text and loads its bundle (compiler level). */
    public static RuleSet fromSource(String json) throws EngineException {
        return fromBundleJson(compile(parse(json, "RULESET_INVALID")));
    }

    /** Decodes UTF-8 text; text that is not well-formed is malformed JSON (spec/v1/README.md, "Text"). */
    private static String text(byte[] json, String code) throws EngineException {
        try {
            return Json.utf8(json);
        } catch (Json.SyntaxException e) {
            throw new EngineException(List.of(new Diagnostic(code, "", "malformed JSON: " + e.getMessage())));
        }
    }

    private static Object parse(String json, String code) throws EngineException {
        try {
            return Json.parse(json);
        } catch (Json.SyntaxException e) {
            throw new EngineException(List.of(new Diagnostic(code, "", "malformed JSON: " + e.getMessage())));
        }
    }

    static RuleSet fromBundleJson(Object n) throws EngineException {
        List<Diagnostic> diags = new ArrayList<>();
        if (!(n instanceof Map)) {
            throw new EngineException(List.of(new Diagnostic("BUNDLE_INVALID", "", "a bundle is a JSON object")));
        }
        Map<?, ?> b = (Map<?, ?>) n;
        if (!version(b, "", diags)) {
            throw new EngineException(diags);
        }
        if (b instanceof Json.JObject && ((Json.JObject) b).duplicate() != null) {
            diags.add(new Diagnostic("BUNDLE_INVALID", Diagnostic.ptr("", ((Json.JObject) b).duplicate()), "a member appears twice"));
        }
        for (Object k : b.keySet()) {
            if (!List.of("formatVersion", "ruleset", "server", "client").contains(k)) {
                diags.add(new Diagnostic("BUNDLE_INVALID", Diagnostic.ptr("", (String) k), "unknown member " + k + " in a bundle"));
            }
        }
        String[] ref = ref(b.get("ruleset"), "/ruleset", diags);
        List<Read> reads = new ArrayList<>();
        for (String ch : new String[] {"server", "client"}) {
            if (!b.containsKey(ch)) {
                diags.add(new Diagnostic("BUNDLE_INVALID", "", "the bundle lacks the " + ch + " manifest"));
                continue;
            }
            Read r = manifest(b.get(ch), "/" + ch, diags);
            if (r == null) {
                continue;
            }
            if (!ch.equals(r.channel)) {
                diags.add(new Diagnostic("BUNDLE_INVALID", "/" + ch + "/channel", "the " + ch + " manifest says channel " + r.channel));
            }
            if (ref != null && !java.util.Arrays.equals(ref, r.ref)) {
                diags.add(new Diagnostic("BUNDLE_INVALID", "/" + ch + "/ruleset", "the " + ch + " manifest names another ruleset than the bundle"));
            }
            reads.add(r);
        }
        Map<String, Channel> chans = new TreeMap<>();
        if (diags.isEmpty()) {
            for (Read r : reads) {
                chans.put(r.channel, new Channel(r, diags));
            }
        }
        if (!diags.isEmpty()) {
            Diagnostic.sort(diags);
            throw new EngineException(diags);
        }
        return new RuleSet(ref[0], ref[1], ref[2], Collections.unmodifiableMap(chans), freeze(Channel.asMap(b)), Map.of(), Expr.DEFAULT_BUDGET);
    }

    static RuleSet fromManifestJson(Object n) throws EngineException {
        List<Diagnostic> diags = new ArrayList<>();
        Read r = manifest(n, "", diags);
        Channel ch = null;
        if (diags.isEmpty() && r != null) {
            ch = new Channel(r, diags);
        }
        if (!diags.isEmpty()) {
            Diagnostic.sort(diags);
            throw new EngineException(diags);
        }
        Map<String, Channel> chans = new TreeMap<>();
        chans.put(r.channel, ch);
        return new RuleSet(r.ref[0], r.ref[1], r.ref[2], Collections.unmodifiableMap(chans), null, Map.of(), Expr.DEFAULT_BUDGET);
    }

    /** A JSON value made deeply unmodifiable (the bundle is handed out as a value). */
    @SuppressWarnings("unchecked")
    static <T> T freeze(T v) {
        if (v instanceof List) {
            List<Object> out = new ArrayList<>();
            for (Object e : (List<?>) v) {
                out.add(freeze(e));
            }
            return (T) Collections.unmodifiableList(out);
        }
        if (v instanceof Map) {
            Map<String, Object> out = new LinkedHashMap<>();
            for (Map.Entry<?, ?> e : ((Map<?, ?>) v).entrySet()) {
                out.put((String) e.getKey(), freeze(e.getValue()));
            }
            return (T) Collections.unmodifiableMap(out);
        }
        return v;
    }

    /** Checks formatVersion; false when nothing else must be read. */
    private static boolean version(Map<?, ?> n, String ptr, List<Diagnostic> diags) {
        if (!n.containsKey("formatVersion")) {
            diags.add(new Diagnostic("BUNDLE_INVALID", ptr, "formatVersion is missing"));
            return false;
        }
        Object v = n.get("formatVersion");
        if (!(v instanceof Double) || !Ops.integer((Double) v) || (Double) v < 1) {
            diags.add(new Diagnostic("BUNDLE_INVALID", ptr + "/formatVersion", "formatVersion is a positive integer"));
            return false;
        }
        if ((Double) v != 1) {
            diags.add(new Diagnostic("BUNDLE_UNSUPPORTED", ptr + "/formatVersion", "formatVersion " + Num.text((Double) v)
                + " is not supported; this runtime reads 1"));
            return false;
        }
        return true;
    }

    private static String[] ref(Object n, String ptr, List<Diagnostic> diags) {
        if (!(n instanceof Map)) {
            diags.add(new Diagnostic("BUNDLE_INVALID", ptr, "ruleset is an object {id, version, checksum}"));
            return null;
        }
        Map<?, ?> m = (Map<?, ?>) n;
        String[] out = new String[3];
        boolean ok = true;
        if (m instanceof Json.JObject && ((Json.JObject) m).duplicate() != null) {
            // no member named twice at any level (spec/v1/README.md)
            String d = ((Json.JObject) m).duplicate();
            diags.add(new Diagnostic("BUNDLE_INVALID", Diagnostic.ptr(ptr, d), "member " + d + " appears more than once"));
            ok = false;
        }
        for (Map.Entry<?, ?> e : m.entrySet()) {
            String k = (String) e.getKey();
            int i = List.of("id", "version", "checksum").indexOf(k);
            String mp = Diagnostic.ptr(ptr, k);
            if (i < 0) {
                diags.add(new Diagnostic("BUNDLE_INVALID", mp, "unknown member " + k + " in the ruleset reference"));
                ok = false;
                continue;
            }
            int max = i == 0 ? 256 : i == 1 ? 64 : 1000;
            if (!Request.validString(e.getValue(), max)) {
                diags.add(new Diagnostic("BUNDLE_INVALID", mp, k + " is a non-empty string"));
                ok = false;
                continue;
            }
            out[i] = (String) e.getValue();
        }
        if (out[0] == null || out[1] == null || out[2] == null) {
            if (ok) {
                diags.add(new Diagnostic("BUNDLE_INVALID", ptr, "the ruleset reference needs id, version and checksum"));
            }
            return null;
        }
        if (!out[2].matches("sha256:[0-9a-f]{64}")) {
            diags.add(new Diagnostic("BUNDLE_INVALID", ptr + "/checksum", "checksum is sha256: followed by 64 lower-case hex digits"));
            return null;
        }
        return ok ? out : null;
    }

    /** A manifest read structurally. */
    static final class Read {
        String channel;
        String[] ref;
        Model model;
        String ptr;
        Map<?, ?> json;
    }

    private static Read manifest(Object n, String ptr, List<Diagnostic> diags) {
        if (!(n instanceof Map)) {
            diags.add(new Diagnostic("BUNDLE_INVALID", ptr, "a manifest is a JSON object"));
            return null;
        }
        Map<?, ?> m = (Map<?, ?>) n;
        if (!version(m, ptr, diags)) {
            return null;
        }
        Read r = new Read();
        r.ptr = ptr;
        r.json = m;
        Object ch = m.get("channel");
        if (!"server".equals(ch) && !"client".equals(ch)) {
            diags.add(new Diagnostic("BUNDLE_INVALID", ptr + "/channel", "channel is \"server\" or \"client\""));
        } else {
            r.channel = (String) ch;
        }
        r.ref = ref(m.get("ruleset"), ptr + "/ruleset", diags);
        int before = diags.size();
        r.model = Model.read(m, ptr, true, "BUNDLE_INVALID", diags);
        if (r.model == null) {
            return null;
        }
        if (r.ref != null) {
            r.model.id = r.ref[0];
            r.model.version = r.ref[1];
        }
        Object ft = m.get("fieldTypes");
        if (!(ft instanceof Map)) {
            diags.add(new Diagnostic("BUNDLE_INVALID", ptr + "/fieldTypes", "fieldTypes is an object"));
        } else if (ft instanceof Json.JObject && ((Json.JObject) ft).duplicate() != null) {
            // no member named twice at any level (spec/v1/README.md), at the second occurrence
            String d = ((Json.JObject) ft).duplicate();
            diags.add(new Diagnostic("BUNDLE_INVALID", Diagnostic.ptr(ptr + "/fieldTypes", d), "the field " + d + " appears more than once in fieldTypes"));
        } else if (diags.size() == before && !Json.canonical(ft).equals(Json.canonical(r.model.fieldTypes()))) {
            diags.add(new Diagnostic("BUNDLE_INVALID", ptr + "/fieldTypes", "fieldTypes does not match the fieldTypes of the entities"));
        }
        if (r.channel != null) {
            for (Model.Rule ru : r.model.rules) {
                if (!ru.channels.contains(r.channel)) {
                    diags.add(new Diagnostic("BUNDLE_INVALID", ru.ptr + "/channels", "the rule does not belong to channel " + r.channel));
                }
            }
            for (Model.StateRule ru : r.model.stateRules) {
                if (!ru.channels.contains(r.channel)) {
                    diags.add(new Diagnostic("BUNDLE_INVALID", ru.ptr + "/channels", "the state rule does not belong to channel " + r.channel));
                }
            }
        }
        if (r.ref == null || r.channel == null) {
            return null;
        }
        return r;
    }

    // ---- the compiler level ----

    /** A compiled source ruleset: its reference and its bundle. */
    static Map<String, Object> compile(Object doc) throws EngineException {
        List<Diagnostic> diags = new ArrayList<>();
        String code = "RULESET_INVALID";
        if (!(doc instanceof Map)) {
            throw new EngineException(List.of(new Diagnostic(code, "", "a ruleset document is a JSON object")));
        }
        Map<?, ?> d = (Map<?, ?>) doc;
        if (d instanceof Json.JObject && ((Json.JObject) d).duplicate() != null) {
            diags.add(new Diagnostic(code, Diagnostic.ptr("", ((Json.JObject) d).duplicate()), "a member appears twice"));
        }
        for (Map.Entry<?, ?> e : d.entrySet()) {
            String k = (String) e.getKey();
            if (k.equals("$schema")) {
                if (!(e.getValue() instanceof String)) {
                    diags.add(new Diagnostic(code, "/$schema", "$schema is a string"));
                }
            } else if (!k.equals("ruleset")) {
                diags.add(new Diagnostic(code, Diagnostic.ptr("", k), "unknown member " + k + " of a ruleset document"));
            }
        }
        if (!d.containsKey("ruleset")) {
            diags.add(new Diagnostic(code, "", "the document lacks its ruleset member"));
            Diagnostic.sort(diags);
            throw new EngineException(diags);
        }
        Model model = Model.read(d.get("ruleset"), "/ruleset", false, code, diags);
        if (model != null) {
            compileExpressions(model, "/ruleset", diags);
        }
        if (!diags.isEmpty()) {
            Diagnostic.sort(diags);
            throw new EngineException(diags);
        }
        String checksum = checksum(model.resolved());
        Map<String, Object> ref = new LinkedHashMap<>();
        ref.put("id", model.id);
        ref.put("version", model.version);
        ref.put("checksum", checksum);
        Map<String, Object> b = new LinkedHashMap<>();
        b.put("formatVersion", 1.0);
        b.put("ruleset", ref);
        for (String ch : new String[] {"server", "client"}) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("formatVersion", 1.0);
            m.put("channel", ch);
            m.put("ruleset", new LinkedHashMap<>(ref));
            m.put("fieldTypes", model.fieldTypes());
            m.putAll(model.members(ch));
            b.put(ch, m);
        }
        return b;
    }

    static String checksum(Object resolved) {
        try {
            byte[] sum = MessageDigest.getInstance("SHA-256").digest(Json.canonical(resolved).getBytes(StandardCharsets.UTF_8));
            StringBuilder s = new StringBuilder("sha256:");
            for (byte x : sum) {
                s.append(Character.forDigit((x >> 4) & 0xf, 16)).append(Character.forDigit(x & 0xf, 16));
            }
            return s.toString();
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    /** The compiled expressions of a model, with every diagnostic. */
    static final class Compiled {
        final List<CRule> rules = new ArrayList<>();
        final List<CState> states = new ArrayList<>();
    }

    /** A field bound to a type, split for reading: path.field, or path.I.field of a many entity. */
    static final class Binding {
        String path, list, field;
        String[] pathSegs, listSegs, fieldSegs;
        boolean many;
    }

    static final class CRule {
        Model.Rule r;
        View loc;
        String[] fields; // the target's fields, or null
        String[][] fieldSegs;
        List<Binding> bindings; // the bound fields of the target's type, or null
        Expr.Program when;
        final Map<String, Expr.Program> params = new TreeMap<>();
        final Set<String> ops = new TreeSet<>();
    }

    static final class CState {
        Model.StateRule r;
        View loc;
        Expr.Program when;
        final List<Map<String, Expr.Program>> effects = new ArrayList<>();
        final Set<String> ops = new TreeSet<>();
    }

    static Compiled compileExpressions(Model model, String ptr, List<Diagnostic> diags) {
        Expr.Compiler c = new Expr.Compiler(model.operators.keySet());
        c.functions(model.functions, ptr + "/functions", model.structureCode());
        Compiled out = new Compiled();
        for (Model.Rule r : model.rules) {
            CRule cr = new CRule();
            cr.r = r;
            cr.when = c.program(r.when, r.ptr + "/when");
            cr.ops.addAll(cr.when.operators);
            for (Map.Entry<String, Object> p : r.params.entrySet()) {
                Expr.Program pp = c.program(p.getValue(), Diagnostic.ptr(r.ptr + "/message/params", p.getKey()));
                cr.params.put(p.getKey(), pp);
                cr.ops.addAll(pp.operators);
            }
            cr.loc = Evaluation.location(r.target);
            if (r.target.fields != null && !r.target.fields.isEmpty()) {
                cr.fields = r.target.fields.toArray(new String[0]);
                cr.fieldSegs = new String[cr.fields.length][];
                for (int k = 0; k < cr.fields.length; k++) {
                    cr.fieldSegs[k] = Evaluation.split(cr.fields[k]);
                }
            } else if (r.target.type != null) {
                cr.bindings = bindings(model, r.target.type);
            }
            out.rules.add(cr);
        }
        for (Model.StateRule r : model.stateRules) {
            CState cs = new CState();
            cs.r = r;
            cs.when = c.program(r.when, r.ptr + "/when");
            cs.ops.addAll(cs.when.operators);
            for (Model.Effect e : r.effects) {
                Map<String, Expr.Program> props = new LinkedHashMap<>();
                for (Map.Entry<String, Object> p : e.props.entrySet()) {
                    Expr.Program pp = c.program(p.getValue(), e.ptr + "/" + p.getKey());
                    props.put(p.getKey(), pp);
                    cs.ops.addAll(pp.operators);
                }
                cs.effects.add(props);
            }
            cs.loc = Evaluation.location(r.target);
            out.states.add(cs);
        }
        diags.addAll(c.diags);
        return out;
    }

    /** The bound fields of a type (ruleset.md §2): entities by name, fields by path, both in RFC 8785 order. */
    static List<Binding> bindings(Model model, String type) {
        List<Binding> out = new ArrayList<>();
        List<Model.Entity> es = new ArrayList<>(model.entities);
        es.sort((a, b) -> a.name.compareTo(b.name));
        for (Model.Entity e : es) {
            List<String> fs = new ArrayList<>(e.fieldTypes.keySet());
            Collections.sort(fs);
            for (String f : fs) {
                if (!type.equals(e.fieldTypes.get(f))) {
                    continue;
                }
                Binding b = new Binding();
                b.many = e.many;
                b.list = e.path;
                b.field = f;
                b.path = e.path + "." + f;
                b.pathSegs = Evaluation.split(b.path);
                b.listSegs = Evaluation.split(e.path);
                b.fieldSegs = Evaluation.split(f);
                out.add(b);
            }
        }
        return out;
    }

    // ---- one channel ----

    static final class Channel {
        final String name;
        final Model model;
        final Map<String, Object> manifest;
        final Compiled compiled;
        final Map<String, Map<String, List<Object>>> catalogs = new HashMap<>(); // lower-case tag -> key -> template
        final String defaultLower;

        Channel(Read r, List<Diagnostic> diags) {
            this.name = r.channel;
            this.model = r.model;
            this.manifest = freeze(asMap(r.json));
            this.compiled = compileExpressions(r.model, r.ptr, diags);
            for (Map.Entry<String, Map<String, String>> c : model.locales.entrySet()) {
                Map<String, List<Object>> ts = new HashMap<>();
                for (Map.Entry<String, String> t : c.getValue().entrySet()) {
                    ts.put(t.getKey(), Template.parse(t.getValue()));
                }
                catalogs.put(c.getKey().toLowerCase(Locale.ROOT), ts);
            }
            defaultLower = model.defaultLocale.toLowerCase(Locale.ROOT);
        }

        @SuppressWarnings("unchecked")
        static Map<String, Object> asMap(Map<?, ?> m) {
            return (Map<String, Object>) m;
        }
    }

    // ---- the API ----

    public String id() {
        return id;
    }

    public String version() {
        return version;
    }

    public String checksum() {
        return checksum;
    }

    /** The channels of the ruleset, sorted: both for a bundle, one for a manifest. */
    public List<String> channels() {
        return new ArrayList<>(channels.keySet());
    }

    /** The bundle as JSON text: RFC 8785 member order and numbers, indented by two spaces, final newline. */
    public String bundle() {
        if (bundle == null) {
            throw new IllegalStateException("a ruleset loaded from a manifest has no bundle, only its " + channels.keySet() + " manifest");
        }
        return Json.indented(bundle);
    }

    /** The manifest of a channel as JSON text (RFC 8785, indented). */
    public String manifest(String channel) throws EngineException {
        return Json.indented(channel(channel).manifest);
    }

    Map<String, Object> manifestJson(String channel) throws EngineException {
        return channel(channel).manifest;
    }

    Channel channel(String name) throws EngineException {
        Channel c = channels.get(name);
        if (c == null) {
            throw new EngineException("CHANNEL_UNAVAILABLE", "", "the ruleset " + id + " has no " + name + " channel");
        }
        return c;
    }

    /** Every custom operator the ruleset declares, sorted. */
    public List<String> declaredOperators() {
        Set<String> out = new TreeSet<>();
        for (Channel c : channels.values()) {
            out.addAll(c.model.operators.keySet());
        }
        return new ArrayList<>(out);
    }

    /** The custom operators the ruleset needs that the host has not registered, sorted (missingOperators). */
    public List<String> requiredOperators() {
        List<String> out = new ArrayList<>();
        for (String o : declaredOperators()) {
            if (!operators.containsKey(o)) {
                out.add(o);
            }
        }
        return out;
    }

    /** A new ruleset with these custom operators registered beside those registered already. */
    public RuleSet withOperators(Map<String, CustomOperator> ops) {
        Map<String, CustomOperator> m = new HashMap<>(operators);
        m.putAll(ops);
        return new RuleSet(id, version, checksum, channels, bundle, Collections.unmodifiableMap(m), budget);
    }

    /** A new ruleset whose evaluations each have this work budget (expressions.md §8). */
    public RuleSet withBudget(long units) {
        return new RuleSet(id, version, checksum, channels, bundle, operators, units);
    }

    /** The default channel: server, or the only one of a ruleset loaded from a manifest. */
    String defaultChannel() {
        return channels.size() == 1 ? channels.keySet().iterator().next() : "server";
    }

    /** Evaluates a request on the default channel. */
    public Result evaluate(Request request) throws EngineException {
        return evaluate(request, request.view, request.locale, null);
    }

    /** Evaluates a request with a view, a locale (null: the default) and a channel (null: the default). */
    public Result evaluate(Request request, View view, String locale, String channel) throws EngineException {
        if (request.ruleset != null && !request.ruleset.equals(id)) {
            throw Request.bad("/ruleset", "the request names the ruleset " + request.ruleset + ", not " + id);
        }
        // strings a host hands over as values hold Unicode scalar values only (spec/v1/README.md, "Text")
        if (locale != null && !Ops.scalarValues(locale)) {
            throw Request.bad("/locale", "the locale holds a lone surrogate");
        }
        if (view != null) {
            for (String level : Model.LEVELS) {
                String v = view.get(level);
                if (v != null && !Ops.scalarValues(v)) {
                    throw Request.bad("/view/" + level, "the view's " + level + " holds a lone surrogate");
                }
            }
        }
        Channel ch = channel(channel == null ? defaultChannel() : channel);
        return new Evaluation(this, ch, request, view, locale).run();
    }

    Map<String, CustomOperator> operators() {
        return operators;
    }

    long budget() {
        return budget;
    }
}
