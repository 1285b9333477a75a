package dev.sdods.rules;

/** An evaluation error: a code of errors.md and the pointer of the failing application. */
final class EvalError extends Exception {
    private static final long serialVersionUID = 1L;
    final String code;
    final String pointer;

    EvalError(String code, String pointer, String message) {
        super(message, null, false, false);
        this.code = code;
        this.pointer = pointer;
    }

    static EvalError of(String pointer, String message) {
        return new EvalError("EVALUATION_ERROR", pointer, message);
    }
}
