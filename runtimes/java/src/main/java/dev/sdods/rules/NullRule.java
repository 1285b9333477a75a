package dev.sdods.rules;

/**
 * What a core operator returns when an argument it checks is null (spec/v1/operators.md). Kept in
 * one table so that a change of the rule (issue 20: null versus type mismatch for every operator)
 * is one edit here: the operators ask {@link #applies} whether null decides their result, and
 * {@link #result} for that result, before they check the types of their other arguments.
 */
final class NullRule {
    private NullRule() {}

    /** Returned by {@link #result} for an operator on which null decides nothing. */
    static final Object NONE = new Object();

    /**
     * The result of operator op when one of the arguments it checks is null, or NONE when null is
     * handled by the operator itself (conditions, equality, containers, typeOf, isEmpty, isDate,
     * coalesce) or is a value like any other.
     */
    static Object result(String op) {
        switch (op) {
            case "<": case "<=": case ">": case ">=": case "between":
            case "startsWith": case "endsWith": case "matches":
            case "some": case "all":
                return Boolean.FALSE;
            case "+": case "-": case "*": case "/": case "mod": case "abs": case "min": case "max":
            case "round": case "sum":
            case "upper": case "lower": case "trim": case "concat": case "substring": case "text":
            case "length": case "map": case "filter":
            case "yearsBetween": case "daysBetween": case "dateAdd":
                return null;
            default:
                return NONE;
        }
    }

    /**
     * Whether op checks the type of every argument that is not null before null decides its
     * result: a type mismatch (or an invalid date) in any argument then wins over a null in
     * another. The other operators return their null result as soon as one argument is null, and
     * check nothing else. operators.md says "null → null … the other arguments are still
     * evaluated but not checked", for every operator; the reference engine (and the corpus it
     * generated) checks first for these. Issue 20 settles the text; this is the one place to follow it.
     */
    static boolean checksFirst(String op) {
        switch (op) {
            case "+": case "-": case "*": case "/": case "mod": case "abs": case "min": case "max": case "sum":
            case "startsWith": case "endsWith": case "yearsBetween": case "daysBetween":
                return true;
            default:
                return false;
        }
    }

    /** Whether one of args is null. */
    static boolean anyNull(Object[] args) {
        for (Object a : args) {
            if (a == null) {
                return true;
            }
        }
        return false;
    }
}
