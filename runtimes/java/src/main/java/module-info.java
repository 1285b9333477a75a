/** The sdods rule engine for Java: JDK only (spec/v1). */
module dev.sdods.rules {
    exports dev.sdods.rules;
}
