package config

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/mcpworkbench/mcp-workbench/internal/frame"
	"github.com/santhosh-tekuri/jsonschema/v6"
	jskind "github.com/santhosh-tekuri/jsonschema/v6/kind"
)

// Schema is the JSON Schema of the configuration. The loader checks every
// document against it, so the schema that editors use and the rules the
// workbench applies are one and the same; the repository's
// workbench-config.schema.json is a copy (a test keeps them equal).
//
//go:embed workbench-config.schema.json
var Schema []byte

// schemaInfo is what the loader takes from Schema besides the compiled
// schema ([compiledSchema]): for each kind of object the properties it
// knows, with their descriptions (for messages, and to warn about unknown
// keys).
type schemaInfo struct {
	top     map[string]string // property → description
	toolbox map[string]string
	server  map[string]string
	oauth   map[string]string
	// permissions are the keys of a "permissions" object.
	permissions map[string]string
	// http are the keys of the "http" object, and of the objects in it
	// by their key ("limits", "auth", "auth.oauth", "tls"); access those
	// of a toolbox's "access".
	http   map[string]map[string]string
	access map[string]string
}

// compiledSchema is Schema compiled: most of the work a start of the
// workbench does itself, so that it is done only for a document the
// remembered checks (see [RememberChecks]) do not know.
var compiledSchema = sync.OnceValues(func() (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(Schema))
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	c.UseLoader(noLoader{})
	const url = "urn:mcp-workbench:config-schema"
	if err := c.AddResource(url, doc); err != nil {
		return nil, err
	}
	return c.Compile(url)
})

var loadSchema = sync.OnceValues(func() (*schemaInfo, error) {
	type object struct {
		Properties map[string]struct {
			Description string          `json:"description"`
			Properties  json.RawMessage `json:"properties"`
		} `json:"properties"`
	}
	var raw struct {
		object
		Defs map[string]object `json:"$defs"`
	}
	if err := json.Unmarshal(Schema, &raw); err != nil {
		return nil, err
	}
	describe := func(o object) map[string]string {
		out := make(map[string]string, len(o.Properties))
		for name, p := range o.Properties {
			out[name] = p.Description
		}
		return out
	}
	// nested describes the object at a property of o, by its key.
	nested := func(o object, key string) object {
		var n object
		if p, ok := o.Properties[key]; ok && len(p.Properties) > 0 {
			_ = json.Unmarshal([]byte(`{"properties":`+string(p.Properties)+`}`), &n)
		}
		return n
	}
	httpDef, auth := raw.Defs["http"], nested(raw.Defs["http"], "auth")
	return &schemaInfo{
		http: map[string]map[string]string{
			"":           describe(httpDef),
			"limits":     describe(nested(httpDef, "limits")),
			"tls":        describe(nested(httpDef, "tls")),
			"auth":       describe(auth),
			"auth.oauth": describe(nested(auth, "oauth")),
		},
		access:      describe(nested(raw.Defs["toolbox"], "access")),
		top:         describe(raw.object),
		toolbox:     describe(raw.Defs["toolbox"]),
		server:      describe(raw.Defs["server"]),
		oauth:       describe(raw.Defs["oauth"]),
		permissions: describe(raw.Defs["permissions"]),
	}, nil
})

type noLoader struct{}

func (noLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("the configuration schema refers to %s, which is not loaded", url)
}

// instance converts the decoded tree into the values the validator takes.
func instance(n *node) any {
	switch n.kind {
	case kObject:
		m := make(map[string]any, len(n.keys))
		for i, k := range n.keys {
			m[k] = instance(n.vals[i])
		}
		return m
	case kArray:
		a := make([]any, len(n.vals))
		for i, v := range n.vals {
			a[i] = instance(v)
		}
		return a
	case kString:
		return n.str
	case kNumber:
		return n.num
	case kBool:
		return n.b
	}
	return nil
}

// checkSchema validates the expanded document against Schema, returning a
// problem for each violation, at the dotted path of the value at fault.
// A document that passes is remembered (see [RememberChecks]): checked
// again, it passes without the schema being compiled.
func checkSchema(root *node) ([]Problem, error) {
	info, err := loadSchema()
	if err != nil {
		return nil, fmt.Errorf("the built-in configuration schema is broken: %w", err)
	}
	inst := instance(root)
	digest := checkDigest(inst)
	if checks.known(digest) {
		return nil, nil
	}
	compiled, err := compiledSchema()
	if err != nil {
		return nil, fmt.Errorf("the built-in configuration schema is broken: %w", err)
	}
	schemaChecks.Add(1)
	err = compiled.Validate(inst)
	if err == nil {
		checks.add(digest)
		return nil, nil
	}
	ve, ok := err.(*jsonschema.ValidationError)
	if !ok {
		return nil, err
	}
	var out []Problem
	schemaProblems(ve, root, info, &out)
	return out, nil
}

func schemaProblems(ve *jsonschema.ValidationError, root *node, info *schemaInfo, out *[]Problem) {
	path, n := locate(root, ve.InstanceLocation)
	switch k := ve.ErrorKind.(type) {
	case *jskind.AnyOf:
		// The only anyOf: a server needs a command or a url.
		*out = append(*out, Problem{Path: path, Msg: `needs "command" (a server the workbench starts) or "url" (an http or sse server)`})
		return
	case *jskind.Required:
		props := propsAt(ve.InstanceLocation, info)
		for _, m := range k.Missing {
			msg := "required"
			if d := props[m]; d != "" {
				msg += ": " + lowerFirst(d)
			}
			*out = append(*out, Problem{Path: JoinPath(path, m), Msg: msg})
		}
		return
	case *jskind.Type:
		if isSecret(ve.InstanceLocation) {
			n = nil // say what is wrong, never the value
		}
		*out = append(*out, Problem{Path: path, Msg: typeMessage(k, n)})
		return
	case *jskind.MinLength:
		msg := "must not be empty (leave the key out instead)"
		if loc := ve.InstanceLocation; len(loc) == 3 && loc[2] == "description" {
			msg = "must not be empty: " + lowerFirst(info.toolbox["description"])
		}
		*out = append(*out, Problem{Path: path, Msg: msg})
		return
	case *jskind.Pattern:
		msg := "must not be blank: " + lowerFirst(info.toolbox["description"])
		switch {
		case strings.HasPrefix(k.Want, "^[hH][tT][tT][pP][sS]://"):
			msg = fmt.Sprintf("must be an https:// URL, got %q", shownValue(n, k.Got))
		case strings.HasPrefix(k.Want, "^[hH]"):
			msg = fmt.Sprintf("must be an http:// or https:// URL, got %q", shownValue(n, k.Got))
		case len(ve.InstanceLocation) != 3:
			msg = "must not be blank"
		}
		*out = append(*out, Problem{Path: path, Msg: msg})
		return
	case *jskind.MinProperties:
		msg := "must not be empty"
		if strings.HasSuffix(path, "mcpServers") {
			msg = "must hold at least one server"
		}
		*out = append(*out, Problem{Path: path, Msg: msg})
		return
	case *jskind.Minimum:
		*out = append(*out, Problem{Path: path, Msg: fmt.Sprintf("must be at least %s%s, got %s", k.Want.RatString(), unit(path), k.Got.RatString())})
		return
	case *jskind.Maximum:
		*out = append(*out, Problem{Path: path, Msg: fmt.Sprintf("must be at most %s%s, got %s", k.Want.RatString(), unit(path), k.Got.RatString())})
		return
	case *jskind.Enum:
		var want []string
		for _, w := range k.Want {
			want = append(want, frame.Quote(fmt.Sprint(w)))
		}
		what := "value"
		if strings.HasSuffix(path, "transport") || strings.HasSuffix(path, "type") {
			what = "transport"
		}
		*out = append(*out, Problem{Path: path, Msg: fmt.Sprintf("unknown %s %q: use %s", what, shownValue(n, fmt.Sprint(k.Got)), strings.Join(want, ", "))})
		return
	case *jskind.PropertyNames:
		// Reported by the validator (checkNames): the schema library gives
		// these problems an instance location that later checks overwrite.
		return
	}
	if len(ve.Causes) == 0 {
		msg := ve.ErrorKind.LocalizedString(nil)
		if n.expanded() && n.str != "" {
			msg = strings.ReplaceAll(msg, n.str, n.shown())
		}
		*out = append(*out, Problem{Path: path, Msg: msg})
	}
	for _, c := range ve.Causes {
		schemaProblems(c, root, info, out)
	}
}

// locate renders a JSON pointer's tokens as a dotted path, telling array
// indexes from keys by walking the tree, and returns the node found there.
func locate(root *node, loc []string) (string, *node) {
	path, n := "", root
	for _, tok := range loc {
		switch {
		case n != nil && n.kind == kArray:
			i, _ := strconv.Atoi(tok)
			path = indexPath(path, i)
			if i >= 0 && i < len(n.vals) {
				n = n.vals[i]
			} else {
				n = nil
			}
		default:
			path = JoinPath(path, tok)
			if n != nil {
				n = n.get(tok)
			}
		}
	}
	return path, n
}

// propsAt returns the known properties of the object at loc: the top
// level, a toolbox (toolboxes/NAME) or a server (…/mcpServers/NAME).
func propsAt(loc []string, info *schemaInfo) map[string]string {
	switch len(loc) {
	case 0:
		return info.top
	case 2:
		return info.toolbox
	case 4:
		return info.server
	case 5:
		if loc[4] == "oauth" {
			return info.oauth
		}
	}
	return nil
}

// isSecret reports whether loc is a value of a server's env or headers, or
// its oauth.clientSecret: secrets that no message may repeat.
func isSecret(loc []string) bool {
	return len(loc) == 6 && loc[2] == "mcpServers" && (loc[4] == "env" || loc[4] == "headers" || loc[4] == "oauth" && loc[5] == "clientSecret")
}

// shownValue is the value at n as messages quote it (see [node.shown]);
// got, as the schema library reports it, when n is not a string.
func shownValue(n *node, got string) string {
	if n == nil || n.kind != kString {
		return MaskURL(got)
	}
	return n.shown()
}

// typeMessage explains a value of the wrong type; n, when given, lets it
// suggest the fix with the value itself.
func typeMessage(k *jskind.Type, n *node) string {
	want := strings.Join(k.Want, " or ")
	switch {
	case len(k.Want) == 1 && k.Want[0] == "integer" && k.Got == "number" && n != nil:
		return fmt.Sprintf("must be a whole number, not %s", n.num)
	case len(k.Want) == 1 && (k.Want[0] == "integer" || k.Want[0] == "number") && k.Got == "string" && n.expanded():
		return fmt.Sprintf("must be a number, not the string %q: a ${VAR} makes a string whatever it holds (write the number itself)", n.shown())
	case len(k.Want) == 1 && (k.Want[0] == "integer" || k.Want[0] == "number") && k.Got == "string" && n != nil:
		return fmt.Sprintf("must be a number, not the string %q (write it without quotes)", n.shown())
	case len(k.Want) == 1 && k.Want[0] == "boolean" && k.Got == "string" && n.expanded():
		return fmt.Sprintf("must be a boolean, not the string %q: a ${VAR} makes a string whatever it holds (write true or false)", n.shown())
	case len(k.Want) == 1 && k.Want[0] == "boolean" && k.Got == "string" && n != nil && (n.str == "true" || n.str == "false"):
		return fmt.Sprintf("must be a boolean, not the string %q (write it without quotes)", n.shown())
	}
	msg := fmt.Sprintf("must be %s %s, not %s %s", article(want), want, article(k.Got), k.Got)
	if k.Want[0] == "string" && n != nil {
		msg += quoteHint(n)
	} else if k.Want[0] == "string" && (k.Got == "number" || k.Got == "boolean") {
		msg += " (put it in quotes)"
	}
	return msg
}

// unit names the unit of a number at path, for messages.
func unit(path string) string {
	if strings.HasSuffix(path, "Ms") {
		return " (milliseconds)"
	}
	return ""
}

func article(word string) string {
	if word != "" && strings.ContainsRune("aeiou", rune(word[0])) {
		return "an"
	}
	return "a"
}

func lowerFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToLower(s[:1]) + s[1:]
}

// quoteHint suggests the fix for the common mistake of an unquoted number
// or boolean where a string is required.
func quoteHint(n *node) string {
	switch n.kind {
	case kNumber:
		return fmt.Sprintf(" (write \"%s\")", n.num)
	case kBool:
		return fmt.Sprintf(" (write \"%v\")", n.b)
	}
	return ""
}
