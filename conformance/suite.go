// Package conformance holds the conformance suite as data (README.md): the case files of each
// category, the fixtures they load and the schema copies. Suite returns them as a file system so
// that rulecheck can certify an engine from anywhere.
package conformance

import (
	"embed"
	"io/fs"
)

//go:embed README.md expression load-error golden corpus protocol compiler additions fixtures examples
var files embed.FS

// Suite returns the suite's files: CATEGORY/*.json and fixtures/.
func Suite() fs.FS { return files }
