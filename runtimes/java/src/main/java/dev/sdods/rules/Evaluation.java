package dev.sdods.rules;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/** One evaluation of a request (spec/v1/evaluation.md §2–7). */
final class Evaluation {
    private final RuleSet rs;
    private final RuleSet.Channel ch;
    private final Request req;
    private final View view;
    private final List<Map<String, List<Object>>> chain = new ArrayList<>();
    private final List<Result.Finding> findings = new ArrayList<>();
    private final List<Result.Finding> stateFailures = new ArrayList<>();
    private final Map<String, Map<String, Object>> states = new TreeMap<>();

    Evaluation(RuleSet rs, RuleSet.Channel ch, Request req, View view, String locale) {
        this.rs = rs;
        this.ch = ch;
        this.req = req;
        this.view = view;
        if (locale != null) {
            String t = locale.toLowerCase(Locale.ROOT);
            while (true) {
                add(t);
                int i = t.lastIndexOf('-');
                if (i < 0) {
                    break;
                }
                t = t.substring(0, i);
            }
        }
        add(ch.defaultLower);
    }

    private void add(String tag) {
        Map<String, List<Object>> c = ch.catalogs.get(tag);
        if (c != null && !chain.contains(c)) {
            chain.add(c);
        }
    }

    private List<Object> template(String key) {
        for (Map<String, List<Object>> c : chain) {
            List<Object> t = c.get(key);
            if (t != null) {
                return t;
            }
        }
        return null;
    }

    /** Whether a rule of this scope and target runs in the view (evaluation.md §3). */
    private boolean inView(String scope, Model.Target t) {
        if (view == null || scope.equals("project") || scope.equals("module")) {
            return true;
        }
        for (String l : Model.LEVELS) {
            String v = view.get(l), r = t.levels.get(l);
            if (v != null && r != null && !v.equals(r)) {
                return false;
            }
            if (l.equals(scope)) {
                break;
            }
        }
        return true;
    }

    /** Reads a path, split into segments, from a value with the rules of variables (expressions.md §3). */
    static Object read(Object v, String[] segs) {
        for (int k = 0; k < segs.length && v != null; k++) {
            if (v instanceof Map) {
                v = ((Map<?, ?>) v).get(segs[k]);
            } else if (v instanceof List) {
                int i = Expr.Var.index(segs[k]);
                List<?> l = (List<?>) v;
                v = i >= 0 && i < l.size() ? l.get(i) : null;
            } else {
                return null;
            }
        }
        return v;
    }

    /**
     * Adds a run for each path under v that segs (from k) names, "*" standing for every element
     * of an array (none when the value there is not one); path is where v is.
     */
    static void expand(Object v, String[] segs, int k, String path, List<Object[]> out) {
        for (; k < segs.length; k++) {
            if (segs[k].equals("*")) {
                if (v instanceof List) {
                    List<?> l = (List<?>) v;
                    for (int i = 0; i < l.size(); i++) {
                        expand(l.get(i), segs, k + 1, path.isEmpty() ? Integer.toString(i) : path + "." + i, out);
                    }
                }
                return;
            }
            v = read(v, new String[] {segs[k]});
            path = path.isEmpty() ? segs[k] : path + "." + segs[k];
        }
        out.add(new Object[] {path, v});
    }

    static String[] split(String path) {
        return path.split("\\.", -1);
    }

    /** The roots of a run, in Expr.ROOTS order: data, original, actor, ctx, value, field. */
    private Object[] env() {
        return new Object[] {req.data, req.original, req.actor, req.ctx, null, null};
    }

    /** The runs of a rule: {field path or null, value}. */
    private List<Object[]> runs(RuleSet.CRule cr) {
        List<Object[]> out = new ArrayList<>(4);
        if (cr.fields != null) {
            for (int k = 0; k < cr.fields.length; k++) {
                if (Arrays.asList(cr.fieldSegs[k]).contains("*")) {
                    expand(req.data, cr.fieldSegs[k], 0, "", out); // a wildcard field (ruleset.md §3)
                } else {
                    out.add(new Object[] {cr.fields[k], read(req.data, cr.fieldSegs[k])});
                }
            }
        } else if (cr.bindings != null) {
            for (RuleSet.Binding b : cr.bindings) {
                if (!b.many) {
                    out.add(new Object[] {b.path, read(req.data, b.pathSegs)});
                } else {
                    Object list = read(req.data, b.listSegs);
                    if (list instanceof List) {
                        for (int i = 0; i < ((List<?>) list).size(); i++) {
                            String f = b.list + "." + i + "." + b.field;
                            out.add(new Object[] {f, read(((List<?>) list).get(i), b.fieldSegs)});
                        }
                    }
                }
            }
        } else {
            out.add(new Object[] {null, null});
        }
        return out;
    }

    private Object eval(Expr.Program p, Object[] env) throws EvalError {
        return p.evalRoots(env, rs.operators(), rs.budget());
    }

    /** A value that leaves the engine as it is (a state's value): its numbers must have a canonical form. */
    private Object leaving(Expr.Program p, Object[] env) throws EvalError {
        Object v = eval(p, env);
        if (!canLeave(v)) {
            throw EvalError.of(p.root.ptr, "a number is beyond the range of a double on the way out");
        }
        return v;
    }

    static boolean canLeave(Object v) {
        if (v instanceof Double) {
            return Num.fitsOut((Double) v);
        }
        if (v instanceof List) {
            for (Object e : (List<?>) v) {
                if (!canLeave(e)) {
                    return false;
                }
            }
        } else if (v instanceof Map) {
            for (Object e : ((Map<?, ?>) v).values()) {
                if (!canLeave(e)) {
                    return false;
                }
            }
        }
        return true;
    }

    private String missing(java.util.Set<String> ops) {
        if (ops.isEmpty()) {
            return null;
        }
        for (String o : ops) {
            if (!rs.operators().containsKey(o)) {
                return o;
            }
        }
        return null;
    }

    private void failed(List<Result.Finding> into, String rule, View loc, String field, String reason) {
        List<Object> t = template("RULE_FAILED");
        String msg;
        if (t == null) {
            msg = "rule " + rule + " failed closed: " + reason;
        } else {
            Map<String, String> vals = new HashMap<>();
            vals.put("rule", rule);
            vals.put("reason", reason);
            vals.put("field", field == null ? "" : field);
            msg = Template.render(t, vals);
        }
        into.add(new Result.Finding("RULE_FAILED", "error", msg, field, rule, loc));
    }

    /**
     * The implicit {value} of a message: the field's value as text, or nothing when it holds a
     * number that cannot leave the engine (the reference engine's choice; a parameter that
     * evaluates to such a number fails the rule instead).
     */
    static String valueText(Object v) {
        try {
            return Template.text(v);
        } catch (Num.RangeException e) {
            return "";
        }
    }

    static View location(Model.Target t) {
        return new View(t.levels.get("page"), t.levels.get("screen"), t.levels.get("section"), t.levels.get("component"));
    }

    Result run() {
        for (RuleSet.CRule cr : ch.compiled.rules) {
            Model.Rule r = cr.r;
            if (!inView(r.scope, r.target)) {
                continue;
            }
            View loc = cr.loc;
            boolean unavailable = missing(cr.ops) != null;
            for (Object[] run : runs(cr)) {
                String field = (String) run[0];
                if (unavailable) {
                    failed(findings, r.id, loc, field, "OPERATOR_UNAVAILABLE");
                    continue;
                }
                Object[] env = env();
                if (field != null) {
                    env[4] = run[1];
                    env[5] = field;
                }
                try {
                    Object w = eval(cr.when, env);
                    if (w == null || Boolean.FALSE.equals(w)) {
                        continue;
                    }
                    if (!Boolean.TRUE.equals(w)) {
                        failed(findings, r.id, loc, field, "EVALUATION_ERROR");
                        continue;
                    }
                    List<Object> t = template(r.key);
                    Map<String, String> vals = new HashMap<>();
                    if (field != null) {
                        vals.put("field", field);
                        if (t != null && Template.uses(t, "value") && !cr.params.containsKey("value")) {
                            vals.put("value", valueText(run[1]));
                        }
                    }
                    for (Map.Entry<String, Expr.Program> p : cr.params.entrySet()) {
                        vals.put(p.getKey(), Template.text(eval(p.getValue(), env)));
                    }
                    String msg = t == null ? r.key : Template.render(t, vals);
                    findings.add(new Result.Finding(r.code, r.severity, msg, field, r.id, loc));
                } catch (EvalError e) {
                    failed(findings, r.id, loc, field, e.code);
                } catch (Num.RangeException e) {
                    failed(findings, r.id, loc, field, "EVALUATION_ERROR");
                }
            }
        }
        for (RuleSet.CState cs : ch.compiled.states) {
            Model.StateRule r = cs.r;
            if (!inView(r.scope, r.target)) {
                continue;
            }
            View loc = cs.loc;
            if (missing(cs.ops) != null) {
                failed(stateFailures, r.id, loc, null, "OPERATOR_UNAVAILABLE");
                continue;
            }
            Object[] env = env();
            try {
                Object w = eval(cs.when, env);
                if (w == null || Boolean.FALSE.equals(w)) {
                    continue;
                }
                if (!Boolean.TRUE.equals(w)) {
                    failed(stateFailures, r.id, loc, null, "EVALUATION_ERROR");
                    continue;
                }
                List<Object[]> sets = new ArrayList<>();
                boolean ok = true;
                for (int k = 0; k < cs.effects.size() && ok; k++) {
                    String field = r.effects.get(k).field;
                    for (Map.Entry<String, Expr.Program> p : cs.effects.get(k).entrySet()) {
                        Object v = p.getKey().equals("value") ? leaving(p.getValue(), env) : eval(p.getValue(), env);
                        if (!p.getKey().equals("value") && !(v instanceof Boolean)) {
                            ok = false;
                            break;
                        }
                        sets.add(new Object[] {field, p.getKey(), v});
                    }
                }
                if (!ok) {
                    failed(stateFailures, r.id, loc, null, "EVALUATION_ERROR");
                    continue;
                }
                for (Object[] s : sets) {
                    states.computeIfAbsent((String) s[0], k -> new TreeMap<>()).put((String) s[1], s[2]);
                }
            } catch (EvalError e) {
                failed(stateFailures, r.id, loc, null, e.code);
            } catch (Num.RangeException e) {
                failed(stateFailures, r.id, loc, null, "EVALUATION_ERROR");
            }
        }
        findings.addAll(stateFailures);
        return new Result(rs.id(), rs.version(), rs.checksum(), findings, states);
    }
}
