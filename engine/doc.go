// Package engine is the sdods rule engine: rulesets compiled once into bundles and a portable
// expression language, evaluated with the standard library only.
package engine
