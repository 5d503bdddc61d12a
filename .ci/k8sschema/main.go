// Command k8sschema writes the JSON schemas that kubeconform validates
// Kubernetes manifests against, from the Kubernetes API's own OpenAPI v2
// document (api/openapi-spec/swagger.json in the k8s.io/kubernetes
// module, which .ci/kubeconform.sh takes from the Go module proxy): no
// schema is downloaded from anywhere else, at install or at test time.
//
//	go run .ci/k8sschema/main.go -swagger swagger.json -out DIR
//
// It writes one file per kind and version, named as kubeconform's
// {{ .ResourceKind }}{{ .KindSuffix }}.json template expects
// ("deployment-apps-v1.json", "service-v1.json"): the kind's definition
// with every definition it refers to, strict (an object with declared
// properties accepts no other), as the strict schemas kubeconform is
// usually given are. Two types the OpenAPI document spells as strings
// accept what the API server accepts: IntOrString an integer too, and
// Quantity a number.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

const refPrefix = "#/definitions/"

func main() {
	swagger := flag.String("swagger", "", "the Kubernetes API's OpenAPI v2 document (swagger.json)")
	out := flag.String("out", "", "the folder to write the schemas into")
	flag.Parse()
	if *swagger == "" || *out == "" {
		flag.Usage()
		os.Exit(2)
	}
	if err := run(*swagger, *out); err != nil {
		fmt.Fprintln(os.Stderr, "k8sschema:", err)
		os.Exit(1)
	}
}

func run(swagger, out string) error {
	b, err := os.ReadFile(swagger)
	if err != nil {
		return err
	}
	var doc struct {
		Definitions map[string]map[string]any `json:"definitions"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		return fmt.Errorf("%s: %w", swagger, err)
	}
	defs := doc.Definitions
	if len(defs) == 0 {
		return fmt.Errorf("%s has no definitions", swagger)
	}
	for name, def := range defs {
		defs[name] = fix(name, def)
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	names := make([]string, 0, len(defs))
	for name := range defs {
		names = append(names, name)
	}
	sort.Strings(names)
	written := 0
	for _, name := range names {
		for _, gvk := range kinds(defs[name]) {
			closure := map[string]any{}
			collect(defs, name, closure)
			schema := map[string]any{"$ref": refPrefix + name, "definitions": closure}
			data, err := json.Marshal(schema)
			if err != nil {
				return err
			}
			file := filepath.Join(out, strings.ToLower(gvk.Kind)+suffix(gvk.Group, gvk.Version)+".json")
			if err := os.WriteFile(file, data, 0o644); err != nil {
				return err
			}
			written++
		}
	}
	if written == 0 {
		return fmt.Errorf("%s names no kind (x-kubernetes-group-version-kind)", swagger)
	}
	fmt.Fprintf(os.Stderr, "k8sschema: %d schemas in %s\n", written, out)
	return nil
}

type gvk struct{ Group, Version, Kind string }

// kinds are the group, version and kind a definition is the object of.
func kinds(def map[string]any) []gvk {
	raw, _ := def["x-kubernetes-group-version-kind"].([]any)
	var out []gvk
	for _, r := range raw {
		m, _ := r.(map[string]any)
		g, _ := m["group"].(string)
		v, _ := m["version"].(string)
		k, _ := m["kind"].(string)
		if v != "" && k != "" {
			out = append(out, gvk{g, v, k})
		}
	}
	return out
}

// suffix is kubeconform's KindSuffix: "-v1" for the core group, else the
// group's first label and the version ("-apps-v1", "-networking-v1").
func suffix(group, version string) string {
	if group == "" {
		return "-" + strings.ToLower(version)
	}
	first, _, _ := strings.Cut(group, ".")
	return "-" + strings.ToLower(first) + "-" + strings.ToLower(version)
}

// collect adds definition name and every definition it refers to, at
// any depth, to closure.
func collect(defs map[string]map[string]any, name string, closure map[string]any) {
	if _, ok := closure[name]; ok {
		return
	}
	def, ok := defs[name]
	if !ok {
		return
	}
	closure[name] = def
	walk(def, func(ref string) { collect(defs, ref, closure) })
}

// walk calls fn with the definition named by every $ref in v.
func walk(v any, fn func(string)) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if s, ok := e.(string); ok && k == "$ref" && strings.HasPrefix(s, refPrefix) {
				fn(strings.TrimPrefix(s, refPrefix))
				continue
			}
			walk(e, fn)
		}
	case []any:
		for _, e := range x {
			walk(e, fn)
		}
	}
}

// fix makes a definition strict and its two string-spelled types accept
// what the API server accepts.
func fix(name string, def map[string]any) map[string]any {
	switch {
	case strings.HasSuffix(name, ".util.intstr.IntOrString"):
		return map[string]any{"description": def["description"], "oneOf": []any{
			map[string]any{"type": "string"}, map[string]any{"type": "integer"}}}
	case strings.HasSuffix(name, ".api.resource.Quantity"):
		return map[string]any{"description": def["description"], "oneOf": []any{
			map[string]any{"type": "string"}, map[string]any{"type": "number"}}}
	}
	strict(def)
	return def
}

// strict forbids undeclared members in every object schema within s
// that declares its properties and does not keep unknown fields.
func strict(s map[string]any) {
	if props, ok := s["properties"].(map[string]any); ok {
		if _, set := s["additionalProperties"]; !set && s["x-kubernetes-preserve-unknown-fields"] != true {
			s["additionalProperties"] = false
		}
		for _, p := range props {
			if m, ok := p.(map[string]any); ok {
				strict(m)
			}
		}
	}
	for _, k := range []string{"items", "additionalProperties"} {
		if m, ok := s[k].(map[string]any); ok {
			strict(m)
		}
	}
	for _, k := range []string{"allOf", "anyOf", "oneOf"} {
		list, _ := s[k].([]any)
		for _, e := range list {
			if m, ok := e.(map[string]any); ok {
				strict(m)
			}
		}
	}
}
