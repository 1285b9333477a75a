package dev.sdods.rules;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/** Message templates (ruleset.md §5): text with {name} placeholders; {{ and }} stand for braces. */
final class Template {
    private Template() {}

    /** Parts of a template: literal text at even indexes' String, placeholders as String[]{name}. */
    static List<Object> parse(String s) {
        List<Object> parts = new ArrayList<>();
        StringBuilder text = new StringBuilder();
        for (int i = 0; i < s.length();) {
            char c = s.charAt(i);
            if (c == '{' && i + 1 < s.length() && s.charAt(i + 1) == '{') {
                text.append('{');
                i += 2;
            } else if (c == '}' && i + 1 < s.length() && s.charAt(i + 1) == '}') {
                text.append('}');
                i += 2;
            } else if (c == '}') {
                throw new IllegalArgumentException("a lone '}' (write '}}') at offset " + s.codePointCount(0, i));
            } else if (c == '{') {
                int j = s.indexOf('}', i + 1);
                if (j < 0) {
                    throw new IllegalArgumentException("an unclosed '{' at offset " + s.codePointCount(0, i));
                }
                String name = s.substring(i + 1, j);
                if (!Model.validName(name)) {
                    throw new IllegalArgumentException("a placeholder is {name}, a letter then letters, digits or '_', at offset "
                        + s.codePointCount(0, i));
                }
                if (text.length() > 0) {
                    parts.add(text.toString());
                    text.setLength(0);
                }
                parts.add(new String[] {name});
                i = j + 1;
            } else {
                text.append(c);
                i++;
            }
        }
        if (text.length() > 0) {
            parts.add(text.toString());
        }
        return parts;
    }

    /** Whether a parsed template has the placeholder {name}. */
    static boolean uses(List<Object> parts, String name) {
        for (Object p : parts) {
            if (p instanceof String[] && ((String[]) p)[0].equals(name)) {
                return true;
            }
        }
        return false;
    }

    /** The problem of a template, or null when it is well formed. */
    static String check(String s) {
        try {
            parse(s);
            return null;
        } catch (IllegalArgumentException e) {
            return e.getMessage();
        }
    }

    /** Renders a template; an unknown placeholder stays as written. */
    static String render(List<Object> parts, Map<String, String> values) {
        StringBuilder b = new StringBuilder();
        for (Object p : parts) {
            if (p instanceof String) {
                b.append((String) p);
            } else {
                String name = ((String[]) p)[0];
                String v = values.get(name);
                b.append(v != null ? v : "{" + name + "}");
            }
        }
        return b.toString();
    }

    /** A parameter as text: strings as they are, canonical numbers, true/false, null as nothing, canonical JSON. */
    static String text(Object v) {
        if (v == null) {
            return "";
        }
        if (v instanceof String) {
            return (String) v;
        }
        if (v instanceof Boolean) {
            return v.toString();
        }
        if (v instanceof Double) {
            return Num.text((Double) v);
        }
        StringBuilder b = new StringBuilder();
        Json.write(b, v, true);
        return b.toString();
    }
}
