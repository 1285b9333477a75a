package dev.sdods.rules;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The ruleset model read from a source ruleset (ruleset.md §1–5) or a manifest (§9), with every
 * structural diagnostic, and its resolved form (§8).
 */
final class Model {
    static final List<String> LEVELS = Arrays.asList("page", "screen", "section", "component");
    static final List<String> SCOPES = Arrays.asList("project", "module", "page", "screen", "section", "component");
    static final List<String> BASES = Arrays.asList("string", "number", "integer", "boolean", "date", "datetime", "object", "array");
    static final List<String> PROPS = Arrays.asList("hidden", "disabled", "required", "readOnly", "value");
    static final List<String> RULESET_MEMBERS = Arrays.asList("id", "version", "description", "defaultLocale", "types",
        "entities", "functions", "operators", "rules", "stateRules", "locales");

    String id = "", version = "";
    String description;
    String defaultLocale = "";
    final Map<String, String[]> types = new LinkedHashMap<>(); // name -> {base, description}
    final List<Entity> entities = new ArrayList<>();
    Map<?, ?> functions; // definitions as written; checked by the expression compiler
    final Map<String, String> operators = new LinkedHashMap<>(); // name -> description or null
    final List<Rule> rules = new ArrayList<>();
    final List<StateRule> stateRules = new ArrayList<>();
    final Map<String, Map<String, String>> locales = new LinkedHashMap<>();

    static final class Entity {
        String name, path, description;
        boolean many;
        final Map<String, String> fieldTypes = new LinkedHashMap<>();
        final Map<String, String> ptrs = new LinkedHashMap<>();
    }

    static final class Target {
        final Map<String, String> levels = new LinkedHashMap<>();
        List<String> fields;
        String type;
    }

    static final class Rule {
        String ptr, id, description, scope, severity = "error", code, key, keyPtr;
        List<String> channels;
        Target target = new Target();
        Object when;
        final Map<String, Object> params = new java.util.TreeMap<>();
    }

    static final class StateRule {
        String ptr, id, description, scope;
        List<String> channels;
        Target target = new Target();
        Object when = Boolean.TRUE;
        final List<Effect> effects = new ArrayList<>();
    }

    static final class Effect {
        String ptr, field;
        final Map<String, Object> props = new LinkedHashMap<>();
    }

    // ---- reading ----

    private final List<Diagnostic> diags;
    private final String code;
    private final boolean manifest;
    private String bodyPtr;

    /** The code of this document's structural problems: RULESET_INVALID or BUNDLE_INVALID. */
    String structureCode() {
        return code;
    }

    private Model(List<Diagnostic> diags, String code, boolean manifest) {
        this.diags = diags;
        this.code = code;
        this.manifest = manifest;
    }

    private void err(String ptr, String message) {
        diags.add(new Diagnostic(code, ptr, message));
    }

    /**
     * Reads a ruleset body (the value of "ruleset" in a source, or a manifest) at ptr; structural
     * problems are reported with code (RULESET_INVALID or BUNDLE_INVALID). Returns null when the
     * body is not an object.
     */
    static Model read(Object body, String ptr, boolean manifest, String code, List<Diagnostic> diags) {
        Model m = new Model(diags, code, manifest);
        return m.body(body, ptr) ? m : null;
    }

    private static final List<String> MANIFEST_EXTRA = Arrays.asList("formatVersion", "channel", "ruleset", "fieldTypes");

    private Map<String, Object> fields(Object n, String ptr, String what, List<String> allowed, List<String> required) {
        if (!(n instanceof Map)) {
            err(ptr, what + " must be an object");
            return null;
        }
        Map<?, ?> o = (Map<?, ?>) n;
        Map<String, Object> out = new LinkedHashMap<>();
        if (o instanceof Json.JObject && ((Json.JObject) o).duplicate != null) {
            err(Diagnostic.ptr(ptr, ((Json.JObject) o).duplicate), "member " + ((Json.JObject) o).duplicate + " appears more than once");
        }
        for (Map.Entry<?, ?> e : o.entrySet()) {
            String k = (String) e.getKey();
            if (!allowed.contains(k)) {
                if (manifest && ptr.equals(bodyPtr) && MANIFEST_EXTRA.contains(k)) {
                    continue;
                }
                err(Diagnostic.ptr(ptr, k), "unknown member " + k + " in " + what);
                continue;
            }
            out.put(k, e.getValue());
        }
        for (String r : required) {
            if (!out.containsKey(r)) {
                err(ptr, what + " lacks the required member " + r);
            }
        }
        return out;
    }

    /** A non-empty string of at most max bytes (0: no bound), or null after a report. */
    private String str(Object n, String ptr, String what, int max, boolean allowEmpty) {
        if (n == null) {
            return null;
        }
        if (!(n instanceof String)) {
            err(ptr, what + " must be a string");
            return null;
        }
        String s = (String) n;
        if (s.isEmpty() && !allowEmpty) {
            err(ptr, what + " must not be empty");
            return null;
        }
        if (max > 0 && s.getBytes(StandardCharsets.UTF_8).length > max) {
            err(ptr, what + " must be at most " + max + " bytes");
            return null;
        }
        return s;
    }

    private String str(Map<String, Object> f, String key, String ptr, String what, int max) {
        if (!f.containsKey(key)) {
            return null;
        }
        Object v = f.get(key);
        if (v == null) {
            err(ptr, what + " must be a string");
            return null;
        }
        return str(v, ptr, what, max, false);
    }

    private String desc(Map<String, Object> f, String ptr) {
        if (!f.containsKey("description")) {
            return null;
        }
        Object v = f.get("description");
        if (!(v instanceof String)) {
            err(ptr + "/description", "description must be a string");
            return null;
        }
        return (String) v;
    }

    static boolean validPath(String s) {
        if (s.isEmpty()) {
            return false;
        }
        for (String seg : s.split("\\.", -1)) {
            if (seg.isEmpty()) {
                return false;
            }
        }
        return true;
    }

    static boolean validTag(String s) {
        if (s.isEmpty() || s.length() > 35) {
            return false;
        }
        boolean first = true;
        int n = 0;
        for (int j = 0; j <= s.length(); j++) {
            if (j == s.length() || s.charAt(j) == '-') {
                if (n < 1 || n > 8) {
                    return false;
                }
                first = false;
                n = 0;
                continue;
            }
            char c = s.charAt(j);
            boolean letter = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
            if (!letter && (first || c < '0' || c > '9')) {
                return false;
            }
            n++;
        }
        return true;
    }

    static boolean validName(String s) {
        if (s.isEmpty() || s.length() > 128) {
            return false;
        }
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            boolean letter = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
            if (!letter && (i == 0 || (c != '_' && (c < '0' || c > '9')))) {
                return false;
            }
        }
        return true;
    }

    static boolean validCode(String s) {
        if (s.isEmpty() || s.length() > 128 || s.charAt(0) < 'A' || s.charAt(0) > 'Z') {
            return false;
        }
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (!((c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.')) {
                return false;
            }
        }
        return true;
    }

    private Map<?, ?> members(Object n, String ptr, String what) {
        if (n == null && !(n instanceof Map)) {
            return null;
        }
        if (!(n instanceof Map)) {
            err(ptr, what + " must be an object");
            return null;
        }
        Map<?, ?> o = (Map<?, ?>) n;
        if (o instanceof Json.JObject && ((Json.JObject) o).duplicate != null && !what.equals("functions")) {
            String d = ((Json.JObject) o).duplicate;
            if (what.equals("fieldTypes")) {
                diags.add(new Diagnostic("FIELD_TYPE_REBOUND", Diagnostic.ptr(ptr, d), "the field " + d + " is bound twice"));
            } else {
                err(Diagnostic.ptr(ptr, d), d + " appears more than once in " + what);
            }
        }
        return o;
    }

    private List<?> items(Object n, String ptr, String what) {
        if (!(n instanceof List)) {
            err(ptr, what + " must be an array");
            return null;
        }
        return (List<?>) n;
    }

    private boolean body(Object n, String ptr) {
        bodyPtr = ptr;
        List<String> allowed = RULESET_MEMBERS;
        List<String> required = Arrays.asList("id", "version", "defaultLocale");
        if (manifest) {
            allowed = RULESET_MEMBERS.subList(2, RULESET_MEMBERS.size());
            required = Arrays.asList("defaultLocale", "types", "entities", "functions", "operators", "rules", "stateRules", "locales");
        }
        Map<String, Object> m = fields(n, ptr, "the ruleset", allowed, required);
        if (m == null) {
            return false;
        }
        if (!manifest) {
            String s = str(m, "id", ptr + "/id", "id", 256);
            id = s == null ? "" : s;
            s = str(m, "version", ptr + "/version", "version", 64);
            version = s == null ? "" : s;
        }
        description = desc(m, ptr);
        String loc = str(m, "defaultLocale", ptr + "/defaultLocale", "defaultLocale", 35);
        if (loc != null) {
            if (!validTag(loc)) {
                err(ptr + "/defaultLocale", "defaultLocale is not a language tag");
            }
            defaultLocale = loc;
        }
        types(m.get("types"), ptr + "/types");
        entities(m.get("entities"), ptr + "/entities");
        Map<?, ?> fns = members(m.get("functions"), ptr + "/functions", "functions");
        functions = fns == null ? new LinkedHashMap<>() : fns;
        operators(m.get("operators"), ptr + "/operators");
        rules(m.get("rules"), ptr + "/rules");
        stateRules(m.get("stateRules"), ptr + "/stateRules");
        locales(m.get("locales"), ptr + "/locales");
        check(ptr);
        return true;
    }

    private void types(Object n, String ptr) {
        Map<?, ?> ms = n == null ? null : members(n, ptr, "types");
        if (ms == null) {
            return;
        }
        for (Map.Entry<?, ?> e : ms.entrySet()) {
            String name = (String) e.getKey();
            String tp = Diagnostic.ptr(ptr, name);
            if (!validName(name)) {
                err(tp, "type name " + name + " must be a letter followed by letters, digits or '_'");
                continue;
            }
            Map<String, Object> f = fields(e.getValue(), tp, "a type", Arrays.asList("base", "description"), List.of());
            String base = "string", d = null;
            if (f != null) {
                String b = str(f, "base", tp + "/base", "base", 0);
                if (b != null) {
                    if (!BASES.contains(b)) {
                        diags.add(new Diagnostic("TYPE_UNKNOWN", tp + "/base", "unknown base " + b));
                    }
                    base = b;
                }
                d = desc(f, tp);
            }
            types.put(name, new String[] {base, d});
        }
    }

    private void entities(Object n, String ptr) {
        Map<?, ?> ms = n == null ? null : members(n, ptr, "entities");
        if (ms == null) {
            return;
        }
        for (Map.Entry<?, ?> e : ms.entrySet()) {
            String name = (String) e.getKey();
            String ep = Diagnostic.ptr(ptr, name);
            if (!validName(name)) {
                err(ep, "entity name " + name + " must be a letter followed by letters, digits or '_'");
                continue;
            }
            Map<String, Object> f = fields(e.getValue(), ep, "an entity", Arrays.asList("path", "many", "description", "fieldTypes"), List.of("fieldTypes"));
            if (f == null) {
                continue;
            }
            Entity en = new Entity();
            en.name = name;
            en.path = name;
            String p = str(f, "path", ep + "/path", "path", 0);
            if (p != null) {
                if (!validPath(p)) {
                    err(ep + "/path", "path must be segments separated by '.', none empty");
                }
                en.path = p;
            }
            if (f.containsKey("many")) {
                if (!(f.get("many") instanceof Boolean)) {
                    err(ep + "/many", "many must be a boolean");
                } else {
                    en.many = (Boolean) f.get("many");
                }
            }
            en.description = desc(f, ep);
            if (f.containsKey("fieldTypes")) {
                Map<?, ?> ft = members(f.get("fieldTypes"), ep + "/fieldTypes", "fieldTypes");
                if (ft != null) {
                    for (Map.Entry<?, ?> fe : ft.entrySet()) {
                        String field = (String) fe.getKey();
                        String fp = Diagnostic.ptr(ep + "/fieldTypes", field);
                        if (!validPath(field)) {
                            err(fp, "field must be segments separated by '.', none empty");
                            continue;
                        }
                        String t = str(fe.getValue(), fp, "a field type", 0, false);
                        if (t == null) {
                            if (fe.getValue() == null) {
                                err(fp, "a field type must be a string");
                            }
                            continue;
                        }
                        if (!validName(t)) {
                            err(fp, "a field type must be a type name");
                            continue;
                        }
                        en.fieldTypes.put(field, t);
                        en.ptrs.put(field, fp);
                    }
                }
            }
            entities.add(en);
        }
    }

    private void operators(Object n, String ptr) {
        Map<?, ?> ms = n == null ? null : members(n, ptr, "operators");
        if (ms == null) {
            return;
        }
        for (Map.Entry<?, ?> e : ms.entrySet()) {
            String name = (String) e.getKey();
            String op = Diagnostic.ptr(ptr, name);
            if (!Expr.customName(name)) {
                err(op, "a custom operator is named x-...");
                continue;
            }
            Map<String, Object> f = fields(e.getValue(), op, "an operator declaration", List.of("description"), List.of());
            operators.put(name, f == null ? null : desc(f, op));
        }
    }

    private List<String> channels(Map<String, Object> f, String ptr) {
        if (!f.containsKey("channels")) {
            return Arrays.asList("server", "client");
        }
        List<?> l = items(f.get("channels"), ptr, "channels");
        List<String> out = new ArrayList<>();
        if (l == null) {
            return out;
        }
        if (l.isEmpty()) {
            err(ptr, "channels must list at least one channel");
        }
        for (int i = 0; i < l.size(); i++) {
            String ip = Diagnostic.ptr(ptr, i);
            Object it = l.get(i);
            if (!"server".equals(it) && !"client".equals(it)) {
                err(ip, "a channel is server or client");
                continue;
            }
            if (out.contains(it)) {
                err(ip, "a channel is listed twice");
                continue;
            }
            out.add((String) it);
        }
        if (out.size() == 2 && out.get(0).equals("client")) {
            out = Arrays.asList("server", "client"); // server first whatever the order written
        }
        return out;
    }

    private Target target(Map<String, Object> f, String ptr, boolean state) {
        Target t = new Target();
        if (!f.containsKey("target")) {
            return t;
        }
        List<String> allowed = new ArrayList<>(LEVELS);
        if (!state) {
            allowed.add("fields");
            allowed.add("type");
        }
        Map<String, Object> m = fields(f.get("target"), ptr, "a target", allowed, List.of());
        if (m == null) {
            return t;
        }
        for (String l : LEVELS) {
            String s = str(m, l, ptr + "/" + l, l, 256);
            if (s != null) {
                t.levels.put(l, s);
            }
        }
        if (m.containsKey("fields")) {
            List<?> l = items(m.get("fields"), ptr + "/fields", "fields");
            if (l != null) {
                t.fields = new ArrayList<>();
                if (l.isEmpty()) {
                    err(ptr + "/fields", "fields must list at least one field");
                }
                for (int i = 0; i < l.size(); i++) {
                    String ip = Diagnostic.ptr(ptr + "/fields", i);
                    String s = str(l.get(i), ip, "a field", 0, false);
                    if (s == null) {
                        if (l.get(i) == null) {
                            err(ip, "a field must be a string");
                        }
                        continue;
                    }
                    if (!validPath(s)) {
                        err(ip, "a field must be segments separated by '.', none empty");
                        continue;
                    }
                    if (t.fields.contains(s)) {
                        err(ip, "a field is listed twice");
                        continue;
                    }
                    t.fields.add(s);
                }
            }
        }
        if (m.containsKey("type")) {
            String s = str(m, "type", ptr + "/type", "type", 0);
            if (s != null && !validName(s)) {
                err(ptr + "/type", "type must be a type name");
            }
            t.type = s;
        }
        if (t.type != null && m.containsKey("fields")) {
            err(ptr, "a target names fields or a type, not both");
        }
        return t;
    }

    private String scope(Map<String, Object> f, String ptr, Target t) {
        if (!f.containsKey("scope")) {
            String s = "project";
            for (String l : LEVELS) {
                if (t.levels.containsKey(l)) {
                    s = l;
                }
            }
            return s;
        }
        Object v = f.get("scope");
        if (!(v instanceof String)) {
            diags.add(new Diagnostic("SCOPE_INVALID", ptr, "scope must be a level"));
            return "project";
        }
        String s = (String) v;
        if (!SCOPES.contains(s)) {
            diags.add(new Diagnostic("SCOPE_INVALID", ptr, "scope " + s + " is not a level"));
            return s;
        }
        if (LEVELS.contains(s) && !t.levels.containsKey(s)) {
            diags.add(new Diagnostic("SCOPE_INVALID", ptr, "scope " + s + " is a level the target does not name"));
        }
        return s;
    }

    private static final List<String> RULE_MEMBERS = Arrays.asList("id", "description", "scope", "channels", "severity", "code",
        "target", "when", "message");

    private void rules(Object n, String ptr) {
        if (n == null) {
            return;
        }
        List<?> l = items(n, ptr, "rules");
        if (l == null) {
            return;
        }
        for (int i = 0; i < l.size(); i++) {
            String rp = Diagnostic.ptr(ptr, i);
            Map<String, Object> f = fields(l.get(i), rp, "a rule", RULE_MEMBERS, Arrays.asList("id", "code", "when", "message"));
            if (f == null) {
                continue;
            }
            Rule r = new Rule();
            r.ptr = rp;
            r.id = str(f, "id", rp + "/id", "id", 256);
            r.description = desc(f, rp);
            String c = str(f, "code", rp + "/code", "code", 0);
            if (c != null) {
                if (!validCode(c)) {
                    err(rp + "/code", "code must be upper-case letters, digits, '_' or '.', starting with a letter");
                } else if (c.equals("RULE_FAILED")) {
                    err(rp + "/code", "code RULE_FAILED is reserved for rules that fail closed");
                }
                r.code = c;
            }
            String sev = str(f, "severity", rp + "/severity", "severity", 0);
            if (sev != null) {
                if (!sev.equals("error") && !sev.equals("warning") && !sev.equals("info")) {
                    err(rp + "/severity", "severity is error, warning or info");
                }
                r.severity = sev;
            }
            r.channels = channels(f, rp + "/channels");
            r.target = target(f, rp + "/target", false);
            r.scope = scope(f, rp + "/scope", r.target);
            r.when = f.get("when");
            message(f, rp + "/message", r);
            rules.add(r);
        }
    }

    private void message(Map<String, Object> f, String ptr, Rule r) {
        r.keyPtr = ptr;
        if (!f.containsKey("message")) {
            return;
        }
        Object n = f.get("message");
        if (n instanceof String || n == null) {
            r.key = str(f, "message", ptr, "message", 0);
            return;
        }
        Map<String, Object> m = fields(n, ptr, "a message", Arrays.asList("key", "params"), List.of("key"));
        if (m == null) {
            return;
        }
        r.key = str(m, "key", ptr + "/key", "key", 0);
        r.keyPtr = ptr + "/key";
        if (m.containsKey("params")) {
            Map<?, ?> ps = members(m.get("params"), ptr + "/params", "params");
            if (ps != null) {
                for (Map.Entry<?, ?> e : ps.entrySet()) {
                    String name = (String) e.getKey();
                    if (!validName(name)) {
                        err(Diagnostic.ptr(ptr + "/params", name), "a parameter name is a letter followed by letters, digits or '_'");
                        continue;
                    }
                    r.params.put(name, e.getValue());
                }
            }
        }
    }

    private void stateRules(Object n, String ptr) {
        if (n == null) {
            return;
        }
        List<?> l = items(n, ptr, "stateRules");
        if (l == null) {
            return;
        }
        for (int i = 0; i < l.size(); i++) {
            String rp = Diagnostic.ptr(ptr, i);
            Map<String, Object> f = fields(l.get(i), rp, "a state rule",
                Arrays.asList("id", "description", "scope", "channels", "target", "when", "effects"), Arrays.asList("id", "effects"));
            if (f == null) {
                continue;
            }
            StateRule r = new StateRule();
            r.ptr = rp;
            r.id = str(f, "id", rp + "/id", "id", 256);
            r.description = desc(f, rp);
            r.channels = channels(f, rp + "/channels");
            r.target = target(f, rp + "/target", true);
            r.scope = scope(f, rp + "/scope", r.target);
            if (f.containsKey("when")) {
                r.when = f.get("when");
            }
            if (f.containsKey("effects")) {
                List<?> es = items(f.get("effects"), rp + "/effects", "effects");
                if (es != null && es.isEmpty()) {
                    err(rp + "/effects", "effects must list at least one effect");
                }
                for (int j = 0; es != null && j < es.size(); j++) {
                    String ep = Diagnostic.ptr(rp + "/effects", j);
                    List<String> allowed = new ArrayList<>();
                    allowed.add("field");
                    allowed.addAll(PROPS);
                    Map<String, Object> ef = fields(es.get(j), ep, "an effect", allowed, List.of("field"));
                    if (ef == null) {
                        continue;
                    }
                    Effect e = new Effect();
                    e.ptr = ep;
                    String fld = str(ef, "field", ep + "/field", "field", 0);
                    if (fld != null) {
                        if (!validPath(fld)) {
                            err(ep + "/field", "field must be segments separated by '.', none empty");
                        }
                        e.field = fld;
                    }
                    for (String p : PROPS) {
                        if (ef.containsKey(p)) {
                            e.props.put(p, ef.get(p));
                        }
                    }
                    if (e.props.isEmpty()) {
                        err(ep, "an effect sets at least one of hidden, disabled, required, readOnly, value");
                    }
                    r.effects.add(e);
                }
            }
            stateRules.add(r);
        }
    }

    private void locales(Object n, String ptr) {
        Map<?, ?> ms = n == null ? null : members(n, ptr, "locales");
        if (ms == null) {
            return;
        }
        java.util.Set<String> seen = new java.util.HashSet<>();
        for (Map.Entry<?, ?> e : ms.entrySet()) {
            String tag = (String) e.getKey();
            String cp = Diagnostic.ptr(ptr, tag);
            if (!validTag(tag)) {
                err(cp, "locale " + tag + " is not a language tag");
                continue;
            }
            if (!seen.add(tag.toLowerCase(Locale.ROOT))) {
                err(cp, "locale " + tag + " is declared more than once");
                continue;
            }
            Map<?, ?> cat = members(e.getValue(), cp, "a catalog");
            Map<String, String> out = new LinkedHashMap<>();
            if (cat != null) {
                for (Map.Entry<?, ?> m : cat.entrySet()) {
                    String key = (String) m.getKey();
                    String mp = Diagnostic.ptr(cp, key);
                    if (key.isEmpty()) {
                        err(mp, "a message key must not be empty");
                        continue;
                    }
                    if (!(m.getValue() instanceof String)) {
                        err(mp, "a message template must be a string");
                        continue;
                    }
                    String problem = Template.check((String) m.getValue());
                    if (problem != null) {
                        err(mp, "template: " + problem);
                        continue;
                    }
                    out.put(key, (String) m.getValue());
                }
            }
            locales.put(tag, out);
        }
    }

    private void check(String ptr) {
        java.util.Set<String> bound = new java.util.HashSet<>();
        for (Entity e : entities) {
            for (Map.Entry<String, String> f : e.fieldTypes.entrySet()) {
                String fp = e.ptrs.get(f.getKey());
                if (!types.containsKey(f.getValue())) {
                    diags.add(new Diagnostic("TYPE_UNKNOWN", fp, "type " + f.getValue() + " is not declared"));
                }
                String key = e.path + (e.many ? ".[]" : "") + "." + f.getKey();
                if (!bound.add(key)) {
                    diags.add(new Diagnostic("FIELD_TYPE_REBOUND", fp, "the field " + key + " is bound to a type more than once"));
                }
            }
        }
        java.util.Set<String> ids = new java.util.HashSet<>();
        Map<String, String> def = null;
        for (Map.Entry<String, Map<String, String>> c : locales.entrySet()) {
            if (c.getKey().equalsIgnoreCase(defaultLocale)) {
                def = c.getValue();
            }
        }
        if (def == null && !defaultLocale.isEmpty() && !rules.isEmpty()) {
            err(ptr + "/defaultLocale", "the default locale has no catalog in locales");
        }
        for (Rule r : rules) {
            if (r.id != null && !ids.add(r.id)) {
                err(r.ptr + "/id", "rule id " + r.id + " is used more than once");
            }
            if (r.target.type != null && !types.containsKey(r.target.type)) {
                diags.add(new Diagnostic("TYPE_UNKNOWN", r.ptr + "/target/type", "type " + r.target.type + " is not declared"));
            }
            if (def != null && r.key != null && !def.containsKey(r.key)) {
                err(r.keyPtr, "message " + r.key + " is not in the catalog of the default locale");
            }
        }
        for (StateRule r : stateRules) {
            if (r.id != null && !ids.add(r.id)) {
                err(r.ptr + "/id", "id " + r.id + " is used more than once");
            }
        }
    }

    // ---- the resolved form ----

    private static void putDesc(Map<String, Object> m, String d) {
        if (d != null) {
            m.put("description", d);
        }
    }

    static Map<String, Object> target(Target t) {
        Map<String, Object> n = new LinkedHashMap<>(t.levels);
        if (t.fields != null && !t.fields.isEmpty()) {
            n.put("fields", new ArrayList<>(t.fields));
        }
        if (t.type != null) {
            n.put("type", t.type);
        }
        return n;
    }

    /** The resolved members shared by the ruleset and its manifests; channel null keeps every rule. */
    Map<String, Object> members(String channel) {
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("defaultLocale", defaultLocale);
        putDesc(out, description);
        Map<String, Object> ts = new LinkedHashMap<>();
        for (Map.Entry<String, String[]> t : types.entrySet()) {
            Map<String, Object> tn = new LinkedHashMap<>();
            tn.put("base", t.getValue()[0]);
            putDesc(tn, t.getValue()[1]);
            ts.put(t.getKey(), tn);
        }
        out.put("types", ts);
        Map<String, Object> es = new LinkedHashMap<>();
        for (Entity e : entities) {
            Map<String, Object> en = new LinkedHashMap<>();
            en.put("path", e.path);
            en.put("many", e.many);
            en.put("fieldTypes", new LinkedHashMap<>(e.fieldTypes));
            putDesc(en, e.description);
            es.put(e.name, en);
        }
        out.put("entities", es);
        Map<String, Object> fs = new LinkedHashMap<>();
        for (Map.Entry<?, ?> f : functions.entrySet()) {
            Map<?, ?> def = (Map<?, ?>) f.getValue();
            Map<String, Object> fn = new LinkedHashMap<>();
            fn.put("params", def.get("params"));
            fn.put("body", def.get("body"));
            if (def.containsKey("description")) {
                fn.put("description", def.get("description"));
            }
            fs.put((String) f.getKey(), fn);
        }
        out.put("functions", fs);
        Map<String, Object> os = new LinkedHashMap<>();
        for (Map.Entry<String, String> o : operators.entrySet()) {
            Map<String, Object> on = new LinkedHashMap<>();
            putDesc(on, o.getValue());
            os.put(o.getKey(), on);
        }
        out.put("operators", os);
        List<Object> rs = new ArrayList<>();
        for (Rule r : rules) {
            if (channel != null && !r.channels.contains(channel)) {
                continue;
            }
            Map<String, Object> rn = new LinkedHashMap<>();
            rn.put("id", r.id);
            rn.put("scope", r.scope);
            rn.put("channels", new ArrayList<>(r.channels));
            rn.put("severity", r.severity);
            rn.put("code", r.code);
            rn.put("target", target(r.target));
            rn.put("when", r.when);
            Map<String, Object> msg = new LinkedHashMap<>();
            msg.put("key", r.key);
            msg.put("params", new LinkedHashMap<>(r.params));
            rn.put("message", msg);
            putDesc(rn, r.description);
            rs.add(rn);
        }
        out.put("rules", rs);
        List<Object> ss = new ArrayList<>();
        for (StateRule r : stateRules) {
            if (channel != null && !r.channels.contains(channel)) {
                continue;
            }
            Map<String, Object> sn = new LinkedHashMap<>();
            sn.put("id", r.id);
            sn.put("scope", r.scope);
            sn.put("channels", new ArrayList<>(r.channels));
            sn.put("target", target(r.target));
            sn.put("when", r.when);
            List<Object> effects = new ArrayList<>();
            for (Effect e : r.effects) {
                Map<String, Object> en = new LinkedHashMap<>();
                en.put("field", e.field);
                en.putAll(e.props);
                effects.add(en);
            }
            sn.put("effects", effects);
            putDesc(sn, r.description);
            ss.add(sn);
        }
        out.put("stateRules", ss);
        Map<String, Object> ls = new LinkedHashMap<>();
        for (Map.Entry<String, Map<String, String>> c : locales.entrySet()) {
            ls.put(c.getKey(), new LinkedHashMap<>(c.getValue()));
        }
        out.put("locales", ls);
        return out;
    }

    /** The resolved ruleset document {"ruleset": {...}} (ruleset.md §8). */
    Map<String, Object> resolved() {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("id", id);
        body.put("version", version);
        body.putAll(members(null));
        Map<String, Object> doc = new LinkedHashMap<>();
        doc.put("ruleset", body);
        return doc;
    }

    /** "Entity.field" -> type, for every binding. */
    Map<String, Object> fieldTypes() {
        Map<String, Object> n = new LinkedHashMap<>();
        for (Entity e : entities) {
            for (Map.Entry<String, String> f : e.fieldTypes.entrySet()) {
                n.put(e.name + "." + f.getKey(), f.getValue());
            }
        }
        return n;
    }
}
