package dev.sdods.rules;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * A place in the user interface: page, screen, section and component, each optional. As a view it
 * narrows an evaluation to one place (spec/v1/evaluation.md §3); as a finding's location it names
 * what the rule's target names.
 */
public final class View {
    private final String page, screen, section, component;

    public View(String page, String screen, String section, String component) {
        this.page = page;
        this.screen = screen;
        this.section = section;
        this.component = component;
    }

    public static View page(String page) {
        return new View(page, null, null, null);
    }

    public View withScreen(String s) {
        return new View(page, s, section, component);
    }

    public View withSection(String s) {
        return new View(page, screen, s, component);
    }

    public View withComponent(String c) {
        return new View(page, screen, section, c);
    }

    public String page() {
        return page;
    }

    public String screen() {
        return screen;
    }

    public String section() {
        return section;
    }

    public String component() {
        return component;
    }

    /** The value at a level: page, screen, section or component. */
    public String get(String level) {
        switch (level) {
            case "page": return page;
            case "screen": return screen;
            case "section": return section;
            case "component": return component;
            default: return null;
        }
    }

    static View of(Map<String, ?> m) {
        return new View((String) m.get("page"), (String) m.get("screen"), (String) m.get("section"), (String) m.get("component"));
    }

    /** The members set, as JSON. */
    public Map<String, Object> toJson() {
        Map<String, Object> m = new LinkedHashMap<>();
        for (String l : Model.LEVELS) {
            if (get(l) != null) {
                m.put(l, get(l));
            }
        }
        return m;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof View && toJson().equals(((View) o).toJson());
    }

    @Override
    public int hashCode() {
        return Objects.hash(page, screen, section, component);
    }

    @Override
    public String toString() {
        return Json.write(toJson());
    }
}
