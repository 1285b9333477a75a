package dev.sdods.rules;

import java.util.ArrayList;
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

    /** Reads a dot path from a value with the rules of variables (expressions.md §3). */
    static Object read(Object v, String path) {
        int start = 0;
        while (v != null) {
            int dot = path.indexOf('.', start);
            String seg = dot < 0 ? path.substring(start) : path.substring(start, dot);
            if (v instanceof Map) {
                v = ((Map<?, ?>) v).get(seg);
            } else if (v instanceof List) {
                int i = Expr.Var.index(seg);
                List<?> l = (List<?>) v;
                v = i >= 0 && i < l.size() ? l.get(i) : null;
            } else {
                return null;
            }
            if (dot < 0) {
                return v;
            }
            start = dot + 1;
        }
        return null;
    }

    private Map<String, Object> env() {
        Map<String, Object> env = new HashMap<>(8);
        env.put("data", req.data);
        env.put("original", req.original);
        env.put("actor", req.actor);
        env.put("ctx", req.ctx);
        return env;
    }

    /** The runs of a rule: {field path or null, value}. */
    private List<Object[]> runs(Model.Target t) {
        List<Object[]> out = new ArrayList<>();
        if (t.fields != null && !t.fields.isEmpty()) {
            for (String f : t.fields) {
                out.add(new Object[] {f, read(req.data, f)});
            }
        } else if (t.type != null) {
            for (String[] b : ch.bound.getOrDefault(t.type, List.of())) {
                if (b[2] == null) {
                    String f = b[0] + "." + b[1];
                    out.add(new Object[] {f, read(req.data, f)});
                } else {
                    Object list = read(req.data, b[0]);
                    if (list instanceof List) {
                        for (int i = 0; i < ((List<?>) list).size(); i++) {
                            String f = b[0] + "." + i + "." + b[1];
                            out.add(new Object[] {f, read(((List<?>) list).get(i), b[1])});
                        }
                    }
                }
            }
        } else {
            out.add(new Object[] {null, null});
        }
        return out;
    }

    private Object eval(Expr.Program p, Map<String, Object> env) throws EvalError {
        Object v = p.eval(env, rs.operators(), rs.budget());
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

    private static View location(Model.Target t) {
        return new View(t.levels.get("page"), t.levels.get("screen"), t.levels.get("section"), t.levels.get("component"));
    }

    Result run() {
        for (RuleSet.CRule cr : ch.compiled.rules) {
            Model.Rule r = cr.r;
            if (!inView(r.scope, r.target)) {
                continue;
            }
            View loc = location(r.target);
            boolean unavailable = missing(cr.ops) != null;
            for (Object[] run : runs(r.target)) {
                String field = (String) run[0];
                if (unavailable) {
                    failed(findings, r.id, loc, field, "OPERATOR_UNAVAILABLE");
                    continue;
                }
                Map<String, Object> env = env();
                if (field != null) {
                    env.put("value", run[1]);
                    env.put("field", field);
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
                            vals.put("value", Template.text(run[1])); // only when written: the value may not leave the engine
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
            View loc = location(r.target);
            if (missing(cs.ops) != null) {
                failed(stateFailures, r.id, loc, null, "OPERATOR_UNAVAILABLE");
                continue;
            }
            Map<String, Object> env = env();
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
                        Object v = eval(p.getValue(), env);
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
