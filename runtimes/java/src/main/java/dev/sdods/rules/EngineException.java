package dev.sdods.rules;

import java.util.Collections;
import java.util.List;

/**
 * A refusal of the engine: a failed load (with every diagnostic, sorted by pointer), a request
 * refused by the shape check (BAD_REQUEST) or a failed evaluation (one error).
 */
public class EngineException extends Exception {
    private static final long serialVersionUID = 1L;
    private final String code;
    private final String pointer;
    private final List<Diagnostic> diagnostics;

    public EngineException(String code, String pointer, String message) {
        super(message, null, false, false);
        this.code = code;
        this.pointer = pointer;
        this.diagnostics = Collections.emptyList();
    }

    EngineException(List<Diagnostic> diagnostics) {
        super(diagnostics.get(0).message(), null, false, false);
        this.code = diagnostics.get(0).code();
        this.pointer = diagnostics.get(0).pointer();
        this.diagnostics = Collections.unmodifiableList(diagnostics);
    }

    /** The stable code (errors.md). */
    public String code() {
        return code;
    }

    /** The pointer of the (first) problem. */
    public String pointer() {
        return pointer;
    }

    /** Every diagnostic of a failed load; empty for other refusals. */
    public List<Diagnostic> diagnostics() {
        return diagnostics;
    }

    @Override
    public String toString() {
        return code + " at \"" + pointer + "\": " + getMessage();
    }
}
