package searchdata

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"unicode"
)

// dataDir is the evaluation data, from this package's folder.
const dataDir = "../../testdata/search"

// The kinds of held-out query (testdata/search/README.md says what each means).
var kinds = []string{"direct", "paraphrase", "ambiguous", "first-step"}

// A tool is what a check needs of one captured tool: its name and the words
// a reader of tools/list sees for it (name, titles, description).
type tool struct {
	name string
	text string
}

// queryFiles are the held-out query sets; each gets the same checks.
var queryFiles = []string{"queries-heldout.json", "queries-heldout2.json", "queries-heldout3.json", "queries-heldout4.json", "queries-heldout5.json"}

// A query is one entry of a held-out query file.
type query struct {
	Query  string   `json:"query"`
	Kind   string   `json:"kind"`
	Expect []string `json:"expect"`
}

// checkToolFile checks one captured tools/list file and returns its tools,
// keyed "server/tool", and every problem found, each naming where it is.
func checkToolFile(file string, data []byte) (map[string]tool, []string) {
	var problems []string
	bad := func(format string, args ...any) {
		problems = append(problems, file+": "+fmt.Sprintf(format, args...))
	}
	var doc struct {
		Server   string            `json:"server"`
		Package  string            `json:"package"`
		Command  string            `json:"command"`
		Captured string            `json:"captured"`
		Tools    []json.RawMessage `json:"tools"`
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&doc); err != nil {
		bad("not a captured tool list: %v", err)
		return nil, problems
	}
	if want := strings.TrimSuffix(filepath.Base(file), ".json"); doc.Server != want {
		bad("server is %q, want %q (the file's name)", doc.Server, want)
	}
	if at := strings.LastIndex(doc.Package, "@"); at <= 0 || at == len(doc.Package)-1 {
		bad("package %q is not name@version", doc.Package)
	}
	if doc.Command == "" || doc.Captured == "" {
		bad("command and captured must say how and when the list was captured")
	}
	if len(doc.Tools) == 0 {
		bad("no tools")
	}
	tools := make(map[string]tool)
	for i, raw := range doc.Tools {
		var t map[string]json.RawMessage
		if err := json.Unmarshal(raw, &t); err != nil {
			bad("tools[%d]: not a JSON object: %v", i, err)
			continue
		}
		var name string
		if err := json.Unmarshal(t["name"], &name); err != nil || name == "" {
			bad("tools[%d]: no name", i)
			continue
		}
		var schema map[string]json.RawMessage
		if err := json.Unmarshal(t["inputSchema"], &schema); err != nil || schema == nil {
			bad("tools[%d] (%s): inputSchema is missing or not an object", i, name)
		} else if string(schema["type"]) != `"object"` {
			bad("tools[%d] (%s): inputSchema type is %s, want \"object\"", i, name, schema["type"])
		}
		key := doc.Server + "/" + name
		if _, dup := tools[key]; dup {
			bad("tools[%d]: tool %q is listed twice", i, name)
		}
		var title, description string
		var annotations struct {
			Title string `json:"title"`
		}
		_ = json.Unmarshal(t["title"], &title)
		_ = json.Unmarshal(t["description"], &description)
		_ = json.Unmarshal(t["annotations"], &annotations)
		tools[key] = tool{name: name, text: strings.Join([]string{name, title, annotations.Title, description}, " ")}
	}
	return tools, problems
}

// normalize is a query as compared for repeats: lower case, single spaces,
// no closing punctuation.
func normalize(q string) string {
	return strings.Join(strings.Fields(strings.ToLower(strings.TrimRight(q, ".?! "))), " ")
}

// checkQueries checks the held-out queries of file against the captured tools.
func checkQueries(file string, queries []query, tools map[string]tool) []string {
	var problems []string
	seen := make(map[string]int)
	for i, q := range queries {
		bad := func(format string, args ...any) {
			problems = append(problems, fmt.Sprintf("%s[%d] (%q): ", file, i, q.Query)+fmt.Sprintf(format, args...))
		}
		if strings.TrimSpace(q.Query) == "" {
			bad("empty query")
		}
		norm := normalize(q.Query)
		if j, dup := seen[norm]; dup {
			bad("same query as [%d]", j)
		} else {
			seen[norm] = i
		}
		if !slices.Contains(kinds, q.Kind) {
			bad("kind %q is not one of %s", q.Kind, strings.Join(kinds, ", "))
		}
		if len(q.Expect) == 0 {
			bad("expect names no tool")
		}
		servers := make(map[string]bool)
		for k, e := range q.Expect {
			if slices.Contains(q.Expect[:k], e) {
				bad("expect[%d] %q is listed twice", k, e)
			}
			t, ok := tools[e]
			if !ok {
				bad("expect[%d] %q is no captured tool", k, e)
				continue
			}
			servers[strings.SplitN(e, "/", 2)[0]] = true
			if q.Kind == "paraphrase" {
				if shared := sharedWords(q.Query, t.text); len(shared) > 0 {
					bad("a paraphrase, but shares %s with %s", strings.Join(shared, ", "), e)
				}
			}
		}
		if q.Kind == "ambiguous" && len(servers) < 2 {
			bad("ambiguous, but every expected tool is on one server")
		}
	}
	return problems
}

// checkNoRepeats reports every query of file that repeats one of earlier,
// a query set of earlierFile: a later held-out set must be new queries.
func checkNoRepeats(file string, queries []query, earlierFile string, earlier []query) []string {
	seen := make(map[string]int)
	for i, q := range earlier {
		seen[normalize(q.Query)] = i
	}
	var problems []string
	for i, q := range queries {
		if j, dup := seen[normalize(q.Query)]; dup {
			problems = append(problems, fmt.Sprintf("%s[%d] (%q): same query as %s[%d]", file, i, q.Query, earlierFile, j))
		}
	}
	return problems
}

// stopWords are the function words of English, which carry no meaning of
// their own; every other word counts as a content word.
var stopWords = func() map[string]bool {
	m := make(map[string]bool)
	for _, w := range strings.Fields(`a an the and or but if then else so to of in on at by for with from into onto
		out up off over under about as than is are was were be been being am do does did done have has had it its
		this that these those there here i me my mine we us our ours you your yours he him his she her they them
		their what which who whom whose when where why how all any some no not only just also can could should would
		will shall may might must very s t d ll re ve m let lets please need needs want wants each every one`) {
		m[w] = true
	}
	return m
}()

// contentWords splits text into lower-case words (identifiers split at _ - .
// and case changes), drops stop words and one-letter words, and stems each.
func contentWords(text string) map[string]bool {
	words := make(map[string]bool)
	var cur []rune
	flush := func() {
		w := strings.ToLower(string(cur))
		cur = cur[:0]
		if len(w) > 1 && !stopWords[w] {
			words[stem(w)] = true
		}
	}
	var prev rune
	for _, r := range text {
		switch {
		case !unicode.IsLetter(r) && !unicode.IsDigit(r):
			flush()
		case unicode.IsUpper(r) && unicode.IsLower(prev):
			flush()
			cur = append(cur, r)
		default:
			cur = append(cur, r)
		}
		prev = r
	}
	flush()
	return words
}

// stem cuts one common English ending, so that "issues", "issue" and
// "issued" meet; it errs towards matching, which keeps the paraphrase check
// strict.
func stem(w string) string {
	for _, suf := range []string{"ations", "ation", "ings", "ing", "ies", "ied", "es", "ed", "er", "s", "e", "ly"} {
		if base, ok := strings.CutSuffix(w, suf); ok && len(base) >= 3 {
			if suf == "ies" || suf == "ied" {
				return base + "y"
			}
			return base
		}
	}
	return w
}

// sharedWords returns the content words that a and b have in common, sorted.
func sharedWords(a, b string) []string {
	wb := contentWords(b)
	var shared []string
	for w := range contentWords(a) {
		if wb[w] {
			shared = append(shared, w)
		}
	}
	sort.Strings(shared)
	return shared
}

// loadTools reads and checks every captured tool list, and returns the tools
// keyed "server/tool" and the servers' names.
func loadTools(t *testing.T) (map[string]tool, []string) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dataDir, "tools", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no tool lists in %s/tools (%v)", dataDir, err)
	}
	all := make(map[string]tool)
	var servers []string
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		tools, problems := checkToolFile("tools/"+filepath.Base(f), data)
		for _, p := range problems {
			t.Error(p)
		}
		for k, v := range tools {
			all[k] = v
		}
		servers = append(servers, strings.TrimSuffix(filepath.Base(f), ".json"))
	}
	return all, servers
}

// loadQueries reads one held-out query file.
func loadQueries(t *testing.T, file string) []query {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dataDir, file))
	if err != nil {
		t.Fatal(err)
	}
	var queries []query
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&queries); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return queries
}

func TestToolLists(t *testing.T) {
	tools, servers := loadTools(t)
	if len(servers) < 12 {
		t.Errorf("%d servers captured, want at least 12", len(servers))
	}
	t.Logf("%d tools on %d servers", len(tools), len(servers))
	var size int64
	_ = filepath.Walk(dataDir, func(_ string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() {
			size += info.Size()
		}
		return err
	})
	if size > 2<<20 {
		t.Errorf("testdata/search holds %d bytes, want at most 2 MiB", size)
	}
}

func TestHeldOutQueries(t *testing.T) {
	tools, servers := loadTools(t)
	for _, file := range queryFiles {
		t.Run(file, func(t *testing.T) {
			checkQuerySet(t, file, loadQueries(t, file), tools, servers)
		})
	}
}

// checkQuerySet checks one held-out query file: each query, its size, its
// kinds, its share of paraphrases and that it covers every server.
func checkQuerySet(t *testing.T, file string, queries []query, tools map[string]tool, servers []string) {
	t.Helper()
	for _, p := range checkQueries(file, queries, tools) {
		t.Error(p)
	}
	if len(queries) < 120 {
		t.Errorf("%s: %d queries, want at least 120", file, len(queries))
	}
	perKind := make(map[string]int)
	covered := make(map[string]bool)
	for _, q := range queries {
		perKind[q.Kind]++
		for _, e := range q.Expect {
			covered[strings.SplitN(e, "/", 2)[0]] = true
		}
	}
	for _, k := range kinds {
		if perKind[k] == 0 {
			t.Errorf("%s: no %s query", file, k)
		}
	}
	if 10*perKind["paraphrase"] < 3*len(queries) {
		t.Errorf("%s: %d of %d queries are paraphrases, want at least 30%%", file, perKind["paraphrase"], len(queries))
	}
	for _, s := range servers {
		if !covered[s] {
			t.Errorf("%s: no query expects a tool of %s", file, s)
		}
	}
	t.Logf("%s: %d queries: %v", file, len(queries), perKind)
}

// TestHeldOutSetsDoNotOverlap checks that each held-out set repeats no query
// of an earlier one, so that a later set is unseen by tuning on the earlier.
func TestHeldOutSetsDoNotOverlap(t *testing.T) {
	sets := make([][]query, len(queryFiles))
	for i, file := range queryFiles {
		sets[i] = loadQueries(t, file)
	}
	for i := range queryFiles {
		for j := range i {
			for _, p := range checkNoRepeats(queryFiles[i], sets[i], queryFiles[j], sets[j]) {
				t.Error(p)
			}
		}
	}
}

// TestChecksCatchBadData feeds each check data with one known fault, so that
// a check that stopped finding its fault fails here.
func TestChecksCatchBadData(t *testing.T) {
	tools, problems := checkToolFile("tools/demo.json", []byte(`{"server": "demo", "package": "demo@1.0.0",
		"command": "demo", "captured": "2026-11-24", "tools": [
		{"name": "list_issues", "description": "List issues in a repository.", "inputSchema": {"type": "object"}},
		{"name": "get_me", "description": "Get details of the authenticated user.", "inputSchema": {"type": "object"}}]}`))
	if len(problems) > 0 || len(tools) != 2 {
		t.Fatalf("a good tool list: %d tools, problems %q", len(tools), problems)
	}
	fileCases := []struct{ name, data, want string }{
		{"no inputSchema", `{"server": "demo", "package": "demo@1", "command": "x", "captured": "x", "tools": [{"name": "a"}]}`, "tools[0] (a): inputSchema is missing"},
		{"schema not an object type", `{"server": "demo", "package": "demo@1", "command": "x", "captured": "x", "tools": [{"name": "a", "inputSchema": {"type": "string"}}]}`, `want "object"`},
		{"no name", `{"server": "demo", "package": "demo@1", "command": "x", "captured": "x", "tools": [{"inputSchema": {"type": "object"}}]}`, "tools[0]: no name"},
		{"tool twice", `{"server": "demo", "package": "demo@1", "command": "x", "captured": "x", "tools": [{"name": "a", "inputSchema": {"type": "object"}}, {"name": "a", "inputSchema": {"type": "object"}}]}`, "listed twice"},
		{"wrong server", `{"server": "other", "package": "demo@1", "command": "x", "captured": "x", "tools": [{"name": "a", "inputSchema": {"type": "object"}}]}`, "the file's name"},
		{"no version", `{"server": "demo", "package": "demo", "command": "x", "captured": "x", "tools": [{"name": "a", "inputSchema": {"type": "object"}}]}`, "not name@version"},
		{"not JSON", `{"server": `, "not a captured tool list"},
	}
	for _, c := range fileCases {
		_, problems := checkToolFile("tools/demo.json", []byte(c.data))
		if !strings.Contains(strings.Join(problems, "\n"), c.want) {
			t.Errorf("%s: problems %q, want one containing %q", c.name, problems, c.want)
		}
	}

	tools["other/get_me"] = tools["demo/get_me"]
	queryCases := []struct {
		name    string
		queries []query
		want    string
	}{
		{"unknown tool", []query{{"x", "direct", []string{"demo/nope"}}}, `"demo/nope" is no captured tool`},
		{"duplicate query", []query{{"Who am I?", "direct", []string{"demo/get_me"}}, {"who  am i", "direct", []string{"demo/get_me"}}}, "same query as [0]"},
		{"paraphrase sharing a word", []query{{"show the open issues", "paraphrase", []string{"demo/list_issues"}}}, "shares issu with demo/list_issues"},
		{"paraphrase sharing a name's word", []query{{"get my profile", "paraphrase", []string{"demo/get_me"}}}, "shares get with"},
		{"unknown kind", []query{{"x", "vague", []string{"demo/get_me"}}}, `kind "vague"`},
		{"ambiguous on one server", []query{{"x", "ambiguous", []string{"demo/get_me", "demo/list_issues"}}}, "every expected tool is on one server"},
		{"no expect", []query{{"x", "direct", nil}}, "expect names no tool"},
	}
	for _, c := range queryCases {
		problems := checkQueries("demo.json", c.queries, tools)
		if !strings.Contains(strings.Join(problems, "\n"), c.want) {
			t.Errorf("%s: problems %q, want one containing %q", c.name, problems, c.want)
		}
	}
	good := []query{
		{"which account does this token belong to", "paraphrase", []string{"demo/get_me"}},
		{"who am I", "ambiguous", []string{"demo/get_me", "other/get_me"}},
	}
	if problems := checkQueries("demo.json", good, tools); len(problems) > 0 {
		t.Errorf("good queries: %q", problems)
	}
	earlier := []query{{"Who am I?", "direct", []string{"demo/get_me"}}}
	later := []query{{"list the issues", "direct", []string{"demo/list_issues"}}, {"who  AM i", "direct", []string{"demo/get_me"}}}
	if problems := checkNoRepeats("later.json", later, "earlier.json", earlier); len(problems) != 1 || !strings.Contains(problems[0], "later.json[1]") || !strings.Contains(problems[0], "same query as earlier.json[0]") {
		t.Errorf("a later set repeating an earlier query: problems %q, want one naming later.json[1] and earlier.json[0]", problems)
	}
}

// The published sets in public/: their tools, where they come from and
// under which license, and their requests.
var publicSets = []struct{ tools, queries, license string }{
	{"public/azure-tools.json", "public/azure-queries.json", "public/LICENSE.microsoft-mcp"},
	{"public/mcpproxy-tools.json", "public/mcpproxy-queries.json", "public/LICENSE.mcpproxy-go"},
}

// checkPublicSet checks one published set and returns every problem found,
// each naming the file and the entry.
func checkPublicSet(toolsFile string, toolsData []byte, queriesFile string, queriesData []byte) []string {
	var problems []string
	bad := func(file, format string, args ...any) {
		problems = append(problems, file+": "+fmt.Sprintf(format, args...))
	}
	type server struct {
		Server string `json:"server"`
		Tools  []struct {
			Name        string `json:"name"`
			Description string `json:"description"`
		} `json:"tools"`
	}
	var doc struct {
		server
		Source  string   `json:"source"`
		Commit  string   `json:"commit"`
		License string   `json:"license"`
		Servers []server `json:"servers"`
	}
	if err := json.Unmarshal(toolsData, &doc); err != nil {
		bad(toolsFile, "not a tool list: %v", err)
		return problems
	}
	if doc.Source == "" || doc.License == "" {
		bad(toolsFile, "source and license must say where the tools come from")
	}
	if len(doc.Commit) != 40 || strings.Trim(doc.Commit, "0123456789abcdef") != "" {
		bad(toolsFile, "commit %q is not a full commit hash", doc.Commit)
	}
	servers := doc.Servers
	if doc.Server != "" {
		servers = append(servers, doc.server)
	}
	known := map[string]bool{}
	for _, s := range servers {
		if s.Server == "" || len(s.Tools) == 0 {
			bad(toolsFile, "a server without a name or tools")
		}
		for i, t := range s.Tools {
			key := s.Server + "/" + t.Name
			switch {
			case t.Name == "":
				bad(toolsFile, "%s tools[%d]: no name", s.Server, i)
			case known[key]:
				bad(toolsFile, "%s listed twice", key)
			}
			known[key] = true
		}
	}
	var queries []struct {
		Query  string   `json:"query"`
		Expect []string `json:"expect"`
		Split  string   `json:"split"`
	}
	dec := json.NewDecoder(bytes.NewReader(queriesData))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&queries); err != nil {
		bad(queriesFile, "not a request list: %v", err)
		return problems
	}
	seen := map[string]int{}
	halves := map[string]int{}
	for i, q := range queries {
		if strings.TrimSpace(q.Query) == "" {
			bad(queriesFile, "[%d]: no query", i)
		}
		if j, ok := seen[normalize(q.Query)]; ok {
			bad(queriesFile, "[%d]: same query as [%d]", i, j)
		}
		seen[normalize(q.Query)] = i
		if len(q.Expect) == 0 {
			bad(queriesFile, "[%d]: expect names no tool", i)
		}
		for _, e := range q.Expect {
			if !known[e] {
				bad(queriesFile, "[%d]: %q is no tool of %s", i, e, toolsFile)
			}
		}
		if q.Split != "tune" && q.Split != "held-out" {
			bad(queriesFile, "[%d]: split %q is neither tune nor held-out", i, q.Split)
		}
		halves[q.Split]++
	}
	if halves["tune"] == 0 || halves["held-out"] == 0 {
		bad(queriesFile, "a half is empty (tune %d, held-out %d)", halves["tune"], halves["held-out"])
	}
	return problems
}

func TestPublicSets(t *testing.T) {
	for _, p := range publicSets {
		tools, err := os.ReadFile(filepath.Join(dataDir, p.tools))
		if err != nil {
			t.Fatal(err)
		}
		queries, err := os.ReadFile(filepath.Join(dataDir, p.queries))
		if err != nil {
			t.Fatal(err)
		}
		for _, problem := range checkPublicSet(p.tools, tools, p.queries, queries) {
			t.Error(problem)
		}
		if lic, err := os.ReadFile(filepath.Join(dataDir, p.license)); err != nil || !strings.Contains(string(lic), "Permission is hereby granted") {
			t.Errorf("%s: the source's license text is missing (%v)", p.license, err)
		}
	}
	good := `{"source": "x", "commit": "0123456789012345678901234567890123456789", "license": "MIT", "server": "s", "tools": [{"name": "a"}]}`
	for _, c := range []struct{ name, tools, queries, want string }{
		{"good", good, `[{"query": "q", "expect": ["s/a"], "split": "tune"}, {"query": "r", "expect": ["s/a"], "split": "held-out"}]`, ""},
		{"unknown tool", good, `[{"query": "q", "expect": ["s/b"], "split": "tune"}, {"query": "r", "expect": ["s/a"], "split": "held-out"}]`, `"s/b" is no tool`},
		{"no split", good, `[{"query": "q", "expect": ["s/a"]}, {"query": "r", "expect": ["s/a"], "split": "held-out"}]`, "neither tune nor held-out"},
		{"one half", good, `[{"query": "q", "expect": ["s/a"], "split": "tune"}]`, "a half is empty"},
		{"repeat", good, `[{"query": "Q", "expect": ["s/a"], "split": "tune"}, {"query": "q", "expect": ["s/a"], "split": "held-out"}]`, "same query as [0]"},
		{"short commit", `{"source": "x", "commit": "0123", "license": "MIT", "server": "s", "tools": [{"name": "a"}]}`, `[{"query": "q", "expect": ["s/a"], "split": "tune"}, {"query": "r", "expect": ["s/a"], "split": "held-out"}]`, "not a full commit hash"},
	} {
		problems := strings.Join(checkPublicSet("t.json", []byte(c.tools), "q.json", []byte(c.queries)), "\n")
		if c.want == "" && problems != "" || !strings.Contains(problems, c.want) {
			t.Errorf("%s: problems %q, want %q", c.name, problems, c.want)
		}
	}
}

// TestFirstActionPhrasings checks queries-firstaction.json: each goal is a
// first-step request of the dev or held-out set, with its tools, beside the
// same task written as its first action.
func TestFirstActionPhrasings(t *testing.T) {
	firstSteps := map[string][]string{}
	for _, f := range []string{"queries-dev.json", "queries-heldout.json"} {
		for _, q := range loadQueries(t, f) {
			if q.Kind == "first-step" {
				firstSteps[q.Query] = q.Expect
			}
		}
	}
	data, err := os.ReadFile(filepath.Join(dataDir, "queries-firstaction.json"))
	if err != nil {
		t.Fatal(err)
	}
	var pairs []struct {
		Goal   string   `json:"goal"`
		Action string   `json:"action"`
		Expect []string `json:"expect"`
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&pairs); err != nil {
		t.Fatalf("queries-firstaction.json: %v", err)
	}
	actions := map[string]bool{}
	for i, p := range pairs {
		want, ok := firstSteps[p.Goal]
		switch {
		case !ok:
			t.Errorf("queries-firstaction.json[%d]: goal %q is no first-step request of dev or held-out", i, p.Goal)
		case !slices.Equal(want, p.Expect):
			t.Errorf("queries-firstaction.json[%d]: expect %v, but the request expects %v", i, p.Expect, want)
		}
		if strings.TrimSpace(p.Action) == "" || actions[normalize(p.Action)] {
			t.Errorf("queries-firstaction.json[%d]: action %q is empty or repeated", i, p.Action)
		}
		actions[normalize(p.Action)] = true
		delete(firstSteps, p.Goal)
	}
	if len(firstSteps) > 0 {
		t.Errorf("queries-firstaction.json lacks %d first-step requests of dev and held-out", len(firstSteps))
	}
}
