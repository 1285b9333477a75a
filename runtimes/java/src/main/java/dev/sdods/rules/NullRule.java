package dev.sdods.rules;

/**
 * The one rule for null (spec/v1/operators.md, "Null arguments"), as its two tables. A strict
 * operator evaluates every argument, then, when any operand is null, returns its null result
 * without checking the other operands at all (neither type nor value); only when no operand is
 * null are the operands checked and the result computed. The 17 other operators are not strict:
 * null is a value (== != coalesce typeOf isEmpty isDate literal), counts as false (and or not if;
 * the array of map filter some all), or is handled by the container rule (contains, in).
 */
final class NullRule {
    private NullRule() {}

    /** Returned by {@link #result} for an operator that is not strict. */
    static final Object NONE = new Object();

    /** The null result of a strict operator (the first table), or NONE for the other 17. */
    static Object result(String op) {
        switch (op) {
            case "<": case "<=": case ">": case ">=": case "between":
            case "startsWith": case "endsWith": case "matches":
                return Boolean.FALSE;
            case "+": case "-": case "*": case "/": case "mod": case "abs": case "min": case "max":
            case "round": case "sum":
            case "upper": case "lower": case "trim": case "concat": case "substring": case "text":
            case "length": case "yearsBetween": case "daysBetween": case "dateAdd":
                return null;
            default:
                return NONE;
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

    /** Whether one of the elements of l is null. */
    static boolean anyNull(java.util.List<?> l) {
        for (Object a : l) {
            if (a == null) {
                return true;
            }
        }
        return false;
    }
}
