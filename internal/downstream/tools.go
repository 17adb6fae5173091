package downstream

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"

	"github.com/mcpworkbench/mcp-workbench/internal/frame"
	"github.com/mcpworkbench/mcp-workbench/internal/permissions"
	"github.com/mcpworkbench/mcp-workbench/internal/pins"
	"github.com/mcpworkbench/mcp-workbench/internal/serverproc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// Tool is one downstream tool offered through the workbench.
type Tool struct {
	Name string
	// JSON is the tool's definition as pinned (name, title, description,
	// inputSchema, outputSchema and annotations in canonical form; see
	// pins.Def.JSON), with "source_server" and "toolbox_name" added: what
	// open_toolbox shows.
	JSON json.RawMessage
	// ReadOnly and Idempotent are the tool's annotations: such a tool may be
	// retried once by the workbench after a crash that lost its call.
	ReadOnly, Idempotent bool

	// Unchecked says why the tool's arguments are not validated: its
	// inputSchema does not compile (a remote $ref, an invalid schema).
	// Empty when they are, or when the schema was not compiled (tools
	// shown from the catalog).
	Unchecked string

	// Flags are what screening found in the tool's definition (see
	// internal/pins); Change says how it differs from its pin when it is
	// served anyway ("toolChanges": "warn").
	Flags  []string
	Change string

	def    pins.Def           // the definition as pinned
	schema *jsonschema.Schema // nil: arguments are not validated
}

// ToolSet is the tools one server offers, after toolFilters.
type ToolSet struct {
	// Tools in the server's order.
	Tools    []*Tool
	byName   map[string]*Tool
	filtered map[string]bool // names the server has but toolFilters remove

	// Withheld are the tools pinning or screening leave out (see pins.go),
	// in the server's order; withheld maps their names to why.
	Withheld []Withheld
	withheld map[string]string
	flags    map[string][]string // screening's flags of every tool in all
	// all is every offered tool, withheld ones included, before guard.
	all []*Tool
	// pinStamp is the pin file's stamp when the set was guarded, and
	// namesVersion the version of the names screening compared with.
	pinStamp     string
	namesVersion uint64
}

// Lookup returns the offered tool of that name, or nil.
func (ts *ToolSet) Lookup(name string) *Tool {
	if ts == nil {
		return nil
	}
	return ts.byName[name]
}

// isFiltered reports whether the server has a tool of that name that
// toolFilters remove.
func (ts *ToolSet) isFiltered(name string) bool {
	return ts != nil && ts.filtered[name]
}

// offeredNames returns the offered tool names in the server's order.
func (ts *ToolSet) offeredNames() []string {
	if ts == nil {
		return nil
	}
	names := make([]string, len(ts.Tools))
	for i, t := range ts.Tools {
		names[i] = t.Name
	}
	return names
}

// wireTool is the part of a tool object the workbench reads itself.
type wireTool struct {
	Name        string          `json:"name"`
	InputSchema json.RawMessage `json:"inputSchema"`
	Annotations *struct {
		ReadOnlyHint   bool `json:"readOnlyHint"`
		IdempotentHint bool `json:"idempotentHint"`
	} `json:"annotations"`
}

// buildToolSet turns a server's tools into a ToolSet. raw holds the tools
// as sent, when the transport could capture them; typed holds the SDK's
// decoding, which decides which tools are valid. filters are the server's
// toolFilters (nil: all). It also returns the tools it kept before
// filtering, as sent: what the catalog stores.
func buildToolSet(raw []json.RawMessage, typed []*mcp.Tool, filters []string, toolbox, server string, log *slog.Logger) (*ToolSet, []json.RawMessage, error) {
	valid := make(map[string]bool, len(typed))
	for _, t := range typed {
		valid[t.Name] = true
	}
	if raw == nil {
		// Re-encode the SDK's structs: the best this transport allows.
		for _, t := range typed {
			b, err := json.Marshal(t)
			if err != nil {
				return nil, nil, fmt.Errorf("encoding tool %q: %w", t.Name, err)
			}
			raw = append(raw, b)
		}
	}
	ts, kept := toolSet(raw, func(name string) bool { return valid[name] }, filters, toolbox, server, log, true)
	return ts, kept, nil
}

// toolSet builds a ToolSet of the raw tools that valid accepts, without
// duplicates, and returns them too. compile compiles each inputSchema for
// validation; a tool set shown from the catalog does without (compiling
// costs far more than the rest, and the live list replaces it).
func toolSet(raw []json.RawMessage, valid func(string) bool, filters []string, toolbox, server string, log *slog.Logger, compile bool) (*ToolSet, []json.RawMessage) {
	ts := &ToolSet{byName: map[string]*Tool{}, filtered: map[string]bool{}}
	kept := make([]json.RawMessage, 0, len(raw))
	matched := make([]bool, len(filters))
	suffix := fmt.Appendf(nil, `,"source_server":%s,"toolbox_name":%s}`, frame.Quote(server), frame.Quote(toolbox))
	for _, r := range raw {
		// What the model reads is the definition as pinned (see
		// pins.Def.JSON), never the server's bytes: a duplicate key, a
		// member outside the definition or _meta would reach the model
		// unpinned and unscreened.
		d, err := pins.Canonical(r)
		if err != nil {
			if name, ok := toolName(r); ok && valid(name) {
				log.Warn("tool left out: its definition cannot be pinned", "tool", pins.Line(name), "error", err)
			}
			continue
		}
		var w wireTool
		if err := json.Unmarshal(d.JSON, &w); err != nil || !valid(d.Name) {
			continue // the SDK rejected it, and logged why
		}
		w.Name = d.Name // the exact key "name" (encoding/json matches keys regardless of case)
		if _, dup := ts.byName[w.Name]; dup || ts.filtered[w.Name] {
			log.Warn("server lists a tool twice; keeping the first", "tool", pins.Line(w.Name))
			continue
		}
		kept = append(kept, r)
		if !selected(w.Name, filters, matched) {
			ts.filtered[w.Name] = true
			continue
		}
		b := append(d.JSON[:len(d.JSON)-1:len(d.JSON)-1], suffix...)
		t := &Tool{Name: w.Name, JSON: b, def: d}
		if w.Annotations != nil {
			t.ReadOnly, t.Idempotent = w.Annotations.ReadOnlyHint, w.Annotations.IdempotentHint
		}
		if compile {
			sch, err := compileSchema(w.InputSchema)
			if err != nil {
				t.Unchecked = "its inputSchema does not compile, so its arguments are passed unchecked: " +
					serverproc.Clip(schemaProblem(err), 300)
				log.Warn("tool's inputSchema does not compile; its arguments will not be validated", "tool", w.Name,
					"error", serverproc.Clip(strings.ReplaceAll(err.Error(), "\n", " "), 300))
			}
			t.schema = sch
		}
		ts.Tools = append(ts.Tools, t)
		ts.byName[w.Name] = t
	}
	ts.all = ts.Tools
	for i := range filters {
		if !matched[i] && compile {
			// Named by its place: the entry may have come from a ${VAR}.
			log.Warn("toolFilters entry matches no tool of this server", "entry", fmt.Sprintf("toolFilters[%d]", i), "tools", strings.Join(append(ts.offeredNames(), keys(ts.filtered)...), ", "))
		}
	}
	return ts, kept
}

// toolName reads the name of a tool object that could not be pinned, for
// the log.
func toolName(raw json.RawMessage) (string, bool) {
	var w struct {
		Name string `json:"name"`
	}
	err := json.Unmarshal(raw, &w)
	return w.Name, err == nil && w.Name != ""
}

// sameTools reports whether two tool sets offer the same tools, as
// open_toolbox shows them.
func sameTools(a, b *ToolSet) bool {
	if a == nil || b == nil {
		return a == b
	}
	if len(a.Tools) != len(b.Tools) {
		return false
	}
	for i := range a.Tools {
		if !bytes.Equal(a.Tools[i].JSON, b.Tools[i].JSON) {
			return false
		}
	}
	return true
}

// selected reports whether toolFilters keep the tool name, and marks which
// filters matched.
func selected(name string, filters []string, matched []bool) bool {
	if filters == nil {
		return true
	}
	keep := false
	for i, f := range filters {
		if f == name {
			matched[i], keep = true, true
			continue
		}
		if permissions.Match(f, name) { // * matches "/" too, as in permission rules
			matched[i], keep = true, true
		}
	}
	return keep
}

func keys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// refuseLoader refuses every external $ref: a schema that came from a
// server must never make the workbench read a file or the network.
type refuseLoader struct{}

func (refuseLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("external $ref %q is not loaded", url)
}

// schemaURL names the schema being compiled; it never leaves the compiler.
const schemaURL = "urn:mcp-workbench:input-schema"

// compileSchema compiles a tool's inputSchema for validation. 2020-12 is
// the default dialect; a schema that only compiles as draft-07 (tuple
// "items") is compiled as draft-07. "format" is not asserted in any draft:
// the server is the authority on formats, and drafts disagree.
func compileSchema(raw json.RawMessage) (*jsonschema.Schema, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil // no schema: nothing to check
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, err
	}
	compile := func(draft *jsonschema.Draft) (*jsonschema.Schema, error) {
		c := jsonschema.NewCompiler()
		c.UseLoader(refuseLoader{})
		for _, f := range formatNames {
			c.RegisterFormat(&jsonschema.Format{Name: f, Validate: func(any) error { return nil }})
		}
		if draft != nil {
			c.DefaultDraft(draft)
		}
		if err := c.AddResource(schemaURL, doc); err != nil {
			return nil, err
		}
		return c.Compile(schemaURL)
	}
	sch, err := compile(nil)
	if err != nil {
		if sch7, err7 := compile(jsonschema.Draft7); err7 == nil {
			return sch7, nil
		}
	}
	return sch, err
}

// formatNames are the formats the validator knows; each is registered as
// always valid.
var formatNames = []string{
	"date-time", "date", "time", "duration", "email", "idn-email", "hostname", "idn-hostname",
	"ipv4", "ipv6", "uri", "uri-reference", "iri", "iri-reference", "uri-template",
	"json-pointer", "relative-json-pointer", "uuid", "period", "semver",
}

// violation is one way arguments fail a tool's inputSchema.
type violation struct {
	Path string // JSON pointer into the arguments, "" for the whole object
	Msg  string
}

func (v violation) String() string {
	p := v.Path
	if p == "" {
		p = "(root)"
	}
	return p + ": " + v.Msg
}

var printer = message.NewPrinter(language.English)

// validate checks arguments (a JSON object) against the tool's inputSchema.
// It returns nil when they pass or when the tool has no usable schema.
func (t *Tool) validate(args json.RawMessage) ([]violation, error) {
	if t.schema == nil {
		return nil, nil
	}
	inst, err := frame.Decode(args)
	if err != nil {
		return nil, err
	}
	err = t.schema.Validate(inst)
	if err == nil {
		return nil, nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return nil, err
	}
	var out []violation
	collectViolations(ve, &out)
	// The validator's order depends on map iteration: sort for stable text.
	slices.SortStableFunc(out, func(a, b violation) int {
		return cmp.Or(strings.Compare(a.Path, b.Path), strings.Compare(a.Msg, b.Msg))
	})
	return out, nil
}

// schemaProblem says what is wrong with a schema that does not compile:
// where the schema breaks JSON Schema's rules and which, rather than the
// compiler's trace through the metaschema.
func schemaProblem(err error) string {
	var sve *jsonschema.SchemaValidationError
	if errors.As(err, &sve) {
		ve, _ := sve.Err.(*jsonschema.ValidationError)
		var out []violation
		if ve != nil {
			collectViolations(ve, &out)
		}
		if len(out) > 0 {
			slices.SortStableFunc(out, func(a, b violation) int {
				return cmp.Or(strings.Compare(a.Path, b.Path), strings.Compare(a.Msg, b.Msg))
			})
			parts := make([]string, len(out))
			for i, v := range out {
				parts[i] = fmt.Sprintf("at %q: %s", cmp.Or(v.Path, "/"), v.Msg)
			}
			return "not a valid JSON Schema: " + strings.Join(parts, "; ")
		}
	}
	return strings.Join(strings.Fields(err.Error()), " ")
}

func collectViolations(ve *jsonschema.ValidationError, out *[]violation) {
	if len(ve.Causes) == 0 {
		if _, ok := ve.ErrorKind.(*kind.Schema); ok {
			return
		}
		p := ""
		for _, tok := range ve.InstanceLocation {
			p += "/" + strings.NewReplacer("~", "~0", "/", "~1").Replace(tok)
		}
		*out = append(*out, violation{Path: p, Msg: ve.ErrorKind.LocalizedString(printer)})
		return
	}
	for _, c := range ve.Causes {
		collectViolations(c, out)
	}
}
