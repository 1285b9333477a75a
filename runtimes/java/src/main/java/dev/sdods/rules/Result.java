package dev.sdods.rules;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/** The result of an evaluation (spec/v1/evaluation.md §7): the ruleset, findings and states. */
public final class Result {
    private final String id, version, checksum;
    private final List<Finding> findings;
    private final Map<String, Map<String, Object>> states;

    Result(String id, String version, String checksum, List<Finding> findings, Map<String, Map<String, Object>> states) {
        this.id = id;
        this.version = version;
        this.checksum = checksum;
        this.findings = Collections.unmodifiableList(findings);
        this.states = Collections.unmodifiableMap(states);
    }

    public String rulesetId() {
        return id;
    }

    public String rulesetVersion() {
        return version;
    }

    public String checksum() {
        return checksum;
    }

    public List<Finding> findings() {
        return findings;
    }

    /** Field path → property (hidden, disabled, required, readOnly, value) → value. */
    public Map<String, Map<String, Object>> states() {
        return states;
    }

    /** Whether no finding is an error. */
    public boolean passed() {
        for (Finding f : findings) {
            if (f.severity().equals("error")) {
                return false;
            }
        }
        return true;
    }

    /** The result as JSON (protocol and HTTP form). */
    public Map<String, Object> toJson() {
        Map<String, Object> m = new LinkedHashMap<>();
        Map<String, Object> ref = new LinkedHashMap<>();
        ref.put("id", id);
        ref.put("version", version);
        ref.put("checksum", checksum);
        m.put("ruleset", ref);
        List<Object> fs = new ArrayList<>(findings.size());
        for (Finding f : findings) {
            fs.add(f.toJson());
        }
        m.put("findings", fs);
        m.put("states", new TreeMap<>(states));
        return m;
    }

    @Override
    public String toString() {
        return Json.write(toJson());
    }

    /** One finding: a rule's code, severity, message, field (absent for a whole-record run), rule id and location. */
    public static final class Finding {
        private final String code, severity, message, field, rule;
        private final View location;

        Finding(String code, String severity, String message, String field, String rule, View location) {
            this.code = code;
            this.severity = severity;
            this.message = message;
            this.field = field;
            this.rule = rule;
            this.location = location;
        }

        public String code() {
            return code;
        }

        public String severity() {
            return severity;
        }

        public String message() {
            return message;
        }

        /** The field the rule ran on, or null for a run on the whole record. */
        public String field() {
            return field;
        }

        public String rule() {
            return rule;
        }

        /** What the rule's target names: page, screen, section, component. */
        public View location() {
            return location;
        }

        public Map<String, Object> toJson() {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("code", code);
            m.put("severity", severity);
            m.put("message", message);
            if (field != null) {
                m.put("field", field);
            }
            m.put("rule", rule);
            m.put("location", location.toJson());
            return m;
        }

        @Override
        public String toString() {
            return Json.write(toJson());
        }
    }
}
