package dev.sdods.rules;

import java.util.List;

/**
 * A custom {@code x-} operator supplied by the host (spec/v1/expressions.md §6). It receives its
 * evaluated arguments as JSON values ({@code null}, {@link Boolean}, {@link Double}, {@link String},
 * {@link List}, {@link java.util.Map}) and returns a JSON value. Throwing, or returning something
 * that is not a JSON value (NaN, an infinity, another class), fails the evaluation with
 * {@code OPERATOR_FAILED}; the rule using it fails closed. Implementations must be thread-safe.
 */
@FunctionalInterface
public interface CustomOperator {
    Object apply(List<Object> args) throws Exception;
}
