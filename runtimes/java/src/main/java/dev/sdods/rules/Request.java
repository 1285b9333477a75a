package dev.sdods.rules;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

/**
 * An evaluation request (spec/v1/evaluation.md §1): data, original, actor, ctx (JSON objects or
 * null), and optionally a view, a locale and the ruleset id. Built from JSON by {@link #fromJson},
 * which runs the shape check every runtime applies, or from Java values by {@link #of}.
 */
public final class Request {
    final Map<String, Object> data, original, actor, ctx;
    final View view;
    final String locale;
    final String ruleset;

    private Request(Map<String, Object> data, Map<String, Object> original, Map<String, Object> actor, Map<String, Object> ctx,
                    View view, String locale, String ruleset) {
        this.data = data;
        this.original = original;
        this.actor = actor;
        this.ctx = ctx;
        this.view = view;
        this.locale = locale;
        this.ruleset = ruleset;
    }

    /** A request on data (JSON values: Map, List, String, Number, Boolean, null). */
    public static Request of(Map<String, ?> data) throws EngineException {
        return new Request(root("data", data), null, null, null, null, null, null);
    }

    public Request withOriginal(Map<String, ?> v) throws EngineException {
        return new Request(data, root("original", v), actor, ctx, view, locale, ruleset);
    }

    public Request withActor(Map<String, ?> v) throws EngineException {
        return new Request(data, original, root("actor", v), ctx, view, locale, ruleset);
    }

    public Request withCtx(Map<String, ?> v) throws EngineException {
        return new Request(data, original, actor, root("ctx", v), view, locale, ruleset);
    }

    public Request withView(View v) {
        return new Request(data, original, actor, ctx, v, locale, ruleset);
    }

    public Request withLocale(String v) {
        return new Request(data, original, actor, ctx, view, v, ruleset);
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> root(String name, Map<String, ?> v) throws EngineException {
        if (v == null) {
            return null;
        }
        Object j;
        try {
            j = Ops.toJson(v, 0);
        } catch (Ops.Refused e) {
            throw new EngineException("BAD_REQUEST", e.pointer("/" + name), name + " holds " + e.getMessage());
        }
        checkValue(j, "/" + name, name);
        return (Map<String, Object>) j;
    }

    static final int MAX_DEPTH = 64;
    private static final List<String> MEMBERS = Arrays.asList("actor", "ctx", "data", "locale", "original", "ruleset", "view");

    static EngineException bad(String ptr, String message) {
        return new EngineException("BAD_REQUEST", ptr, message);
    }

    /** Checks one environment root: depth at most 64, numbers within range, no member twice. */
    static void checkValue(Object v, String ptr, String name) throws EngineException {
        if (Json.depth(v) > MAX_DEPTH) {
            throw bad(ptr, name + " is nested more than 64 deep");
        }
        walk(v, ptr);
    }

    private static void walk(Object v, String ptr) throws EngineException {
        if (v instanceof Json.OutOfRange) {
            throw bad(ptr, "the number " + v + " is beyond the range of a double");
        }
        if (v instanceof String) {
            // parsed text never holds one; a host's value may (spec/v1/README.md, "Text")
            if (!Ops.scalarValues((String) v)) {
                throw bad(ptr, "a string holds a lone surrogate");
            }
            return;
        }
        if (v instanceof List) {
            List<?> l = (List<?>) v;
            for (int k = 0; k < l.size(); k++) {
                walk(l.get(k), Diagnostic.ptr(ptr, k));
            }
        } else if (v instanceof Map) {
            if (v instanceof Json.JObject && ((Json.JObject) v).duplicate() != null) {
                throw bad(Diagnostic.ptr(ptr, ((Json.JObject) v).duplicate()), "a member is named twice");
            }
            for (Map.Entry<?, ?> e : ((Map<?, ?>) v).entrySet()) {
                String k = (String) e.getKey();
                if (!Ops.scalarValues(k)) {
                    throw bad(Diagnostic.ptr(ptr, k), "a member name holds a lone surrogate");
                }
                walk(e.getValue(), Diagnostic.ptr(ptr, k));
            }
        }
    }

    static boolean validString(Object v, int maxBytes) {
        return v instanceof String && !((String) v).isEmpty() && ((String) v).getBytes(StandardCharsets.UTF_8).length <= maxBytes;
    }

    /** Runs the shape check of evaluation.md §1 on a parsed request and returns the request. */
    @SuppressWarnings("unchecked")
    public static Request fromJson(Object json) throws EngineException {
        if (!(json instanceof Map)) {
            throw bad("", "the request is a JSON object");
        }
        Map<String, Object> m = (Map<String, Object>) json;
        for (String k : m.keySet()) {
            if (!MEMBERS.contains(k)) {
                throw bad(Diagnostic.ptr("", k), "unknown member " + k + " of the request");
            }
        }
        if (m instanceof Json.JObject && ((Json.JObject) m).duplicate() != null) {
            throw bad(Diagnostic.ptr("", ((Json.JObject) m).duplicate()), "a member of the request is named twice");
        }
        if (!m.containsKey("data")) {
            throw bad("", "the request lacks data"); // the member is absent: the pointer names the request
        }
        for (String k : MEMBERS) {
            if (!m.containsKey(k)) {
                continue;
            }
            Object v = m.get(k);
            String p = "/" + k;
            switch (k) {
                case "actor": case "ctx": case "data": case "original":
                    if (v != null && !(v instanceof Map)) {
                        throw bad(p, k + " is a JSON object or null");
                    }
                    checkValue(v, p, k);
                    break;
                case "locale":
                    if (v != null && !(v instanceof String && Model.validTag((String) v))) {
                        throw bad(p, "locale is a language tag of at most 35 characters");
                    }
                    break;
                case "ruleset":
                    if (!validString(v, 256)) {
                        throw bad(p, "ruleset is a non-empty string of at most 256 bytes");
                    }
                    break;
                default: // view
                    if (v == null) {
                        break;
                    }
                    if (!(v instanceof Map)) {
                        throw bad(p, "view is an object with page, screen, section, component");
                    }
                    Map<String, Object> vm = (Map<String, Object>) v;
                    if (vm instanceof Json.JObject && ((Json.JObject) vm).duplicate() != null) {
                        throw bad(Diagnostic.ptr(p, ((Json.JObject) vm).duplicate()), "a member of the view is named twice");
                    }
                    for (Map.Entry<String, Object> e : vm.entrySet()) {
                        if (!Model.LEVELS.contains(e.getKey())) {
                            throw bad(Diagnostic.ptr(p, e.getKey()), "unknown member " + e.getKey() + " of the view");
                        }
                        if (!validString(e.getValue(), 256)) {
                            throw bad(Diagnostic.ptr(p, e.getKey()), "a view member is a non-empty string of at most 256 bytes");
                        }
                    }
            }
        }
        Object view = m.get("view");
        return new Request((Map<String, Object>) m.get("data"), (Map<String, Object>) m.get("original"),
            (Map<String, Object>) m.get("actor"), (Map<String, Object>) m.get("ctx"),
            view == null ? null : View.of((Map<String, ?>) view), (String) m.get("locale"), (String) m.get("ruleset"));
    }

    /** Parses and checks a request given as JSON text. */
    public static Request fromJson(String text) throws EngineException {
        Object j;
        try {
            j = Json.parse(text);
        } catch (Json.SyntaxException e) {
            throw bad("", "malformed JSON: " + e.getMessage());
        }
        return fromJson(j);
    }
}
