package convertcmd

import (
	"encoding/json"
	"flag"
	"fmt"
	"regexp"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	"gopkg.in/yaml.v3"

	"github.com/sdods/sdods/impl/rules/rulecheck"
	"github.com/sdods/sdods/impl/rules/rulecheck/derive"
)

// derive runs rulecheck derive.
func (m *Main) derive(args []string) int {
	fs := flag.NewFlagSet("derive", flag.ContinueOnError)
	fs.SetOutput(m.Stderr)
	file := fs.String("openapi", "", "the OpenAPI document (YAML or JSON)")
	schema := fs.String("schema", "", "the component schema to derive")
	direction := fs.String("direction", "request", "request (readOnly members are not checked) or response (writeOnly members are not checked)")
	format := fs.String("format", "yaml", "yaml or json")
	strict := fs.Bool("strict", false, "exit 1 when any constraint cannot be expressed (see the lossiness report)")
	id := fs.String("id", "", "the ruleset id (default derived-SCHEMA in lower case)")
	report := fs.Bool("json", false, "write the derivation (rules with pointers, lossiness report) as JSON instead of the ruleset")
	out := fs.String("o", "", "write to this file instead of standard output")
	skeleton := fs.String("catalog-skeleton", "", "also write the message catalog {code: default-locale message} to this file, for translators")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *file == "" || *schema == "" || fs.NArg() > 0 || (*direction != "request" && *direction != "response") || (*format != "yaml" && *format != "json") {
		fmt.Fprintln(m.Stderr, "usage: rulecheck derive --openapi FILE --schema NAME [--direction request|response] [--format yaml|json] [--strict] [--json] [-o FILE]")
		return 2
	}
	doc, err := openapi3.NewLoader().LoadFromFile(*file)
	if err != nil {
		fmt.Fprintf(m.Stderr, "rulecheck derive: %s: %v\n", *file, err)
		return 1
	}
	res, err := derive.Derive(doc, *schema, derive.Options{Response: *direction == "response"})
	if err != nil {
		fmt.Fprintf(m.Stderr, "rulecheck derive: %s: %v\n", *file, err)
		return 1
	}
	if *id == "" {
		*id = "derived-" + strings.ToLower(*schema)
	}
	var b []byte
	switch {
	case *report:
		b, err = marshalIndent(res, "", "  ")
	case *format == "json":
		b, err = marshalIndent(res.Ruleset(*id), "", "  ")
	default:
		b, err = rulesetYAML(res.Ruleset(*id))
	}
	if err != nil {
		fmt.Fprintf(m.Stderr, "rulecheck derive: %v\n", err)
		return 1
	}
	if len(b) == 0 || b[len(b)-1] != '\n' {
		b = append(b, '\n')
	}
	if *out != "" {
		if err := rulecheck.WriteAtomic(*out, b); err != nil {
			fmt.Fprintf(m.Stderr, "rulecheck derive: %v\n", err)
			return 1
		}
	} else if _, err := m.Stdout.Write(b); err != nil {
		return 1
	}
	if *skeleton != "" {
		cat := map[string]string{}
		rs := res.Ruleset(*id)["ruleset"].(map[string]any)
		for k, v := range rs["locales"].(map[string]any)["en"].(map[string]any) {
			cat[k], _ = v.(string)
		}
		sb, _ := marshalIndent(cat, "", "  ")
		if err := rulecheck.WriteAtomic(*skeleton, append(sb, '\n')); err != nil {
			fmt.Fprintf(m.Stderr, "rulecheck derive: %v\n", err)
			return 1
		}
	}
	for _, l := range res.Lossy {
		fmt.Fprintf(m.Stderr, "%s: lossy at #/components/schemas/%s%s: %s\n", *file, *schema, l.Pointer, l.Reason)
	}
	if *strict && len(res.Lossy) > 0 {
		fmt.Fprintf(m.Stderr, "rulecheck derive: %d constraints cannot be expressed (--strict)\n", len(res.Lossy))
		return 1
	}
	return 0
}

// rulesetYAML writes a ruleset as YAML: block style, expressions (when) kept on one line in flow
// style, every string value double-quoted so that the YAML 1.2 core schema (and YAML 1.1 tools)
// read back the same JSON.
func rulesetYAML(v any) ([]byte, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var n yaml.Node
	if err := yaml.Unmarshal(raw, &n); err != nil {
		return nil, err
	}
	blockStyle(&n)
	var b strings.Builder
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(&n); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return []byte(b.String()), nil
}

var plainKey = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

func blockStyle(n *yaml.Node) {
	switch n.Kind {
	case yaml.DocumentNode:
		for _, c := range n.Content {
			blockStyle(c)
		}
	case yaml.SequenceNode:
		n.Style = 0
		for _, c := range n.Content {
			blockStyle(c)
		}
	case yaml.MappingNode:
		n.Style = 0
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if plainKey.MatchString(k.Value) && !yamlAmbiguous(k.Value) {
				k.Style = 0
			}
			if k.Value == "when" {
				continue
			}
			blockStyle(v)
		}
	}
}

// yamlAmbiguous reports keys YAML 1.1 would read as something other than a string.
func yamlAmbiguous(s string) bool {
	switch strings.ToLower(s) {
	case "y", "n", "yes", "no", "on", "off", "true", "false", "null", "~":
		return true
	}
	return false
}
